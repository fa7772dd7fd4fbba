"""`take` and `take_along_axis`: picking elements by integer arrays along one axis.

Both are one `gather`. The index array is normalised first, according to `mode`:
'fill' (the default, as in JAX) counts negative indices from the end once and leaves
indices still out of range to the gather's fill mode (NaN for floats, the most
negative value for signed ints), 'clip' clamps, 'wrap' wraps around. With a
`fill_value` the gather clamps and the out-of-range results are replaced afterwards.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..ir.trace import Tracer
from ._promotion import (as_operand, shape_of, dtype_of, convert, broadcast_shapes,
                         broadcast_to_shape, is_integer, canonicalize_axis)
from ._indexing import _as_index_array, _normalize_index
from ._shape import ravel
from ._ufuncs import greater_equal, less, logical_and, remainder, where


def _gather_mode(fname, mode):
    mode = "fill" if mode is None else str(getattr(mode, "name", mode)).lower()
    if mode in ("fill", "drop", "fill_or_drop"):
        return "fill"
    if mode in ("clip", "promise_in_bounds", "wrap"):
        return "clip" if mode == "promise_in_bounds" else mode
    if mode == "raise":  # an error on a bad index would need a host check, as in JAX
        raise NotImplementedError(f"The 'raise' mode to jnp.{fname} is not supported.")
    raise ValueError(f"Invalid mode {mode!r} for np.{fname}")


def _fill_outside(out, index, n, fill_value, out_dims_of_index):
    """Replace results whose index was out of bounds by `fill_value`."""
    ok = logical_and(greater_equal(index, 0), less(index, n))
    ok = lax.broadcast_in_dim(ok, shape_of(out), out_dims_of_index)
    return where(ok, out, fill_value)


@jitted_eagerly("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value")
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of `a` at `indices` along `axis` (None: of the flattened `a`).

    As in JAX the default mode is 'fill': negative indices count from the end once,
    and indices still out of range give NaN for floats (the most negative value
    for signed ints). 'clip' clamps, 'wrap' wraps around."""
    if out is not None:
        raise NotImplementedError("take: the out argument is not supported")
    a = as_operand("take", a)
    if axis is None:
        a, axis = ravel(a), 0
    dims = shape_of(a)
    axis = canonicalize_axis("take", axis, len(dims))
    indices = _as_index_array("take", as_operand("take", indices))
    if not is_integer(np.dtype(dtype_of(indices))):     # ValueError, as JAX's take
        raise ValueError(f"take: indices must be integers, got {dtype_of(indices).name}")
    mode = _gather_mode("take", mode)
    n = dims[axis]
    # As jnp.take: negative indices count from the end in 'fill' mode only; 'clip'
    # clamps them to 0 and 'wrap' takes them modulo n.
    if mode == "wrap":
        index = remainder(convert("take", indices, np.int32), n)
        mode = "clip"
    elif mode == "clip":
        index = (np.asarray(indices).astype(np.int32) if not isinstance(indices, Tracer)
                 and not hasattr(indices, "aval") else convert("take", indices, np.int32))
    else:
        index = _normalize_index(indices, n)
    i_shape = shape_of(index)
    if fill_value is not None and mode == "fill":
        mode = "clip"
    else:
        fill_value = None
    index_arr = (np.asarray(index)[..., None] if not isinstance(index, Tracer)
                 and not hasattr(index, "aval")
                 else lax.reshape(index, i_shape + (1,)))
    offset_dims = tuple(range(axis)) + tuple(range(axis + len(i_shape),
                                                   len(dims) - 1 + len(i_shape)))
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=(axis,),
                                       start_index_map=(axis,))
    slice_sizes = tuple(1 if d == axis else s for d, s in enumerate(dims))
    result = lax.gather(a, index_arr, dnums, slice_sizes, mode=mode)
    if fill_value is not None:
        result = _fill_outside(result, index, n, fill_value,
                               tuple(range(axis, axis + len(i_shape))))
    return result


@jitted_eagerly("axis", "mode", "fill_value", "wrap_negative_indices")
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=True):
    """`arr[..., indices, ...]` elementwise along `axis` (by default the last), the
    other axes broadcast. A negative index counts from the end, unless
    `wrap_negative_indices` is False: then it is out of range, as `mode` says."""
    arr = as_operand("take_along_axis", arr)
    indices = as_operand("take_along_axis", indices, 1)
    if axis is None:
        if len(shape_of(indices)) != 1:
            raise ValueError(f"take_along_axis: indices must be 1-d when axis is None "
                             f"(arr is taken flattened), got shape {shape_of(indices)}")
        arr, axis = ravel(arr), 0
    dims, i_dims = shape_of(arr), shape_of(indices)
    if len(dims) != len(i_dims):
        raise ValueError(f"take_along_axis: indices and arr must have the same number of "
                         f"dimensions, got shapes {i_dims} and {dims}")
    axis = canonicalize_axis("take_along_axis", axis, len(dims))
    if not is_integer(np.dtype(dtype_of(indices))):
        raise TypeError(f"take_along_axis: indices must be integers, got "
                        f"{dtype_of(indices).name}")
    out_shape = list(broadcast_shapes("take_along_axis",
                                      tuple(1 if d == axis else n for d, n in enumerate(dims)),
                                      tuple(1 if d == axis else n for d, n in enumerate(i_dims))))
    out_shape[axis] = i_dims[axis]
    out_shape = tuple(out_shape)
    mode = _gather_mode("take_along_axis", mode)
    if mode == "wrap":
        index, mode = remainder(convert("take_along_axis", indices, np.int32), dims[axis]), "clip"
    elif wrap_negative_indices or wrap_negative_indices is None:   # (None: JAX 0.10's default)
        index = _normalize_index(indices, dims[axis])
    else:
        index = indices
    if fill_value is not None and mode == "fill":
        mode = "clip"
    else:
        fill_value = None
    parts = []
    for d, n in enumerate(dims):
        if d == axis:
            parts.append(broadcast_to_shape("take_along_axis", convert(
                "take_along_axis", index, np.int32), out_shape))
        elif n == 1:
            parts.append(lax.broadcast_in_dim(np.int32(0), out_shape, ()))
        else:
            parts.append(lax.broadcasted_iota(np.int32, out_shape, d))
    parts = [lax.expand_dims(p, (len(out_shape),)) for p in parts]
    index_arr = parts[0] if len(parts) == 1 else lax.concatenate(parts, len(out_shape))
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(
        range(len(dims))), start_index_map=tuple(range(len(dims))))
    result = lax.gather(arr, index_arr, dnums, (1,) * len(dims), mode=mode)
    if fill_value is not None:
        ok_index = broadcast_to_shape("take_along_axis", index, out_shape)
        result = _fill_outside(result, ok_index, dims[axis], fill_value,
                               tuple(range(len(out_shape))))
    return result


__all__ = ["take", "take_along_axis"]
