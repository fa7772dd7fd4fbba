"""Discrete calculus on arrays: differences, the trapezoid rule, cross products and
polynomial values.

Each is a few slices and arithmetic, written as JAX writes it so that the results
agree to the last bit where the operations are the same: `diff` subtracts shifted
slices (`!=` for bools), `trapezoid` uses the constant-spacing shortcut
`dx * (sum(y) - (y[0] + y[-1]) / 2)` when it can, `cross` builds the three
components from slices, and `polyval` is Horner's rule.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ._creation import asarray, zeros_like
from ._promotion import (as_operand, as_array, shape_of, dtype_of, canonicalize_axis,
                         promote_dtypes, promote_dtypes_inexact)
from ._reductions import sum as array_sum
from ._shape import broadcast_to, concatenate, moveaxis, ravel, stack
from ._ufuncs import not_equal, subtract

__all__ = ["diff", "ediff1d", "trapezoid", "cross", "polyval"]


def _shifted(arr, axis, start, stop):
    index = [slice(None)] * len(shape_of(arr))
    index[axis] = slice(start, stop)
    return arr[tuple(index)]


@jitted_eagerly("n", "axis")
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along `axis`: out[i] = a[i + 1] - a[i], n times."""
    arr = as_operand("diff", a)
    n, axis = operator.index(n), operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if not shape_of(arr):
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonicalize_axis("diff", axis, len(shape_of(arr)))
    def edge(extra):
        extra = as_operand("diff", extra)
        if shape_of(extra):
            return extra
        shape = list(shape_of(arr))
        shape[axis] = 1
        return broadcast_to(extra, tuple(shape))
    pieces = ([edge(prepend)] if prepend is not None else []) + [arr] + (
        [edge(append)] if append is not None else [])
    if len(pieces) > 1:
        arr = concatenate(pieces, axis)
    op = not_equal if dtype_of(arr) == np.bool_ else subtract
    for _ in range(n):
        arr = op(_shifted(arr, axis, 1, None), _shifted(arr, axis, None, -1))
    return arr


@jitted_eagerly()
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with `to_begin`
    and `to_end` (cast to its dtype) put before and after."""
    arr = ravel(as_operand("ediff1d", ary))
    result = lax.sub(arr[1:], arr[:-1])

    def flat(extra):
        return ravel(as_array(as_operand("ediff1d", extra)).astype(dtype_of(arr)))
    if to_begin is not None:
        result = concatenate((flat(to_begin), result))
    if to_end is not None:
        result = concatenate((result, flat(to_end)))
    return result


@jitted_eagerly("axis")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of `y` along `axis` by the trapezoid rule, with sample points `x`
    or a constant spacing `dx`."""
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"trapezoid: axis must be an integer, got {axis!r}")
    if x is None:
        (y,) = promote_dtypes_inexact("trapezoid", as_operand("trapezoid", y))
        spacing = asarray(dx)
        if shape_of(spacing):
            spacing = lax.expand_dims(spacing, tuple(range(len(shape_of(y))
                                                           - len(shape_of(spacing)))))
            spacing = moveaxis(spacing, axis, -1)
    else:
        y, x = promote_dtypes_inexact("trapezoid", as_operand("trapezoid", y),
                                      as_operand("trapezoid", x))
        spacing = (diff(x) if len(shape_of(x)) == 1
                   else moveaxis(diff(x, axis=axis), axis, -1))
    y = moveaxis(y, axis, -1)
    if not shape_of(spacing) or shape_of(spacing)[-1] == 1:
        step = spacing if not shape_of(spacing) else spacing[..., 0]
        return step * (array_sum(y, -1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * array_sum(spacing * (y[..., 1:] + y[..., :-1]), -1)


@jitted_eagerly("axisa", "axisb", "axisc", "axis")
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of (arrays of) 2- or 3-vectors; two 2-vectors give the
    z component only."""
    a, b = as_operand("cross", a), as_operand("cross", b, 1)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if shape_of(a)[-1] not in (2, 3) or shape_of(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if shape_of(a)[-1] == 2 and shape_of(b)[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if shape_of(a)[-1] == 3 else zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if shape_of(b)[-1] == 3 else zeros_like(b0)
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return moveaxis(c, 0, axisc)


@jitted_eagerly("unroll")
def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients `p` (highest degree first) at `x`, by Horner's
    rule. `unroll` is accepted for JAX's signature; the loop is unrolled here."""
    p, x = as_operand("polyval", p), as_operand("polyval", x, 1)
    p, x = (as_array(v) for v in promote_dtypes("polyval", p, x))
    shape = tuple(np.broadcast_shapes(shape_of(p)[1:], shape_of(x)))
    y = lax.full(shape, 0, dtype_of(x))     # strong zeros, as JAX's `full_like`
    for i in range(shape_of(p)[0]):
        y = y * x + p[i]
    return y
