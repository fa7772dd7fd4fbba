"""The Cauchy distribution."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, outside_unit_interval, NAN


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.mul(like(scale, np.pi), scale))
    return lax.neg(lax.add(normalizer, lax.log1p(lax.square(scaled_x))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(like(x, 0.5), lax.mul(like(x, 1 / np.pi), lax.atan(scaled_x)))


def logcdf(x, loc=0, scale=1):
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    return lax.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    # As JAX 0.12: tan(pi (q - 1/2)) = -1 / tan(pi q) = 1 / tan(pi (1 - q)), the last
    # two below and above 1/2, keep tan's argument near 0, exact in both tails and
    # -inf, inf at q = 0, 1.
    pi, one = like(q, np.pi), like(q, 1)
    upper = q > 0.5
    tails = lax.div(jnp.where(upper, one, lax.neg(one)),
                    lax.tan(lax.mul(pi, jnp.where(upper, lax.sub(one, q), lax.abs(q)))))
    # At q = 1/2 the tail forms are 1 / tan(fl(pi / 2)), not 0. pi (q - 1/2) is 0 there
    # with the true derivative, pi; JAX 0.12's constant 0 has derivative 0 (registry
    # entry "cauchy_quantile_derivative_at_the_median_is_zero").
    centre = lax.mul(pi, lax.sub(q, like(q, 0.5)))
    unscaled = jnp.where(q == 0.5, centre, tails)
    return jnp.where(outside_unit_interval(q), NAN, lax.add(lax.mul(unscaled, scale), loc))


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    # -ppf(q) of the mirrored distribution, as JAX 0.12: ppf(1 - q) would round 1 - q
    # and lose the upper tail.
    return lax.neg(ppf(q, lax.neg(loc), scale))
