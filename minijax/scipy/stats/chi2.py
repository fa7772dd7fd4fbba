"""The chi-squared distribution with `df` degrees of freedom: gamma(df / 2, scale 2)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpdf(x, df, loc=0, scale=1):
    # xlogy (JAX 0.12's): with df = 2 the density at x = loc is 1/2, not NaN.
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, like(df, 2))
    kernel = lax.sub(special.xlogy(lax.sub(half_df, like(df, 1)), y), lax.div(y, like(y, 2)))
    normalizer = lax.add(lax.lgamma(half_df), lax.mul(half_df, like(df, np.log(2))))
    log_probs = lax.add(lax.sub(lax.neg(normalizer), lax.log(scale)), kernel)
    return jnp.where(x < loc, NEG_INF, log_probs)


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))


def _half_df_and_clamped(fname, x, df, loc, scale):
    # clamp, as gamma.cdf: below the support the argument is 0 and its derivative 0.
    x, df, loc, scale = promote(fname, x, df, loc, scale)
    y = lax.div(lax.sub(x, loc), lax.mul(scale, like(scale, 2)))
    return lax.div(df, like(df, 2)), lax.clamp(like(y, 0), y, like(y, np.inf))


def cdf(x, df, loc=0, scale=1):
    return special.gammainc(*_half_df_and_clamped("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return special.gammaincc(*_half_df_and_clamped("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return lax.log(sf(x, df, loc, scale))
