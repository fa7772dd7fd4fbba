"""Hamiltonian Monte Carlo on a correlated 2-d Gaussian, leapfrog in a fori_loop."""
import jax
import jax.numpy as jnp
from jax import lax, random

PRECISION = jnp.array([[2.0, -1.2], [-1.2, 1.5]])


def log_density(q):
    return -0.5 * q @ PRECISION @ q


def leapfrog(q, p, step_size, n_steps):
    grad_u = jax.grad(lambda q: -log_density(q))

    def body(_, state):
        q, p = state
        p = p - 0.5 * step_size * grad_u(q)
        q = q + step_size * p
        p = p - 0.5 * step_size * grad_u(q)
        return q, p

    return lax.fori_loop(0, n_steps, body, (q, p))


@jax.jit
def hmc_step(q, key):
    k_momentum, k_accept = random.split(key)
    p = random.normal(k_momentum, q.shape)
    q_new, p_new = leapfrog(q, p, 0.2, 5)
    current = -log_density(q) + 0.5 * p @ p
    proposed = -log_density(q_new) + 0.5 * p_new @ p_new
    accept = random.uniform(k_accept) < jnp.exp(current - proposed)
    return jnp.where(accept, q_new, q), accept


def main():
    q = jnp.array([1.0, -1.0])
    samples, accepts = [], []
    for key in random.split(random.PRNGKey(3), 20):
        q, accepted = hmc_step(q, key)
        samples.append(q)
        accepts.append(accepted)
    return {"samples": jnp.stack(samples), "accepted": jnp.stack(accepts)}
