"""`minijax.scipy.special`: `jax.scipy.special`'s functions with JAX's numerics.

Arguments are promoted as JAX promotes them (integers to float32, Python scalars weak)
and then handed to one primitive (`gammaln` is `lgamma`, `gammainc` is `igamma`, ...)
or to a short formula. Where JAX takes care over numerics, so does this module:

* `logsumexp` subtracts the (finite) maximum before exponentiating, treats it as a
  constant for differentiation, and supports `b=` weights, `return_sign=` and `where=`;
* `xlogy`, `xlog1py` and `entr` are 0 where `x` is 0 (not NaN), with derivatives
  defined by `custom_jvp` so that the zero does not poison the gradient;
* `ndtr` switches between `erf` and `erfc` to keep precision in both tails;
  `log_ndtr` uses the asymptotic series far in the lower tail (`series_order=`).
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import (promote_args_inexact, dtype_of, shape_of,
                                canonicalize_axes, like)

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "ndtri", "expit", "logit", "gammaln",
           "digamma", "polygamma", "xlogy", "xlog1py", "entr", "gammainc", "gammaincc",
           "betainc", "betaln", "ndtr", "log_ndtr", "softmax", "log_softmax", "gammasgn",
           "gamma", "beta", "factorial", "rel_entr", "kl_div", "i0", "i0e", "i1", "i1e",
           "zeta", "loggamma", "multigammaln", "poch", "comb", "boxcox", "boxcox1p",
           "bernoulli", "expn", "exp1", "expi", "erfcx", "dawsn", "spence", "sici",
           "fresnel", "hyp1f1", "hyp2f1", "bessel_jn", "wofz", "owens_t", "sph_harm_y"]


def _masked(x, where, fill):
    """`x` with the elements outside `where` replaced by `fill` (a reduction's identity)."""
    return x if where is None else jnp.where(where, x, like(x, fill))


def _stop_gradient_of_finite_max(a, axes, where):
    """The max of `a` over `axes` (kept), 0 where it is infinite, as a constant."""
    amax = jnp.max(_masked(a, where, -np.inf), axis=axes, keepdims=True, initial=-np.inf)
    amax = lax.select(jnp.isfinite(amax), amax, jnp.zeros_like(amax))
    return lax.stop_gradient(amax)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """`log(sum(b * exp(a)))` over `axis`, computed without overflow.

    With `return_sign`, returns `(log|sum|, sign(sum))`; otherwise a negative sum
    (possible with negative `b`) gives NaN, as in JAX."""
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b, keep_scalars=False)
        a = jnp.where(b != 0, a, like(a, -np.inf))
    else:
        a, = promote_args_inexact("logsumexp", a)
    axes = canonicalize_axes("logsumexp", axis, len(shape_of(a)))
    amax = _stop_gradient_of_finite_max(a, axes, where)
    exp_a = jnp.exp(a - amax)
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(_masked(exp_a, where, 0), axis=axes, keepdims=True)
    sign = lax.sign(sumexp)
    out = jnp.log(jnp.abs(sumexp)) + amax
    if not keepdims:
        out, sign = jnp.squeeze(out, axes), jnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, like(out, np.nan), out)
    return out


def _elementwise(name, fn, doc):
    def op(*args):
        return fn(*promote_args_inexact(name, *args, keep_scalars=False))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


erf = _elementwise("erf", lax.erf, "The error function.")
erfc = _elementwise("erfc", lax.erfc, "The complementary error function, 1 - erf(x).")
erfinv = _elementwise("erfinv", lax.erf_inv, "The inverse of erf on (-1, 1).")
expit = _elementwise("expit", lax.logistic, "The logistic sigmoid 1 / (1 + exp(-x)).")
gammaln = _elementwise("gammaln", lax.lgamma, "log |Gamma(x)|.")
digamma = _elementwise("digamma", lax.digamma, "The derivative of gammaln.")
gammainc = _elementwise("gammainc", lax.igamma,
                        "The regularized lower incomplete gamma function P(a, x).")
gammaincc = _elementwise("gammaincc", lax.igammac,
                         "The regularized upper incomplete gamma function Q(a, x).")
betainc = _elementwise("betainc", lax.betainc,
                       "The regularized incomplete beta function I_x(a, b).")

i0e = _elementwise("i0e", lax.bessel_i0e,
                   "The exponentially scaled modified Bessel function of order 0, "
                   "exp(-|x|) i0(x).")
i1e = _elementwise("i1e", lax.bessel_i1e,
                   "The exponentially scaled modified Bessel function of order 1, "
                   "exp(-|x|) i1(x).")
i0 = jnp.i0


def i1(x):
    """The modified Bessel function of the first kind of order 1: exp(|x|) i1e(x)."""
    x, = promote_args_inexact("i1", x, keep_scalars=False)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (`q` is required, as in JAX; its
    derivative is taken in `q` only)."""
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not "
                                  "available, as in JAX; pass q=1.0 for it, or another "
                                  "q for the Hurwitz zeta function")
    return lax.zeta(*promote_args_inexact("zeta", x, q, keep_scalars=False))


def logit(x):
    """The inverse of `expit`: log(x / (1 - x))."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(like(x, 1), x)))


def polygamma(n, x):
    """The n-th derivative of `digamma`; `n` must hold non-negative integers."""
    if not np.issubdtype(dtype_of(jnp.asarray(n)), np.integer) and not isinstance(n, int):
        raise ValueError(f"polygamma: n must be of integer type, got {dtype_of(n)}")
    n, x = promote_args_inexact("polygamma", n, x, keep_scalars=False)
    return lax.polygamma(n, x)


# Coefficients of Stirling's series for the remainder of log-gamma,
# lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_n c_n x^-(2n+1), as fitted for
# x >= 8 in cdflib (the source of scipy's and JAX's betaln).
_STIRLING_REMAINDER = (0.833333333333333e-01, -0.277777777760991e-02,
                       0.793650666825390e-03, -0.595202931351870e-03,
                       0.837308034031215e-03, -0.165322962780713e-02)


def _lgamma_difference_large_b(a, b):
    """lgamma(b) - lgamma(a + b) for b >= 8 (a <= b), without the cancellation of
    subtracting two large log-gammas: Stirling's formula for both, with the leading
    terms combined through log1p(a / b) and the remainders through expm1."""
    log1p_h = jnp.log1p(a / b)
    leading = -(b + (a - 0.5)) * log1p_h - a * (jnp.log(b) - 1.0)
    remainder = jnp.zeros_like(b)
    inv_b_power = 1.0 / b                                   # b^-(2n+1)
    for n, c in enumerate(_STIRLING_REMAINDER):
        # c_n (b^-(2n+1) - (a+b)^-(2n+1)) = c_n b^-(2n+1) (1 - (1 + a/b)^-(2n+1))
        remainder = remainder + c * inv_b_power * -jnp.expm1(-(2 * n + 1) * log1p_h)
        inv_b_power = inv_b_power / (b * b)
    return leading + remainder


def betaln(a, b):
    """log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b); for b >= 8 the last
    two are combined by Stirling's series, which stays accurate for large arguments."""
    a, b = promote_args_inexact("betaln", a, b, keep_scalars=False)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _lgamma_difference_large_b(a, b)
    return jnp.where(b < 8, small_b, large_b)


@custom_jvp
def xlogy(x, y):
    """x * log(y), and 0 where x == 0 (even where y == 0)."""
    x, y = promote_args_inexact("xlogy", x, y, keep_scalars=False)
    # A NaN y stays NaN even where x == 0, as in scipy.
    return jnp.where((x != 0) | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * jnp.log(y) + y_dot * x / y).astype(dtype_of(result))


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), and 0 where x == 0."""
    x, y = promote_args_inexact("xlog1py", x, y, keep_scalars=False)
    return jnp.where((x != 0) | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * jnp.log1p(y) + y_dot * x / (1 + y)).astype(dtype_of(result))


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x):
    """The elementwise entropy -x log x: 0 at 0, -inf for x < 0."""
    x, = promote_args_inexact("entr", x)
    return lax.select(lax.lt(x, like(x, 0)), jnp.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def _real_only(name, x):
    if dtype_of(x).kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")


@jitted_eagerly()
def gammasgn(x):
    """The sign of the gamma function: -1 on (-2k-1, -2k), NaN at the poles (0 and
    the negative integers keep the sign of zero: gammasgn(-0.0) is -1) and NaN."""
    x, = promote_args_inexact("gammasgn", x, keep_scalars=False)
    _real_only("gammasgn", x)
    floor_x = lax.floor(x)
    negative = x < 0
    at_pole = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.select([at_pole, minus], [like(x, np.nan), like(x, -1.0)], like(x, 1.0))


def gamma(x):
    """The gamma function: gammasgn(x) * exp(gammaln(x)) (real arguments)."""
    x, = promote_args_inexact("gamma", x, keep_scalars=False)
    _real_only("gamma", x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def beta(a, b):
    """The beta function B(a, b), with the sign of its three gamma factors."""
    a, b = promote_args_inexact("beta", a, b, keep_scalars=False)
    _real_only("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n, exact=False):
    """n! as gamma(n + 1), 0 for negative n (floating point; `exact=True` is JAX's
    NotImplementedError too)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n, keep_scalars=False)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def rel_entr(p, q):
    """p log(p / q) elementwise: 0 where p == 0 and q >= 0, inf where either is
    negative or q == 0 < p, NaN where either is NaN (as scipy; JAX 0.10 gives inf)."""
    p, q = promote_args_inexact("rel_entr", p, q, keep_scalars=False)
    _real_only("rel_entr", p)
    zero = like(p, 0.0)
    both_positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p, safe_q = jnp.where(both_positive, p, 1), jnp.where(both_positive, q, 1)
    log_ratio = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    value = jnp.where(both_positive, log_ratio, jnp.where(p_zero, zero, np.inf))
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), like(p, np.nan), value)


def kl_div(p, q):
    """The elementwise Kullback-Leibler divergence p log(p / q) - p + q."""
    p, q = promote_args_inexact("kl_div", p, q, keep_scalars=False)
    _real_only("kl_div", p)
    return rel_entr(p, q) - p + q


def ndtr(x):
    """The standard normal CDF, via erf near 0 and erfc in the tails. Like JAX's, it
    takes floating-point input only."""
    x = jnp.asarray(x)
    if not np.issubdtype(dtype_of(x), np.floating):
        raise TypeError(f"ndtr: x.dtype={dtype_of(x)} is not supported; pass floats")
    x = lax.convert_element_type(x, dtype_of(x), weak_type=False)   # as JAX's: strong
    half_sqrt_2 = like(x, 0.5 * np.sqrt(2.0))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    tails = lax.select(lax.gt(w, like(w, 0)), lax.sub(like(z, 2), lax.erfc(z)), lax.erfc(z))
    y = lax.select(lax.lt(z, half_sqrt_2), lax.add(like(w, 1), lax.erf(w)), tails)
    return lax.mul(like(y, 0.5), y)


def ndtri(p):
    """The inverse of `ndtr`: sqrt(2) * erfinv(2p - 1).

    JAX evaluates Cephes' piecewise rational approximation instead; the two agree
    to float32 rounding in the bulk, and this form loses relative precision for p
    below ~1e-4, where 2p - 1 rounds."""
    p, = promote_args_inexact("ndtri", p)
    return lax.mul(like(p, np.sqrt(2.0)), lax.erf_inv(lax.sub(lax.mul(like(p, 2), p),
                                                              like(p, 1))))


def _log_ndtr_lower_tail(x, series_order):
    """log ndtr(x) for very negative x: the asymptotic series of the Mills ratio,
    1 - 1/x^2 + 3/x^4 - ..., to `series_order` terms."""
    x_2 = lax.square(x)
    log_scale = lax.sub(lax.sub(lax.mul(like(x, -0.5), x_2), lax.log(lax.neg(x))),
                        like(x, 0.5 * np.log(2 * np.pi)))
    if series_order == 0:
        return lax.add(log_scale, lax.log(like(x, 1.0)))
    even, odd = like(x, 0), like(x, 0)
    x_2n = x_2                                   # x^(2n)
    for n in range(1, series_order + 1):
        term = lax.div(like(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))), x_2n)
        if n % 2:
            odd = lax.add(odd, term)
        else:
            even = lax.add(even, term)
        x_2n = lax.mul(x_2n, x_2)
    return lax.add(log_scale, lax.log(lax.sub(lax.add(like(x, 1), even), odd)))


def log_ndtr(x, series_order=3):
    """log of the standard normal CDF, accurate far into both tails: log(ndtr(x))
    in the middle, -ndtr(-x) above 5 (float32; 8 for float64) and the asymptotic
    series to `series_order` terms (a Python int in [0, 30]) below -10 (-20)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = jnp.asarray(x)
    if dtype_of(x) not in (np.float32, np.float64):
        # as JAX's: no promotion, so integers and half floats are refused
        raise TypeError(f"x.dtype={dtype_of(x)} is not supported.")
    return _log_ndtr(x, series_order)


def _log_ndtr_value(x, series_order):
    lower, upper = (-20.0, 8.0) if dtype_of(x) == np.float64 else (-10.0, 5.0)
    above = lax.gt(x, like(x, upper))
    # one ndtr for both branches: of -x above `upper` (log1p(-p) ~ -p there)
    p = ndtr(jnp.where(above, lax.neg(x), lax.max(x, like(x, lower))))
    tail = _log_ndtr_lower_tail(lax.min(x, like(x, lower)), series_order)
    return jnp.where(above, lax.neg(p), jnp.where(lax.gt(x, like(x, lower)), lax.log(p), tail))


_log_ndtr = custom_jvp(_log_ndtr_value, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    log_pdf = lax.sub(lax.mul(like(x, -0.5), lax.square(x)), like(x, 0.5 * np.log(2 * np.pi)))
    return ans, lax.mul(t, lax.exp(lax.sub(log_pdf, ans)))


def softmax(x, /, *, axis=None):
    """`jax.scipy.special.softmax`: unlike `nn.softmax`, the default axis is all axes."""
    from ..nn.functions import softmax as nn_softmax
    return nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """`jax.scipy.special.log_softmax`: the default axis is all axes."""
    from ..nn.functions import log_softmax as nn_log_softmax
    return nn_log_softmax(x, axis=axis)


from ._special_extra import (loggamma, multigammaln, poch, comb, boxcox,  # noqa: E402,F401
                             boxcox1p, bernoulli)
from ._expint import expn, exp1, expi  # noqa: E402,F401
from ._special_integrals import (erfcx, dawsn, spence, sici,  # noqa: E402,F401
                                 fresnel)
from ._special_hyper import hyp1f1, hyp2f1  # noqa: E402,F401
from ._special_more import (bessel_jn, wofz, owens_t,  # noqa: E402,F401
                            sph_harm_y)
