"""`minijax.ops`: the segment reductions of `jax.ops`.

`segment_sum(data, segment_ids, num_segments)` (and `_prod`, `_max`, `_min`) combines
the rows of `data` that share a segment id into one row per segment: one scatter of
`data` into an array filled with the reduction's identity (0, 1, the lowest or the
highest value of the dtype), as JAX builds it. Ids outside `[0, num_segments)` are
dropped by default (mode 'fill_or_drop'); unlike `x.at[ids]`, a negative id is not
counted from the end. With `bucket_size`, rows are first combined within buckets of
that many consecutive rows, and the buckets' results then reduced, which is what JAX
does to keep long float sums more accurate.

`indices_are_sorted` and `unique_indices` are promises about the ids that JAX may use
to pick a faster scatter; minijax accepts them and computes the same result either way.
"""
from __future__ import annotations

import numpy as np

from . import lax
from .ir.trace import Tracer
from .numpy._promotion import (as_operand, broadcast_to_shape, dtype_of, shape_of,
                               static_int)
from .numpy import _reductions

_SCATTERS = {"sum": lax.scatter_add, "prod": lax.scatter_mul, "max": lax.scatter_max,
             "min": lax.scatter_min}
_REDUCERS = {"sum": _reductions.sum, "prod": _reductions.prod, "max": _reductions.max,
             "min": _reductions.min}


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    lowest = kind == "max"
    if dtype == np.bool_:
        return not lowest
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min if lowest else np.iinfo(dtype).max
    return -np.inf if lowest else np.inf


def _num_segments(fname, segment_ids, num_segments):
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            segment_ids = segment_ids._concrete_or_raise(
                f"{fname}: num_segments=None takes max(segment_ids) + 1, which needs "
                f"concrete ids; pass a static num_segments under jit")
        num_segments = np.max(np.asarray(segment_ids)) + 1
    num_segments = static_int(fname, num_segments, "num_segments")
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment(kind, data, segment_ids, num_segments, bucket_size, mode):
    fname = f"segment_{kind}"
    data = as_operand(fname, data)
    segment_ids = as_operand(fname, segment_ids)
    ids_dtype = np.dtype(dtype_of(segment_ids))
    if not np.issubdtype(ids_dtype, np.integer):
        raise TypeError(f"{fname}: segment_ids must be integers, got dtype {ids_dtype}")
    num_segments = _num_segments(fname, segment_ids, num_segments)
    dtype = np.dtype(dtype_of(data))
    data = lax.convert_element_type(data, dtype)   # a Python scalar's weak type ends here
    ids_shape, rest = shape_of(segment_ids), shape_of(data)[1:]
    mode = "fill_or_drop" if mode is None else mode
    scatter = _SCATTERS[kind]
    fill = _identity(kind, dtype)
    if bucket_size is None:
        out = lax.full((num_segments,) + rest, fill, dtype)
        indices = lax.expand_dims(segment_ids, (len(ids_shape),))
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(range(len(ids_shape), len(ids_shape) + len(rest))),
            inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
        updates = broadcast_to_shape(fname, data, ids_shape + rest)
        return scatter(out, indices, updates, dnums, mode=mode)
    bucket_size = static_int(fname, bucket_size, "bucket_size")
    if len(ids_shape) != 1:
        raise ValueError(f"{fname}: bucket_size needs one-dimensional segment_ids, "
                         f"got shape {ids_shape}")
    n = ids_shape[0]
    num_buckets = -(-n // bucket_size)
    out = lax.full((num_buckets, num_segments) + rest, fill, dtype)
    buckets = lax.div(lax.iota(ids_dtype, n), np.array(bucket_size, ids_dtype))
    indices = lax.concatenate([lax.expand_dims(buckets, (1,)),
                               lax.expand_dims(segment_ids, (1,))], 1)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, 1 + len(rest))),
        inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))
    updates = broadcast_to_shape(fname, data, (n,) + rest)
    out = scatter(out, indices, updates, dnums, mode=mode)
    return lax.convert_element_type(_REDUCERS[kind](out, axis=0), dtype)


def _make(kind, what):
    def segment_op(data, segment_ids, num_segments=None, indices_are_sorted=False,
                   unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError(f"segment_{kind}: minijax does not place results "
                                      f"by out_sharding; leave it None")
        return _segment(kind, data, segment_ids, num_segments, bucket_size, mode)
    segment_op.__name__ = segment_op.__qualname__ = f"segment_{kind}"
    segment_op.__doc__ = f"""The {what} of the rows of `data` in each segment, as
    `jax.ops.segment_{kind}`.

    `segment_ids` (integers, one per leading row of `data`) names each row's segment;
    the result has shape `(num_segments,) + data.shape[1:]`, and a segment no row names
    holds the identity ({_identity(kind, np.float32)} for floats). `num_segments`
    defaults to `max(segment_ids) + 1`, which needs concrete ids: under `jit` pass it
    as a static int. Ids out of range are dropped (`mode='fill_or_drop'`, the default)
    or clamped into range (`mode='clip'`). `bucket_size` combines rows in buckets of
    that size first (module docstring); `indices_are_sorted` and `unique_indices` are
    accepted promises that do not change the result. `out_sharding` must be None.
    """
    return segment_op


segment_sum = _make("sum", "sum")
segment_prod = _make("prod", "product")
segment_max = _make("max", "maximum")
segment_min = _make("min", "minimum")

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
