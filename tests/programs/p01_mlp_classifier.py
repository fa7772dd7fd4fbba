"""A two-layer classifier trained with stax and Adam on synthetic blobs."""
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers, stax


def make_data(key, n=64):
    k1, k2 = random.split(key)
    labels = random.randint(k1, (n,), 0, 3)
    centers = jnp.array([[2.0, 0.0], [-1.0, 1.5], [-1.0, -1.5]])
    x = centers[labels] + 0.5 * random.normal(k2, (n, 2))
    return x, labels


def main():
    key = random.PRNGKey(0)
    data_key, init_key = random.split(key)
    x, y = make_data(data_key)
    init_fn, apply_fn = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3),
                                    stax.LogSoftmax)
    _, params = init_fn(init_key, (-1, 2))
    opt_init, opt_update, get_params = optimizers.adam(1e-2)

    def loss(params, x, y):
        logp = apply_fn(params, x)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(i, state):
        value, grads = jax.value_and_grad(loss)(get_params(state), x, y)
        return opt_update(i, grads, state), value

    state = opt_init(params)
    losses = []
    for i in range(30):
        state, value = step(i, state)
        losses.append(value)
    accuracy = jnp.mean(jnp.argmax(apply_fn(get_params(state), x), axis=1) == y)
    return {"losses": jnp.stack(losses), "accuracy": accuracy,
            "params": get_params(state)}
