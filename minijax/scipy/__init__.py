"""`minijax.scipy`: the `jax.scipy.special` and `jax.scipy.stats` functions, on minijax.

Everything here is built from `minijax.lax` and `minijax.numpy` (and, for the special
functions, the primitives of `minijax/ir/special_primitives.py`), so it traces, jits,
differentiates and batches like any other minijax code.
"""
from . import special, stats  # noqa: F401
