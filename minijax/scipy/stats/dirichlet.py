"""The Dirichlet distribution on the simplex, with concentrations `alpha` (1-D).

`x` has alpha's length along its first axis, or one less (the last coordinate is then
1 minus the others); points off the simplex (a coordinate <= 0, or a sum more than
1e-6 from 1) have log density -inf."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ...numpy._promotion import promote_dtypes_inexact, shape_of, like


def logpdf(x, alpha):
    x, alpha = promote_dtypes_inexact("dirichlet.logpdf", x, alpha)
    x_shape, alpha_shape = shape_of(x), shape_of(alpha)
    if len(alpha_shape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_shape}")
    if not x_shape or x_shape[0] not in (alpha_shape[0], alpha_shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or "
                         f"one entry fewer; got x.shape={x_shape}, alpha.shape={alpha_shape}")
    one = like(x, 1)
    if x_shape[0] != alpha_shape[0]:
        x = jnp.concatenate([x, lax.sub(one, jnp.sum(x, axis=0, keepdims=True))], axis=0)
    log_normalizer = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    if len(x_shape) > 1:
        alpha = jnp.reshape(alpha, alpha_shape + (1,) * (len(x_shape) - 1))
    log_probs = jnp.sum(special.xlogy(alpha - one, x), axis=0) - log_normalizer
    on_simplex = jnp.all(x > 0, axis=0) & (abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(on_simplex, log_probs, -np.inf)


def pdf(x, alpha):
    return lax.exp(logpdf(x, alpha))
