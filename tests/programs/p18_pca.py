"""Principal components of correlated data via SVD and via the covariance's eigh."""
import jax
import jax.numpy as jnp
from jax import random


def main():
    key = random.PRNGKey(13)
    mixing = jnp.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.3]])
    data = random.normal(key, (30, 3)) @ mixing
    centred = data - jnp.mean(data, axis=0)
    _, s, _ = jnp.linalg.svd(centred, full_matrices=False)
    explained = s ** 2 / jnp.sum(s ** 2)
    evals, _ = jnp.linalg.eigh(centred.T @ centred / (data.shape[0] - 1))
    return {"explained": explained, "eigenvalues": evals,
            "logdet": jnp.linalg.slogdet(centred.T @ centred)[1]}
