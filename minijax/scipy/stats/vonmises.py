"""The von Mises distribution on the circle with concentration `kappa` (mean 0).

As JAX 0.12: kappa = 0 is the uniform density 1 / (2 pi) (0.10 and 0.11 give NaN
there), negative kappa NaN; log i0e keeps large kappa from overflowing."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from ._common import promote, like, NAN


def logpdf(x, kappa):
    x, kappa = promote("vonmises.logpdf", x, kappa)
    log_probs = lax.sub(lax.sub(lax.mul(kappa, lax.sub(lax.cos(x), lax.sign(kappa))),
                                like(x, float(np.log(2 * np.pi)))),
                        lax.log(lax.bessel_i0e(kappa)))
    return jnp.where(kappa >= like(kappa, 0), log_probs, NAN)


def pdf(x, kappa):
    return lax.exp(logpdf(x, kappa))
