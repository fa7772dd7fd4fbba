"""`minijax.scipy.stats`: one module per distribution, as in `jax.scipy.stats`.

`from minijax.scipy.stats import norm; norm.logpdf(x, loc, scale)`. Each function
promotes its arguments as JAX does (integers to float32, Python scalars weak), is
built from `minijax.lax`/`minijax.numpy` and `minijax.scipy.special`, and returns
JAX's values outside the support (-inf log densities, 0/1 CDFs, NaN for invalid
parameters or probabilities outside [0, 1]).
"""
from . import (norm, t, beta, gamma, bernoulli, poisson, uniform, laplace,  # noqa: F401
               cauchy, logistic, multivariate_normal)
