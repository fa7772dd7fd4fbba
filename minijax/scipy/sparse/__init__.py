"""`minijax.scipy.sparse`: `linalg`'s Krylov solvers, as `jax.scipy.sparse` has them."""
from . import linalg  # noqa: F401
