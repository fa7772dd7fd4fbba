"""More of `jax.scipy.special`: log-gamma relatives (`loggamma`, `multigammaln`,
`poch`, `comb`), the Box-Cox transforms and the Bernoulli numbers; re-exported by
`minijax.scipy.special`."""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import promote_args_inexact, dtype_of, shape_of, like

__all__ = ["loggamma", "multigammaln", "poch", "comb", "boxcox", "boxcox1p", "bernoulli"]


def _real_only(name, x):
    if dtype_of(x).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")


def loggamma(x):
    """The principal branch of log Gamma: lgamma for x > 0, NaN elsewhere (real
    arguments; the complex branch is not available)."""
    x, = promote_args_inexact("loggamma", x)
    if dtype_of(x).kind == "c":
        raise NotImplementedError("loggamma: complex arguments are not supported")
    return jnp.where(x > 0, lax.lgamma(x), np.nan)


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension `d` (a concrete integer):
    d (d - 1) / 4 log(pi) + sum_j<d lgamma(a - j / 2)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError("multigammaln: the d argument must be a concrete integer, got "
                        f"{d!r}") from None
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(like(a, 0.25), d_), lax.sub(d_, like(a, 1))),
                       lax.log(like(a, np.pi)))
    halves = lax.div(jnp.arange(d, dtype=dtype_of(d_)), like(a, 2))
    terms = lax.lgamma(jnp.expand_dims(a, -1) - jnp.reshape(
        halves, (1,) * len(shape_of(a)) + (d,)))
    return jnp.sum(terms, axis=-1) + constant


def _gamma(x):
    from .special import gamma      # special imports this module
    return gamma(x)


@custom_jvp
def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z), 1 where m == 0."""
    z, m = promote_args_inexact("poch", z, m)
    _real_only("jnp.poch", z)
    return jnp.where(m == 0.0, jnp.array(1, dtype=dtype_of(z)), _gamma(z + m) / _gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (lax.digamma(z + m) - lax.digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, ans, z, m: lax.digamma(z + m) * poch(z, m) * m_dot)


def comb(N, k, *, repetition=False):
    """The binomial coefficient C(N, k) through lgamma (0 outside 0 <= k <= N);
    `repetition=True` counts multisets, C(N + k - 1, k)."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    # Outside, lgamma sees 0s: no pole to poison the gradient of the unused branch.
    n_safe, k_safe = jnp.where(inside, N, 0.0), jnp.where(inside, k, 0.0)
    log_comb = (lax.lgamma(n_safe + 1) - lax.lgamma(k_safe + 1)
                - lax.lgamma(n_safe + 1 - k_safe))
    return jnp.where(inside, lax.exp(log_comb), 0.0)


def _boxcox_of_log(log_x, lmbda):
    # (x^lmbda - 1) / lmbda as expm1(lmbda log x) / lmbda; log x where lmbda == 0 (a
    # divisor of 1 there keeps the unused branch finite).
    at_zero = lmbda == 0
    safe = jnp.where(at_zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(at_zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log x at lmbda = 0."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x, accurate for small x."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2), float32.

    The even ones from B_4 on come from the zeta function: B_2k =
    (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^(2k), with the factor in front built as a
    running product and zeta(2k) summed over its first 49 terms."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"Argument n of bernoulli must be a concrete integer, got {n!r}") \
            from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[:n + 1]
    numbers = jnp.zeros(n + 1).at[:3].set(first)
    m = jnp.arange(4, n + 1, 2, dtype=dtype_of(numbers))
    factor = 1.0 / np.pi ** 2 * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=dtype_of(numbers))
    zeta_minus_one = jnp.sum(k[:, None] ** (-m[None, :]), axis=0)
    return numbers.at[4::2].set(factor * (1 + zeta_minus_one))
