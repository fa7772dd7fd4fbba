"""`minijax.scipy.optimize`: `minimize` (method 'BFGS') and `OptimizeResults`, the names
`jax.scipy.optimize` exports (its line search stays private there, and here:
`_line_search.py`)."""
from ._minimize import minimize, OptimizeResults  # noqa: F401

__all__ = ["minimize", "OptimizeResults"]
