"""The Cauchy distribution."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, outside_unit_interval, NAN


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.mul(like(scale, np.pi), scale))
    return lax.neg(lax.add(normalizer, lax.log1p(lax.square(scaled_x))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(like(x, 0.5), lax.mul(like(x, 1 / np.pi), lax.atan(scaled_x)))


def logcdf(x, loc=0, scale=1):
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    return lax.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.mul(like(q, np.pi), lax.sub(q, like(q, 0.5))))
    unscaled = jnp.where(q == 0, -np.inf, jnp.where(q == 1, np.inf, unscaled))
    return jnp.where(outside_unit_interval(q), NAN, lax.add(lax.mul(unscaled, scale), loc))


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return ppf(lax.sub(like(q, 1), q), loc, scale)
