"""The normal distribution truncated to [a, b] (in standard units: the bounds apply to
(x - loc) / scale).

The mass of [a, b] is computed in the tail where it is small (both bounds on one side
of 0, mirrored to the left) as a difference of log_ndtr values, and in the middle as
log1p of the two tails' masses. As JAX 0.12: NaN where a >= b or either is NaN, and
a NaN x has a NaN cdf (0.10 and 0.11 give 1 there)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...frontend.eager_jit import jitted_eagerly
from .. import special
from . import norm
from ._common import promote, NEG_INF, NAN


def _log_difference(log_x, log_y):
    """log(x - y) from log x and log y."""
    return special.logsumexp(jnp.stack([log_x, log_y]), axis=0,
                             b=jnp.stack([jnp.ones_like(log_x), -jnp.ones_like(log_y)]))


def _log_mass(a, b):
    """log(ndtr(b) - ndtr(a))."""
    a, b = jnp.broadcast_arrays(a, b)
    right = a > 0
    central = ~((b <= 0) | right)
    tail = _log_difference(special.log_ndtr(jnp.where(right, -a, b)),
                           special.log_ndtr(jnp.where(right, -b, a)))
    return jnp.where(central, jnp.log1p(-special.ndtr(a) - special.ndtr(-b)), tail)


@jitted_eagerly()
def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    log_probs = lax.sub(norm.logpdf(x, loc, scale), _log_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    log_probs = jnp.where((z < a) | (z > b), NEG_INF, log_probs)
    return jnp.where(a < b, log_probs, NAN)


def pdf(x, a, b, loc=0, scale=1):
    return lax.exp(logpdf(x, a, b, loc, scale))


@jitted_eagerly()
def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_total = _log_mass(a, b)
    log_below = _log_mass(a, z) - log_total
    log_above = _log_mass(z, b) - log_total
    # Near 1 the cdf is more precise as 1 - sf.
    log_cdf = jnp.select([z >= b, z <= a, log_below > -0.1, z > a],
                         [0, -np.inf, jnp.log1p(-jnp.exp(log_above)), log_below], np.nan)
    return jnp.where(a < b, log_cdf, NAN)


def cdf(x, a, b, loc=0, scale=1):
    return lax.exp(logcdf(x, a, b, loc, scale))


@jitted_eagerly()
def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return lax.exp(logsf(x, a, b, loc, scale))
