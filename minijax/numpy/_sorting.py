"""Sorting and searching: `sort`, `argsort`, `searchsorted`, `nonzero`, `argwhere`.

`argsort` is a multi-operand `sort` keyed on the data and carrying an `iota` of
positions along, so it is stable exactly when the sort is. A complex array is keyed on
its real and then its imaginary part (`sort_keys`), as JAX's comparator orders it;
`searchsorted` compares in that same order. Functions whose *shape*
depends on the data (`nonzero`, `flatnonzero`, `argwhere`, `unique`) need concrete
inputs, as in JAX, or a static `size=`: the first `size` results, padded.
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.trace import Tracer
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, shape_of, dtype_of, canonicalize_axis,
                         promote_dtypes, is_complex, is_inexact, convert)
from ._creation import asarray, concrete_array
from ._take import take
from ._reductions import sum as array_sum
from ._shape import expand_dims, flip, ravel, reshape, stack
from ._setops import unique_with_size, true_positions
from ._ufuncs import where
from ._index_tricks import unravel_index


def _sort_input(fname, a, axis):
    a = as_operand(fname, a)
    shape = shape_of(a)
    if axis is None:
        a = lax.reshape(a, (math.prod(shape),))
        return a, 0
    return a, canonicalize_axis(fname, axis, len(shape))


def _check_no_order(fname, order, kind=None):
    # Structured arrays do not exist in JAX, so neither does a field order; NumPy's
    # `kind` is refused too (JAX's TypeError): stability is `stable=`.
    if order is not None:
        raise TypeError(f"'order' argument to {fname} is not supported.")
    if kind is not None:
        raise TypeError(f"'kind' argument to {fname} is not supported. Use stable=True or "
                        f"stable=False to specify sort stability.")


def sort_keys(a):
    """The keys that order `a` as JAX's sort does: a complex array by its real part,
    then its imaginary part (each with NaNs last); any other array by itself."""
    if is_complex(dtype_of(a)):
        return [lax.real(a), lax.imag(a)]
    return [a]


@jitted_eagerly("axis", "kind", "order", "stable", "descending")
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """`jnp.sort` along `axis` (None: the flattened array); NaNs sort last, complex
    numbers lexicographically (real part, then imaginary)."""
    _check_no_order("sort", order, kind)
    a, axis = _sort_input("sort", a, axis)
    keys = sort_keys(a)
    operands = keys + [a] if len(keys) > 1 else keys  # a real array is its own key
    out = lax.sort(tuple(operands), dimension=axis, is_stable=bool(stable),
                   num_keys=len(keys))[-1]
    if descending:
        out = flip(out, axis)
    return out


@jitted_eagerly("axis", "kind", "order", "stable", "descending", "dtype")
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
    """`jnp.argsort`: indices that sort `a` along `axis`, int32 unless `dtype` says.

    Descending and stable keeps equal elements in their original order: sort the
    reversed array and positions ascending, then reverse the result."""
    _check_no_order("argsort", order, kind)
    index_dtype = (np.dtype(np.int32) if dtype is None
                   else canonical_dtype_argument(dtype, "argsort"))
    a, axis = _sort_input("argsort", a, axis)
    positions = lax.broadcasted_iota(index_dtype, shape_of(a), axis)
    if descending and stable:
        # (Unstable, the ascending order reversed, as JAX does: ties come out in JAX's
        # order too.)
        a, positions = flip(a, axis), flip(positions, axis)
    keys = sort_keys(a)
    indices = lax.sort((*keys, positions), dimension=axis, is_stable=bool(stable),
                       num_keys=len(keys))[-1]
    return flip(indices, axis) if descending else indices


@jitted_eagerly("side", "method")
def searchsorted(a, v, side: str = "left", sorter=None, *, method=None):
    """Indices at which `v` would be inserted into the sorted 1-d `a`.

    Counts the elements of `a` before each insertion point (a comparison against every
    element): O(len(a)) work per query, but one fused XLA computation."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = promote_dtypes("searchsorted", a, v)
    if len(shape_of(a)) != 1:
        raise ValueError(f"searchsorted: a must be 1-d, got shape {shape_of(a)}")
    if sorter is not None:
        a = take(a, sorter)
    v_shape = shape_of(v)
    queries = expand_dims(v, -1)
    queries = lax.broadcast_in_dim(queries, v_shape + shape_of(a),
                                   tuple(range(len(v_shape))) + (len(v_shape),))
    table = lax.broadcast_in_dim(a, v_shape + shape_of(a), (len(v_shape),))
    before = _ordered_before(table, queries, or_equal=(side == "right"))
    return array_sum(before, axis=-1, dtype=np.int32)


def _ordered_before(x, y, or_equal):
    """`x < y` (or `x <= y`) in the order `sort` uses: lexicographic over the sort
    keys, -0.0 equal to 0.0, NaN after every number and equal to any NaN."""
    result = None
    for xk, yk in reversed(list(zip(sort_keys(x), sort_keys(y)))):
        if is_inexact(dtype_of(xk)):
            x_nan, y_nan = lax.ne(xk, xk), lax.ne(yk, yk)
            less = lax.bitwise_or(lax.lt(xk, yk),
                                  lax.bitwise_and(lax.bitwise_not(x_nan), y_nan))
            equal = lax.bitwise_or(lax.eq(xk, yk), lax.bitwise_and(x_nan, y_nan))
        else:
            less, equal = lax.lt(xk, yk), lax.eq(xk, yk)
        if result is None:  # the last key decides ties of all the others
            result = lax.bitwise_or(less, equal) if or_equal else less
        else:
            result = lax.bitwise_or(less, lax.bitwise_and(equal, result))
    return result


def _concrete(fname, x):
    if isinstance(x, Tracer):
        x = x._concrete_or_raise(f"{fname} (its result's shape depends on the values; "
                                 f"pass size= where supported)")
    return np.asarray(x)


def _fill_per_dimension(fname, fill_value, ndim):
    if fill_value is None:
        return (0,) * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ValueError(f"{fname}: fill_value must be a scalar or a tuple of length "
                             f"{ndim} (one per dimension of the input), got "
                             f"{len(fill_value)} values")
        return tuple(fill_value)
    if np.ndim(fill_value) != 0:
        raise ValueError(f"{fname}: fill_value must be a scalar or a tuple of length {ndim}")
    return (fill_value,) * ndim


def nonzero(a, *, size=None, fill_value=None):
    """The indices of `a`'s nonzero entries, one int32 array per dimension, in
    row-major order. Their count depends on the values, so under a transformation a
    static `size` is needed: the first `size` positions, padded with `fill_value`
    (default 0; a scalar or one value per dimension)."""
    a = as_operand("nonzero", a)
    shape = shape_of(a)
    if not shape:
        raise ValueError("nonzero: calling nonzero on 0-d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    _fill_per_dimension("nonzero", fill_value, len(shape))   # its errors come first
    if size is None:  # counted here, where a NumPy input is still concrete under jit
        size = int(np.count_nonzero(_concrete("nonzero", a)))
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,)
    if any(np.iscomplexobj(fill) for fill in fills):
        # op by op, where a complex fill's conversion to int32 raises (traced, it
        # would be cast with a warning)
        return _nonzero_with_size.__wrapped__(a, size, fill_value)
    return _nonzero_with_size(a, size, fill_value)


@jitted_eagerly("size")
def _nonzero_with_size(a, size, fill_value):
    """`nonzero` once `size` is known: an eager call is one cached program per shape,
    size and fill (op by op it made 27 programs; JAX's, jitted in parts, 18)."""
    shape = shape_of(a)
    fills = _fill_per_dimension("nonzero", fill_value, len(shape))
    mask = reshape(lax.ne(a, lax.full_like(a, 0)), (math.prod(shape),))
    positions, valid = true_positions("nonzero", mask, size)
    return tuple(where(valid, index, convert("nonzero", asarray(fill), np.int32))
                 for index, fill in zip(unravel_index(positions, shape), fills))


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the flattened `a`'s nonzero entries (`size`: as in nonzero)."""
    return nonzero(ravel(as_operand("flatnonzero", a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of `a`'s nonzero entries as rows, shape (count, a.ndim) (`size`:
    as in nonzero)."""
    a = as_operand("argwhere", a)
    if not shape_of(a):  # a scalar is one entry with no dimensions, or none
        rows = nonzero(reshape(a, (1,)), size=size, fill_value=fill_value)[0]
        return reshape(rows[:0], (shape_of(rows)[0], 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def unique(ar, return_index=False, return_inverse=False, return_counts=False,
           axis=None, *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """`jnp.unique`: of a concrete array (computed with NumPy), or, given a static
    `size`, of any array (traced too; see _setops.py), padded with `fill_value`."""
    if size is not None:
        return unique_with_size(ar, return_index, return_inverse, return_counts,
                                equal_nan, size, fill_value, axis)
    value = _concrete("unique", as_operand("unique", ar))
    out = np.unique(value, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(out, tuple):
        return concrete_array(out)
    values, *indices = out  # the rest are positions and counts: int32 under x64-off
    return (concrete_array(values),) + tuple(concrete_array(i.astype(np.int32))
                                             for i in indices)


__all__ = ["sort", "argsort", "searchsorted", "nonzero", "flatnonzero", "argwhere",
           "unique"]
