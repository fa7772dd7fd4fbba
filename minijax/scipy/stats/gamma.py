"""The gamma distribution with shape `a`, shifted by `loc` and stretched by `scale`."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    inside = x >= loc
    # Outside the support y is 1, not negative: its (unused) log stays finite, and
    # so does the gradient.
    y = jnp.where(inside, lax.div(lax.sub(x, loc), scale), like(x, 1))
    log_linear = lax.sub(special.xlogy(lax.sub(a, like(a, 1)), y), y)
    log_probs = lax.sub(log_linear, lax.add(special.gammaln(a), lax.log(scale)))
    return jnp.where(inside, log_probs, NEG_INF)


def pdf(x, a, loc=0, scale=1):
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    # clamp (not clip): its derivative is a select, so a log outside the support
    # (logcdf) back-propagates 0 rather than inf * 0.
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return special.gammainc(a, lax.clamp(like(y, 0), y, like(y, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(y < 0, like(y, 1), special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    return lax.log(sf(x, a, loc, scale))
