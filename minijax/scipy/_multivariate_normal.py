"""`multivariate_normal.logpdf` / `pdf`: the Gaussian density, through a Cholesky factor.

For x ~ N(mean, cov) in n dimensions,

    log p(x) = -½ (x - mean)ᵀ cov⁻¹ (x - mean) - (n/2) log 2π - ½ log det cov.

With cov = L Lᵀ both terms come from L: the quadratic form is |L⁻¹ (x - mean)|² (one
triangular solve) and ½ log det cov = Σ log Lᵢᵢ. A scalar `cov` means cov·I; a
scalar `mean` is the one-dimensional case. Leading axes of x, mean and cov broadcast.
"""
from __future__ import annotations

import numpy as np

from ..frontend import linalg_ops as lax_linalg
from .. import numpy as jnp
from ..numpy._promotion import promote_dtypes_inexact, shape_of

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise ValueError("multivariate_normal.logpdf: allow_singular is not supported; "
                         "pass a positive definite cov")
    # Python scalars stay weakly typed, as in JAX
    x, mean, cov = promote_dtypes_inexact("multivariate_normal.logpdf", x, mean, cov)
    log_2pi = float(np.log(2 * np.pi))  # a Python float: weakly typed, like JAX's
    if not shape_of(mean):
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log_2pi + jnp.log(cov))
    n = shape_of(mean)[-1]
    diff = x - mean
    if not shape_of(cov):
        return (-0.5 * jnp.sum(diff * diff, axis=-1) / cov
                - n / 2 * (log_2pi + jnp.log(cov)))
    if len(shape_of(cov)) < 2 or shape_of(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                         f"{shape_of(mean)} and cov {shape_of(cov)} (cov must be ({n}, {n}))")
    chol = lax_linalg.cholesky(cov)
    batch = jnp.broadcast_shapes(shape_of(diff)[:-1], shape_of(chol)[:-2])
    chol_b = jnp.broadcast_to(chol, batch + (n, n))
    diff_b = jnp.broadcast_to(diff, batch + (n,))[..., None]
    whitened = lax_linalg.triangular_solve(chol_b, diff_b, left_side=True, lower=True)[..., 0]
    log_det_half = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(whitened * whitened, axis=-1) - n / 2 * log_2pi - log_det_half


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
