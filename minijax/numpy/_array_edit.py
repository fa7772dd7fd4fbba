"""Functional forms of NumPy's array edits and rearrangements: `insert`/`delete`,
`block`, `unstack`, `concat`, `rollaxis`, `dsplit`, `diagflat`, `resize`; the
selections `compress`/`extract`/`choose`; the writes `place`/`put`/`put_along_axis`/
`fill_diagonal` (JAX's arrays are immutable, so these return a new array and demand
`inplace=False`); and the orderings `lexsort`, `partition`, `argpartition`.

Where the positions are static (`insert`/`delete` indices, `block`'s nesting), NumPy
computes the index map and one `take` builds the result. Where a mask picks
elements (`compress`, `extract`, `place`), the picked positions are found with the
cumsum-and-scatter compaction of `_setops.py`, so a static `size` lets them trace.
`partition` follows JAX's `top_k`-based result order: the kth-smallest and all below
it ascending, then the rest descending; `argpartition` gives the rest in index order.
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..ir.trace import Tracer
from ._creation import asarray, zeros
from ._promotion import (as_operand, shape_of, dtype_of, convert, canonicalize_axis,
                         static_int, promote_dtypes)
from . import _ufuncs as U
from ._shape import (broadcast_to, concatenate, diag, moveaxis, ravel, reshape, split,
                     stack, tile, broadcast_arrays, swapaxes)
from ._take import take, take_along_axis
from ._index_tricks import diag_indices, unravel_index
from ._sorting import argsort, sort
from ._setops import _slots, true_positions

__all__ = ["insert", "delete", "block", "unstack", "concat", "rollaxis", "dsplit",
           "diagflat", "resize", "compress", "extract", "choose", "place", "put",
           "put_along_axis", "fill_diagonal", "lexsort", "partition", "argpartition"]


def _concrete(fname, x, why):
    if isinstance(x, Tracer):
        x = x._concrete_or_raise(f"{fname} ({why})")
    return np.asarray(x)


def _static_positions(fname, obj, n):
    """The integer positions `obj` (int, slice or concrete array) names along length n."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n)), False
    if isinstance(obj, (list, tuple)):
        raise TypeError(f"{fname} requires ndarray or scalar arguments, got "
                        f"{type(obj).__name__} for obj (JAX refuses lists here)")
    positions = _concrete(fname, obj, "its indices must be static")
    if positions.ndim > 1:
        raise ValueError(f"{fname}: obj must be a slice, a one-dimensional array, or a "
                         f"scalar")
    if positions.size == 0:
        positions = positions.astype(np.int64)
    if positions.dtype.kind not in "iu":
        raise ValueError(f"{fname}: index array must be integer typed, got "
                         f"{positions.dtype}")
    return positions, positions.ndim == 0


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries at `obj` (static indices, or traced integer ones
    promised unique by `assume_unique_indices`) along `axis`."""
    arr = as_operand("delete", arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = canonicalize_axis("delete", axis, len(shape_of(arr)))
    n = shape_of(arr)[axis]
    if (assume_unique_indices and isinstance(obj, Tracer) and obj.concrete_value() is None
            and np.issubdtype(dtype_of(obj), np.integer)):
        return _delete_unique(arr, obj, axis, n)
    positions, _ = _static_positions("delete", obj, n)
    positions = np.atleast_1d(positions)
    if np.any((positions < -n) | (positions >= n)):
        raise IndexError(f"delete: index out of bounds for axis {axis} with size {n}")
    keep = np.ones(n, bool)
    keep[positions % n if n else positions] = False
    return take(arr, asarray(np.flatnonzero(keep).astype(np.int32)), axis=axis)


def _delete_unique(arr, obj, axis, n):
    """`delete` of traced, distinct indices, as JAX's jit-compatible path: the result
    has n - len(obj) entries; the k-th kept position is k plus the number of deleted
    positions at or before it, found by comparing k with each sorted index less its
    rank (an index past the end counts as n, as JAX clips it)."""
    dtype = dtype_of(obj)
    gone = ravel(obj)
    gone = U.where(U.less(gone, 0), U.add(gone, np.asarray(n, dtype)), gone)
    gone = sort(lax.clamp(np.asarray(0, dtype), gone, np.asarray(n, dtype)))
    m = shape_of(gone)[0]
    gone = U.subtract(gone, lax.iota(dtype, m))
    kept = lax.iota(dtype, n - m)
    before = U.greater_equal(kept[None, :], gone[:, None])
    kept = U.add(kept, lax.reduce_sum(convert("delete", before, dtype), (0,)))
    return take(arr, kept, axis=axis)


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the static indices `obj` along `axis`."""
    arr = as_operand("insert", arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    ndim = len(shape_of(arr))
    axis = canonicalize_axis("insert", axis, ndim)
    n = shape_of(arr)[axis]
    positions, scalar = _static_positions("insert", obj, n)
    values = convert("insert", asarray(values), dtype_of(arr))
    vshape = shape_of(values)
    if len(vshape) < ndim:  # as NumPy's ndmin
        values = reshape(values, (1,) * (ndim - len(vshape)) + vshape)
    if scalar:
        values = moveaxis(values, 0, axis)
        count = shape_of(values)[axis]
        positions = np.full(count, int(positions))
    else:
        count = positions.size
    if np.any((positions < -n) | (positions > n)):
        raise IndexError(f"insert: index out of bounds for axis {axis} with size {n}")
    target = list(shape_of(arr))
    target[axis] = count
    values = broadcast_to(values, tuple(target))
    positions = np.where(positions < 0, positions + n, positions)
    # Where each new element lands: its index plus the insertions before it.
    order = np.argsort(positions, kind="stable")
    landing = np.empty(count, np.int64)
    landing[order] = positions[order] + np.arange(count)
    from_old = np.ones(n + count, bool)
    from_old[landing] = False
    source = np.empty(n + count, np.int64)
    source[from_old] = np.arange(n)
    source[landing] = n + np.arange(count)
    joined = concatenate([arr, values], axis=axis)
    return take(joined, asarray(source.astype(np.int32)), axis=axis)


def _block_depth(arrays, path=()):
    if isinstance(arrays, tuple):
        raise TypeError(f"block: arrays is a tuple at {path or 'the top'}; only lists "
                        f"may be used to arrange blocks")
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError(f"block: list at {path or 'the top'} cannot be empty")
        depths = {_block_depth(a, path + (i,)) for i, a in enumerate(arrays)}
        if len(depths) != 1:
            raise ValueError(f"block: list depths are mismatched at {path or 'the top'}")
        return depths.pop() + 1
    return 0


@jitted_eagerly(nested_lists=True)
def block(arrays):
    """One array assembled from nested lists of blocks: the innermost lists are joined
    along the last axis, the next along the second-to-last, and so on."""
    # JAX jits `block` over the lists' pytree; so does minijax (`nested_lists`): an
    # eager call with lists of arrays runs one cached program, whose trace checks the
    # nesting (on every call that fails: nothing is cached).
    depth = _block_depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for item in x:
                collect(item)
        else:
            leaves.append(as_operand("block", x))
    collect(arrays)
    ndim = max([depth] + [len(shape_of(leaf)) for leaf in leaves])

    def assemble(x, level):
        if not isinstance(x, list):
            x = as_operand("block", x)
            shape = shape_of(x)
            return reshape(x, (1,) * (ndim - len(shape)) + shape)
        parts = [assemble(item, level + 1) for item in x]
        return concatenate(list(promote_dtypes("block", *parts)), axis=level - depth)
    return assemble(arrays, 0)


@jitted_eagerly("axis")
def unstack(x, /, *, axis: int = 0):
    """The slices of `x` along `axis`, as a tuple."""
    x = as_operand("unstack", x)
    if not shape_of(x):
        raise ValueError("unstack requires arrays with rank > 0, got a 0-d array")
    axis = canonicalize_axis("unstack", axis, len(shape_of(x)))
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False)
                 for i in range(shape_of(x)[axis]))


def concat(arrays, /, *, axis=0):
    """The array-API name of `concatenate`."""
    return concatenate(arrays, axis=axis)


@jitted_eagerly("axis", "start")
def rollaxis(a, axis: int, start=0):
    """`a` with `axis` moved to lie before position `start` (NumPy's older moveaxis)."""
    a = as_operand("rollaxis", a)
    ndim = len(shape_of(a))
    axis = canonicalize_axis("rollaxis", axis, ndim)
    start = static_int("rollaxis", start, "start")
    if not -ndim <= start <= ndim:
        raise ValueError(f"rollaxis: start={start} must be within [{-ndim}, {ndim}]")
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def dsplit(ary, indices_or_sections):
    """`split` along the third axis (the array must have at least 3 dimensions)."""
    ary = as_operand("dsplit", ary)
    if len(shape_of(ary)) < 3:
        raise ValueError(f"dsplit only works on arrays of 3 or more dimensions, got shape "
                         f"{shape_of(ary)}")
    return split(ary, indices_or_sections, axis=2)


def diagflat(v, k: int = 0):
    """A 2-d array with the flattened `v` on diagonal `k`."""
    return diag(ravel(as_operand("diagflat", v)), k)


@jitted_eagerly("new_shape")
def resize(a, new_shape):
    """`a`'s elements repeated cyclically to fill `new_shape`."""
    a = ravel(as_operand("resize", a))
    new_shape = ((static_int("resize", new_shape, "new_shape"),)
                 if not isinstance(new_shape, (tuple, list))
                 else tuple(static_int("resize", n, "new_shape") for n in new_shape))
    if any(n < 0 for n in new_shape):
        raise ValueError("resize: all elements of new_shape must be non-negative")
    size, n = math.prod(new_shape), shape_of(a)[0]
    if size == 0 or n == 0:
        return zeros(new_shape, dtype_of(a))
    return reshape(tile(a, -(-size // n))[:size], new_shape)


# -- selections -----------------------------------------------------------------------------

def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-d `condition` is true (`size`:
    static count, padded with `fill_value`)."""
    if out is not None:
        raise NotImplementedError("compress: the out= argument is not supported (JAX's "
                                  "arrays are immutable)")
    condition = as_operand("compress", condition)
    a = as_operand("compress", a)
    if len(shape_of(condition)) != 1:
        raise ValueError(f"compress: condition must be a 1D array, got shape "
                         f"{shape_of(condition)}")
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis("compress", axis, len(shape_of(a)))
    n = shape_of(a)[axis]
    if size is not None and not 0 < static_int("compress", size, "size") <= n:
        raise ValueError(f"compress: size must be positive and not greater than the size "
                         f"of the array axis; got size={size} for a.shape[axis]={n}")
    mask = U.not_equal(condition, 0)
    mask = mask[:n] if shape_of(mask)[0] > n else concatenate(
        [mask, zeros((n - shape_of(mask)[0],), bool)])
    positions, valid = true_positions("compress", mask, size)
    picked = take(a, positions, axis=axis)
    shape = [1] * len(shape_of(picked))
    shape[axis] = shape_of(valid)[0]
    return U.where(reshape(valid, shape), picked,
                   convert("compress", asarray(fill_value), dtype_of(a)))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of `arr` where `condition` is true, flattened."""
    return compress(ravel(as_operand("extract", condition)), ravel(as_operand("extract", arr)),
                    size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` for each i, the choices broadcast against `a`."""
    if out is not None:
        raise NotImplementedError("choose: the out= argument is not supported (JAX's "
                                  "arrays are immutable)")
    a = as_operand("choose", a)
    choices = [as_operand("choose", c) for c in choices]
    n = len(choices)
    if mode == "raise":
        values = _concrete("choose", a, "mode='raise' needs concrete indices; use 'wrap' "
                           "or 'clip' under jit")
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        a = U.remainder(a, n)
    elif mode == "clip":
        a = U.clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: invalid mode {mode!r}; expected 'raise', 'wrap' or "
                         f"'clip'")
    a, *choices = broadcast_arrays(a, *promote_dtypes("choose", *choices))
    stacked = stack(choices)
    index = reshape(convert("choose", a, np.int32), (1,) + shape_of(a))
    return take_along_axis(stacked, index, axis=0)[0]


# -- functional writes ----------------------------------------------------------------------

def _refuse_inplace(fname, inplace):
    if inplace:
        raise ValueError(f"jax.numpy.{fname} cannot modify arrays in-place, because JAX "
                         f"arrays are immutable. Pass inplace=False to instead return an "
                         f"updated array.")


def _tiled_to(values, n):
    values = ravel(values)
    size = shape_of(values)[0]
    if size == 0:
        raise ValueError("cannot write from an empty array of values")
    return tile(values, -(-n // size))[:n] if size != n else values


def place(arr, mask, vals, *, inplace=True):
    """`arr` with the entries where `mask` is true set to `vals`, repeated as needed."""
    _refuse_inplace("place", inplace)
    arr = asarray(as_operand("place", arr))
    mask = ravel(U.not_equal(as_operand("place", mask), 0))
    data = ravel(arr)
    n = shape_of(data)[0]
    positions, valid = true_positions("place", mask, n)
    positions = U.where(valid, positions, n)  # past the end: dropped
    vals = convert("place", as_operand("place", vals), dtype_of(arr))
    return reshape(data.at[positions].set(_tiled_to(vals, n), mode="drop"), shape_of(arr))


def put(a, ind, v, mode=None, *, inplace=True):
    """`a` with its flattened entries at `ind` set to `v` (repeated as needed). As in
    JAX, the flat indices go through `unravel_index`, which clamps them."""
    _refuse_inplace("put", inplace)
    a = asarray(as_operand("put", a))
    ind = ravel(as_operand("put", ind))
    v = ravel(convert("put", as_operand("put", v), dtype_of(a)))
    n = math.prod(shape_of(a))
    if not n or not shape_of(ind)[0] or not shape_of(v)[0]:
        return a
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind, scatter_mode = U.clip(ind, 0, n - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, scatter_mode = U.remainder(ind, n), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported (as in JAX)")
    else:
        raise ValueError(f"put: mode should be one of 'wrap' or 'clip'; got {mode!r}")
    index = unravel_index(ind, shape_of(a))
    return a.at[index].set(_tiled_to(v, shape_of(ind)[0]), mode=scatter_mode)


@jitted_eagerly("axis", "inplace", "mode")
def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """`arr` with `values` written at `indices` along `axis` (the inverse of
    take_along_axis)."""
    _refuse_inplace("put_along_axis", inplace)
    arr = asarray(as_operand("put_along_axis", arr))
    indices = as_operand("put_along_axis", indices)
    if axis is None:
        arr_flat = ravel(arr)
        out = put_along_axis(arr_flat, ravel(indices), ravel(asarray(values)), 0,
                             inplace=False, mode=mode)
        return reshape(out, shape_of(arr))
    ndim = len(shape_of(arr))
    axis = canonicalize_axis("put_along_axis", axis, ndim)
    if len(shape_of(indices)) != ndim:
        raise ValueError(f"put_along_axis: indices must have as many dimensions ({ndim}) "
                         f"as arr, got shape {shape_of(indices)}")
    index_shape = tuple(shape_of(indices)[d] if d == axis else
                        (shape_of(indices)[d] if shape_of(indices)[d] != 1
                         else shape_of(arr)[d]) for d in range(ndim))
    index = []
    for d in range(ndim):
        if d == axis:
            index.append(broadcast_to(indices, index_shape))
        else:
            index.append(lax.broadcasted_iota(np.int32, index_shape, d))
    values = convert("put_along_axis", asarray(values), dtype_of(arr))
    return arr.at[tuple(index)].set(broadcast_to(values, index_shape),
                                    mode="fill" if mode is None else mode)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """`a` with its main diagonal set to `val` (repeated as needed)."""
    if inplace:  # JAX's fill_diagonal raises NotImplementedError here (the others ValueError)
        raise NotImplementedError("fill_diagonal: JAX arrays are immutable, must use "
                                  "inplace=False")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported (as in JAX)")
    a = asarray(as_operand("fill_diagonal", a))
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if len(shape) > 2 and any(n != shape[0] for n in shape[1:]):
        raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
    n = min(shape)
    val = convert("fill_diagonal", as_operand("fill_diagonal", val), dtype_of(a))
    values = val if not shape_of(val) else _tiled_to(val, n)
    return a.at[diag_indices(n, len(shape))].set(values)


# -- orderings ------------------------------------------------------------------------------

@jitted_eagerly("axis")
def lexsort(keys, axis=-1):
    """The indices that sort by the last key, then the one before it, and so on."""
    # A sequence of keys is no operand `jitted_eagerly` passes on (such a call runs
    # this body directly); the keys are, so spread they run as one program.
    return _lexsort_keys(*keys, axis=axis)


@jitted_eagerly("axis")
def _lexsort_keys(*keys, axis):
    keys = [as_operand("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({shape_of(k) for k in keys}) > 1:
        raise ValueError("lexsort: all keys need to be the same shape")
    shape = shape_of(keys[0])
    if not shape:
        return asarray(np.int32(0))
    axis = canonicalize_axis("lexsort", axis, len(shape))
    iota = lax.broadcasted_iota(np.int32, shape, axis)
    return lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]


def _last_axis(fname, a, kth, axis):
    a = as_operand(fname, a)
    if dtype_of(a).kind == "c":  # JAX's partition uses top_k, which has no complex order
        raise NotImplementedError(f"jnp.{fname} for complex dtype is not implemented.")
    axis = canonicalize_axis(fname, axis, len(shape_of(a)))
    n = shape_of(a)[axis]
    kth = static_int(fname, kth, "kth")
    kth = kth + n if kth < 0 else kth
    if not 0 <= kth < n:
        raise ValueError(f"{fname}: kth={kth} out of range for axis of size {n}")
    return swapaxes(a, axis, -1), kth, axis


@jitted_eagerly("kth", "axis")
def partition(a, kth, axis: int = -1):
    """The kth-smallest element at position kth, the smaller ones before it (ascending)
    and the larger after (descending), as JAX orders them."""
    a, kth, axis = _last_axis("partition", a, kth, axis)
    ordered = sort(a, axis=-1)
    n = shape_of(a)[-1]
    bottom = lax.slice_in_dim(ordered, 0, kth + 1, axis=len(shape_of(a)) - 1)
    top = lax.rev(lax.slice_in_dim(ordered, kth + 1, n, axis=len(shape_of(a)) - 1),
                  (len(shape_of(a)) - 1,))
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


@jitted_eagerly("kth", "axis")
def argpartition(a, kth, axis: int = -1):
    """Indices that partition `a`: those of the kth+1 smallest (ascending, ties by
    index), then the others in index order, as JAX gives them."""
    a, kth, axis = _last_axis("argpartition", a, kth, axis)
    last = len(shape_of(a)) - 1
    n = shape_of(a)[-1]
    order = argsort(a, axis=-1)
    bottom = lax.slice_in_dim(order, 0, kth + 1, axis=last)
    # The rest, by index: sort the positions on whether they are among the bottom.
    rank = argsort(order, axis=-1)  # each position's place in the sorted order
    in_bottom = U.less_equal(rank, kth)
    iota = lax.broadcasted_iota(np.int32, shape_of(a), last)
    _, rest = lax.sort((convert("argpartition", in_bottom, np.int32), iota),
                       dimension=last, num_keys=1)
    top = lax.slice_in_dim(rest, 0, n - kth - 1, axis=last)
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)
