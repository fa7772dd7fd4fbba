"""`minijax.scipy.stats`: one module per distribution, as in `jax.scipy.stats`, and the
summary statistics `mode`, `rankdata`, `sem` and the estimator `gaussian_kde`.

`from minijax.scipy.stats import norm; norm.logpdf(x, loc, scale)`. Each function
promotes its arguments as JAX does (integers to float32, Python scalars weak), is
built from `minijax.lax`/`minijax.numpy` and `minijax.scipy.special`, and returns
JAX's values outside the support (-inf log densities, 0/1 CDFs, NaN for invalid
parameters or probabilities outside [0, 1]). Where JAX releases differ, the newest's
behaviour is the one kept (each module's docstring says where).
"""
from . import (norm, t, beta, gamma, bernoulli, poisson, uniform, laplace,  # noqa: F401
               cauchy, logistic, multivariate_normal, betabinom, binom, chi2, dirichlet,
               expon, gennorm, geom, gumbel_l, gumbel_r, multinomial, nbinom, pareto,
               truncnorm, vonmises, wrapcauchy)
from ._core import mode, rankdata, sem, ModeResult  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401
