"""`minijax.scipy.stats.multivariate_normal`: `logpdf` and `pdf` of a Gaussian in n
dimensions, as `jax.scipy.stats.multivariate_normal` (the math is in
`minijax/scipy/_multivariate_normal.py`, through a Cholesky factor of `cov`)."""
from .._multivariate_normal import logpdf, pdf  # noqa: F401

__all__ = ["logpdf", "pdf"]
