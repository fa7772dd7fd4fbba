"""NumPy indexing on tracers: `x[idx]` and `x.at[idx].set/add/...` (`take` and
`take_along_axis` are in `_take.py`).

An index expression is first *expanded* into one entry per operand axis (plus `None`
entries for new axes): `...` becomes full slices, a concrete boolean mask becomes
the integer arrays of its nonzero positions, lists become arrays.

Reading (`getitem`) then takes one of two routes:

* **Basic** (ints, slices, `None`, traced scalar ints, unit-stride `minijax.ds`): a
  `slice` for the static part, one `rev` of the axes with a negative step, a
  `dynamic_slice` for traced scalar ints and ds starts (clamped into bounds,
  negatives counted from the end, as JAX does), and
  one `squeeze` / `expand_dims` / `reshape` to drop and insert axes. A static int out of
  range is clamped into its axis, as JAX does by default: like JAX, by a `dynamic_slice`
  with a constant start, which checkify's index checks report (an IndexError under
  JAX's `jax_check_static_indices` flag, and always on an empty axis).
* **Advanced** (any integer array): slices are applied first as above, then one
  `gather` picks the indexed elements. NumPy's layout rule applies: the broadcast
  shape of the advanced indices replaces them in place when they are adjacent, and
  goes first when a slice or `None` separates them. Out-of-range array indices are
  clamped (JAX's choice; NumPy raises). A strided `minijax.ds`, or a unit one among
  arrays or strided slices, is gathered too, its start taken as JAX takes it there
  (`_ds_indexing.py`).

Writing (`x.at[idx].set(v)` / `.add(v)`) builds the same description as a scatter:
integer and array indices are scatter indices, unit-step slices are update windows
(with a constant start, or a ds start), and strided slices and ds items become extra
scatter index dimensions.
Out-of-range writes are dropped, as in JAX. `x.at[idx].get(mode=...)` with an explicit
mode is always one gather in that mode ('fill': out-of-range reads give the fill
value); `x.at[idx].apply(f)` counts the updates per element with a scatter-add and
applies `f` that many times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace as replace_fields
from typing import Any

import jax
import numpy as np

from .. import lax
from ..frontend.control_flow import while_loop
from ..frontend.vmap import vmap
from ..ir.errors import JAXIndexError, NonConcreteBooleanIndexError
from ..ir.ref_python_index import DSlice, as_ds, is_ds
from ..ir.trace import Tracer
from ._promotion import (as_operand, as_array, shape_of, dtype_of, convert,
                         broadcast_shapes, broadcast_to_shape, is_integer, is_bool, is_weak)
from . import _ufuncs
from ._creation import array, asarray, ones_like
from ._ds_indexing import ds_parts, dynamic_window, settle_for_access, strided_positions
from ._ufuncs import negative, where


@dataclass
class _Entry:
    kind: str             # 'none' | 'slice' | 'int' | 'dynamic' | 'array' | 'ds'
    axis: int = -1        # operand axis (not for 'none')
    value: Any = None     # slice/ds triple (start, size, step), int, or index array
    position: int = 0     # place in the expanded index tuple


def _static_slice(s: slice, n: int):
    """(start, size, step) of a slice of an axis of size n (bounds must be static)."""
    parts = []
    for part in (s.start, s.stop, s.step):
        if isinstance(part, Tracer):
            # an IndexError, as JAX's: the index, not the array, is at fault
            part = part._concrete_or_raise("a slice bound in indexing (slice bounds must "
                                           "be static; use lax.dynamic_slice)",
                                           JAXIndexError)
        parts.append(None if part is None else int(np.asarray(part)))
    start, stop, step = slice(*parts).indices(n)
    return start, len(range(start, stop, step)), step


def _holds_tracer(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_holds_tracer(o) for o in obj)
    return isinstance(obj, Tracer)


def _as_index_array(fname, idx):
    """A list / NumPy array / jax array / tracer used as an index, as an array.
    Concrete indices become NumPy arrays, so their bookkeeping happens at trace time."""
    if not isinstance(idx, Tracer) and hasattr(idx, "aval") and np.ndim(idx):
        return np.asarray(idx)
    if isinstance(idx, (list, tuple)):
        if _holds_tracer(idx):
            return array(idx)
        idx = np.asarray(idx)
        if idx.size == 0:
            idx = idx.astype(np.int32)
    return idx


def _expand(fname, shape, idx, for_update=False):
    """One entry per operand axis and per `None`, checked against `shape`."""
    if isinstance(idx, list):
        # As JAX (NumPy once guessed whether a list meant a tuple): ambiguous, refused.
        raise TypeError(f"{fname}: using a non-tuple sequence for multidimensional "
                        f"indexing is not allowed; use x[np.array(seq)] or x[tuple(seq)]")
    if not isinstance(idx, tuple):
        idx = (idx,)
    raw = []
    for item in idx:
        if item is None or item is Ellipsis or isinstance(item, slice):
            raw.append(item)
        elif is_ds(item):
            raw.append(as_ds(item))
        elif isinstance(item, bool):
            raise IndexError(f"{fname}: boolean scalar indices are not supported")
        elif isinstance(item, (int, np.integer)):
            raw.append(int(item))
        elif isinstance(item, (list, tuple, np.ndarray, Tracer)) or hasattr(item, "dtype"):
            raw.append(_as_index_array(fname, item))
        else:
            raise TypeError(f"{fname}: invalid index {item!r} of type {type(item).__name__};"
                            f" use ints, slices, None, ... or integer/boolean arrays")
    # Boolean masks (concrete only) stand for the integer arrays of their true positions.
    items = []
    for item in raw:
        if hasattr(item, "dtype") and is_bool(np.dtype(item.dtype)):
            if isinstance(item, Tracer):
                item = item._concrete_or_raise(
                    f"{fname}: a boolean mask index (the result's shape depends on its "
                    f"values; use jnp.where(mask, x, 0) instead)",
                    NonConcreteBooleanIndexError)
            mask = np.asarray(item)
            if mask.ndim == 0:
                raise IndexError(f"{fname}: boolean scalar indices are not supported")
            items.append(_Mask(mask))
        else:
            items.append(item)
    consumed = sum(i.mask.ndim if isinstance(i, _Mask) else 1 for i in items
                   if i is not None and i is not Ellipsis)
    ellipses = sum(1 for i in items if i is Ellipsis)
    if ellipses > 1:
        raise IndexError(f"{fname}: an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(f"{fname}: too many indices for array: array is "
                         f"{len(shape)}-dimensional, but {consumed} were indexed")
    # An `...` that stands for no axes still separates the advanced indices on either
    # side of it (NumPy's rule puts their axes first): it keeps a position.
    empty_ellipsis_at = None
    if ellipses:
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        items[at:at + 1] = [slice(None)] * (len(shape) - consumed)
        if len(shape) == consumed:
            empty_ellipsis_at = sum(i.mask.ndim if isinstance(i, _Mask) else 1
                                    for i in items[:at])
    else:
        items += [slice(None)] * (len(shape) - consumed)

    entries, axis = [], 0
    for position, item in enumerate(_unmask(fname, items, shape)):
        if empty_ellipsis_at is not None and position >= empty_ellipsis_at:
            position += 1
        if item is None:
            entries.append(_Entry("none", position=position))
            continue
        n = shape[axis]
        if isinstance(item, slice):
            entries.append(_Entry("slice", axis, _static_slice(item, n), position))
        elif isinstance(item, DSlice):
            entries.append(_Entry("ds", axis, ds_parts(fname, item, n, axis), position))
        elif isinstance(item, int):
            entries.append(_static_int_entry(fname, item, axis, n, position, for_update))
        else:
            dtype = np.dtype(item.dtype)
            if not is_integer(dtype):
                raise IndexError(f"{fname}: indices must be integers, got an array of "
                                 f"dtype {dtype.name} (for axis {axis})")
            if isinstance(item, (np.ndarray, np.generic)) and np.ndim(item) == 0:
                value = int(item)  # a static NumPy scalar index is an int
                entries.append(_static_int_entry(fname, value, axis, n, position,
                                                 for_update))
            elif len(shape_of(item)) == 0:
                entries.append(_Entry("dynamic", axis, item, position))
            else:
                entries.append(_Entry("array", axis, item, position))
        axis += 1
    return entries


@dataclass
class _Mask:
    mask: np.ndarray


def _static_int_entry(fname, index: int, axis: int, n: int, position, for_update):
    """The entry of a static int index. In range, an "int" (a negative one counted from
    the end). A read out of range, as JAX takes it: counted from the end once if
    negative, then clamped into the axis at run time by a `dynamic_slice` with that
    constant start (x[5] of a length-3 axis reads x[2], x[-4] reads x[0]), which is
    what checkify's index_checks see and report -- unless JAX's
    `jax_check_static_indices` flag is on, which makes it an IndexError. An empty axis
    has nothing to clamp to. A write keeps the index (out-of-range updates drop)."""
    if for_update or -n <= index < n:
        return _Entry("int", axis, index + n if index < 0 else index, position)
    if n == 0 or getattr(jax.config, "jax_check_static_indices", False):
        raise IndexError(f"{fname}: index {index} is out of bounds for axis {axis} "
                         f"with size {n}")
    return _Entry("dynamic", axis, np.int32(index), position)  # lax.dynamic_slice wraps it


def _unmask(fname, items, shape):
    """Replace each boolean mask by the index arrays of its true positions, checking
    that it matches the axes it covers."""
    out, axis = [], 0
    for item in items:
        if isinstance(item, _Mask):
            covered = tuple(shape[axis:axis + item.mask.ndim])
            if item.mask.shape != covered:
                raise IndexError(f"{fname}: boolean index of shape {item.mask.shape} does "
                                 f"not match the indexed axes {covered} (from axis {axis})")
            out.extend(np.nonzero(item.mask))
            axis += item.mask.ndim
        else:
            out.append(item)
            axis += item is not None
    return out


def _normalize_index(x, n):
    """Negative indices count from the end (once): static arrays in NumPy, traced
    ones with a select; the result is int32."""
    if isinstance(x, (np.ndarray, np.generic, int)):
        x = np.asarray(x).astype(np.int64)
        return np.where(x < 0, x + n, x).astype(np.int32)
    unsigned = np.dtype(dtype_of(x)).kind == "u"
    x = convert("indexing", x, np.int32)
    if unsigned:
        return x
    return lax.select(lax.lt(x, np.int32(0)), lax.add(x, np.int32(n)), x)


# -- reading -----------------------------------------------------------------------------------

def getitem(x, idx):
    """`x[idx]` with NumPy semantics (see the module docstring for the two routes)."""
    x = as_operand("getitem", x)
    entries, wraps = settle_for_access(_expand("getitem", shape_of(x), idx),
                                       shape_of(x), clamps=True)
    gathers = any(e.kind == "array" or (e.kind == "ds" and not wraps) for e in entries)
    if not gathers and any(e.kind in ("dynamic", "ds") for e in entries) \
            and all(e.kind != "slice" or e.value[2] == 1 for e in entries):
        # Ints, unit-step slices and at least one dynamic start: one dynamic_slice of
        # the whole operand, as JAX stages it (so checkify's message names its shape).
        x, entries = dynamic_window(x, entries)
        return as_array(_drop_and_insert_axes(x, entries))
    x, entries = _apply_slices(x, entries)
    if gathers:
        plan = _plan(shape_of(x), entries)
        return _finish(_gather(x, plan, "clip"), plan)
    if any(e.kind in ("dynamic", "ds") for e in entries):
        x, entries = dynamic_window(x, entries)
    return as_array(_drop_and_insert_axes(x, entries))


def _apply_slices(x, entries):
    """Apply every slice and static int with one `slice` (and flips for negative
    steps); afterwards slices are full and static ints index axes of size 1."""
    dims = shape_of(x)
    starts, limits, strides = [0] * len(dims), list(dims), [1] * len(dims)
    flips, out = [], []
    for e in entries:
        if e.kind == "slice":
            start, size, step = e.value
            if size == 0:
                starts[e.axis], limits[e.axis] = 0, 0
            elif step > 0:
                starts[e.axis], limits[e.axis] = start, start + (size - 1) * step + 1
                strides[e.axis] = step
            else:
                last = start + (size - 1) * step  # the smallest index taken
                starts[e.axis], limits[e.axis], strides[e.axis] = last, start + 1, -step
                if size > 1:
                    flips.append(e.axis)
            out.append(_Entry("slice", e.axis, (0, size, 1), e.position))
        elif e.kind == "int" and not any(f.kind == "array" for f in entries):
            starts[e.axis], limits[e.axis] = e.value, e.value + 1
            out.append(_Entry("int", e.axis, 0, e.position))
        else:
            out.append(e)
    if starts != [0] * len(dims) or limits != list(dims) or strides != [1] * len(dims):
        x = lax.slice(x, starts, limits, None if strides == [1] * len(dims) else strides)
    if flips:
        x = lax.rev(x, flips)
    return x, out


def _drop_and_insert_axes(x, entries):
    """Remove the axes indexed by ints and add the `None` axes, in one equation."""
    dropped = tuple(e.axis for e in entries if e.kind in ("int", "dynamic"))
    final = []
    for e in entries:
        if e.kind == "none":
            final.append(1)
        elif e.kind in ("slice", "ds"):
            final.append(e.value[1])
    if dropped and len(final) == len(shape_of(x)) - len(dropped):
        return lax.squeeze(x, dropped)
    if not dropped and len(final) != len(shape_of(x)):
        return lax.expand_dims(x, tuple(i for i, e in enumerate(
            [e for e in entries if e.kind in ("none", "slice", "ds")]) if e.kind == "none"))
    if tuple(final) != shape_of(x):
        return lax.reshape(x, final)
    return x


# -- the gather / scatter plan ----------------------------------------------------------------

@dataclass
class _Plan:
    """`x[idx]` as one gather (or the matching scatter); see `_plan`."""
    layout: list           # result axes in order: ('none',), ('window', axis, size) or
                           # ('batch', size)
    batch_shape: tuple     # the sizes of the 'batch' axes, in order
    components: list       # (operand axis, index array, its axes within batch_shape)
    window_starts: dict    # window axis -> static start, for windows not covering it
    collapsed: tuple       # operand axes indexed one element at a time


_ADVANCED = ("int", "dynamic", "array")


def _plan(operand_shape, entries):
    """Describe `x[entries]` as one gather.

    The result has, in index order, a *window* axis for each unit-step slice or ds (a
    block of the operand), a *batch* axis for each strided one, and a new axis for
    each `None`; the broadcast shape B of the advanced indices (ints count as rank-0 arrays
    once any array is present) adds batch axes in place of the first advanced index
    when those are adjacent, and in front otherwise (NumPy's rule). Every batch axis is
    indexed by a component: an index array per operand axis, broadcastable to the
    batch shape."""
    advanced = [e for e in entries if e.kind in _ADVANCED]
    b_shape = broadcast_shapes("indexing", *(shape_of(e.value) for e in advanced
                                             if e.kind != "int"))
    positions = [e.position for e in advanced]
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    layout, b_at = [], (None if adjacent else 0)
    for e in entries:
        if e.kind in _ADVANCED:
            b_at = len(layout) if b_at is None else b_at
        elif e.kind == "none":
            layout.append(("none",))
        elif e.value[2] == 1:
            layout.append(("window", e.axis, e.value[1]))
        else:
            layout.append(("strided", e))
    b_at = len(layout) if b_at is None else b_at
    layout[b_at:b_at] = [("batch", n) for n in b_shape]
    batch_axes = [d for d in layout if d[0] in ("batch", "strided")]
    b_first = sum(1 for d in layout[:b_at] if d[0] == "strided")  # batch axes before B

    components = []
    for e in advanced:
        value = np.int32(e.value) if e.kind == "int" else _normalize_index(
            e.value, operand_shape[e.axis])
        rank = len(shape_of(value))
        end = b_first + len(b_shape)
        components.append((e.axis, value, tuple(range(end - rank, end))))
    for j, d in enumerate(batch_axes):
        if d[0] == "strided":
            components.append((d[1].axis, strided_positions(*d[1].value), (j,)))
    batch_shape = tuple(d[1] if d[0] == "batch" else d[1].value[1] for d in batch_axes)
    layout = [("batch", d[1].value[1]) if d[0] == "strided" else d for d in layout]
    window_starts = {e.axis: e.value[0] for e in entries if e.kind in ("slice", "ds")
                     and e.value[2] == 1
                     and (e.kind == "ds" or e.value[:2] != (0, operand_shape[e.axis]))}
    collapsed = tuple(sorted(axis for axis, _, _ in components))
    return _Plan(layout, batch_shape, components, window_starts, collapsed)


def _index_array(plan):
    """The gather/scatter index array, batch_shape + (number of components,), and the
    operand axis of each component (window starts included). Static indices are
    assembled in NumPy, so they reach the program as one constant."""
    comps = list(plan.components)
    comps += [(axis, start if isinstance(start, Tracer) else np.int32(start), ())
              for axis, start in plan.window_starts.items()]
    shape = plan.batch_shape + (1,)
    axes = [axis for axis, _, _ in comps]
    if all(not isinstance(v, Tracer) and not hasattr(v, "aval") for _, v, _ in comps):
        parts = []
        for _, value, dims in comps:
            value = np.asarray(value, dtype=np.int32)
            expanded = np.expand_dims(value, tuple(i for i in range(len(shape))
                                                   if i not in dims))
            parts.append(np.broadcast_to(expanded, shape))
        index = np.concatenate(parts, -1) if parts else np.zeros(shape[:-1] + (0,), np.int32)
        return index, axes
    parts = [lax.broadcast_in_dim(convert("indexing", value, np.int32), shape, dims)
             for _, value, dims in comps]
    index = parts[0] if len(parts) == 1 else lax.concatenate(parts, len(shape) - 1)
    return index, axes


def _gather(x, plan, mode):
    index, start_index_map = _index_array(plan)
    dims = shape_of(x)
    out_dims = [d for d in plan.layout if d[0] != "none"]
    offset_dims = tuple(i for i, d in enumerate(out_dims) if d[0] == "window")
    slice_sizes = [1] * len(dims)
    for d in out_dims:
        if d[0] == "window":
            slice_sizes[d[1]] = d[2]
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims,
                                       collapsed_slice_dims=plan.collapsed,
                                       start_index_map=tuple(start_index_map))
    return lax.gather(x, index, dnums, slice_sizes, mode=mode)


def _finish(out, plan):
    """Insert the `None` axes into a gather's result."""
    nones = tuple(i for i, d in enumerate(plan.layout) if d[0] == "none")
    return lax.expand_dims(out, nones) if nones else out


def _result_shape(plan):
    return tuple(1 if d[0] == "none" else d[-1] for d in plan.layout)


# -- writing ---------------------------------------------------------------------------------

def _scatter(x, idx, values, kind, mode=None):
    """`x` with `values` written (`kind` 'set') or combined into `x[idx]` ('add',
    'multiply', 'min', 'max'; repeated indices combine every value)."""
    fname = f"at[...].{kind}"
    x = as_operand(fname, x)
    entries, _ = settle_for_access(_expand(fname, shape_of(x), idx, for_update=True),
                                   shape_of(x), clamps=False)
    plan = _plan(shape_of(x), entries)
    if isinstance(values, (list, tuple)):
        values = asarray(values)        # JAX's .at takes sequences (of tracers too)
    values = as_operand(fname, values)
    # The written values take x's dtype (and x's weak type when they are Python scalars).
    values = convert(fname, values, dtype_of(x), weak=is_weak(x))
    target = _result_shape(plan)
    extra = len(shape_of(values)) - len(target)
    if extra > 0 and all(n == 1 for n in shape_of(values)[:extra]):
        values = lax.reshape(values, shape_of(values)[extra:])  # as NumPy assignment
    values = broadcast_to_shape(fname, values, target)
    out_dims = [d for d in plan.layout if d[0] != "none"]
    update_shape = tuple(d[-1] for d in out_dims)
    if shape_of(values) != update_shape:
        values = lax.reshape(values, update_shape)
    if not plan.components and not plan.window_starts:
        # The whole array is written: no scatter needed.
        return values if kind == "set" else _WHOLE[kind](x, values)
    index, scatter_dims = _index_array(plan)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(i for i, d in enumerate(out_dims) if d[0] == "window"),
        inserted_window_dims=plan.collapsed,
        scatter_dims_to_operand_dims=tuple(scatter_dims))
    return _SCATTERS[kind](x, index, values, dnums, mode="fill" if mode is None else mode)


_SCATTERS = {"set": lax.scatter, "add": lax.scatter_add, "multiply": lax.scatter_mul,
             "min": lax.scatter_min, "max": lax.scatter_max}
_WHOLE = {"add": lax.add, "multiply": lax.mul, "min": lax.min, "max": lax.max}


class _IndexUpdateRef:
    """`x.at[idx]`: functional updates of `x` at `idx`, as in JAX."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False,
            unique_indices=False):
        """`x[idx]`; with mode 'fill' (or 'drop'), out-of-range indices read
        `fill_value` (default: NaN, the most negative integer, the largest unsigned
        integer or True) instead of being clamped."""
        if mode is None:
            return getitem(self.array, self.index)
        promised = "promise" in str(getattr(mode, "name", mode)).lower()
        return _getitem_in_mode(self.array, self.index, "clip" if promised else _mode(mode),
                                fill_value)

    def subtract(self, values, *, mode=None, indices_are_sorted=False,
                 unique_indices=False):
        return _scatter(self.array, self.index, negative(values), "add", _mode(mode))

    def apply(self, func, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """`x` with the scalar function `func` applied at `idx`, once per time an
        element is indexed (as JAX's scatter applies it once per update)."""
        return _apply_at(self.array, self.index, func, _mode(mode))


def _getitem_in_mode(x, idx, mode, fill_value):
    """`x[idx]` as one gather in an explicit mode, where every index (static ints
    too) is counted from the end once if negative, then clamped ('clip') or read as
    the fill value when out of range ('fill'). A chosen `fill_value` replaces the
    gather's default fill where a gather of ones says the read was out of range."""
    fname = "at[...].get"
    x = as_operand(fname, x)
    # for_update: out-of-range static ints are kept (clamped or filled), not refused
    entries, wraps = settle_for_access(_expand(fname, shape_of(x), idx, for_update=True),
                                       shape_of(x), clamps=mode == "clip")
    if wraps:
        # JAX reads this index with x[...]'s dynamic_slice, which wraps a negative ds
        # start once before clamping; the gather only clamps.
        entries = [e if e.kind != "ds" else replace_fields(
            e, value=(_normalize_index(e.value[0], shape_of(x)[e.axis]), *e.value[1:]))
            for e in entries]
    plan = _plan(shape_of(x), entries)
    if not plan.components and not plan.window_starts:
        return getitem(x, idx)  # whole axes only: nothing can be out of range
    out = _finish(_gather(x, plan, mode), plan)
    if mode == "clip" or fill_value is None:
        return out
    fill = convert(fname, as_operand(fname, fill_value), dtype_of(x), weak=is_weak(x))
    if shape_of(fill):
        raise ValueError(f"{fname}: fill_value must be a scalar, got shape {shape_of(fill)}")
    ones = lax.full(shape_of(x), 1, np.int8)
    read = lax.eq(_finish(_gather(ones, plan, "fill"), plan), np.int8(1))
    return where(read, out, fill)


def _apply_at(x, idx, func, mode):
    """Apply `func` (scalar to scalar, mapped over the array) to the elements at
    `idx`, each as often as `idx` names it: a count of updates per element (a
    scatter-add of ones) decides, round by round, which elements `func` updates."""
    fname = "at[...].apply"
    x = as_operand(fname, x)
    shape, dtype = shape_of(x), dtype_of(x)
    counts = _scatter(lax.full(shape, 0, np.int32), idx, np.int32(1), "add", mode)
    on_every_element = vmap(func)

    def applied(r):
        out = on_every_element(lax.reshape(r, (math.prod(shape),)))
        return convert(fname, lax.reshape(as_operand(fname, out), shape), dtype,
                       weak=is_weak(x))

    def round_(carry):
        done, r = carry
        return lax.add(done, np.int32(1)), where(_ufuncs.greater(counts, done),
                                                 applied(r), r)

    rounds = lax.reduce_max(counts, tuple(range(len(shape))))
    _, out = while_loop(lambda carry: lax.lt(carry[0], rounds), round_,
                        (np.int32(0), x))
    return out


def _update_method(kind):
    def method(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _scatter(self.array, self.index, values, kind, _mode(mode))
    method.__name__ = kind
    return method


def _factors_method(ufunc_name):
    """As JAX: `x.at[idx].divide(v)` is x / (ones with v multiplied in at idx) -- a
    true division, so integer arrays give floats -- and `.power(v)` is x ** (...)."""
    def method(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        factors = _scatter(ones_like(self.array), self.index, values, "multiply",
                           _mode(mode))
        return getattr(_ufuncs, ufunc_name)(self.array, factors)
    method.__name__ = ufunc_name
    return method


for _kind in _SCATTERS:
    setattr(_IndexUpdateRef, _kind, _update_method(_kind))
_IndexUpdateRef.mul = _IndexUpdateRef.multiply
_IndexUpdateRef.divide = _factors_method("divide")
_IndexUpdateRef.power = _factors_method("power")


def _mode(mode):
    if mode is None:
        return None
    mode = str(getattr(mode, "name", mode)).lower()
    if mode in ("drop", "fill", "fill_or_drop", "promise_in_bounds"):
        return "fill"
    if mode == "clip":
        return "clip"
    raise ValueError(f'Unknown gather mode "{mode}"')


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)


__all__ = ["getitem"]
