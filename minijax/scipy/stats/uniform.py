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
    inside = lax.div(lax.sub(x, loc), scale)
    return jnp.where(x < loc, 0.0, jnp.where(x > lax.add(loc, scale), 1.0, inside))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(outside_unit_interval(q), NAN, lax.add(loc, lax.mul(scale, q)))
