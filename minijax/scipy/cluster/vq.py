"""`minijax.scipy.cluster.vq.vq`: vector quantization, as `jax.scipy.cluster.vq`."""
from __future__ import annotations

from ... import numpy as jnp
from ...frontend.eager_jit import jitted_eagerly
from ...numpy._promotion import as_operand, promote_dtypes_inexact

__all__ = ["vq"]


@jitted_eagerly("check_finite")
def vq(obs, code_book, check_finite: bool = True):
    """(code, dist): for each observation (a row of `obs`, or an entry of a 1-d
    `obs`) the index of the nearest code in `code_book` and the Euclidean distance to
    it. `check_finite` is accepted and unused, as in JAX."""
    obs, code_book = (jnp.asarray(a) for a in promote_dtypes_inexact(
        "scipy.cluster.vq.vq", as_operand("scipy.cluster.vq.vq", obs),
        as_operand("scipy.cluster.vq.vq", code_book)))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
