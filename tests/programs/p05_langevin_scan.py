"""Unadjusted Langevin dynamics, one scan over pre-split keys, vmapped over chains."""
import jax
import jax.numpy as jnp
from jax import lax, random


def log_prob(x):
    return -jnp.sum((x - 1.0) ** 2 / 0.5) - 0.1 * jnp.sum(x ** 4)


def run_chain(key, x0, n_steps=25, step=0.05):
    def body(x, k):
        noise = random.normal(k, x.shape)
        x = x + step * jax.grad(log_prob)(x) + jnp.sqrt(2 * step) * noise
        return x, x

    _, trajectory = lax.scan(body, x0, random.split(key, n_steps))
    return trajectory


def main():
    keys = random.split(random.PRNGKey(7), 4)
    x0 = jnp.zeros((4, 3))
    trajectories = jax.jit(jax.vmap(run_chain))(keys, x0)
    return {"final": trajectories[:, -1], "mean": jnp.mean(trajectories, axis=(0, 1))}
