"""More elementwise and 1-d math: `ldexp`/`frexp`/`modf`, `gcd`/`lcm`, `nextafter`,
`spacing`, `logaddexp2`, `sort_complex`, `unwrap`, `trim_zeros`, `interp`.

`frexp` reads the float's bits: it reinterprets the value as a same-width integer
(`bitcast_convert_type`), takes the exponent field out and puts the exponent of 0.5
in its place; a subnormal input is first scaled into the normal range by 2**nmant
(and the exponent corrected), and 0, inf and NaN are returned as they are with
exponent 0. `gcd` is Euclid's algorithm in one `while_loop` over the whole array,
running until every element's remainder is zero. `interp` finds each query's
interval with `searchsorted` and interpolates linearly; with `period` the table is
wrapped around by one point on each side.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir.trace import Tracer
from ._dtypes import finfo
from ..frontend.eager_jit import jitted_eagerly
from ._extras import logaddexp
from ..transforms.custom_derivatives import custom_jvp
from ._promotion import (as_operand, shape_of, dtype_of, like, convert, promote_args,
                         promote_args_inexact, promote_dtypes_inexact, is_inexact,
                         canonicalize_axis, canonicalize_axes, lax_const_like)
from ..ir.types import is_complex, is_integer
from . import _reductions as R
from . import _ufuncs as U
from ._classify import isinf, isnan, signbit
from ._shape import broadcast_arrays, concatenate
from ._sorting import searchsorted, sort
from ._take import take

__all__ = ["hypot", "ldexp", "frexp", "modf", "gcd", "lcm", "nextafter", "spacing", "logaddexp2",
           "sort_complex", "unwrap", "trim_zeros", "interp", "i0"]


# -- hypot, as JAX 0.12 computes it ------------------------------------------------------

@custom_jvp
def _hypot(x1, x2):
    """`(r, x1 / r, x2 / r)` with `r = hypot(x1, x2)`, as JAX 0.12's `lax.hypot`: both
    legs scaled by a power of two that keeps the sum of their squares from overflowing
    or underflowing, so no quotient is rounded before the square root (JAX <= 0.11
    computed big * sqrt(1 + (small / big)**2))."""
    info = finfo(dtype_of(x1))
    k = (info.nmant - info.minexp + 1) // 2   # (x * 2**k)**2 of the least subnormal is normal
    e_hi = (info.maxexp - 1) // 2             # 2 * m**2 is finite below 2**e_hi
    a1, a2 = lax.abs(x1), lax.abs(x2)
    m = lax.max(a1, a2)
    hi = lax.ge(m, like(x1, 2.0 ** e_hi))
    lo = lax.le(m, like(x1, 2.0 ** (e_hi - k)))
    down, up, one = (lax.full_like(x1, v) for v in (2.0 ** -k, 2.0 ** k, 1.0))

    def scaled(x):
        return lax.select(hi, lax.mul(x, down), lax.select(lo, lax.mul(x, up), x))
    y1, y2 = scaled(x1), scaled(x2)
    r_scaled = lax.sqrt(lax.add(lax.square(y1), lax.square(y2)))
    r = lax.mul(r_scaled, lax.select(hi, up, lax.select(lo, down, one)))
    inf = lax.full_like(x1, np.inf)
    r = lax.select(lax.bitwise_or(lax.eq(a1, inf), lax.eq(a2, inf)), inf, r)
    # The unit vector comes from the scaled legs, so it stays exact where r overflows.
    return r, lax.div(y1, r_scaled), lax.div(y2, r_scaled)


@_hypot.defjvp
def _hypot_jvp(primals, tangents):
    # Written in _hypot's outputs alone, so derivatives of any order go through this
    # rule and never differentiate the power-of-two scale (as JAX's).
    (x1, x2), (dx1, dx2) = primals, tangents
    r, u1, u2 = _hypot(x1, x2)
    dr = lax.add(lax.mul(u1, dx1), lax.mul(u2, dx2))
    return (r, u1, u2), (dr, lax.div(lax.sub(dx1, lax.mul(u1, dr)), r),
                         lax.div(lax.sub(dx2, lax.mul(u2, dr)), r))


@jitted_eagerly()
def hypot(x1, x2, /):
    """`sqrt(x1**2 + x2**2)` without overflow or underflow (JAX 0.12's formulation, whose
    result is weak when the promoted operands are)."""
    x1, x2 = promote_args_inexact("hypot", x1, x2, keep_scalars=False)
    if is_complex(dtype_of(x1)):
        raise ValueError("hypot is not well defined for complex operands; pass their "
                         "magnitudes (abs) instead")
    x1, x2 = broadcast_arrays(x1, x2)
    return _hypot(x1, x2)[0]


@custom_jvp
def _bessel_i0(x):
    # i0e(x) = exp(-|x|) i0(x) is even and stays finite where i0 overflows.
    magnitude = lax.abs(x)
    return lax.mul(lax.exp(magnitude), lax.bessel_i0e(magnitude))


@_bessel_i0.defjvp
def _bessel_i0_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    # i0' = i1 = exp(|x|) i1e(x): exact, and 0 at 0 where |x| has no derivative.
    return _bessel_i0(x), U.multiply(x_dot, lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x)))


@jitted_eagerly()
def i0(x):
    """The modified Bessel function of the first kind of order 0 (real input)."""
    x, = promote_args_inexact("i0", x)
    if is_complex(dtype_of(x)):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype_of(x)}")
    return _bessel_i0(x)


@jitted_eagerly()
def ldexp(x1, x2, /):
    """`x1 * 2**x2` for an integer `x2`."""
    x1 = as_operand("ldexp", x1)
    x2 = as_operand("ldexp", x2)
    if is_complex(dtype_of(x1)) or is_inexact(dtype_of(x2)):
        raise ValueError(f"ldexp: x1 must be real and x2 an integer array, got dtypes "
                         f"{dtype_of(x1)} and {dtype_of(x2)}")
    x1, = promote_args_inexact("ldexp", x1)
    x1, x2 = broadcast_arrays(x1, convert("ldexp", x2, np.int32))
    return _ldexp(x1, x2)


@custom_jvp
def _ldexp(x1, x2):
    mantissa, exponent = _frexp(x1)
    return _times_power_of_two(mantissa, U.add(exponent, x2))


@_ldexp.defjvp
def _ldexp_jvp(primals, tangents):
    (x1, x2), (t1, _) = primals, tangents
    return _ldexp(x1, x2), _times_power_of_two(t1, x2)  # d(x1 * 2**x2)/dx1 = 2**x2


def _times_power_of_two(x, k):
    """x * 2**k (k int32), as two exact powers of two, each built from its bits, so
    that only the last product rounds (its result may be subnormal or inf). Linear
    in x, so it serves the tangents too."""
    dtype = dtype_of(x)
    info = finfo(dtype)
    k = U.clip(k, 2 * info.minexp, 2 * (info.maxexp - 1))
    half = U.floor_divide(k, 2)
    return U.multiply(U.multiply(x, _power_of_two(half, dtype)),
                      _power_of_two(U.subtract(k, half), dtype))


def _power_of_two(k, dtype):
    """2.0**k in `dtype` for int32 k within its normal exponent range, exactly."""
    info = finfo(dtype)
    int_dtype = np.dtype(_INT_OF_WIDTH[np.dtype(dtype).itemsize])
    biased = convert("ldexp", U.add(k, info.maxexp - 1), int_dtype)
    return lax.bitcast_convert_type(lax.shift_left(biased, like(biased, info.nmant)), dtype)


_INT_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


@jitted_eagerly()
def frexp(x, /):
    """(mantissa, exponent) with `x == mantissa * 2**exponent` and 0.5 <= |mantissa| < 1;
    exponent is int32."""
    x, = promote_args_inexact("frexp", as_operand("frexp", x), keep_scalars=False)
    if is_complex(dtype_of(x)):
        raise TypeError("frexp does not support complex-valued inputs")
    exponent = _frexp(x)[1]
    return _frexp_mantissa(x, exponent), exponent


@custom_jvp
def _frexp_mantissa(x, exponent):
    return _frexp(x)[0]


@_frexp_mantissa.defjvp
def _frexp_mantissa_jvp(primals, tangents):
    (x, exponent), (t, _) = primals, tangents
    # mantissa = x * 2**-exponent, the exponent being locally constant.
    return _frexp_mantissa(x, exponent), _times_power_of_two(t, U.negative(exponent))


def _frexp(x):
    # From the bits alone, with integer operations: XLA's CPU backend may flush a
    # subnormal operand of a float operation (a comparison or a product) to zero, and
    # a subnormal has an exact decomposition, NumPy's. JAX 0.10/0.11 (+-0.5, -149)
    # and 0.12 (+-0, 0) differ (registry entry "frexp_of_a_subnormal").
    dtype = dtype_of(x)
    info = finfo(dtype)
    int_dtype = np.dtype(_INT_OF_WIDTH[dtype.itemsize])
    nmant, mask = info.nmant, (1 << info.nexp) - 1
    bias = 1 - info.minexp

    def const(value):
        return like(bits, value)
    bits = lax.bitcast_convert_type(x, int_dtype)
    field = lax.bitwise_and(lax.shift_right_logical(bits, const(nmant)), const(mask))
    fraction = lax.bitwise_and(bits, const((1 << nmant) - 1))
    sign = lax.bitwise_and(bits, const(-(1 << (8 * dtype.itemsize - 1))))   # the sign bit
    subnormal = lax.eq(field, const(0))
    # a subnormal is fraction * 2**(minexp - nmant): its leading bit, at position
    # length - 1, moves to the implicit bit (position nmant) and is dropped there
    length = lax.sub(const(8 * dtype.itemsize), lax.clz(fraction))
    shifted = lax.bitwise_and(
        lax.shift_left(fraction, lax.max(lax.sub(const(nmant + 1), length), const(0))),
        const((1 << nmant) - 1))
    exponent = U.where(subnormal, lax.add(length, const(info.minexp - nmant)),
                       lax.sub(field, const(bias - 1)))
    mantissa = lax.bitcast_convert_type(
        lax.bitwise_or(lax.bitwise_or(sign, const((bias - 1) << nmant)),
                       U.where(subnormal, shifted, fraction)), dtype)
    # zeros, infinities and NaNs are their own mantissa, with exponent 0
    special = lax.bitwise_or(lax.eq(field, const(mask)),
                             lax.bitwise_and(subnormal, lax.eq(fraction, const(0))))
    exponent = U.where(special, like(exponent, 0), exponent)
    return U.where(special, x, mantissa), convert("frexp", exponent, np.int32)


@jitted_eagerly()
def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign."""
    if out is not None:
        raise NotImplementedError("modf: the out= argument is not supported (JAX's arrays "
                                  "are immutable)")
    x, = promote_args_inexact("modf", as_operand("modf", x))
    whole = U.where(lax.ge(x, like(x, 0)), U.floor(x), U.ceil(x))
    return lax.sub(x, whole), whole


def _integer_pair(fname, x1, x2):
    x1, x2 = promote_args(fname, as_operand(fname, x1), as_operand(fname, x2),
                          keep_scalars=False)
    if not is_integer(dtype_of(x1)):
        raise ValueError(f"{fname}: arguments must be integers, got dtype {dtype_of(x1)}")
    return x1, x2


@jitted_eagerly()
def gcd(x1, x2, /):
    """The greatest common divisor of |x1| and |x2| (0 for two zeros)."""
    x1, x2 = _integer_pair("gcd", x1, x2)
    x1, x2 = lax.abs(x1), lax.abs(x2)

    def not_done(pair):
        return R.any(U.not_equal(pair[1], 0))

    def euclid_step(pair):
        a, b = pair
        nonzero = U.not_equal(b, 0)
        # JAX's constants: weak only for scalars, so a weak array (a Python int beside
        # a bool array) gives a strong result, as in JAX
        remainder = lax.rem(a, U.where(nonzero, b, lax_const_like(b, 1)))
        a, b = U.where(nonzero, b, a), U.where(nonzero, remainder, lax_const_like(b, 0))
        # JAX's step ends by putting the larger first (already so: b < a after a step),
        # which makes both strong when one is, so the loop returns JAX's weak types
        larger_second = U.less(a, b)
        return U.where(larger_second, b, a), U.where(larger_second, a, b)
    return lax.while_loop(not_done, euclid_step, (x1, x2))[0]


@jitted_eagerly()
def lcm(x1, x2, /):
    """The least common multiple of |x1| and |x2| (0 if either is 0)."""
    x1, x2 = _integer_pair("lcm", x1, x2)
    divisor = gcd(x1, x2)
    is_zero = U.equal(divisor, 0)
    quotient = U.floor_divide(x1, U.where(is_zero, like(divisor, 1), divisor))
    return U.where(is_zero, like(divisor, 0), U.absolute(U.multiply(quotient, x2)))


@jitted_eagerly()
def nextafter(x1, x2, /):
    """The next representable float after x1 in the direction of x2."""
    x1, x2 = promote_args_inexact("nextafter", as_operand("nextafter", x1),
                                  as_operand("nextafter", x2))
    return lax.nextafter(x1, x2)


@jitted_eagerly()
def spacing(x, /):
    """The distance from x to the next float away from zero (negative for x < 0)."""
    x, = promote_args_inexact("spacing", as_operand("spacing", x), keep_scalars=False)
    if is_complex(dtype_of(x)):
        raise ValueError("spacing is not defined for complex inputs")
    x = R.strong("spacing", x)  # as JAX: a Python scalar's spacing is strongly typed
    away = U.where(signbit(x), like(x, -np.inf), like(x, np.inf))
    return lax.sub(lax.nextafter(x, away), x)


def logaddexp2(x1, x2, /):
    """`log2(2**x1 + 2**x2)` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", as_operand("logaddexp2", x1),
                                  as_operand("logaddexp2", x2))
    ln2 = float(np.log(2))
    natural = logaddexp(U.multiply(x1, ln2), U.multiply(x2, ln2))
    # JAX's constant: strong unless the operands are weak scalars, as in JAX
    return U.true_divide(natural, lax_const_like(natural, ln2))


@jitted_eagerly()
def sort_complex(a):
    """`a` sorted along its last axis (by real part, then imaginary), as complex."""
    a = as_operand("sort_complex", a)
    if not shape_of(a):
        raise ValueError("sort_complex: the input must have at least one dimension")
    dtype = dtype_of(a)
    if is_complex(dtype):
        # Sorting on two keys orders complex numbers lexicographically, as JAX does.
        parts = lax.sort((lax.real(a), lax.imag(a)), dimension=len(shape_of(a)) - 1,
                         num_keys=2)
        return lax.complex(*parts)
    complex_dtype = np.dtype(np.complex128 if dtype == np.float64 else np.complex64)
    return convert("sort_complex", sort(a), complex_dtype)


@jitted_eagerly("axis")
def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """`p` with each jump bigger than `discont` between neighbours along `axis` undone
    by adding a multiple of `period`."""
    p, = promote_args_inexact("unwrap", as_operand("unwrap", p))
    if is_complex(dtype_of(p)):
        raise ValueError("unwrap does not support complex inputs")
    axis = canonicalize_axis("unwrap", axis, len(shape_of(p)))
    half = U.true_divide(period, 2)
    discont = half if discont is None else discont
    n = shape_of(p)[axis]
    rest = lax.slice_in_dim(p, 1, n, axis=axis)
    step = U.subtract(rest, lax.slice_in_dim(p, 0, n - 1, axis=axis))
    wrapped = U.subtract(U.remainder(U.add(step, half), period), half)
    wrapped = U.where(U.logical_and(U.equal(wrapped, U.negative(half)), U.greater(step, 0)),
                      half, wrapped)
    correction = U.where(U.less(U.absolute(step), discont), 0, U.subtract(wrapped, step))
    corrected = U.add(rest, R.cumsum(correction, axis=axis))
    return concatenate([lax.slice_in_dim(p, 0, 1, axis=axis),
                        convert("unwrap", corrected, dtype_of(p))], axis=axis)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """`filt` (concrete) without its leading ('f') and/or trailing ('b') all-zero
    slices along `axis` (an int, a sequence, or None: every axis)."""
    filt = as_operand("trim_zeros", filt)
    if isinstance(filt, Tracer):
        filt._concrete_or_raise("trim_zeros (its result's size depends on the values)")
    dims = shape_of(filt)
    nonzero = np.asarray(filt) != 0
    trim = trim.lower()
    index = [slice(None)] * len(dims)
    for ax in canonicalize_axes("trim_zeros", axis, len(dims)):
        others = tuple(i for i in range(len(dims)) if i != ax)
        kept = np.flatnonzero(nonzero.any(axis=others))
        if not kept.size:
            index[ax] = slice(0, 0)
            continue
        start = int(kept[0]) if "f" in trim else 0
        stop = int(kept[-1]) + 1 if "b" in trim else dims[ax]
        index[ax] = slice(start, stop)
    return filt[tuple(index)]


@jitted_eagerly("period")
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp), xp increasing, at x;
    `left`/`right` (default fp[0]/fp[-1]) outside, or periodic with `period`."""
    x, xp, fp = (as_operand("interp", v) for v in (x, xp, fp))
    if len(shape_of(xp)) != 1 or len(shape_of(fp)) != 1:
        raise ValueError("interp: xp and fp must be one-dimensional")
    if shape_of(xp) != shape_of(fp):
        raise ValueError(f"interp: xp and fp must be the same length, got "
                         f"{shape_of(xp)[0]} and {shape_of(fp)[0]}")
    if not shape_of(xp)[0]:
        raise ValueError("interp: xp and fp must not be empty")
    if is_complex(dtype_of(x)) or is_complex(dtype_of(xp)):
        raise ValueError("interp: complex x or xp is not supported")
    x, xp = promote_dtypes_inexact("interp", x, xp)
    fp, = promote_dtypes_inexact("interp", fp)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right have no meaning with period")
        period = U.absolute(period)
        x = U.remainder(x, period)
        xp = U.remainder(xp, period)
        xp, fp = lax.sort((xp, fp), dimension=0, num_keys=1)
        xp = concatenate([U.subtract(xp[-1:], period), xp, U.add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = shape_of(xp)[0]
    i = U.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x_lo, x_hi = take(xp, U.subtract(i, 1)), take(xp, i)
    f_lo, f_hi = take(fp, U.subtract(i, 1)), take(fp, i)
    width = U.subtract(x_hi, x_lo)
    tiny = float(np.spacing(np.finfo(dtype_of(xp)).eps))
    flat = U.less_equal(U.absolute(width), tiny)  # also keeps the gradient NaN-free
    slope = U.true_divide(U.subtract(x, x_lo), U.where(flat, 1, width))
    f = U.where(flat, f_lo, U.add(f_lo, U.multiply(slope, U.subtract(f_hi, f_lo))))
    if period is None:
        f = U.where(U.less(x, xp[0]), fp[0] if left is None else left, f)
        f = U.where(U.greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f
