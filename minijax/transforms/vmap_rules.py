"""Batching rules for shape ops, contractions, sorting and indexing.

Read `vmap.py` first: it defines the rule signature

    rule(axis_size, values, batch_dims, **params) -> Batched(values, batch_dims)

and the helpers used here (`moveaxis`, `batch_at`, `shift_axes`). Every rule below
follows one idea: most primitives take their axes as *parameters*, so the batch axis
can usually stay wherever it is and the parameters are renumbered around it (a
reduction over axis 1 of a value batched on axis 0 becomes a reduction over axis 2).
A transpose is emitted only when the primitive truly cannot express the batch axis
where it lies: `reshape` with the batch axis in the middle, operands of a
`concatenate` that disagree, indices whose batch axis sits after the index vector.

Two rules need a trick:

* `gather`/`scatter` with batched indices *and* a batched operand: example `b` must
  only index its own slice of the operand. Each index vector gets the example number
  `b` prepended (an `iota` over the batch axis), and the operand's batch axis becomes
  one more indexed, collapsed axis. So the batch axis acts like an extra coordinate.
* `dynamic_slice`/`dynamic_update_slice` with batched start indices: each example
  starts somewhere else, which a slice cannot say. They become the `gather`/`scatter`
  that do the same thing, and those rules take over.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir.trace import aval_of
from .vmap import (Batched, vmap_rules, moveaxis, batch_at, shift_axes, unbatched_ndim,
                   not_mapped, broadcast_batched)


def _insert(items, index, item) -> tuple:
    items = tuple(items)
    return items[:index] + (item,) + items[index:]


def _first_batched(dims) -> int:
    return next(d for d in dims if d is not not_mapped)


# -- shape ops ------------------------------------------------------------------------

def _broadcast_in_dim_rule(axis_size, values, dims, *, shape, broadcast_dimensions):
    # The batch axis lands right after the result axis its left neighbour maps to,
    # which keeps broadcast_dimensions increasing: no transpose needed.
    (x,), (d,) = values, dims
    bdims = tuple(broadcast_dimensions)
    out_dim = bdims[d - 1] + 1 if d > 0 else 0
    new_bdims = bdims[:d] + (out_dim,) + tuple(b + 1 for b in bdims[d:])
    out = P.broadcast_in_dim_p.bind(x, shape=_insert(shape, out_dim, axis_size),
                                    broadcast_dimensions=new_bdims)
    return Batched([out], [out_dim])


def _reshape_rule(axis_size, values, dims, *, new_sizes, dimensions=None):
    # Row-major reshape keeps a leading or a trailing axis intact, so a batch axis in
    # either place rides along; only one in the middle must move to the front.
    (x,), (d,) = values, dims
    ndim = aval_of(x).ndim
    if d == ndim - 1 and ndim > 1:
        out = P.reshape_p.bind(x, new_sizes=tuple(new_sizes) + (axis_size,), dimensions=None)
        return Batched([out], [len(new_sizes)])
    x = moveaxis(x, d, 0)
    out = P.reshape_p.bind(x, new_sizes=(axis_size,) + tuple(new_sizes), dimensions=None)
    return Batched([out], [0])


def _transpose_rule(axis_size, values, dims, *, permutation):
    # A transpose is emitted anyway, so it may as well bring the batch axis to the
    # front, where an `out_axes=0` result needs it: no second transpose later.
    (x,), (d,) = values, dims
    perm = (d,) + shift_axes(permutation, d)
    return Batched([P.transpose_p.bind(x, permutation=perm)], [0])


def _squeeze_rule(axis_size, values, dims, *, dimensions):
    (x,), (d,) = values, dims
    out = P.squeeze_p.bind(x, dimensions=shift_axes(dimensions, d))
    return Batched([out], [d - sum(a < d for a in dimensions)])


def _expand_dims_rule(axis_size, values, dims, *, dimensions):
    # Result positions of the operand's axes, per example; the batch axis goes right
    # before the result position of the operand axis that followed it.
    (x,), (d,) = values, dims
    ndim = aval_of(x).ndim - 1
    operand_positions = [i for i in range(ndim + len(dimensions)) if i not in dimensions]
    if d < ndim:
        out_dim = operand_positions[d]
    else:
        out_dim = operand_positions[-1] + 1 if ndim else 0
    new_dims = tuple(a + (a >= out_dim) for a in dimensions)
    return Batched([P.expand_dims_p.bind(x, dimensions=new_dims)], [out_dim])


def _concatenate_rule(axis_size, values, dims, *, dimension):
    target = _first_batched(dims)
    operands = [batch_at(x, d, target, axis_size) for x, d in zip(values, dims)]
    out = P.concatenate_p.bind(*operands, dimension=dimension + (dimension >= target))
    return Batched([out], [target])


def _pad_rule(axis_size, values, dims, *, padding_config):
    (x, padding_value), (dx, dpad) = values, dims
    target = 0 if dx is not_mapped else dx
    config = _insert(padding_config, target, (0, 0, 0))
    if dpad is not_mapped:
        out = P.pad_p.bind(x, padding_value, padding_config=config)
        return Batched([out], [target])
    # Each example pads with its own value: pad with zeros, then select the per-example
    # padding value wherever a mask (the padded shape of `x`, True where x was) is False.
    x = batch_at(x, dx, target, axis_size)
    dtype = aval_of(x).dtype
    padded = P.pad_p.bind(x, np.zeros((), dtype), padding_config=config)
    per_example_shape = aval_of(values[0]).shape if dx is not_mapped else (
        aval_of(values[0]).shape[:dx] + aval_of(values[0]).shape[dx + 1:])
    ones = P.broadcast_in_dim_p.bind(np.True_, shape=per_example_shape,
                                     broadcast_dimensions=())
    mask = P.pad_p.bind(ones, np.False_, padding_config=padding_config)
    stacked_shape = aval_of(padded).shape
    mask = batch_at(mask, not_mapped, target, axis_size)
    fill = P.broadcast_in_dim_p.bind(padding_value, shape=stacked_shape,
                                     broadcast_dimensions=(target,))
    return Batched([P.select_n_p.bind(mask, fill, padded)], [target])


def _slice_rule(axis_size, values, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = values, dims
    out = P.slice_p.bind(x, start_indices=_insert(start_indices, d, 0),
                         limit_indices=_insert(limit_indices, d, axis_size),
                         strides=None if strides is None else _insert(strides, d, 1))
    return Batched([out], [d])


for _prim, _rule in [(P.broadcast_in_dim_p, _broadcast_in_dim_rule),
                     (P.reshape_p, _reshape_rule), (P.transpose_p, _transpose_rule),
                     (P.squeeze_p, _squeeze_rule), (P.expand_dims_p, _expand_dims_rule),
                     (P.concatenate_p, _concatenate_rule), (P.pad_p, _pad_rule),
                     (P.slice_p, _slice_rule)]:
    vmap_rules[_prim] = _rule


# -- nullary primitives --------------------------------------------------------------------

def _never_batched_rule(axis_size, values, dims, **params):
    # A primitive with no operands has nothing batched, so the trace binds it in the
    # parent and never asks for this rule; it is here so the coverage table is complete.
    raise AssertionError("a primitive without operands cannot have batched operands")


vmap_rules[P.iota_p] = _never_batched_rule


# -- contraction -------------------------------------------------------------------------------

def _dot_general_rule(axis_size, values, dims, *, dimension_numbers, **params):
    (lhs, rhs), (ld, rd) = values, dims
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_ndim, rhs_ndim = unbatched_ndim(lhs, ld), unbatched_ndim(rhs, rd)
    if ld is not not_mapped and rd is not not_mapped:
        # Both batched: one more batch dimension of the contraction, listed first, so
        # the result has it at axis 0 (results put batch dimensions first).
        dnums = ((shift_axes(lc, ld), shift_axes(rc, rd)),
                 ((ld,) + shift_axes(lb, ld), (rd,) + shift_axes(rb, rd)))
        out_dim = 0
    elif ld is not not_mapped:
        # Only lhs batched: its batch axis is one more free lhs axis. Results order
        # free axes as they appear in the operand, so we know where it lands.
        lc, lb = shift_axes(lc, ld), shift_axes(lb, ld)
        free = [i for i in range(lhs_ndim + 1) if i not in lc and i not in lb]
        dnums = ((lc, rc), (lb, rb))
        out_dim = len(lb) + free.index(ld)
    else:
        rc, rb = shift_axes(rc, rd), shift_axes(rb, rd)
        free = [i for i in range(rhs_ndim + 1) if i not in rc and i not in rb]
        lhs_free = lhs_ndim - len(lc) - len(lb)
        dnums = ((lc, rc), (lb, rb))
        out_dim = len(rb) + lhs_free + free.index(rd)
    out = P.dot_general_p.bind(lhs, rhs, dimension_numbers=dnums, **params)
    return Batched([out], [out_dim])


vmap_rules[P.dot_general_p] = _dot_general_rule


# -- sorting --------------------------------------------------------------------------------

def _sort_rule(axis_size, values, dims, *, dimension, **params):
    target = _first_batched(dims)
    operands = [batch_at(x, d, target, axis_size) for x, d in zip(values, dims)]
    outs = P.sort_p.bind(*operands, dimension=dimension + (dimension >= target), **params)
    return Batched(list(outs), [target] * len(outs))


vmap_rules[P.sort_p] = _sort_rule


# -- gather and scatter ----------------------------------------------------------------------

def _indices_batch_axis_before_vector(indices, d):
    """Batched indices with the batch axis not last (the last axis is the index
    vector). Returns `(indices, batch_dim)`."""
    last = aval_of(indices).ndim - 1
    if d == last:
        indices = moveaxis(indices, d, last - 1)
        d = last - 1
    return indices, d


def _with_example_numbers(indices, d):
    """Prepend the example number to every index vector of batched `indices`."""
    aval = aval_of(indices)
    counts = P.iota_p.bind(dtype=aval.dtype, shape=aval.shape[:-1] + (1,), dimension=d)
    return P.concatenate_p.bind(counts, indices, dimension=aval.ndim - 1)


def _slot_after(positions, k) -> int:
    """Where a new axis goes so that it is the k-th (from 0) of `positions`."""
    return positions[k - 1] + 1 if k > 0 else 0


def _gather_rule(axis_size, values, dims, *, offset_dims, collapsed_slice_dims,
                 start_index_map, slice_sizes, mode="clip"):
    (operand, indices), (od, idx_d) = values, dims
    offset_dims = tuple(offset_dims)
    out_rank = unbatched_ndim(indices, idx_d) - 1 + len(offset_dims)
    if idx_d is not_mapped:
        # Only the operand is batched: its batch axis is one more sliced (offset) axis,
        # taken whole. It is the k-th uncollapsed axis, so it is the k-th offset dim.
        k = sum(1 for a in range(od) if a not in collapsed_slice_dims)
        out_dim = _slot_after(offset_dims, k)
        params = dict(
            offset_dims=offset_dims[:k] + (out_dim,) + tuple(o + 1 for o in offset_dims[k:]),
            collapsed_slice_dims=shift_axes(collapsed_slice_dims, od),
            start_index_map=shift_axes(start_index_map, od),
            slice_sizes=_insert(slice_sizes, od, axis_size))
    else:
        # Batched indices: their batch axis is one more batch axis of the result,
        # placed among the result's non-offset axes in the order of the index axes.
        indices, idx_d = _indices_batch_axis_before_vector(indices, idx_d)
        batch_positions = [i for i in range(out_rank) if i not in offset_dims]
        out_dim = _slot_after(batch_positions, idx_d)
        params = dict(offset_dims=tuple(o + (o >= out_dim) for o in offset_dims),
                      collapsed_slice_dims=tuple(collapsed_slice_dims),
                      start_index_map=tuple(start_index_map),
                      slice_sizes=tuple(slice_sizes))
        if od is not not_mapped:
            # Both batched: example b indexes only operand[b] (see the module docstring).
            indices = _with_example_numbers(indices, idx_d)
            params.update(
                collapsed_slice_dims=tuple(sorted((od,) + shift_axes(collapsed_slice_dims, od))),
                start_index_map=(od,) + shift_axes(start_index_map, od),
                slice_sizes=_insert(slice_sizes, od, 1))
    out = P.gather_p.bind(operand, indices, mode=mode, **params)
    return Batched([out], [out_dim])


def _scatter_rule(prim):
    def rule(axis_size, values, dims, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, mode="fill"):
        (operand, indices, updates), (od, idx_d, ud) = values, dims
        # The result is the operand updated per example, so the operand must be batched.
        if od is not_mapped:
            operand, od = batch_at(operand, not_mapped, 0, axis_size), 0
        window_dims = tuple(update_window_dims)
        if idx_d is not_mapped:
            # Every example writes at the same places: the operand's batch axis is one
            # more window axis, the k-th, so the updates carry it as their k-th window dim.
            k = sum(1 for a in range(od) if a not in inserted_window_dims)
            upd_dim = _slot_after(window_dims, k)
            window_dims = window_dims[:k] + (upd_dim,) + tuple(u + 1 for u in window_dims[k:])
            inserted = shift_axes(inserted_window_dims, od)
            to_operand = shift_axes(scatter_dims_to_operand_dims, od)
        else:
            # Batched indices: the example number becomes one more index coordinate into
            # the operand's batch axis (see the module docstring); the updates carry
            # the batch axis as one more scatter (non-window) axis.
            indices, idx_d = _indices_batch_axis_before_vector(indices, idx_d)
            indices = _with_example_numbers(indices, idx_d)
            updates_rank = unbatched_ndim(updates, ud)
            scatter_positions = [i for i in range(updates_rank) if i not in window_dims]
            upd_dim = _slot_after(scatter_positions, idx_d)
            window_dims = tuple(u + (u >= upd_dim) for u in window_dims)
            inserted = tuple(sorted((od,) + shift_axes(inserted_window_dims, od)))
            to_operand = (od,) + shift_axes(scatter_dims_to_operand_dims, od)
        updates = batch_at(updates, ud, upd_dim, axis_size)
        out = prim.bind(operand, indices, updates, update_window_dims=window_dims,
                        inserted_window_dims=inserted,
                        scatter_dims_to_operand_dims=to_operand, mode=mode)
        return Batched([out], [od])
    return rule


vmap_rules[P.gather_p] = _gather_rule
vmap_rules[P.scatter_p] = _scatter_rule(P.scatter_p)
vmap_rules[P.scatter_add_p] = _scatter_rule(P.scatter_add_p)


# -- dynamic slicing ----------------------------------------------------------------------------

def _stacked_start_indices(axis_size, starts, dims):
    """Per-example start scalars -> one batched index vector, `[axis_size, n]` at 0."""
    columns = []
    for start, d in zip(starts, dims):
        if aval_of(start).dtype != np.int32:
            start = P.convert_element_type_p.bind(start, new_dtype=np.dtype(np.int32),
                                                  weak_type=False)
        columns.append(P.broadcast_in_dim_p.bind(
            start, shape=(axis_size, 1), broadcast_dimensions=() if d is None else (0,)))
    if len(columns) == 1:
        return columns[0]
    return P.concatenate_p.bind(*columns, dimension=1)


def _zero_index_like(starts):
    dtype = aval_of(starts[0]).dtype if starts else np.dtype(np.int32)
    return np.zeros((), dtype)


def _axes_that_can_move(operand_shape, window_shape):
    """Axes where the start index matters: a window as large as its axis is clamped to
    start at 0 whatever the index says, so such an axis needs no index at all."""
    return [a for a, (n, w) in enumerate(zip(operand_shape, window_shape)) if w < n]


def _dynamic_slice_rule(axis_size, values, dims, *, slice_sizes):
    (x, *starts), (dx, *start_dims) = values, dims
    shape = aval_of(x).shape
    shape = shape if dx is None else shape[:dx] + shape[dx + 1:]
    moving = _axes_that_can_move(shape, slice_sizes)
    if all(start_dims[a] is not_mapped for a in moving):
        # Every example's window starts at the same place.
        starts = [starts[a] if a in moving else _zero_index_like(starts)
                  for a in range(len(starts))]
        if dx is not_mapped:
            return Batched([P.dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)],
                           [not_mapped])
        starts = _insert(starts, dx, _zero_index_like(starts))
        out = P.dynamic_slice_p.bind(x, *starts, slice_sizes=_insert(slice_sizes, dx, axis_size))
        return Batched([out], [dx])
    # Batched starts: a gather of one window per example, clamped into bounds the way
    # dynamic_slice clamps its starts.
    indices = _stacked_start_indices(axis_size, [starts[a] for a in moving],
                                     [start_dims[a] for a in moving])
    return _gather_rule(axis_size, [x, indices], [dx, 0],
                        offset_dims=tuple(range(len(slice_sizes))), collapsed_slice_dims=(),
                        start_index_map=tuple(moving), slice_sizes=tuple(slice_sizes),
                        mode="clip")


def _dynamic_update_slice_rule(axis_size, values, dims):
    (x, update, *starts), (dx, du, *start_dims) = values, dims
    shape, update_shape = aval_of(x).shape, aval_of(update).shape
    shape = shape if dx is None else shape[:dx] + shape[dx + 1:]
    update_shape = update_shape if du is None else update_shape[:du] + update_shape[du + 1:]
    moving = _axes_that_can_move(shape, update_shape)
    if all(start_dims[a] is not_mapped for a in moving):
        starts = [starts[a] if a in moving else _zero_index_like(starts)
                  for a in range(len(starts))]
        if dx is not_mapped and du is not_mapped:
            return Batched([P.dynamic_update_slice_p.bind(x, update, *starts)], [not_mapped])
        target = dx if dx is not not_mapped else du
        x = batch_at(x, dx, target, axis_size)
        update = batch_at(update, du, target, axis_size)
        starts = _insert(starts, target, _zero_index_like(starts))
        return Batched([P.dynamic_update_slice_p.bind(x, update, *starts)], [target])
    # Batched starts: a scatter of one window per example, clamped like the starts of
    # dynamic_update_slice.
    indices = _stacked_start_indices(axis_size, [starts[a] for a in moving],
                                     [start_dims[a] for a in moving])
    return vmap_rules[P.scatter_p](
        axis_size, [x, indices, update], [dx, 0, du],
        update_window_dims=tuple(range(len(shape))), inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(moving), mode="clip")


vmap_rules[P.dynamic_slice_p] = _dynamic_slice_rule
vmap_rules[P.dynamic_update_slice_p] = _dynamic_update_slice_rule
