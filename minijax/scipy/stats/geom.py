"""The geometric distribution: the trial of the first success, k = 1, 2, ... (+ loc)."""
from __future__ import annotations

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import promote, like, NEG_INF


def logpmf(k, p, loc=0):
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = lax.add(special.xlog1py(lax.sub(x, like(x, 1)), lax.neg(p)), lax.log(p))
    return jnp.where(x <= like(x, 0), NEG_INF, log_probs)


def pmf(k, p, loc=0):
    return lax.exp(logpmf(k, p, loc))
