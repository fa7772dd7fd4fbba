"""The beta-binomial distribution: binomial with p drawn from beta(a, b).

k is floored; outside 0..n (+ loc) the log-pmf is -inf, and it is NaN for n < 0 or
non-positive a or b."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from ...frontend.eager_jit import jitted_eagerly
from .. import special
from ._common import promote, like, NEG_INF, NAN


@jitted_eagerly()
def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = like(y, 1), like(y, 0)
    # log C(n, y) = -log(n + 1) - betaln(n - y + 1, y + 1)
    log_comb = lax.neg(lax.add(lax.log1p(n), special.betaln(lax.add(lax.sub(n, y), one),
                                                            lax.add(y, one))))
    log_beta_ratio = lax.sub(special.betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)),
                             special.betaln(a, b))
    log_probs = jnp.where((y == zero) & (n == zero), zero, lax.add(log_comb, log_beta_ratio))
    outside = (y < lax.neg(loc)) | (y > n) | (lax.add(y, a) <= zero)
    log_probs = jnp.where(outside, NEG_INF, log_probs)
    return jnp.where((n < zero) | (a <= zero) | (b <= zero), NAN, log_probs)


def pmf(k, n, a, b, loc=0):
    return lax.exp(logpmf(k, n, a, b, loc))
