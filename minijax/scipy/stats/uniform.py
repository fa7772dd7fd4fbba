"""The uniform distribution on [loc, loc + scale]."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from ._common import promote, outside_unit_interval, NEG_INF, NAN


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    return jnp.where((x > lax.add(loc, scale)) | (x < loc), NEG_INF, lax.neg(lax.log(scale)))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    # JAX 0.12's form: clip propagates a NaN in any argument, and its maximum and
    # minimum split the derivative at the ends of the support (half of 1/scale at
    # x == loc and x == loc + scale; JAX 0.10 and 0.11 give all of it there).
    return jnp.clip(lax.div(lax.sub(x, loc), scale), 0, 1)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(outside_unit_interval(q), NAN, lax.add(loc, lax.mul(scale, q)))
