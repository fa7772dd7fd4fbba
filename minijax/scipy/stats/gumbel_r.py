"""The right-skewed Gumbel distribution (of maxima): cdf exp(-exp(-(x - loc) / scale))."""
from __future__ import annotations

from ... import lax
from ._common import like, log1mexp
from ._gumbel import standardized, valid_quantile, nan_unless


def logpdf(x, loc=0, scale=1):
    z, ok, scale = standardized("gumbel_r.logpdf", x, loc, scale)
    return nan_unless(ok, lax.sub(lax.neg(lax.add(z, lax.exp(lax.neg(z)))), lax.log(scale)))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    z, ok, _ = standardized("gumbel_r.logcdf", x, loc, scale)
    return nan_unless(ok, lax.neg(lax.exp(lax.neg(z))))


def cdf(x, loc=0, scale=1):
    return lax.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, ok, _ = standardized("gumbel_r.sf", x, loc, scale)
    return nan_unless(ok, lax.sub(like(z, 1), lax.exp(lax.neg(lax.exp(lax.neg(z))))))


def logsf(x, loc=0, scale=1):
    z, ok, _ = standardized("gumbel_r.logsf", x, loc, scale)
    return nan_unless(ok, log1mexp(lax.exp(lax.neg(z))))


def ppf(p, loc=0, scale=1):
    p, loc, scale, ok = valid_quantile("gumbel_r.ppf", p, loc, scale)
    return nan_unless(ok, lax.sub(loc, lax.mul(scale, lax.log(lax.neg(lax.log(p))))))
