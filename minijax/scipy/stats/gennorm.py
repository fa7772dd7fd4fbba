"""The generalized normal distribution with shape `beta` (2: normal, 1: Laplace)."""
from __future__ import annotations

from ... import lax
from ._common import promote, like


def logpdf(x, beta):
    x, beta = promote("gennorm.logpdf", x, beta)
    log_normalizer = lax.sub(lax.log(lax.mul(like(beta, 0.5), beta)),
                             lax.lgamma(lax.div(like(beta, 1), beta)))
    return lax.sub(log_normalizer, lax.pow(lax.abs(x), beta))


def pdf(x, beta):
    return lax.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = promote("gennorm.cdf", x, beta)
    mass = lax.igamma(lax.div(like(beta, 1), beta), lax.pow(lax.abs(x), beta))
    return lax.mul(like(x, 0.5), lax.add(like(x, 1), lax.mul(lax.sign(x), mass)))
