"""`minijax.scipy`: the parts of `jax.scipy` minijax provides, built from `minijax.lax`
and `minijax.numpy`."""
from . import linalg, signal  # noqa: F401
