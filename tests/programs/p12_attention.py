"""Single-head self-attention with layer normalisation and a causal mask."""
import jax
import jax.numpy as jnp
from jax import random


def layer_norm(x, gamma, beta):
    return gamma * jax.nn.standardize(x, axis=-1, epsilon=1e-5) + beta


def attention(params, x):
    q, k, v = x @ params["wq"], x @ params["wk"], x @ params["wv"]
    scores = q @ k.T / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones((x.shape[0], x.shape[0]), bool))
    scores = jnp.where(mask, scores, -1e9)
    out = jax.nn.softmax(scores, axis=-1) @ v
    return layer_norm(x + out @ params["wo"], params["gamma"], params["beta"])


def main():
    keys = random.split(random.PRNGKey(9), 5)
    d = 8
    init = jax.nn.initializers.lecun_normal()
    params = {name: init(k, (d, d)) for name, k in zip(["wq", "wk", "wv", "wo"], keys)}
    params["gamma"], params["beta"] = jnp.ones(d), jnp.zeros(d)
    x = random.normal(keys[4], (6, d))
    loss = lambda p: jnp.sum(jax.nn.gelu(attention(p, x)) ** 2)
    value, grads = jax.jit(jax.value_and_grad(loss))(params)
    batched = jax.vmap(attention, in_axes=(None, 0))(params, jnp.stack([x, 2 * x]))
    return {"value": value, "grads": grads, "batched": batched}
