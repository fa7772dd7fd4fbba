"""Elementwise classification of values: `isfinite`, `isnan`, `isinf`, `isposinf`,
`isneginf`, `signbit`.

Each returns a bool array of the operand's shape. Whether that result is weakly typed
follows from how JAX writes the function, and users can see it (a weak bool mixes
differently with later operands), so each body is built the same way:

* `isnan` is `x != x` for every dtype, and `isfinite` of a float is `lax.is_finite`
  (weak as its operand), so a Python scalar gives a weak bool;
* the others compare with a strongly typed constant (`strong_like`, JAX's
  `_constant_like`) or are constant, so their result is strong even for a Python
  scalar operand.

Integers and bools are never infinite, NaN or negative-signed bools; complex numbers
are infinite when either part is, and finite when both parts are.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ._creation import full
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, dtype_of, shape_of, strong_like, is_bool,
                         is_complex, is_float, is_integer)
from ._ufuncs import copysign


def _constant_bool(x, value):
    """A strong bool array of `x`'s shape (JAX's `full_like(x, value, dtype=bool)`)."""
    return full(shape_of(x), value, dtype=np.bool_)


def _is_infinite(x):
    return lax.eq(lax.abs(x), strong_like(x, np.inf))


@jitted_eagerly()
def isfinite(x, /):
    """True where `x` is neither infinite nor NaN."""
    x = as_operand("isfinite", x)
    dtype = dtype_of(x)
    if is_float(dtype):
        return lax.is_finite(x)
    if is_complex(dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return _constant_bool(x, True)


@jitted_eagerly()
def isnan(x, /):
    """True where `x` is NaN: the one value unequal to itself."""
    x = as_operand("isnan", x)
    return lax.ne(x, x)


@jitted_eagerly()
def isinf(x, /):
    """True where `x` (or, if complex, either of its parts) is +inf or -inf."""
    x = as_operand("isinf", x)
    dtype = dtype_of(x)
    if is_float(dtype):
        return _is_infinite(x)
    if is_complex(dtype):
        return lax.bitwise_or(_is_infinite(lax.real(x)), _is_infinite(lax.imag(x)))
    return _constant_bool(x, False)


def _signed_infinity_test(fname, infinity):
    def fn(x, /):
        x = as_operand(fname, x)
        dtype = dtype_of(x)
        if is_complex(dtype):
            raise ValueError(f"{fname} is not well defined for complex operands "
                             f"(dtype {dtype.name}); test the real or imaginary part")
        if is_float(dtype):
            return lax.eq(x, strong_like(x, infinity))
        return _constant_bool(x, False)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`: True where `x` is {'+' if infinity > 0 else '-'}inf."
    return jitted_eagerly()(fn)


isposinf = _signed_infinity_test("isposinf", np.inf)
isneginf = _signed_infinity_test("isneginf", -np.inf)


@jitted_eagerly()
def signbit(x, /):
    """True where the sign bit is set: negative numbers, -0.0 and -NaN included
    (`copysign` tells -0.0 apart from 0.0)."""
    x = as_operand("signbit", x)
    dtype = dtype_of(x)
    if is_bool(dtype):
        return _constant_bool(x, False)
    if is_integer(dtype):
        return lax.lt(x, strong_like(x, 0))
    if not is_float(dtype):
        raise ValueError(f"signbit is not well defined for complex operands "
                         f"(dtype {dtype.name})")
    return lax.lt(copysign(strong_like(x, 1), x), strong_like(x, 0))


__all__ = ["isfinite", "isnan", "isinf", "isposinf", "isneginf", "signbit"]
