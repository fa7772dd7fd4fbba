"""Reads and writes through a `RefIndexer`, spelled as ordinary array equations.

Read `ir/ref_indexing.py` (what an indexer means) and `discharge.py` (who calls this)
first. Once a ref has become a plain value `x`, an access through an indexer is an
array computation on `x`:

* `read_path(b, x, indexer, dynamic)` -- the value `x<indexer>` a `get` returns;
* `update_path(b, x, indexer, dynamic, y, accumulate)` -- the new `x` after
  `x<indexer> = y` (swap) or `x<indexer> += y` (addupdate).

A path of views is handled one step at a time: to write through `x.at[i].T[j]`,
read the view `v = x[i]`, write into `v.T[j]` recursively, then write `v` back with
`x[i] = v`. Transpose and reshape steps are undone by their inverses.

One `Index` step picks one of two spellings:

* *basic* (integers, unit-stride slices, None, unit-stride `ds` slices): `slice` /
  `dynamic_slice` plus a `reshape`, and `dynamic_update_slice` to write. This is
  what almost every program uses, and it is what XLA handles best.
* *general* (strided slices, static or `ds`, or integer arrays): every element the
  index selects is named by a point in an index grid, and the access is a `gather`
  of those points, a `scatter` to write, a `scatter_add` to accumulate -- so
  `addupdate` adds at a repeated index as many times as it is repeated, while a
  write keeps the last one.

Dynamic positions follow JAX: a negative value counts from the end, then the
position is clamped into range. The start of a `DynamicSlice` is clamped the same
way, into the range where the whole slice fits (as `lax.dynamic_slice` clamps): the
clamped start is computed explicitly, so both spellings, and strided slices, read
and write the same positions. `b` is the `JaxprBuilder` of `discharge.py`: it has
`emit(prim, *inputs, **params)` and `literal(value, dtype)`.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir.ref_indexing import Index, Transpose, Slice, Dynamic, DynamicSlice, plan_index, \
    split_dynamic

__all__ = ["read_path", "update_path", "read_index", "write_index", "clamp_dynamic"]

_INDEX_DTYPE = np.dtype(np.int32)


def _shape(atom):
    return atom.aval.shape


def _reshape(b, x, shape):
    shape = tuple(shape)
    return x if _shape(x) == shape else b.emit(P.reshape_p, x, new_sizes=shape,
                                               dimensions=None)


def _as_index(b, i):
    # `i` is an IR atom here; a vmap rule's value (a tracer or an array) in ref_rules
    if getattr(i, "aval", i).dtype != _INDEX_DTYPE:
        i = b.emit(P.convert_element_type_p, i, new_dtype=_INDEX_DTYPE, weak_type=False)
    return i


def clamp_dynamic(b, i, n: int, span: int = 1):
    """A dynamic position (or array of them) on an axis of size `n`, as JAX takes it:
    negative counts from the end, then clamp into [0, n - span] (the start of a
    slice spanning `span` positions; 1 for a single position)."""
    i = _as_index(b, i)
    zero = b.literal(0, _INDEX_DTYPE)
    wrapped = b.emit(P.select_n_p, b.emit(P.lt_p, i, zero), i,
                     b.emit(P.add_p, i, b.literal(n, _INDEX_DTYPE)))
    return b.emit(P.clamp_p, zero, wrapped, b.literal(max(n - span, 0), _INDEX_DTYPE))


def _is_basic(plan) -> bool:
    return plan.array_shape is None and all(
        not isinstance(item, (Slice, DynamicSlice)) or item.stride == 1 or item.size <= 1
        for item in plan.axis_items)


def _window(b, x, plan, dynamic):
    """Start positions and sizes of the box a basic index selects, axis by axis."""
    dyn = iter(dynamic)
    starts, sizes = [], []
    for n, item in zip(_shape(x), plan.axis_items):
        if isinstance(item, Slice):
            starts.append(item.start)
            sizes.append(item.size)
        elif isinstance(item, Dynamic):
            starts.append(clamp_dynamic(b, next(dyn), n))
            sizes.append(1)
        elif isinstance(item, DynamicSlice):
            starts.append(clamp_dynamic(b, next(dyn), n, item.span))
            sizes.append(item.size)
        else:
            starts.append(int(item))
            sizes.append(1)
    return starts, sizes


def _start_atoms(b, starts):
    return [b.literal(s, _INDEX_DTYPE) if isinstance(s, int) else s for s in starts]


def _grid_indices(b, x, plan, dynamic):
    """The general spelling's index array: for each selected element (the result's
    shape without its new axes, the *grid*), its position in `x`: (*grid, x.ndim)."""
    grid_layout = [entry for entry in plan.layout if entry[0] != "new"]
    grid = tuple(plan.shape[k] for k, entry in enumerate(plan.layout) if entry[0] != "new")
    array_at = next((g for g, entry in enumerate(grid_layout) if entry[0] == "array"), 0)
    n_array = len(plan.array_shape or ())
    dyn = iter(dynamic)
    columns = []
    for axis, (n, item) in enumerate(zip(_shape(x), plan.axis_items)):
        if isinstance(item, (Slice, DynamicSlice)):
            dim = grid_layout.index(("slice", axis))
            column = b.emit(P.iota_p, dtype=_INDEX_DTYPE, shape=grid, dimension=dim)
            if item.stride != 1:
                column = b.emit(P.mul_p, column, b.literal(item.stride, _INDEX_DTYPE))
            if isinstance(item, DynamicSlice):
                start = clamp_dynamic(b, next(dyn), n, item.span)
                column = b.emit(P.add_p, column, b.emit(
                    P.broadcast_in_dim_p, start, shape=grid, broadcast_dimensions=()))
            elif item.start:
                column = b.emit(P.add_p, column, b.literal(item.start, _INDEX_DTYPE))
        else:
            if isinstance(item, Dynamic):
                position = clamp_dynamic(b, next(dyn), n)
            else:
                position = b.literal(int(item), _INDEX_DTYPE)
            rank = position.aval.ndim
            # NumPy broadcasting aligns an index array's axes to the right of the block.
            dims = tuple(array_at + n_array - rank + k for k in range(rank))
            column = b.emit(P.broadcast_in_dim_p, position, shape=grid,
                            broadcast_dimensions=dims)
        columns.append(b.emit(P.reshape_p, column, new_sizes=grid + (1,), dimensions=None))
    if len(columns) == 1:
        return columns[0], grid
    return b.emit(P.concatenate_p, *columns, dimension=len(grid)), grid


def read_index(b, x, index: Index, dynamic):
    plan = plan_index(_shape(x), index.items, [d.aval for d in dynamic])
    if _is_basic(plan):
        starts, sizes = _window(b, x, plan, dynamic)
        if all(isinstance(s, int) for s in starts):
            if tuple(sizes) != _shape(x):
                x = b.emit(P.slice_p, x, start_indices=tuple(starts),
                           limit_indices=tuple(s + n for s, n in zip(starts, sizes)),
                           strides=None)
        else:
            x = b.emit(P.dynamic_slice_p, x, *_start_atoms(b, starts),
                       slice_sizes=tuple(sizes))
        return _reshape(b, x, plan.shape)
    indices, grid = _grid_indices(b, x, plan, dynamic)
    axes = tuple(range(len(_shape(x))))   # every axis: one point at a time
    out = b.emit(P.gather_p, x, indices, offset_dims=(), collapsed_slice_dims=axes,
                 start_index_map=axes, slice_sizes=(1,) * len(axes), mode="clip")
    return _reshape(b, out, plan.shape)


def write_index(b, x, index: Index, dynamic, y, accumulate: bool):
    """`x` with `x[index] = y` (or `+= y`); `y` has exactly the indexed shape."""
    plan = plan_index(_shape(x), index.items, [d.aval for d in dynamic])
    if _is_basic(plan):
        starts, sizes = _window(b, x, plan, dynamic)
        y = _reshape(b, y, sizes)
        if tuple(sizes) == _shape(x):       # the whole of x
            return b.emit(P.add_p, x, y) if accumulate else y
        start_atoms = _start_atoms(b, starts)
        if accumulate:
            old = b.emit(P.dynamic_slice_p, x, *start_atoms, slice_sizes=tuple(sizes))
            y = b.emit(P.add_p, old, y)
        return b.emit(P.dynamic_update_slice_p, x, y, *start_atoms)
    indices, grid = _grid_indices(b, x, plan, dynamic)
    axes = tuple(range(len(_shape(x))))   # every axis: one point at a time
    prim = P.scatter_add_p if accumulate else P.scatter_p
    return b.emit(prim, x, indices, _reshape(b, y, grid), update_window_dims=(),
                  inserted_window_dims=axes, scatter_dims_to_operand_dims=axes,
                  mode="clip")


def _read_step(b, x, step, dynamic):
    if isinstance(step, Index):
        return read_index(b, x, step, dynamic)
    if isinstance(step, Transpose):
        return b.emit(P.transpose_p, x, permutation=tuple(step.permutation))
    return _reshape(b, x, step.sizes)


def _write_step(b, x, step, dynamic, view_value):
    """`x` after its view through `step` has become `view_value`."""
    if isinstance(step, Index):
        return write_index(b, x, step, dynamic, view_value, accumulate=False)
    if isinstance(step, Transpose):
        inverse = tuple(int(k) for k in np.argsort(step.permutation))
        return b.emit(P.transpose_p, view_value, permutation=inverse)
    return _reshape(b, view_value, _shape(x))


def read_path(b, x, indexer, dynamic):
    """The value a `get` through `indexer` returns, `x` being the ref's contents."""
    if indexer is None:
        return x
    for step, dyn in zip(indexer.steps, split_dynamic(indexer, dynamic)):
        x = _read_step(b, x, step, dyn)
    return x


def update_path(b, x, indexer, dynamic, y, accumulate: bool):
    """The ref's new contents after writing (or adding) `y` at `indexer`."""
    if indexer is None:
        return b.emit(P.add_p, x, y) if accumulate else y
    return _update(b, x, list(indexer.steps), split_dynamic(indexer, dynamic), y,
                   accumulate)


def _update(b, x, steps, dynamics, y, accumulate):
    step, dyn = steps[0], dynamics[0]
    if len(steps) == 1:
        return write_index(b, x, step, dyn, y, accumulate)
    view = _read_step(b, x, step, dyn)
    new_view = _update(b, view, steps[1:], dynamics[1:], y, accumulate)
    return _write_step(b, x, step, dyn, new_view)

