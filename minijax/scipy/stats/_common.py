"""Helpers shared by the distribution modules: argument promotion and constants."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ...numpy._promotion import promote_args_inexact, like

__all__ = ["promote", "like", "outside_unit_interval", "log1mexp", "NEG_INF", "NAN"]

NEG_INF, NAN = -np.inf, np.nan


def promote(fname, *args):
    """Arguments of an elementwise distribution function: one float dtype, one shape."""
    return promote_args_inexact(fname, *args, keep_scalars=False)


def outside_unit_interval(q):
    """Where a probability argument is NaN or outside [0, 1] (the result is NaN there)."""
    return jnp.isnan(q) | (q < 0) | (q > 1)


def log1mexp(x):
    """`minijax.nn.log1mexp` (imported here when called: `minijax.nn` imports scipy)."""
    from ...nn.functions import log1mexp
    return log1mexp(x)
