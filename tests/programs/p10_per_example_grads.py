"""Logistic regression with per-example gradients (vmap of grad) and clipping."""
import jax
import jax.numpy as jnp
from jax import random


def loss(w, b, x, y):
    logit = x @ w + b
    return jnp.logaddexp(0.0, logit) - y * logit


def main():
    kx, ky = random.split(random.PRNGKey(11))
    x = random.normal(kx, (12, 4))
    y = random.bernoulli(ky, 0.5, (12,)).astype(jnp.float32)
    w, b = jnp.zeros(4), 0.0
    per_example = jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0)))
    for _ in range(10):
        gw, gb = per_example(w, b, x, y)
        norms = jnp.sqrt(jnp.sum(gw ** 2, axis=1) + gb ** 2)
        scale = jnp.minimum(1.0, 1.0 / norms)
        w = w - 0.5 * jnp.mean(gw * scale[:, None], axis=0)
        b = b - 0.5 * jnp.mean(gb * scale)
    return {"w": w, "b": b, "loss": jnp.mean(jax.vmap(loss, (None, None, 0, 0))(w, b, x, y)),
            "prob": jax.nn.sigmoid(x @ w + b)}
