"""The beta distribution on [loc, loc + scale] with shapes `a` and `b`."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF, NAN


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    one = like(x, 1)
    log_linear = lax.add(special.xlogy(lax.sub(a, one), y),
                         special.xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.sub(log_linear, special.betaln(a, b)), lax.log(scale))
    outside = (x > lax.add(loc, scale)) | (x < loc)
    invalid = (a <= 0) | (b <= 0) | (scale <= 0)
    return jnp.where(invalid, NAN, jnp.where(outside, NEG_INF, log_probs))


def pdf(x, a, b, loc=0, scale=1):
    return lax.exp(logpdf(x, a, b, loc, scale))


def _clamped(x, loc, scale):
    """(x - loc) / scale clamped to [0, 1]; clamp's derivative is a select, so
    logcdf outside the support back-propagates 0 rather than inf * 0."""
    y = lax.div(lax.sub(x, loc), scale)
    return lax.clamp(like(y, 0), y, like(y, 1))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _clamped(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """1 - cdf, as I_{1-y}(b, a) so that the upper tail keeps its precision."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, lax.sub(like(x, 1), _clamped(x, loc, scale)))


def logsf(x, a, b, loc=0, scale=1):
    return lax.log(sf(x, a, b, loc, scale))
