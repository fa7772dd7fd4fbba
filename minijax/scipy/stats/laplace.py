"""The Laplace (double exponential) distribution."""
from __future__ import annotations

from ... import lax
from ._common import promote, like


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    linear = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear, lax.log(lax.mul(like(scale, 2), scale))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    diff = lax.div(lax.sub(x, loc), scale)
    half = like(diff, 0.5)
    return lax.select(lax.le(diff, like(diff, 0)), lax.mul(half, lax.exp(diff)),
                      lax.sub(like(diff, 1), lax.mul(half, lax.exp(lax.neg(diff)))))
