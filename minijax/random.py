"""`minijax.random`: JAX's counter-based pseudo-random numbers, bit for bit.

A *key* is a value like any other: it is passed to a sampler, which returns numbers
and never changes the key. To get independent numbers, derive new keys with `split`
(n children) or `fold_in` (a child per integer):

    key = random.key(0)                    # a key array of shape (), dtype key<fry>
    key, sub = random.split(key)
    x = random.normal(sub, (3,))

Two key styles, as in JAX: typed keys (`key`, `wrap_key_data`; dtype `key<fry>`, each
element one key) and raw keys (`PRNGKey`: `uint32[2]` arrays). Every function takes
either; `split` and `fold_in` return the style they were given.

How it works. Everything reduces to the Threefry-2x32 hash (the `threefry2x32`
primitive, see `ir/random_primitives.py`) applied to a key's two words and a counter
(JAX's `jax_threefry_partitionable` layout, its default): element i of a draw of
shape S hashes the 64-bit counter i, split into two words, and the two output words
are xor'ed into 32 random bits; `split(key, S)` keeps both words as the i-th child key;
`fold_in(key, d)` hashes the counter (0, d). With the flag off, JAX's older layout
(`docs/random.md`, "Counter layouts"). Samplers turn bits into values exactly as
`jax.random` does (`uniform`: 23 random mantissa bits under the exponent of 1.0,
minus 1; `normal`: `sqrt(2) * erf_inv(uniform(-1, 1))`; ...), so both libraries give
identical numbers for the same key. Like JAX, each sampler is a jitted function with
static shape and dtype, so it shows in a jaxpr as one `jit` equation.

At run time a typed key is a jax.Array of JAX's own key dtype: it prints as JAX's keys
do and passes through `jax.jit` unchanged; only minijax's own hash computes on it.
"""
from __future__ import annotations

from .frontend.random_core import (key, PRNGKey, key_data, wrap_key_data, key_impl,
    split, fold_in, bits, uniform, normal, bernoulli, randint, rademacher)
from .frontend.random_distributions import (categorical, choice, permutation,
    truncated_normal, gumbel, exponential, laplace, logistic, gamma, loggamma, beta,
    dirichlet, poisson, multivariate_normal, ball, generalized_normal)
from .frontend.random_more import (cauchy, lognormal, pareto, t, chisquare, rayleigh,
    weibull_min, maxwell, geometric, orthogonal, f, wald, triangular, double_sided_maxwell)
from .frontend.random_binomial import binomial, multinomial, clone, key_dtype
from .frontend.random_core import with_out_sharding as _with_out_sharding

# The samplers that take JAX's `out_sharding=` keyword (the same ones in jax 0.10.2,
# 0.11.2 and 0.12.0.1).
_SHARDED_SAMPLERS = ("ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare",
                     "dirichlet", "exponential", "f", "gamma", "generalized_normal",
                     "geometric", "gumbel", "laplace", "loggamma", "logistic", "lognormal",
                     "maxwell", "multivariate_normal", "normal", "orthogonal", "pareto",
                     "permutation", "poisson", "rademacher", "randint", "rayleigh", "t",
                     "triangular", "truncated_normal", "uniform", "wald")
for _name in _SHARDED_SAMPLERS:
    globals()[_name] = _with_out_sharding(globals()[_name])
del _name

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "bits", "uniform", "normal", "bernoulli", "randint", "categorical", "choice",
           "permutation", "truncated_normal", "gumbel", "exponential", "laplace",
           "logistic", "rademacher", "gamma", "loggamma", "beta", "dirichlet", "poisson",
           "multivariate_normal", "ball", "generalized_normal", "cauchy", "lognormal",
           "pareto", "t", "chisquare", "rayleigh", "weibull_min", "maxwell", "geometric",
           "orthogonal", "f", "wald", "triangular", "double_sided_maxwell", "binomial",
           "multinomial", "clone", "key_dtype"]
