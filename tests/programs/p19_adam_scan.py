"""Adam written by hand over a nested-dict pytree, with the training loop inside lax.scan."""
import jax
import jax.numpy as jnp
from jax import lax, random
from jax.tree_util import tree_leaves, tree_map


def init_params(key):
    k1, k2, k3 = random.split(key, 3)
    return {"encoder": {"w": 0.5 * random.normal(k1, (3, 6)), "b": jnp.zeros(6)},
            "head": {"w": 0.5 * random.normal(k2, (6, 1)), "b": jnp.zeros(1)},
            "log_temp": jnp.zeros(()),
            "extra": [random.uniform(k3, (2,))]}


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["encoder"]["w"] + params["encoder"]["b"])
    pred = (h @ params["head"]["w"] + params["head"]["b"])[:, 0] * jnp.exp(params["log_temp"])
    mse = jnp.mean((pred - y) ** 2)
    reg = 1e-3 * sum(jnp.sum(p ** 2) for p in tree_leaves(params))
    return mse + reg, {"mse": mse, "max_abs": jnp.max(jnp.abs(pred))}


def adam_init(params):
    zeros = tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.array(0, dtype=jnp.int32)}


def adam_update(grads, state, params, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
    t = state["t"] + 1
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    mhat_scale = 1.0 / (1 - b1 ** t.astype(jnp.float32))
    vhat_scale = 1.0 / (1 - b2 ** t.astype(jnp.float32))
    new_params = tree_map(
        lambda p, m, v: p - lr * (m * mhat_scale) / (jnp.sqrt(v * vhat_scale) + eps),
        params, m, v)
    return new_params, {"m": m, "v": v, "t": t}


@jax.jit
def train(params, x, y):
    def step(carry, _):
        params, opt = carry
        (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x, y)
        params, opt = adam_update(grads, opt, params)
        return (params, opt), (loss, aux["mse"])

    (params, opt), (losses, mses) = lax.scan(step, (params, adam_init(params)), None,
                                             length=25)
    return params, opt, losses, mses


def main():
    kx, kp = random.split(random.PRNGKey(19))
    x = random.normal(kx, (16, 3))
    y = jnp.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2]
    params, opt, losses, mses = train(init_params(kp), x, y)
    return {"params": params, "opt_t": opt["t"], "v": opt["v"], "losses": losses,
            "mses": mses, "final": loss_fn(params, x, y)}
