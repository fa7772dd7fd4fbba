"""NumPy reference rules of the special-function primitives (read `reference_rules.py`
first: the `_rule` registration and the compute-wide-then-round-once convention).

scipy is not a dependency, so each function is written out here for one float64
scalar and vectorised over the operands:

* `lgamma`, `erfc` -- Python's `math` module, with XLA's values at the poles;
* `digamma` -- the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
  asymptotic series; reflection psi(1 - x) - pi / tan(pi x) below 1/2;
* `polygamma(m, x)` = (-1)^(m+1) m! zeta(m + 1, x), the Hurwitz zeta summed directly
  up to x + k >= 10 and finished by Euler-Maclaurin;
* `igamma` / `igammac` -- the power series of P(a, x) when x < a + 1, otherwise the
  continued fraction of Q(a, x) (modified Lentz), as in Numerical Recipes;
* `igamma_grad_a` -- a fourth-order central difference of that P in `a`: in float64
  with a relative step of 1e-3 it is good to ~1e-11, far inside float32 rounding,
  and it needs no second series for the derivative;
* `zeta(x, q)` -- the Hurwitz zeta of polygamma above, for real x > 1;
* `bessel_i0e`, `bessel_i1e` -- exp(-|x|) I_nu(|x|) from the power series of I_nu
  (positive terms: no cancellation) below |x| = 500 and the asymptotic series above;
* `regularized_incomplete_beta` -- the continued fraction of I_x(a, b), on whichever
  side of the mean (a + 1) / (a + b + 2) it converges fast.

Edge values (poles, out-of-domain operands, infinities) are XLA's, as observed on
jax.lax: `tests/test_reference.py` compares them. Where XLA changed them, they are the
newer XLA's, the limits (JAX 0.11's: digamma(+-0) = -inf where 0.10 gave NaN;
P(inf, x) = 0 and Q(inf, x) = 1 for a finite x where 0.10 gave NaN, and NaN for
P(inf, inf), where 0.10 gave 1).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import special_primitives as S
from .reference_rules import _rule, _wide

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 2000


def _vectorized(fn):
    vectorized = np.vectorize(fn, otypes=[np.float64])
    return lambda *xs: _wide(vectorized, *xs)


def _is_nonpositive_integer(x):
    return x <= 0 and x == math.floor(x)


def lgamma(x):
    if math.isinf(x) or (not math.isnan(x) and _is_nonpositive_integer(x)):
        return math.inf
    return math.lgamma(x) if not math.isnan(x) else math.nan


def digamma(x):
    if x == 0:          # either zero, as XLA (JAX >= 0.11)
        return -math.inf
    if math.isnan(x) or x == -math.inf or _is_nonpositive_integer(x):
        return math.nan
    if x == math.inf:
        return math.inf
    if x < 0.5:
        return digamma(1 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10:
        shift -= 1 / x
        x += 1
    inv2 = 1 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 / 132))))
    return shift + math.log(x) - 0.5 / x - series


# B_2j / (2j)! for j = 1..7, the Euler-Maclaurin coefficients.
_EULER_MACLAURIN = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                    -691 / 1307674368000, 1 / 74724249600]


def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2 and q not a pole."""
    total = 0.0
    while q < 10:
        total += q ** -s
        q += 1
    total += q ** (1 - s) / (s - 1) + 0.5 * q ** -s
    rising = s                                  # s (s + 1) ... (s + 2j - 2)
    power = q ** (-s - 1)
    for j, coefficient in enumerate(_EULER_MACLAURIN, start=1):
        total += coefficient * rising * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        power /= q * q
    return total


def polygamma(m, x):
    if math.isnan(m) or math.isnan(x) or m < 0 or m != math.floor(m) or x == math.inf:
        return math.nan
    if m == 0:
        return digamma(x)
    if x == -math.inf or _is_nonpositive_integer(x):
        return math.inf
    m = int(m)
    try:
        return (-1) ** (m + 1) * math.factorial(m) * _hurwitz_zeta(m + 1, x)
    except OverflowError:
        return math.inf


def _log_power_over_gamma(a, x):
    """log(x^a e^-x / Gamma(a)), the prefactor of both P and Q."""
    return a * math.log(x) - x - math.lgamma(a)


def _lower_series(a, x):
    term = total = 1 / a
    for n in range(1, _MAX_TERMS):
        term *= x / (a + n)
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(_log_power_over_gamma(a, x))


def _upper_fraction(a, x):
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return h * math.exp(_log_power_over_gamma(a, x))


def _igamma_edge(a, x, lower):
    """XLA's value of P (lower) or Q at an edge of the domain, or None inside it."""
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0 or (a == math.inf == x):
        return math.nan
    if x == 0 or a == math.inf:
        return 0.0 if lower else 1.0
    if a == 0 or x == math.inf:
        return 1.0 if lower else 0.0
    return None


def igamma(a, x):
    edge = _igamma_edge(a, x, True)
    if edge is not None:
        return edge
    return _lower_series(a, x) if x < a + 1 else 1 - _upper_fraction(a, x)


def igammac(a, x):
    edge = _igamma_edge(a, x, False)
    if edge is not None:
        return edge
    return 1 - _lower_series(a, x) if x < a + 1 else _upper_fraction(a, x)


def igamma_grad_a(a, x):
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0 or math.isinf(a) or math.isinf(x):
        return math.nan
    if x == 0:
        return 0.0
    h = 1e-3 * a
    return (igamma(a - 2 * h, x) - 8 * igamma(a - h, x) + 8 * igamma(a + h, x)
            - igamma(a + 2 * h, x)) / (12 * h)


def _beta_fraction(a, b, x):
    qab, qap, qam = a + b, a + 1, a - 1
    c = 1.0
    d = 1 - qab * x / qap
    d = 1 / (_TINY if abs(d) < _TINY else d)
    h = d
    for m in range(1, _MAX_TERMS):
        for numerator in (m * (b - m) * x / ((qam + 2 * m) * (a + 2 * m)),
                          -(a + m) * (qab + m) * x / ((a + 2 * m) * (qap + 2 * m))):
            d = 1 + numerator * d
            d = 1 / (_TINY if abs(d) < _TINY else d)
            c = 1 + numerator / c
            c = _TINY if abs(c) < _TINY else c
            h *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return h


def regularized_incomplete_beta(a, b, x):
    if any(math.isnan(v) for v in (a, b, x)) or a < 0 or b < 0 or not 0 <= x <= 1:
        return math.nan
    if a == 0 or x == 1:
        return 1.0
    if b == 0 or x == 0:
        return 0.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1 - math.exp(log_front) * _beta_fraction(b, a, 1 - x) / b


def zeta(x, q):
    """The Hurwitz zeta function, with XLA's values off its domain (x > 1)."""
    if math.isnan(x) or math.isnan(q) or math.isinf(x) or math.isinf(q) or x < 1:
        return math.nan
    if x == 1 or (q <= 0 and q == math.floor(q)):
        return math.inf
    try:
        value = _hurwitz_zeta(x, q)
    except (OverflowError, ZeroDivisionError):
        return math.inf
    # a negative q + k to a non-integer power has no real value
    return math.nan if isinstance(value, complex) else value


_SERIES_LIMIT = 500.0    # below this, I_nu's power series cannot overflow a float64


def _scaled_bessel_i(nu: int, x: float) -> float:
    """exp(-x) I_nu(x) for x >= 0: the power series, or for large x the asymptotic
    series exp(x) / sqrt(2 pi x) * sum_j prod_i (-(4 nu^2 - (2i - 1)^2)) / (j! (8x)^j)."""
    if x < _SERIES_LIMIT:
        term = (x / 2) ** nu / math.factorial(nu)
        total = term
        k = 0
        while term > total * _EPS:
            k += 1
            term *= (x / 2) ** 2 / (k * (k + nu))
            total += term
        return total * math.exp(-x)
    mu = 4 * nu * nu
    term = total = 1.0
    for j in range(1, 30):
        term *= -(mu - (2 * j - 1) ** 2) / (j * 8 * x)
        total += term
        if abs(term) < _EPS * abs(total):
            break
    return total / math.sqrt(2 * math.pi * x)


def bessel_i0e(x):
    if math.isnan(x):
        return math.nan
    return 0.0 if math.isinf(x) else _scaled_bessel_i(0, abs(x))


def bessel_i1e(x):
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.copysign(0.0, x)
    return math.copysign(_scaled_bessel_i(1, abs(x)), x) if x else x


for _prim, _fn in [(S.lgamma_p, lgamma), (S.digamma_p, digamma), (S.erfc_p, math.erfc),
                   (S.polygamma_p, polygamma), (S.igamma_p, igamma), (S.igammac_p, igammac),
                   (S.igamma_grad_a_p, igamma_grad_a),
                   (S.regularized_incomplete_beta_p, regularized_incomplete_beta),
                   (S.zeta_p, zeta), (S.bessel_i0e_p, bessel_i0e),
                   (S.bessel_i1e_p, bessel_i1e)]:
    _rule(_prim)(_vectorized(_fn))
