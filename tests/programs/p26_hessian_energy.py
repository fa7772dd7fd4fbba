"""Normal modes of small spring systems: hessian and jacfwd(jacrev) of the energy, vmapped."""
import jax
import jax.numpy as jnp
from jax import random


def energy(positions, stiffness, rest):
    diffs = positions[:, None, :] - positions[None, :, :]
    dist = jnp.sqrt(jnp.sum(diffs ** 2, axis=-1) + jnp.eye(positions.shape[0]))
    stretch = (dist - rest) * (1.0 - jnp.eye(positions.shape[0]))
    return 0.25 * jnp.sum(stiffness * stretch ** 2) + 0.1 * jnp.sum(positions ** 4)


def modes(positions, stiffness, rest):
    n = positions.size
    hess = jax.hessian(energy)(positions, stiffness, rest).reshape(n, n)
    alt = jax.jacfwd(jax.jacrev(energy))(positions, stiffness, rest).reshape(n, n)
    return jnp.linalg.eigvalsh(hess + 1e-3 * jnp.eye(n)), jnp.max(jnp.abs(hess - alt))


@jax.jit
def analyse(positions, stiffness, rest):
    eigs, gaps = jax.vmap(modes, in_axes=(0, None, None))(positions, stiffness, rest)
    forces = -jax.vmap(jax.grad(energy), in_axes=(0, None, None))(positions, stiffness, rest)
    d_stiffness = jax.grad(lambda k: jnp.sum(jax.vmap(energy, in_axes=(0, None, None))(
        positions, k, rest)))(stiffness)
    tangents = (jnp.ones_like(positions[0]), jnp.zeros_like(stiffness), jnp.zeros_like(rest))
    hvp = jax.jvp(jax.grad(energy), (positions[0], stiffness, rest), tangents)[1]
    return {"eigs": eigs, "gaps_small": gaps < 1e-4, "forces": forces,
            "d_stiffness": d_stiffness, "hvp": hvp}


def main():
    positions = random.normal(random.PRNGKey(26), (4, 3, 2))
    stiffness = jnp.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.5], [2.0, 0.5, 0.0]])
    return analyse(positions, stiffness, jnp.ones((3, 3)))
