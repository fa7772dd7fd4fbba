"""More of the jnp surface, built from the functions of the other modules:
closeness tests, NaN-aware reductions, quantiles, `logaddexp`, `nan_to_num`, ...

Nothing here introduces a new technique; read the other modules first.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ._promotion import (as_operand, shape_of, dtype_of, like, promote_args_inexact,
                         canonicalize_axes, convert, is_inexact, strong_like,
                         lax_const_like)
from . import _reductions as R
from . import _ufuncs as U
from ._classify import isinf, isnan
from ._creation import asarray
from ._dtypes import finfo
from ._take import take
from ._promotion import as_array
from ._shape import concatenate, ravel, reshape, stack, transpose
from ._sorting import sort


@jitted_eagerly("equal_nan")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """`|a - b| <= atol + rtol * |b|` elementwise; equal infinities are close. Integers
    and booleans are compared as floats, as in NumPy and JAX (so 10**8 is close to
    10**8 + 1), and the result is strongly typed."""
    a, b = promote_args_inexact("isclose", a, b, keep_scalars=False)
    tolerance_dtype = np.finfo(dtype_of(a)).dtype   # (real for complex a and b)
    atol, rtol = (convert("isclose", t, tolerance_dtype) for t in (atol, rtol))
    close = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    # inf - inf is NaN, so infinities are compared for equality instead.
    either_inf = lax.bitwise_or(isinf(a), isinf(b))
    close = lax.select(either_inf, lax.eq(a, b), close)
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(isnan(a), isnan(b)))
    return close


@jitted_eagerly("equal_nan")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return R.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have the same shape and elements (a bool array)."""
    # JAX converts the operands with asarray here, so lists are accepted.
    a1, a2 = asarray(a1), asarray(a2)
    if shape_of(a1) != shape_of(a2):
        return asarray(False)
    equal = U.equal(a1, a2)
    if equal_nan and is_inexact(dtype_of(a1)) and is_inexact(dtype_of(a2)):
        equal = U.logical_or(equal, U.logical_and(isnan(a1), isnan(a2)))
    return R.all(equal)


def logaddexp(x1, x2, /):
    """`log(exp(x1) + exp(x2))` without overflow: the max plus a log1p correction."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2, keep_scalars=False)
    return _logaddexp(x1, x2)


@custom_jvp
def _logaddexp(x1, x2):
    big = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    # Equal infinities make delta NaN; their sum is then the answer.
    safe = lax.add(big, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), safe)


def _finite_or_zero(x):
    zero = lax.broadcast_in_dim(like(x, 0), shape_of(x), ())
    return lax.select(lax.eq(x, like(x, np.inf)), zero, x)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    # Each input's weight is its share exp(x_i - out) of the sum: 1/2 each at x1 == x2
    # (differentiating through `max` would give all of it to one side), and +inf
    # inputs count as 0 so that inf - inf does not turn the weights into NaN.
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp(x1, x2)
    w1 = lax.exp(lax.sub(_finite_or_zero(x1), _finite_or_zero(out)))
    w2 = lax.exp(lax.sub(_finite_or_zero(x2), _finite_or_zero(out)))
    return out, lax.add(lax.mul(t1, w1), lax.mul(t2, w2))


@jitted_eagerly()
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to `nan`, +-inf to the largest finite values (or `posinf`/`neginf`)."""
    x = as_operand("nan_to_num", x)
    if not is_inexact(dtype_of(x)):
        return as_array(x)
    if dtype_of(x).kind == "c":     # the real and imaginary parts each on their own
        return lax.complex(nan_to_num(lax.real(x), copy, nan, posinf, neginf),
                           nan_to_num(lax.imag(x), copy, nan, posinf, neginf))
    info = finfo(dtype_of(x))
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    # Strong constants: the result is strongly typed even for a weak `x`, as JAX's.
    x = U.where(isnan(x), strong_like(x, nan), x)
    x = U.where(U.equal(x, np.inf), strong_like(x, posinf), x)
    return U.where(U.equal(x, -np.inf), strong_like(x, neginf), x)


@jitted_eagerly()
def heaviside(x1, x2, /):
    # A scalar x1 stays rank-0, so its constants stay weak with it, as in JAX.
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = lax_const_like(x1, 0)
    at_zero = U.where(lax.ne(x1, x1), x1, x2)   # a NaN x1 stays NaN, as in NumPy and JAX
    return U.where(lax.lt(x1, zero), zero, U.where(lax.gt(x1, zero), lax_const_like(x1, 1), at_zero))


@jitted_eagerly()
def sinc(x, /):
    """`sin(pi x) / (pi x)`, and 1 at 0."""
    x, = promote_args_inexact("sinc", x, keep_scalars=False)
    pi_x = lax.mul(x, like(x, np.pi))
    zero = lax.eq(x, like(x, 0))
    safe = lax.select(zero, lax.add(pi_x, like(x, 1)), pi_x)  # avoids 0 / 0 at x = 0
    return U.where(zero, like(x, 1), lax.div(lax.sin(safe), safe))


def _nan_to_identity(fname, a, identity):
    a = as_operand(fname, a)
    return U.where(isnan(a), like(a, identity), a) if is_inexact(dtype_of(a)) else a


# JAX's signatures: `nansum`/`nanprod` take a dtype, `nanmax`/`nanmin` do not.
@jitted_eagerly("axis", "dtype", "keepdims")
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`sum` ignoring NaNs."""
    return R.sum(_nan_to_identity("nansum", a, 0), axis, dtype, out, keepdims, initial,
                 where)


@jitted_eagerly("axis", "dtype", "keepdims")
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`prod` ignoring NaNs."""
    return R.prod(_nan_to_identity("nanprod", a, 1), axis, dtype, out, keepdims, initial,
                  where)


@jitted_eagerly("axis", "keepdims")
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`max` ignoring NaNs (NaN where all are NaN)."""
    return _nan_extremum("nanmax", R.max, -np.inf, a, axis, out, keepdims, initial, where)


def _nan_extremum(fname, reduce, identity, a, axis, out, keepdims, initial, where):
    """`reduce` over the non-NaN elements. A slice of NaNs only is NaN, as in JAX and
    NumPy (not the identity, -inf for max), unless an `initial` value is given."""
    a = as_operand(fname, a)
    found = reduce(_nan_to_identity(fname, a, identity), axis, out, keepdims, initial, where)
    if initial is not None or not is_inexact(dtype_of(a)):
        return found
    all_nan = R.all(isnan(a), axis=axis, keepdims=keepdims)
    return U.where(all_nan, like(a, np.nan), found)


@jitted_eagerly("axis", "keepdims")
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`min` ignoring NaNs (NaN where all are NaN)."""
    return _nan_extremum("nanmin", R.min, np.inf, a, axis, out, keepdims, initial, where)


@jitted_eagerly("axis", "dtype", "keepdims")
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """The mean of the non-NaN elements (of those `where` selects)."""
    a = as_operand("nanmean", a)
    if not is_inexact(dtype_of(a)):
        return R.mean(a, axis, dtype, out, keepdims, where=where)
    count = R.sum(U.logical_not(isnan(a)), axis=axis, keepdims=keepdims, where=where)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    # The count in the total's dtype, as JAX divides: no promotion of an int
    # (which jax_numpy_dtype_promotion='strict' would refuse).
    return U.true_divide(total, convert("nanmean", count, dtype_of(total)))


@jitted_eagerly("axis")
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


__all__ = ["isclose", "allclose", "array_equal", "logaddexp", "nan_to_num", "heaviside",
           "sinc", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "append"]
