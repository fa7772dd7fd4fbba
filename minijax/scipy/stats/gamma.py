"""The gamma distribution with shape `a`, shifted by `loc` and stretched by `scale`."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    log_linear = lax.sub(special.xlogy(lax.sub(a, like(a, 1)), y), y)
    log_probs = lax.sub(log_linear, lax.add(special.gammaln(a), lax.log(scale)))
    return jnp.where(x < loc, NEG_INF, log_probs)


def pdf(x, a, loc=0, scale=1):
    return lax.exp(logpdf(x, a, loc, scale))


def _standardized(fname, x, a, loc, scale):
    x, a, loc, scale = promote(fname, x, a, loc, scale)
    return a, jnp.clip(lax.div(lax.sub(x, loc), scale), 0, np.inf)


def cdf(x, a, loc=0, scale=1):
    return special.gammainc(*_standardized("gamma.cdf", x, a, loc, scale))


def logcdf(x, a, loc=0, scale=1):
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    return special.gammaincc(*_standardized("gamma.sf", x, a, loc, scale))


def logsf(x, a, loc=0, scale=1):
    return lax.log(sf(x, a, loc, scale))
