"""The exponential distribution with rate 1/`scale`, starting at `loc`."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, outside_unit_interval, log1mexp, NEG_INF, NAN


def _standardized(fname, x, loc, scale):
    x, loc, scale = promote(fname, x, loc, scale)
    return x, lax.div(lax.sub(x, loc), scale), x < loc


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return jnp.where(x < loc, NEG_INF, log_probs)


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    _, z, below = _standardized("expon.cdf", x, loc, scale)
    return jnp.where(below, like(z, 0), lax.neg(lax.expm1(lax.neg(z))))


def logcdf(x, loc=0, scale=1):
    # JAX 0.12's log1mexp form (0.10 and 0.11 take log1p(-sf), which loses the far
    # tail); below loc log1mexp gets 1, so that its unused branch stays finite.
    _, z, below = _standardized("expon.logcdf", x, loc, scale)
    return jnp.where(below, NEG_INF, log1mexp(jnp.where(below, like(z, 1), z)))


def logsf(x, loc=0, scale=1):
    _, z, below = _standardized("expon.sf", x, loc, scale)
    return jnp.where(below, like(z, 0), lax.neg(z))


def sf(x, loc=0, scale=1):
    return lax.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    quantile = lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q))))
    return jnp.where(outside_unit_interval(q), NAN, quantile)
