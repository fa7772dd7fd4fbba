"""The exponential integrals `expn` (E_n), `exp1` (E_1) and `expi` (Ei), with
Cephes's algorithms (expn.c and ei.c, as in scipy and JAX), vectorized: each regime
is computed on inputs made safe for it, and the regimes selected elementwise.

E_n(x) for 0 < x <= 1 is the power series, for x > 1 the continued fraction, for
n >= 5000 an asymptotic expansion; the series and the continued fraction iterate in
one `while_loop` over the whole array until every element has converged. Ei(x) for
x > 0 is a rational approximation on each of [0, 2], (2, 4], ..., (32, 64] and beyond;
for x < 0 it is -E_1(-x). As JAX 0.12: n is truncated to an integer, NaN or infinite n
gives NaN, and the derivatives are custom: dE_n/dx = -E_{n-1} (none in n), dEi/dx =
exp(x) / x."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..transforms.custom_derivatives import custom_jvp
from ..frontend.eager_jit import jitted_eagerly
from ..numpy._promotion import promote_args_inexact, dtype_of, like

__all__ = ["expn", "exp1", "expi"]

# Cephes ei.c: Ei on [0, 2] is euler + log x + x A(x) / B(x); on each later interval
# (and beyond 64, the last pair) exp(x) / x (1 + w A(w) / B(w)) with w = 1 / x.
_EI_SERIES = (
    [-5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557,
     -331338.13311781443, 1592627.1633849454],
    [1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726,
     -729494.9239640528, 1592627.1633849454])
_EI_ASYMPTOTIC = (   # (2, 4], (4, 8], (8, 16], (16, 32], (32, 64], beyond
    ([0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
      -0.44095070487016, 0.046656238059358916, -0.0015450426796734852,
      7.059980605299618e-05],
     [1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072,
      0.02291647179034212, 0.0044501504397287525, 0.00017274396122065214,
      3.953167195549672e-05]),
    ([-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
      0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05,
      2.141783679522603e-06],
     [1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476,
      0.024498682410218877, 0.0008832165941927797, 0.00045909522995113536,
      -4.729848351866523e-06, 2.66519553739071e-06]),
    ([-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
      0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
      -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10],
     [1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924,
      0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05,
      -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10]),
    ([-0.24581193676740204, -0.14833822533220778, 0.07248291795735552,
      -0.013483156873809405, 0.001342775069788637, -7.942465637159712e-05,
      2.644179518984236e-06, -4.239473659313765e-08],
     [1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984,
      -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05,
      2.7289384034767266e-06, -4.239462431819542e-08]),
    ([0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
      0.0015100821468651906, -2.5231370954995714e-05],
     [1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008,
      0.0015605448811273888, -2.5231370936032347e-05]),
    ([-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
      -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06,
      1.218032765428652e-07, -1.0860761027932903e-09],
     [1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805,
      0.039308526882338234, -0.003414684558602365, 0.00018668443707035555,
      -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09]),
)
_LARGE_ORDER = 5000     # from here on E_n takes the asymptotic expansion


def _horner(coefficients, x):
    total = like(x, coefficients[0])
    for c in coefficients[1:]:
        total = total * x + like(x, c)
    return total


def _eps(x):
    return float(np.finfo(dtype_of(x)).eps)


def _max_log(x):
    return float(np.log(np.finfo(dtype_of(x)).max))


def _expn_series(n, x, active):
    """E_n(x) for 0 < x <= 1 (other elements: any finite value). Each element's loops
    stop when it has converged, and the terms are formed in JAX's order, so the sums
    round as JAX's elementwise (vectorized) loops do."""
    one = like(x, 1)
    x = jnp.where(active, x, one)
    n = jnp.where(active, n, one)
    # psi(n) - log x, the coefficient of the logarithmic term: -gamma - log x plus the
    # harmonic sum up to n - 1
    def add_reciprocal(state):
        i, psi = state
        more = i < n
        return jnp.where(more, i + one, i), jnp.where(more, psi + one / i, psi)
    psi = lax.while_loop(lambda state: jnp.any(state[0] < n), add_reciprocal,
                         (jnp.ones_like(x), -np.euler_gamma - jnp.log(x)))[1]
    eps = _eps(x)

    def body(state):
        k, term, denominator, total, change = state
        more = active & (change > eps)
        k, denominator = k + one, denominator + one
        term = term * (-x / k)
        total = total + jnp.where(denominator != 0, term / denominator, 0)
        change = jnp.where(total != 0, jnp.abs(term / total), one)
        return tuple(jnp.where(more, new, old)
                     for new, old in zip((k, term, denominator, total, change), state))

    def going(state):
        return jnp.any(active & (state[4] > eps))

    zero = jnp.zeros_like(x)
    start = (zero, jnp.ones_like(x), one - n, jnp.where(n == 1, zero, one / (one - n)),
             jnp.full_like(x, np.inf))
    total = lax.while_loop(going, body, start)[3]
    r = n - one
    sign = jnp.where(r % 2 == 0, one, -one)
    return sign * jnp.exp(r * jnp.log(x) - lax.lgamma(n)) * psi - total


def _expn_continued_fraction(n, x, active):
    """E_n(x) for x > 1, 1 <= n < 5000, by the continued fraction's convergents
    (rescaled when they grow large)."""
    one = like(x, 1)
    x = jnp.where(active, x, one + one)
    n = jnp.where(active, n, one)
    eps, big = _eps(x), like(x, 1.44115188075855872e17)

    def body(state):
        k, p2, q2, p1, q1, value, change = state
        k = k + one
        odd = k % 2 == 1
        a = jnp.where(odd, n + (k - one) / 2, k / 2)
        b = jnp.where(odd, one, x)
        p, q = p1 * b + p2 * a, q1 * b + q2 * a
        nonzero = q != 0
        ratio = jnp.where(nonzero, p / jnp.where(nonzero, q, one), value)
        change = jnp.where(nonzero, jnp.abs((value - ratio) / ratio), one)
        scale = jnp.where(jnp.abs(p) > big, big, one)
        return k, p1 / scale, q1 / scale, p / scale, q / scale, ratio, change

    def going(state):
        return jnp.any(active & (state[6] > eps))

    ones = jnp.ones_like(x)
    start = (ones, ones, x, ones, x + n, one / (x + n), jnp.full_like(x, np.inf))
    return lax.while_loop(going, body, start)[5] * jnp.exp(-x)


def _expn_large_order(n, x, active):
    """E_n(x) for n >= 5000, by the first terms of its expansion in 1 / (x + n)^2."""
    one = like(x, 1)
    x = jnp.where(active, x, one)
    n = jnp.where(active, n, like(n, _LARGE_ORDER))
    s = x + n
    ratio, m = x / n, n / s / s
    total = m * (6 * ratio * ratio - 8 * ratio + one) + (one - 2 * ratio)
    total = m * (m * total + one) + one
    return total * jnp.exp(-x) / s


@custom_jvp
def _expn(n, x):
    zero, one = like(x, 0), like(x, 1)
    max_log = _max_log(x)
    n = jnp.floor(n)
    valid = ~((n < 0) | (x < zero) | jnp.isnan(n) | jnp.isnan(x) | jnp.isinf(n))
    finite_order = valid & (n > 0) & (n < _LARGE_ORDER)
    series = finite_order & (x > zero) & (x <= one)
    fraction = finite_order & (x > one) & (x <= max_log)
    x_safe = jnp.where(valid & (x > zero), x, one)
    n_minus_one = jnp.where(valid & (n >= 2), n - one, one)
    return jnp.select(
        [~valid, x == zero, n == 0, x > max_log, n >= _LARGE_ORDER, fraction],
        [jnp.full_like(x, np.nan),
         jnp.where(n < 2, like(x, np.inf), one / n_minus_one),
         jnp.exp(-x_safe) / x_safe,
         jnp.zeros_like(x),
         _expn_large_order(n, x, valid & (n >= _LARGE_ORDER) & (x > zero)),
         _expn_continued_fraction(n, x, fraction)],
        _expn_series(n, x, series))


@_expn.defjvp
def _expn_jvp(primals, tangents):
    (n, x), (_, x_dot) = primals, tangents
    zero, one = like(x, 0), like(x, 1)
    max_log = _max_log(x)
    n = jnp.floor(n)
    invalid = (n < 0) | (x < zero) | jnp.isnan(n) | jnp.isnan(x) | jnp.isinf(n)
    x_safe = jnp.where((x > zero) & (x <= max_log), x, one)
    # d/dx exp(-x) / x for n = 0; -E_{n-1}(x) otherwise
    order_zero = jnp.where(x == zero, like(x, -np.inf), jnp.where(
        x > max_log, zero, -(x_safe + one) * jnp.exp(-x_safe) / (x_safe * x_safe)))
    lower = -_expn(jnp.where(n >= 1, n - 1, jnp.zeros_like(n)), x)
    slope = jnp.where(invalid, like(x, np.nan), jnp.where(n == 0, order_zero, lower))
    return _expn(n, x), x_dot * slope


def _real_only(name, x):
    if dtype_of(x).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")


@jitted_eagerly()     # one compile for an eager call, rather than a loop run op by op
def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt."""
    n, x = promote_args_inexact("expn", n, x)
    _real_only("expn", x)
    return _expn(n, x)


def exp1(x):
    """The exponential integral E_1(x) = int_x^inf exp(-t) / t dt."""
    x, = promote_args_inexact("exp1", x)
    _real_only("exp1", x)
    return expn(1, x)


@jitted_eagerly()
def expi(x):
    """The exponential integral Ei(x) = -PV int_-x^inf exp(-t) / t dt."""
    x, = promote_args_inexact("expi", x)
    _real_only("expi", x)
    return _expi(x)


@custom_jvp
def _expi(x):
    euler = like(x, np.euler_gamma)
    small = jnp.where(x <= 2, x, like(x, 1))
    series = small * _horner(_EI_SERIES[0], small) / _horner(_EI_SERIES[1], small)
    series = series + euler + jnp.log(small)
    w = 1 / jnp.where(x > 2, x, like(x, 4))
    tails = [jnp.exp(1 / w) * w * (1 + w * _horner(a, w) / _horner(b, w))
             for a, b in _EI_ASYMPTOTIC]
    bounds = [like(x, 2.0 ** i) for i in range(2, 7)]
    positive = jnp.select([x <= 2] + [x <= bound for bound in bounds], [series] + tails[:-1],
                          tails[-1])
    negative = -exp1(-jnp.where(x < 0, x, like(x, -1)))
    return jnp.where(x < 0, negative, jnp.where(jnp.isnan(x), x, positive))


_expi.defjvps(lambda x_dot, ans, x: jnp.exp(x) / x * x_dot)
