"""Monte-Carlo estimates with vmap over keys: pi, an expectation, an integral."""
import jax
import jax.numpy as jnp
from jax import random


def estimate_pi(key, n=512):
    xy = random.uniform(key, (n, 2), minval=-1.0, maxval=1.0)
    return 4.0 * jnp.mean(jnp.sum(xy ** 2, axis=1) <= 1.0)


def expectation_of_cos(key, n=256):
    z = random.normal(key, (n,))
    return jnp.mean(jnp.cos(z))        # exact value: exp(-1/2)


def integral_exp(key, n=256):
    u = random.uniform(key, (n,))
    return jnp.mean(jnp.exp(u))        # exact value: e - 1


def main():
    keys = random.split(random.key(2024), 16)
    pis = jax.vmap(estimate_pi)(keys)
    cosines = jax.jit(jax.vmap(expectation_of_cos))(keys)
    integrals = jax.vmap(integral_exp)(random.split(random.fold_in(random.key(1), 5), 8))
    return {"pi": pis, "pi_mean": jnp.mean(pis), "cos": cosines,
            "integral": integrals, "exponential": random.exponential(keys[0], (3,)),
            "gumbel": random.gumbel(keys[1], (3,)), "bern": random.bernoulli(keys[2], 0.3, (5,))}
