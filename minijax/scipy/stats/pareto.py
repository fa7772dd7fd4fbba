"""The Pareto distribution with shape `b`, support x >= loc + scale.

The support test is on the standardized point, (x - loc) / scale < 1, as in JAX 0.12
(0.10 and 0.11 compare x with loc + scale, which rounds differently)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, outside_unit_interval, NEG_INF, NAN


def _standardized(fname, x, b, loc, scale):
    x, b, loc, scale = promote(fname, x, b, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return y, b, scale, y < like(y, 1)


def logpdf(x, b, loc=0, scale=1):
    y, b, scale, below = _standardized("pareto.logpdf", x, b, loc, scale)
    log_probs = lax.neg(lax.add(lax.log(lax.div(scale, b)),
                                lax.mul(lax.add(b, like(b, 1)), lax.log(y))))
    return jnp.where(below, NEG_INF, log_probs)


def pdf(x, b, loc=0, scale=1):
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    y, b, _, below = _standardized("pareto.cdf", x, b, loc, scale)
    return jnp.where(below, like(y, 0), lax.sub(like(y, 1), lax.pow(y, lax.neg(b))))


def logcdf(x, b, loc=0, scale=1):
    y, b, _, below = _standardized("pareto.logcdf", x, b, loc, scale)
    return jnp.where(below, NEG_INF, lax.log1p(lax.neg(lax.pow(y, lax.neg(b)))))


def logsf(x, b, loc=0, scale=1):
    y, b, _, below = _standardized("pareto.logsf", x, b, loc, scale)
    return jnp.where(below, like(y, 0), lax.neg(lax.mul(b, lax.log(y))))


def sf(x, b, loc=0, scale=1):
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = like(q, 1)
    quantile = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(outside_unit_interval(q), NAN, quantile)
