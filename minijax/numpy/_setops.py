"""Set operations: `isin`, the array-API `unique_*` functions, and `intersect1d`,
`union1d`, `setdiff1d`, `setxor1d`, each with JAX's static `size=`/`fill_value=`.

One technique serves them all. The flattened input is sorted stably (carrying each
element's original position), and a boolean mask over the sorted elements marks the
ones the result keeps: the first of each run of equal values, further filtered by
membership in the other array. `_kept` moves the kept elements to the front of a
`size`-long array with one scatter (element i goes to slot `cumsum(mask)[i] - 1`,
the others are dropped) and pads the tail. So the result has a static shape: under
`jit` a `size` is required, and without one the number of kept elements must be
concrete (eagerly it is: it becomes the size). The padding is `fill_value`, or by
default, as in JAX: the first (smallest) value for `unique_*` and `union1d`, the
smallest result for `intersect1d`/`setxor1d` (NaN if a NaN is among them, 0 when
there is none), 0 for `setdiff1d`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..ir.trace import Tracer
from ._creation import asarray, zeros
from ._promotion import (as_operand, shape_of, dtype_of, like, promote_dtypes, static_int,
                         is_inexact, canonicalize_axis)
from . import _reductions as R
from . import _ufuncs as U
from ._classify import isnan
from ._shape import concatenate, moveaxis, ravel, reshape, stack

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"]


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of `element` equals some element of `test_elements`."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: method must be one of 'auto', 'compare_all', "
                         f"'binary_search', 'sort', got {method!r}")
    element = as_operand("isin", element)
    tests = ravel(as_operand("isin", test_elements))
    element, tests = promote_dtypes("isin", element, tests)
    shape = shape_of(element)
    table = lax.broadcast_in_dim(tests, shape + shape_of(tests), (len(shape),))
    queries = lax.broadcast_in_dim(element, shape + shape_of(tests), tuple(range(len(shape))))
    found = R.any(lax.eq(queries, table), axis=-1)
    return U.logical_not(found) if invert else found


# -- the shared machinery -------------------------------------------------------------------

def _sorted_with_positions(flat):
    """The stably sorted values and, for each, its position in `flat` (int32)."""
    positions = lax.broadcasted_iota(np.int32, shape_of(flat), 0)
    return lax.sort((flat, positions), dimension=0, is_stable=True, num_keys=1)


def _first_of_runs(ordered, equal_nan):
    """True at each sorted element that differs from its predecessor."""
    n = shape_of(ordered)[0]
    if n == 0:
        return lax.broadcast_in_dim(asarray(True), (0,), ())
    new = lax.ne(lax.slice(ordered, (1,), (n,)), lax.slice(ordered, (0,), (n - 1,)))
    if equal_nan and is_inexact(dtype_of(ordered)):
        both_nan = lax.bitwise_and(isnan(lax.slice(ordered, (1,), (n,))),
                                   isnan(lax.slice(ordered, (0,), (n - 1,))))
        new = lax.bitwise_and(new, lax.bitwise_not(both_nan))
    return concatenate([asarray([True]), new])


def _result_size(fname, keep, size):
    if size is not None:
        return static_int(fname, size, "size")
    if isinstance(keep, Tracer):
        keep = keep._concrete_or_raise(
            f"{fname} (its result's size depends on the values; pass a static size=)")
    return int(np.count_nonzero(np.asarray(keep)))


def _slots(keep, size):
    """Where each sorted element goes in the result (`size`: dropped) and the count."""
    rank = lax.sub(R.cumsum(keep, dtype=np.int32), like(np.int32(0), 1))
    return U.where(keep, rank, like(rank, size)), R.sum(keep, dtype=np.int32)


def true_positions(fname, mask, size):
    """The positions of the 1-d mask's True entries, in order, and which of them are
    real: `size` of them (static; the rest are 0 and marked invalid), or, when `size`
    is None, all of them, which needs a concrete mask (the count fixes the shape)."""
    if size is None:
        if isinstance(mask, Tracer):
            mask = mask._concrete_or_raise(
                f"{fname} (the result's shape depends on the values: pass a static size= "
                f"to use {fname} under jit and the other transformations)")
        size = int(np.count_nonzero(np.asarray(mask)))
    size = static_int(fname, size, "size")
    if size < 0:
        raise ValueError(f"{fname}: size must be non-negative, got {size}")
    slots, count = _slots(mask, size)
    iota = lax.broadcasted_iota(np.int32, shape_of(mask), 0)
    positions = zeros((size,), np.int32).at[slots].set(iota, mode="drop")
    valid = U.less(lax.broadcasted_iota(np.int32, (size,), 0), count)
    return positions, valid


def _pad(out, count, fill_value, default="min"):
    """`out` with the slots from `count` on set to `fill_value` (or the default)."""
    size = shape_of(out)[0]
    if size == 0:
        return out
    valid = lax.lt(lax.broadcasted_iota(np.int32, (size,), 0),
                   lax.broadcast_in_dim(count, (size,), ()))
    if fill_value is None and default == "first":
        fill = out[0]
    elif fill_value is None and default == "min":
        # The zero padding goes through max() first, so that the minimum is taken over
        # the real results only (0 if there are none), as JAX does.
        out = U.where(valid, out, R.max(out))
        fill = R.min(out)
    elif fill_value is None:
        fill = like(out, 0)
    else:
        fill = lax.convert_element_type(asarray(fill_value), dtype_of(out))
    return U.where(valid, out, fill)


def _kept(fname, ordered, keep, size, fill_value, default="min"):
    size = _result_size(fname, keep, size)
    slots, count = _slots(keep, size)
    out = zeros((size,), dtype_of(ordered)).at[slots].set(ordered, mode="drop")
    return _pad(out, count, fill_value, default), slots, count, size


# -- unique_* -------------------------------------------------------------------------------

class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _unique_parts(fname, x, size, fill_value, equal_nan=False):
    """values, first indices, inverse indices (x's shape) and counts (NaNs are one
    value with `equal_nan`, else each NaN is its own)."""
    x = as_operand(fname, x)
    shape = shape_of(x)
    flat = ravel(x)
    ordered, positions = _sorted_with_positions(flat)
    keep = _first_of_runs(ordered, equal_nan)
    values, slots, count, size = _kept(fname, ordered, keep, size, fill_value,
                                       default="first")
    first = zeros((size,), np.int32).at[slots].set(positions, mode="drop")
    first = _pad(first, count, None, default="first")
    run = lax.sub(R.cumsum(keep, dtype=np.int32), like(np.int32(0), 1))
    inverse = zeros(shape_of(flat), np.int32).at[positions].set(run)
    counts = zeros((size,), np.int32).at[run].add(like(np.int32(0), 1), mode="drop")
    return values, first, reshape(inverse, shape), counts


def _rows_differ(ordered_rows, equal_nan):
    """True at each sorted row (of an (n, m) array) that differs from its predecessor
    in some column."""
    n, m = shape_of(ordered_rows)
    if n == 0:
        return lax.broadcast_in_dim(asarray(True), (0,), ())
    later, earlier = ordered_rows[1:], ordered_rows[:-1]
    new = lax.ne(later, earlier)
    if equal_nan and is_inexact(dtype_of(ordered_rows)):
        new = lax.bitwise_and(new, lax.bitwise_not(lax.bitwise_and(isnan(later),
                                                                    isnan(earlier))))
    new = R.any(new, axis=1) if m else lax.broadcast_in_dim(asarray(False), (n - 1,), ())
    return concatenate([asarray([True]), new])


def _unique_slices(x, axis, size, fill_value, equal_nan):
    """`_unique_parts` of the slices of `x` along `axis`: each slice is one row of
    keys, sorted lexicographically (first element first), as NumPy orders them."""
    slices = moveaxis(x, axis, 0)
    slice_shape = shape_of(slices)[1:]
    n = shape_of(slices)[0]
    rows = reshape(slices, (n, -1))
    columns = [rows[:, j] for j in range(shape_of(rows)[1])] or [zeros((n,), np.int32)]
    positions = lax.broadcasted_iota(np.int32, (n,), 0)
    *ordered_columns, positions = lax.sort((*columns, positions), dimension=0,
                                           is_stable=True, num_keys=len(columns))
    ordered = rows if not shape_of(rows)[1] else stack(ordered_columns, axis=1)
    keep = _rows_differ(ordered, equal_nan)
    size = _result_size("unique", keep, size)
    slots, count = _slots(keep, size)
    values = zeros((size,) + shape_of(ordered)[1:], dtype_of(ordered)).at[slots].set(
        ordered, mode="drop")
    valid = lax.broadcast_in_dim(U.less(lax.broadcasted_iota(np.int32, (size,), 0), count),
                                 shape_of(values), (0,))
    if fill_value is not None:
        fill = lax.convert_element_type(asarray(fill_value), dtype_of(values))
    elif size:
        fill = lax.broadcast_in_dim(values[0], shape_of(values), (1,))
    else:
        fill = values
    values = U.where(valid, values, fill)
    first = _pad(zeros((size,), np.int32).at[slots].set(positions, mode="drop"), count,
                 None, default="first")
    run = lax.sub(R.cumsum(keep, dtype=np.int32), like(np.int32(0), 1))
    inverse = zeros((n,), np.int32).at[positions].set(run)
    counts = zeros((size,), np.int32).at[run].add(like(np.int32(0), 1), mode="drop")
    return moveaxis(reshape(values, (size,) + slice_shape), 0, axis), first, inverse, counts


@jitted_eagerly("return_index", "return_inverse", "return_counts", "equal_nan", "size",
                "axis")
def unique_with_size(ar, return_index, return_inverse, return_counts, equal_nan, size,
                     fill_value, axis=None):
    """`jnp.unique(ar, ..., size=size)` over the flattened array, or of the slices
    along `axis`: a static shape. An eager call is one cached program (JAX's, jitted
    in parts, makes four; op by op this made thirteen), and so is its body under an
    eager grad or vmap."""
    if axis is None:
        values, first, inverse, counts = _unique_parts("unique", ar, size, fill_value,
                                                       equal_nan)
    else:
        ar = as_operand("unique", ar)
        axis = canonicalize_axis("unique", axis, len(shape_of(ar)))
        values, first, inverse, counts = _unique_slices(ar, axis, size, fill_value,
                                                        equal_nan)
    extras = [part for part, wanted in ((first, return_index), (inverse, return_inverse),
                                        (counts, return_counts)) if wanted]
    return (values, *extras) if extras else values


def unique_all(x, /, *, size=None, fill_value=None):
    """The sorted unique values, the index of each one's first occurrence, each
    element's position in the values, and each value's count (NaNs are distinct)."""
    return UniqueAllResult(*_unique_parts("unique_all", x, size, fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    values, _, _, counts = _unique_parts("unique_counts", x, size, fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    values, _, inverse, _ = _unique_parts("unique_inverse", x, size, fill_value)
    return UniqueInverseResult(values, inverse)


def unique_values(x, /, *, size=None, fill_value=None):
    return _unique_parts("unique_values", x, size, fill_value)[0]


# -- two-set operations ---------------------------------------------------------------------

def _flat_pair(fname, ar1, ar2):
    ar1, ar2 = as_operand(fname, ar1), as_operand(fname, ar2, 1)
    ar1, ar2 = promote_dtypes(fname, ar1, ar2)
    return ravel(ar1), ravel(ar2)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted values found in either array (NaNs count once)."""
    a, b = _flat_pair("union1d", ar1, ar2)
    ordered, _ = _sorted_with_positions(concatenate([a, b]))
    keep = _first_of_runs(ordered, equal_nan=True)
    return _kept("union1d", ordered, keep, size, fill_value, default="first")[0]


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of `ar1` not in `ar2`; padding defaults to 0."""
    a, b = _flat_pair("setdiff1d", ar1, ar2)
    ordered, _ = _sorted_with_positions(a)
    keep = lax.bitwise_and(_first_of_runs(ordered, equal_nan=True),
                           isin(ordered, b, invert=True))
    return _kept("setdiff1d", ordered, keep, size, fill_value, default="zero")[0]


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values found in exactly one of the arrays. A NaN is never
    equal to another, so each array's NaN (once) is in the result, as in JAX."""
    a, b = _flat_pair("setxor1d", ar1, ar2)
    ordered, positions = _sorted_with_positions(concatenate([a, b]))
    in_a, in_b = isin(ordered, a), isin(ordered, b)
    keep = lax.bitwise_and(_first_of_runs(ordered, equal_nan=True), lax.ne(in_a, in_b))
    if is_inexact(dtype_of(ordered)) and shape_of(ordered)[0]:
        # NaNs sort last, a's before b's (the sort is stable): keep the first of each.
        from_a = lax.lt(positions, like(positions, shape_of(a)[0]))
        n = shape_of(ordered)[0]
        previous = concatenate([asarray([True]), lax.slice(from_a, (0,), (n - 1,))])
        previous_nan = concatenate([asarray([False]),
                                    isnan(lax.slice(ordered, (0,), (n - 1,)))])
        first_nan = lax.bitwise_and(isnan(ordered), lax.bitwise_or(
            lax.bitwise_not(previous_nan), lax.ne(previous, from_a)))
        keep = lax.bitwise_or(keep, first_nan)
    return _kept("setxor1d", ordered, keep, size, fill_value)[0]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values found in both arrays; with `return_indices`, also
    where each first occurs in `ar1` and in `ar2` (padding: the arrays' lengths)."""
    a, b = _flat_pair("intersect1d", ar1, ar2)
    ordered, positions = _sorted_with_positions(a)
    keep = lax.bitwise_and(_first_of_runs(ordered, equal_nan=False), isin(ordered, b))
    values, slots, count, size = _kept("intersect1d", ordered, keep, size, fill_value)
    if not return_indices:
        return values
    n_a, n_b = shape_of(a)[0], shape_of(b)[0]
    in_a = zeros((size,), np.int32).at[slots].set(positions, mode="drop")
    # The first position in b of each kept value: argmax finds the first True.
    matches = lax.eq(lax.broadcast_in_dim(ordered, (n_a, n_b), (0,)),
                     lax.broadcast_in_dim(b, (n_a, n_b), (1,)))
    first_in_b = (R.argmax(matches, axis=1) if n_b else zeros((n_a,), np.int32))
    in_b = zeros((size,), np.int32).at[slots].set(first_in_b, mode="drop")
    return values, _pad(in_a, count, n_a), _pad(in_b, count, n_b)
