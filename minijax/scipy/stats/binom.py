"""The binomial distribution: k successes in n trials of probability p (+ loc)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    one, zero = like(y, 1), like(y, 0)
    log_comb = lax.sub(special.gammaln(lax.add(n, one)),
                       lax.add(special.gammaln(lax.add(y, one)),
                               special.gammaln(lax.add(lax.sub(n, y), one))))
    log_linear = lax.add(special.xlogy(y, p), special.xlog1py(lax.sub(n, y), lax.neg(p)))
    # Certain outcomes (n = 0, or p at 0 or 1 with the matching k) are exactly log 1;
    # the lgamma terms would leave rounding there.
    certain = ((y == zero) & (n == zero)) | (log_linear == zero)
    log_probs = jnp.where(certain, zero, lax.add(log_comb, log_linear))
    return jnp.where((k >= loc) & (k < lax.add(lax.add(loc, n), one)), log_probs, NEG_INF)


def pmf(k, n, p, loc=0):
    return lax.exp(logpmf(k, n, p, loc))
