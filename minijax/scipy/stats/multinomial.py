"""The multinomial distribution: counts `x` (last axis) of `n` draws with probabilities `p`.

As JAX 0.12: `x` and `n` must be integers (a float count is JAX's ValueError), and the
support test sums over the last axis only, so batched counts are tested row by row
(0.10 and 0.11 sum over every axis)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ...numpy._promotion import promote_dtypes_inexact, promote_dtypes_numeric, dtype_of


def logpmf(x, n, p):
    p, = promote_dtypes_inexact("multinomial.logpmf", p)
    x, n = promote_dtypes_numeric("multinomial.logpmf", x, n)
    if not np.issubdtype(dtype_of(x), np.integer):
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type; got "
                         f"x.dtype={dtype_of(x)}, n.dtype={dtype_of(n)}")
    in_support = jnp.sum(x, axis=-1, dtype=dtype_of(x)) == n
    x, n = jnp.astype(x, dtype_of(p)), jnp.astype(n, dtype_of(p))
    log_probs = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1),
                                                 axis=-1)
    return jnp.where(in_support, log_probs, -np.inf)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
