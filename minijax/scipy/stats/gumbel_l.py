"""The left-skewed Gumbel distribution (of minima): sf exp(-exp((x - loc) / scale))."""
from __future__ import annotations

from ... import lax
from ._gumbel import standardized, valid_quantile, nan_unless


def logpdf(x, loc=0, scale=1):
    z, ok, scale = standardized("gumbel_l.logpdf", x, loc, scale)
    return nan_unless(ok, lax.sub(lax.sub(z, lax.exp(z)), lax.log(scale)))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    z, ok, _ = standardized("gumbel_l.logcdf", x, loc, scale)
    return nan_unless(ok, lax.log(lax.neg(lax.expm1(lax.neg(lax.exp(z))))))


def cdf(x, loc=0, scale=1):
    return lax.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    z, ok, _ = standardized("gumbel_l.logsf", x, loc, scale)
    return nan_unless(ok, lax.neg(lax.exp(z)))


def sf(x, loc=0, scale=1):
    return lax.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale, ok = valid_quantile("gumbel_l.ppf", p, loc, scale)
    return nan_unless(ok, lax.add(loc, lax.mul(scale, lax.log(lax.neg(lax.log1p(lax.neg(p)))))))
