"""The two Gumbel distributions: `gumbel_r` (of maxima) and `gumbel_l` (of minima,
its mirror image). Every function is NaN where `scale` is not positive."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, NAN


def standardized(fname, x, loc, scale):
    """(z, scale > 0) with z = (x - loc) / scale."""
    x, loc, scale = promote(fname, x, loc, scale)
    return lax.div(lax.sub(x, loc), scale), scale > like(scale, 0), scale


def valid_quantile(fname, p, loc, scale):
    """(p, loc, scale, 0 < p < 1)."""
    p, loc, scale = promote(fname, p, loc, scale)
    return p, loc, scale, (p > like(p, 0)) & (p < like(p, 1))


def nan_unless(ok, value):
    return jnp.where(ok, value, NAN)
