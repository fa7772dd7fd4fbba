"""The confluent and Gauss hypergeometric functions `hyp1f1` and `hyp2f1` (real
arguments), re-exported by `minijax.scipy.special`, with JAX's algorithms (Pearson,
Olver and Porter 2014: Taylor series, the large-x asymptotic series of 1F1, the
terminating series and the digamma transformation of 2F1 near x = 1) and JAX's
derivative rules (series in the parameters, a shifted function in x).

JAX evaluates each element in its own `while_loop` (`jnp.vectorize`), which its
vmap turns into one loop that runs while any element goes on and leaves finished
elements as they are. Here that loop is written out: every series below steps the
whole array and masks off the elements whose own test says stop, so each element
takes the same number of terms, in the same order, as JAX's."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import promote_args_inexact, dtype_of

__all__ = ["hyp1f1", "hyp2f1"]

_MAX_TERMS = 250


def _masked_loop(go_on, step, state):
    """Iterate `step` on the elements where `go_on` holds, until it holds nowhere."""
    def body(state):
        active = go_on(state)
        stepped = step(state)
        return tuple(jnp.where(active, new, old) for new, old in zip(stepped, state))
    return lax.while_loop(lambda state: jnp.any(go_on(state)), body, tuple(state))


def _eps(x):
    return float(np.finfo(dtype_of(x)).eps)


def _full(x, value):
    return jnp.full(jnp.shape(x), value, dtype_of(x))


def _series(first_term, ratio, weight, x):
    """sum_k term_k weight(k) with term_1 = first_term and term_{k+1} = term_k
    ratio(k), from k = 1 while fewer than 250 terms and |term| / |sum| > eps; the sum
    starts at 1 (the function) or 0 with `weight` (a derivative's series)."""
    eps = _eps(x)
    start = 0.0 if weight is not None else 1.0

    def step(state):
        total, k, term = state
        total = total + (term if weight is None else term * weight(k))
        return total, k + 1, term * ratio(k)

    def go_on(state):
        total, k, term = state
        return (k < _MAX_TERMS) & (jnp.abs(term) / jnp.abs(total) > eps)

    return _masked_loop(go_on, step, (_full(x, start), _full(x, 1.0), first_term))[0]


# -- hyp1f1 ----------------------------------------------------------------------------

def _hyp1f1_taylor(a, b, x):
    return _series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), None, x)


def _hyp1f1_asymptotic(a, b, x):
    """For |x| >= 100: Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / (k! x^k)."""
    from .special import gamma
    total = _series((b - a) * (1 - a) / x, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x,
                    None, x)
    return gamma(b) / gamma(a) * jnp.exp(x) * x ** (a - b) * total


def _hyp1f1_value(a, b, x):
    result = jnp.where(jnp.abs(x) < 100, _hyp1f1_taylor(a, b, x), _hyp1f1_asymptotic(a, b, x))
    # 1F1(0; b; x) = 1, 1F1(a; a; x) = e^x, and b = 0 is a pole
    case = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
    return lax.select_n(case, result, _full(x, 1.0), jnp.exp(x), _full(x, np.inf))


def _hyp1f1_d_parameter(a, b, x, weight):
    return _series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), weight, x)


def _hyp1f1_da(a, b, x):
    from .special import digamma
    return _hyp1f1_d_parameter(a, b, x, lambda k: digamma(a + k) - digamma(a))


def _hyp1f1_db(a, b, x):
    from .special import digamma
    return _hyp1f1_d_parameter(a, b, x, lambda k: digamma(b) - digamma(b + k))


_hyp1f1 = custom_jvp(_hyp1f1_value)
_hyp1f1.defjvps(lambda g, ans, a, b, x: _hyp1f1_da(a, b, x) * g,
                lambda g, ans, a, b, x: _hyp1f1_db(a, b, x) * g,
                # d/dx 1F1(a; b; x) = a / b 1F1(a+1; b+1; x)
                lambda g, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * g)


@jitted_eagerly()
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!
    for real arguments: its Taylor series for |x| < 100, the asymptotic series beyond
    (both to 250 terms at most). As JAX's, 1F1(0; 0; x) is 1 (scipy: NaN), and values
    that grow large lose precision in float32."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x, keep_scalars=False)
    if dtype_of(x).kind == "c":
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    return _hyp1f1(*jnp.broadcast_arrays(a, b, x))


# -- hyp2f1 ----------------------------------------------------------------------------

def _near_non_positive_integer(v, eps):
    return (v <= 0) & (jnp.abs(v - jnp.round(v)) < eps)


def _hyp2f1_terminating(a, b, c, x):
    """The finite sum when a or b is a non-positive integer -n: n + 1 terms, with n
    taken from the one of larger magnitude that does not meet a pole of c first."""
    eps = _eps(x) * 50
    swap = (b < a) & (jnp.abs(b - jnp.round(b)) < eps) & ~(
        (c % 1 == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)

    def step(state):
        i, total, term = state
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return i + 1, total + term, term

    one = _full(x, 1.0)
    return _masked_loop(lambda state: state[0] < a + 1, step, (one, one, one))[1]


def _hyp2f1_taylor(a, b, c, x):
    eps = _eps(x)

    def step(state):
        total, k, term = state
        return total + term, k + 1, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)

    def go_on(state):
        total, k, term = state
        return (k < _MAX_TERMS) & (jnp.abs(term) > eps * jnp.abs(total))

    return _masked_loop(go_on, step, (_full(x, 0.0), _full(x, 1.0), _full(x, 1.0)))[0]


def _hyp2f1_digamma_transform(a, b, c, x):
    """2F1 near x = 1 when c - a - b is (close to) an integer m: the limit forms of
    Abramowitz and Stegun 15.3.10 to 15.3.12, a digamma series in 1 - x plus, for
    m != 0, a finite sum of |m| - 1 terms."""
    from .special import digamma, gamma
    eps = _eps(x)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    up = rd >= 0
    zero = _full(x, 0.0)
    e = jnp.where(up, d, -d)
    d1 = jnp.where(up, d, zero)
    d2 = jnp.where(up, zero, d)
    ard = jnp.where(up, rd, -rd).astype(np.int32)
    log_s = jnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - log_s
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def step(state):
        p, q, t, y = state
        r = (digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1)
             - digamma(b + t + d1) - log_s)
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    def go_on(state):
        p, q, t, y = state
        return (t < _MAX_TERMS) & (jnp.abs(q) >= eps * jnp.abs(y))

    y = _masked_loop(go_on, step, (p, y, _full(x, 1.0), y))[3]

    def finite_sum_step(state):
        i, p, t, y1 = state
        p = p * (s * (a + t + d2) * (b + t + d2) / (1.0 - e + t))
        t = t + 1.0
        p = p / t
        return i + 1, p, t, y1 + p

    start = (jnp.ones(jnp.shape(x), np.int32), _full(x, 1.0), zero, _full(x, 1.0))
    y1 = _masked_loop(lambda state: state[0] < ard, finite_sum_step, start)[3]
    gamma_c = gamma(c)
    y1 = y1 * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
    y_m = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
    y_m = jnp.where((ard & 1) != 0, -y_m, y_m)
    q = s ** rd
    with_sum = jnp.where(rd > 0, y_m * q + y1, y_m + y1 * q)
    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), with_sum)


def _hyp2f1_terminating_or_series(a, b, c, x):
    eps = _eps(x) * 50
    d = c - a - b
    terminates = _near_non_positive_integer(a, eps) | _near_non_positive_integer(b, eps)
    near_one = jnp.where(jnp.abs(d - jnp.round(d)) >= eps, 0, 1)
    case = jnp.where((x > 0.9) & ~terminates, near_one, jnp.where(terminates, 2, 0))
    return lax.select_n(case, _hyp2f1_taylor(a, b, c, x),
                        _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminating(a, b, c, x))


def _hyp2f1_value(a, b, c, x):
    from .special import gamma
    eps = _eps(x) * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    integer_d = ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0))
    case = jnp.select(
        [(x == 0) | (((a == 0) | (b == 0)) & (c != 0)),     # 1
         (c == 0) | ((c < 0) & (c % 1 == 0)),               # a pole of c: inf
         (d <= -1) & integer_d,                             # Euler's transformation
         (d <= 0) & (x == 1),                               # diverges at 1: inf
         (x < 1) & (b == c), (x < 1) & (a == c),            # (1 - x)^-a, ^-b
         x > 1, x == 1],                                    # inf; Gauss's theorem
        [0, 1, 2, 1, 3, 4, 1, 5], 6)
    return lax.select_n(case, _full(x, 1.0), _full(x, np.inf),
                        s ** d * _hyp2f1_terminating_or_series(ca, cb, c, x),
                        s ** (-a), s ** (-b),
                        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _hyp2f1_terminating_or_series(a, b, c, x))


def _hyp2f1_d_parameter(a, b, c, x, weight):
    return _series(a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                   weight, x)


def _hyp2f1_da(a, b, c, x):
    from .special import digamma
    return _hyp2f1_d_parameter(a, b, c, x, lambda k: digamma(a + k) - digamma(a))


def _hyp2f1_db(a, b, c, x):
    from .special import digamma
    return _hyp2f1_d_parameter(a, b, c, x, lambda k: digamma(b + k) - digamma(b))


def _hyp2f1_dc(a, b, c, x):
    from .special import digamma
    return _hyp2f1_d_parameter(a, b, c, x, lambda k: digamma(c) - digamma(c + k))


_hyp2f1 = custom_jvp(_hyp2f1_value)
_hyp2f1.defjvps(lambda g, ans, a, b, c, x: _hyp2f1_da(a, b, c, x) * g,
                lambda g, ans, a, b, c, x: _hyp2f1_db(a, b, c, x) * g,
                lambda g, ans, a, b, c, x: _hyp2f1_dc(a, b, c, x) * g,
                # d/dx 2F1(a, b; c; x) = ab / c 2F1(a+1, b+1; c+1; x)
                lambda g, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * g)


@jitted_eagerly()
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k
    x^k / k! for real arguments and x <= 1 (inf beyond, as JAX's): the Taylor series,
    the finite sum where a or b is a non-positive integer, Euler's transformation
    for c - a - b <= -1, and the digamma transformation near x = 1."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x, keep_scalars=False)
    return _hyp2f1(*jnp.broadcast_arrays(a, b, c, x))
