"""The Poisson distribution with rate `mu` (shifted by `loc`)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpmf(k, mu, loc=0):
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), NEG_INF, log_probs)


def pmf(k, mu, loc=0):
    return lax.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """P(K <= k) = Q(floor(k - loc) + 1, mu), the regularized upper incomplete gamma."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = lax.sub(k, loc)
    p = special.gammaincc(lax.floor(lax.add(like(x, 1), x)), mu)
    return jnp.where(x < 0, like(p, 0), p)


def logcdf(k, mu, loc=0):
    return lax.log(cdf(k, mu, loc))
