"""k-means clustering: random initial centres, a fixed number of Lloyd iterations."""
import jax
import jax.numpy as jnp
from jax import lax, random


def lloyd_step(centres, points):
    d2 = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
    assignment = jnp.argmin(d2, axis=1)
    onehot = jax.nn.one_hot(assignment, centres.shape[0])
    counts = jnp.sum(onehot, axis=0)
    sums = onehot.T @ points
    return jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1)[:, None], centres)


def main():
    kp, kc = random.split(random.PRNGKey(4))
    points = jnp.concatenate([random.normal(kp, (10, 2)) + 3.0,
                              random.normal(kc, (10, 2)) - 3.0])
    idx = random.choice(random.PRNGKey(8), points.shape[0], (2,), replace=False)
    centres = points[idx]
    centres = jax.jit(lambda c: lax.fori_loop(0, 5, lambda i, c: lloyd_step(c, points), c))(
        centres)
    order = jnp.argsort(centres[:, 0])
    return {"centres": centres[order], "perm": random.permutation(random.PRNGKey(2), 6)}
