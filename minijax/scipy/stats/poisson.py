"""The Poisson distribution with rate `mu` (shifted by `loc`)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ...frontend.eager_jit import jitted_eagerly
from ...numpy._promotion import promote_dtypes_inexact, shape_of
from ._common import promote, like, NEG_INF


def logpmf(k, mu, loc=0):
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    # JAX 0.12 tests k - loc for an integer (0.10 and 0.11 test k: the same for
    # an integer loc).
    return jnp.where((x < 0) | (jnp.round(x) != x), NEG_INF, log_probs)


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


def _entropy_by_summing(mu, terms, extent):
    """-sum_k p(k) log p(k) over k < min(terms, extent(mu)), per element of `mu`."""
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    log_probs = logpmf(k, mu, 0)
    kept = k < jnp.ceil(extent(mu))[None, :]
    return jnp.sum(jnp.where(kept, -jnp.exp(log_probs) * log_probs, 0.0), axis=0)


@jitted_eagerly()
def entropy(mu, loc=0):
    """The entropy of Poisson(mu) (`loc` only shifts it, so only its shape counts).

    Below 10 the terms of the sum up to mu + 20 are summed, below 100 those up to
    mu + 10 sqrt(mu) + 20 (250 at most), beyond that the asymptotic series
    log(2 pi e mu) / 2 - 1 / (12 mu). Each branch sees its own regime's mu only (1, 10
    or 100 elsewhere), so that no unused branch makes an inf or NaN gradient; the
    terms are -p log p from the log-pmf, which stays finite where p underflows
    (JAX 0.12's; 0.10 and 0.11 take entr(pmf), whose gradient is NaN there)."""
    mu, loc = promote_dtypes_inexact("poisson.entropy", mu, loc)
    shape = np.broadcast_shapes(shape_of(mu), shape_of(loc))
    flat = jnp.ravel(mu)
    small = _entropy_by_summing(jnp.where((flat == 0) | (flat >= 10), 1, flat), 35,
                                lambda m: m + 20)
    medium = _entropy_by_summing(jnp.where((flat < 10) | (flat >= 100), 10, flat), 250,
                                 lambda m: m + 10 * jnp.sqrt(m) + 20)
    large_mu = jnp.where(flat < 100, 100, flat)
    large = 0.5 * jnp.log(2 * np.pi * np.e * large_mu) - 1.0 / (12 * large_mu)
    result = jnp.where(flat == 0, jnp.zeros_like(flat),
                       jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
    return jnp.broadcast_to(jnp.reshape(result, shape_of(mu)), shape)
