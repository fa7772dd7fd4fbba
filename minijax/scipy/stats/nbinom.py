"""The negative binomial distribution: k failures before the n-th success (+ loc)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    log_comb = lax.sub(lax.sub(special.gammaln(lax.add(y, n)), special.gammaln(n)),
                       special.gammaln(lax.add(y, like(y, 1))))
    log_linear = lax.add(special.xlogy(n, p), special.xlogy(y, lax.sub(like(p, 1), p)))
    return jnp.where(k < loc, NEG_INF, lax.add(log_comb, log_linear))


def pmf(k, n, p, loc=0):
    return lax.exp(logpmf(k, n, p, loc))
