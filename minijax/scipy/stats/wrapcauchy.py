"""The wrapped Cauchy distribution on [0, 2 pi] with shape 0 < c < 1."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, NEG_INF, NAN


def logpdf(x, c):
    x, c = promote("wrapcauchy.logpdf", x, c)
    one, c2 = like(c, 1), lax.mul(c, c)
    denominator = lax.sub(lax.add(one, c2), lax.mul(lax.mul(like(c, 2), c), lax.cos(x)))
    log_probs = lax.sub(lax.sub(lax.log(lax.sub(one, c2)), like(x, np.log(2 * np.pi))),
                        lax.log(denominator))
    on_circle = (x >= like(x, 0)) & (x <= like(x, 2 * np.pi))
    valid = (c > like(c, 0)) & (c < one)
    return jnp.where(valid, jnp.where(on_circle, log_probs, NEG_INF), NAN)


def pdf(x, c):
    return lax.exp(logpdf(x, c))
