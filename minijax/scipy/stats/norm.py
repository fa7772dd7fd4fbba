"""The normal distribution N(loc, scale^2)."""
from __future__ import annotations

import numpy as np

from ... import lax
from .. import special
from ._common import promote, like


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    variance = lax.square(scale)
    log_normalizer = lax.log(lax.mul(like(x, 2 * np.pi), variance))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), variance)
    return lax.div(lax.add(log_normalizer, quadratic), like(x, -2))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    """The survival function 1 - cdf, computed as the cdf of the mirrored point."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q, loc=0, scale=1):
    """The quantile function, loc + scale * ndtri(q)."""
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return lax.add(lax.mul(special.ndtri(q), scale), loc)


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return ppf(lax.sub(like(q, 1), q), loc, scale)
