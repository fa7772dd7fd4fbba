"""The Bernoulli distribution: 1 with probability `p`, else 0 (shifted by `loc`)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, outside_unit_interval, NEG_INF, NAN


def logpmf(k, p, loc=0):
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = lax.add(special.xlogy(x, p), special.xlog1py(lax.sub(like(x, 1), x), -p))
    return jnp.where((x < 0) | (x > 1), NEG_INF, log_probs)


def pmf(k, p, loc=0):
    return lax.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote("bernoulli.cdf", k, p)
    invalid = jnp.isnan(k) | outside_unit_interval(p)
    zero, one = like(k, 0), like(k, 1)
    return jnp.where(invalid, NAN,
                     jnp.where(k < 0, zero, jnp.where(k < 1, lax.sub(one, p), one)))


def ppf(q, p):
    q, p = promote("bernoulli.ppf", q, p)
    invalid = outside_unit_interval(q) | outside_unit_interval(p)
    zero, one = like(q, 0), like(q, 1)
    return jnp.where(invalid, NAN, jnp.where(q <= lax.sub(one, p), zero, one))
