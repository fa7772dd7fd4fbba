"""Gradient checkpointing of an MLP with named policies; gradients must not change."""
import jax
import jax.numpy as jnp
from jax import random


def mlp(params, x):
    for w in params:
        x = jnp.sin(x @ w)
    return jnp.sum(x ** 2)


def main():
    keys = random.split(random.PRNGKey(6), 4)
    params = [0.5 * random.normal(k, (5, 5)) for k in keys]
    x = jnp.ones((2, 5))
    results = {}
    for name in ["nothing_saveable", "dots_saveable", "everything_saveable"]:
        policy = getattr(jax.checkpoint_policies, name)
        f = jax.checkpoint(mlp, policy=policy)
        results[name] = jax.jit(jax.grad(f))(params, x)
    results["plain"] = jax.grad(mlp)(params, x)
    return results
