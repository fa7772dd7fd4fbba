"""`minijax.ds(start, size, stride)` as an item of an array index: `x[ds(i, 3)]`,
`x.at[ds(i, 3, 2)].set(v)`. Read `_indexing.py` first: a ds item becomes one entry
of kind 'ds' there (value `(start, size, stride)`, the start a Python int or an
integer tracer) and takes the place a slice of `size` elements would take in the
result; this module checks the item and settles what JAX 0.10.2 does with its start.

JAX's rules, which are not those of a Python slice (nothing is cut short: the result
always has `size` elements along the axis):

* reading, unit stride: on JAX's `dynamic_slice` route -- the rest of the index has
  no integer array, no strided slice or ds -- a negative start counts from the end
  once, then the start is clamped so that the window fits. On its gather route (any
  of those present, or `.at[...].get(mode='fill')`) the start is taken as it is:
  clamped without the wrap (`x[a, ds(-2, 2)]` reads columns 0 and 1 where
  `x[:, ds(-2, 2)]` reads the last two), or the window filled when it does not fit;
* reading, stride > 1: positions `start + stride * k`, each clamped (or filled) on
  its own, never wrapped: `ds(7, 3, 2)` of 8 elements reads 7, 7, 7;
* writing: never wrapped; a unit window that does not fit is dropped whole, strided
  positions out of range one by one (`mode='clip'` clamps instead);
* a static start follows the same rules, worked out now: when the elements taken
  are those of a static slice (the slice `start:start + size*stride:stride` in
  range, or a unit window a read clamps), the entry becomes that slice, and the
  program is the slice's; otherwise it stays a ds with a constant start.

`dynamic_window` at the bottom is the `dynamic_slice` route's one slice, shared by
ds starts, traced scalar indices and static ints out of range.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import lax
from ..frontend.lax_ops import _wrap_negative_indices
from ..ir import primitives as P
from ..ir.trace import Tracer, bind
from ._promotion import shape_of, dtype_of, convert, is_integer


def ds_parts(fname, item, n, axis):
    """(start, size, stride) of a ds item on an axis of size `n`; the start becomes a
    Python int unless it is traced. Refuses what JAX's indexing refuses (TypeError)."""
    size = item.size
    if isinstance(size, Tracer):
        size = size._concrete_or_raise(f"{fname}: the size of minijax.ds(start, size) "
                                       f"(it is the length of the result)")
    if np.ndim(size) or not is_integer(np.asarray(size).dtype):
        raise TypeError(f"{fname}: the size of minijax.ds(start, size) must be a static "
                        f"int, got {size!r} on axis {axis}")
    size = int(size)
    if size < 0:
        raise TypeError(f"{fname}: the size of minijax.ds(start, size) must be >= 0, got "
                        f"{size} on axis {axis}")
    if item.stride == 1 and size > n:
        raise TypeError(f"{fname}: minijax.ds(start, {size}) does not fit axis {axis} "
                        f"of size {n}")
    start = item.start
    dtype = dtype_of(start) if isinstance(start, Tracer) else np.asarray(start).dtype
    if not is_integer(dtype):
        # JAX's .at[...] truncates a float start where its x[...] refuses it; a start
        # is a position, so minijax refuses it in both.
        raise TypeError(f"{fname}: the start of minijax.ds must be an integer, got "
                        f"{start!r} ({np.dtype(dtype).name}) on axis {axis}")
    if isinstance(start, Tracer):
        if shape_of(start):
            raise TypeError(f"{fname}: the start of minijax.ds must be a scalar, got "
                            f"shape {shape_of(start)} on axis {axis}")
        return start, size, item.stride
    if np.ndim(start):
        raise TypeError(f"{fname}: the start of minijax.ds must be a scalar, got shape "
                        f"{np.shape(start)} on axis {axis}")
    return int(start), size, item.stride


def settle_for_access(entries, shape, clamps):
    """(entries with each static ds that can be a static slice made one, whether
    unit-stride starts wrap). `clamps`: a read that clamps (`x[...]`, modes 'clip'
    and 'promise_in_bounds'); a fill-mode read and every write pass False."""
    if not any(e.kind == "ds" for e in entries):
        return entries, False
    wraps = clamps and not any(
        e.kind == "array" or (e.kind in ("slice", "ds") and abs(e.value[2]) != 1)
        for e in entries)
    out = []
    for e in entries:
        if e.kind == "ds":
            settled = _as_static_slice(*e.value, shape[e.axis], clamps, wraps)
            if settled is not None:
                e = dataclasses.replace(e, kind="slice", value=settled)
        out.append(e)
    return out, wraps


def _as_static_slice(start, size, stride, n, clamps, wraps):
    if size == 0:
        return 0, 0, 1
    if isinstance(start, Tracer):
        return None
    if wraps and start < 0:
        start += n
    if 0 <= start and start + (size - 1) * stride < n:
        return start, size, stride
    if clamps and stride == 1:
        return min(max(start, 0), n - size), size, 1
    return None


def strided_positions(start, size, stride):
    """The positions a strided ds covers, unclamped: NumPy when the start is static."""
    steps = np.arange(size, dtype=np.int32) * np.int32(stride)
    if not isinstance(start, Tracer):
        return steps + np.int32(start)
    start = convert("indexing", start, np.int32)
    return lax.add(lax.broadcast_in_dim(start, (size,), ()), steps)


def dynamic_window(x, entries):
    """One `dynamic_slice` for the int, unit-step slice, dynamic and ds entries; after
    it, slices are full and int and dynamic entries index axes of size 1.

    JAX's rule is "wrap a negative index once, then clamp": a traced start (or a ds
    start) is wrapped as lax.dynamic_slice wraps it, the primitive clamps. An index
    below -n stays negative after the wrap and is clamped to 0 (not raised to -n
    first), so that checkify sees it out of bounds as JAX's does. A static int out of
    range (`_indexing._static_int_entry`) is wrapped once here and handed to the primitive as it
    is: lax.dynamic_slice would clamp a static start itself, hiding it from checkify."""
    dims = shape_of(x)
    starts, sizes, out = [np.int32(0)] * len(dims), list(dims), []
    for e in entries:
        if e.kind == "slice":
            starts[e.axis], sizes[e.axis] = np.int32(e.value[0]), e.value[1]
            e = dataclasses.replace(e, value=(0, e.value[1], 1))
        elif e.kind == "int":
            starts[e.axis], sizes[e.axis] = np.int32(e.value), 1
            e = dataclasses.replace(e, value=0)
        elif e.kind == "dynamic" and isinstance(e.value, np.integer):
            n = dims[e.axis]
            starts[e.axis] = np.int32(e.value + n if e.value < 0 else e.value)
            sizes[e.axis] = 1
        elif e.kind in ("dynamic", "ds"):
            is_ds = e.kind == "ds"
            start = convert("indexing", e.value[0] if is_ds else e.value, np.int32)
            starts[e.axis] = _wrap_negative_indices("dynamic_slice", [start],
                                                    [dims[e.axis]])[0]
            sizes[e.axis] = e.value[1] if is_ds else 1
        out.append(e)
    if all(isinstance(s, np.integer) for s in starts) and sizes == list(dims):
        return x, out
    return bind(P.dynamic_slice_p, x, *starts, slice_sizes=tuple(sizes)), out
