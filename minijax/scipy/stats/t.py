"""Student's t distribution with `df` degrees of freedom."""
from __future__ import annotations

import numpy as np

from ... import lax
from ._common import promote, like


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, like(df, 2))
    half_df_plus_half = lax.add(half_df, like(df, 0.5))
    log_scale_term = lax.div(lax.log(lax.mul(lax.mul(lax.square(scale), like(x, np.pi)), df)),
                             like(x, 2))
    normalizer = lax.sub(lax.add(lax.lgamma(half_df), log_scale_term),
                         lax.lgamma(half_df_plus_half))
    quadratic = lax.div(lax.square(scaled_x), df)
    return lax.neg(lax.add(normalizer, lax.mul(half_df_plus_half, lax.log1p(quadratic))))


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))
