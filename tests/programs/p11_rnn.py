"""A character-level style RNN unrolled with scan, trained with plain SGD under jit."""
import jax
import jax.numpy as jnp
from jax import lax, random


def init(key, vocab=5, hidden=8):
    k1, k2, k3 = random.split(key, 3)
    scale = 0.3
    return {"wx": scale * random.normal(k1, (vocab, hidden)),
            "wh": scale * random.normal(k2, (hidden, hidden)),
            "wy": scale * random.normal(k3, (hidden, vocab)),
            "b": jnp.zeros(hidden)}


def loss(params, inputs, targets):
    def cell(h, xt):
        x, t = xt
        h = jnp.tanh(params["wx"][x] + h @ params["wh"] + params["b"])
        logp = jax.nn.log_softmax(h @ params["wy"])
        return h, logp[t]

    _, logps = lax.scan(cell, jnp.zeros(params["wh"].shape[0]), (inputs, targets))
    return -jnp.mean(logps)


def main():
    seq = jnp.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1])
    params = init(random.PRNGKey(0))
    step = jax.jit(lambda p: jax.tree_util.tree_map(
        lambda a, g: a - 0.5 * g, p, jax.grad(loss)(p, seq[:-1], seq[1:])))
    for _ in range(15):
        params = step(params)
    return {"loss": loss(params, seq[:-1], seq[1:]), "params": params}
