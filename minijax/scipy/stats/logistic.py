"""The logistic distribution."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    half_z = lax.div(z, like(z, 2))
    # -2 log(e^(z/2) + e^(-z/2)) - log(scale): symmetric, so neither tail overflows.
    return lax.sub(lax.mul(like(z, -2), jnp.logaddexp(half_z, lax.neg(half_z))),
                   lax.log(scale))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return special.expit(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return special.expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("logistic.ppf", q, loc, scale)
    return lax.add(lax.mul(special.logit(q), scale), loc)


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("logistic.isf", q, loc, scale)
    return lax.add(lax.mul(lax.neg(special.logit(q)), scale), loc)
