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
from jax import tree_util

from ..ir import primitives as P
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p
from ..ir.trace import aval_of
from .ad_util import is_differentiable, SymbolicZero, zeros
from .vmap import (Batched, vmap_rules, vmap_jaxpr, batch_function, moveaxis, batch_at,
                   shift_axes, unbatched_ndim, not_mapped)


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


def _rev_rule(axis_size, values, dims, *, dimensions):
    (x,), (d,) = values, dims
    return Batched([P.rev_p.bind(x, dimensions=shift_axes(dimensions, d))], [d])


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
                     (P.rev_p, _rev_rule),
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
for _prim in (P.scatter_add_p, P.scatter_mul_p, P.scatter_min_p, P.scatter_max_p):
    vmap_rules[_prim] = _scatter_rule(_prim)


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


# -- custom_jvp / custom_vjp calls -------------------------------------------------------------
#
# A custom call carries its primal body as a jaxpr, batched like `jit`'s, and the
# user's derivative rules as Python functions (see transforms/custom_derivatives.py).
# Batching the call must also batch those rules, for when the batched call is later
# differentiated (grad of vmap): each rule is wrapped so that it runs the user's
# per-example rule under a batching trace. Every output of a batched custom call is
# batched on axis 0, so the wrapped rules' outputs have one known layout.

class _BatchedJvpRule:
    """The `rule` param of a batched `custom_jvp_call`: the user's jvp, vmapped."""

    def __init__(self, rule, arg_dims, axis_size, axis_name):
        self.inner, self.site = rule, rule.site
        self.arg_dims, self.axis_size = list(arg_dims), axis_size
        self.axis_name = axis_name

    def jvp(self, *args):
        nondiff, primals, tangents = args[:-2], args[-2], args[-1]
        primal_leaves, primal_tree = tree_util.tree_flatten(primals)
        tangent_leaves, tangent_tree = tree_util.tree_flatten(tangents)
        n, trees = len(primal_leaves), []

        def per_example(*leaves):
            out, out_tangent = self.inner.jvp(
                *nondiff, tree_util.tree_unflatten(primal_tree, leaves[:n]),
                tree_util.tree_unflatten(tangent_tree, leaves[n:]))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            tangent_out_leaves, tangent_out_tree = tree_util.tree_flatten(out_tangent)
            trees[:] = [out_tree, tangent_out_tree, len(out_leaves)]
            return out_leaves + tangent_out_leaves
        result = batch_function(per_example, primal_leaves + tangent_leaves,
                                self.arg_dims + self.arg_dims, self.axis_size, self.axis_name)
        outs = [batch_at(v, d, 0, self.axis_size) for v, d in zip(*result)]
        out_tree, tangent_out_tree, k = trees
        return (tree_util.tree_unflatten(out_tree, outs[:k]),
                tree_util.tree_unflatten(tangent_out_tree, outs[k:]))

    def __repr__(self):
        return f"vmap({self.inner!r})"


class _BatchedSite:
    """The call site of a batched custom_vjp call: the original one, but with the
    batched argument types (bwd's cotangents are checked against them)."""

    def __init__(self, site, in_avals):
        self._site, self.in_avals = site, list(in_avals)

    def __getattr__(self, name):
        return getattr(self._site, name)


class _BatchedVjpRule:
    """The `rule` param of a batched `custom_vjp_call`: the user's fwd and bwd, vmapped.
    The cotangent of an argument that all examples share is the sum over examples."""

    def __init__(self, rule, site, arg_dims, axis_size, axis_name):
        self.inner, self.site = rule, site
        self.arg_dims, self.axis_size = list(arg_dims), axis_size
        self.axis_name = axis_name
        self.symbolic_zeros = getattr(rule, "symbolic_zeros", False)

    def fwd(self, *full_args):
        site = self.site
        dyn = tuple(a for i, a in enumerate(full_args) if i not in site.nondiff_positions)
        trees = []
        # symbolic_zeros: the leaves come as CustomVJPPrimal records; batch the values
        # and hand each example the records again.
        leaves = tree_util.tree_leaves(dyn)
        records = [(type(x), getattr(x, "perturbed", None)) for x in leaves]
        dyn_values = [getattr(x, "value", x) if p is not None else x
                      for x, (_, p) in zip(leaves, records)]

        def per_example(*leaves):
            leaves = [kind(x, p) if p is not None else x
                      for x, (kind, p) in zip(leaves, records)]
            out, residuals = self.inner.fwd(*site.full_args(leaves))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            residual_leaves, residual_tree = tree_util.tree_flatten(residuals)
            trees[:] = [out_tree, residual_tree, len(out_leaves)]
            return out_leaves + residual_leaves
        result = batch_function(per_example, dyn_values, self.arg_dims,
                                self.axis_size, self.axis_name)
        outs = [batch_at(v, d, 0, self.axis_size) for v, d in zip(*result)]
        out_tree, residual_tree, k = trees
        return (tree_util.tree_unflatten(out_tree, outs[:k]),
                tree_util.tree_unflatten(residual_tree, outs[k:]))

    def bwd(self, *args):
        nondiff, residuals, cotangent = args[:-2], args[-2], args[-1]
        residual_leaves, residual_tree = tree_util.tree_flatten(residuals)
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        # Examples see zero cotangents as arrays; one they return as a SymbolicZero
        # counts as None.
        ct_leaves = [zeros(x.aval) if type(x) is SymbolicZero else x for x in ct_leaves]
        n, layout = len(residual_leaves), []

        def per_example(*leaves):
            # bwd returns one entry per argument: None (a zero), or a pytree like the
            # argument whose leaves may be None. Only the array leaves are batched.
            cts = self.inner.bwd(*nondiff, tree_util.tree_unflatten(residual_tree, leaves[:n]),
                                 tree_util.tree_unflatten(ct_tree, leaves[n:]))
            layout[:] = [cts]
            if not isinstance(cts, (tuple, list)):
                return []       # not one entry per argument: custom_derivatives says so
            arrays = []
            for i, ct in enumerate(cts):
                if ct is not None:
                    flat, tree = tree_util.tree_flatten(ct, is_leaf=lambda x: x is None)
                    flat = [None if type(x) is SymbolicZero else x for x in flat]
                    layout.append((i, tree, [leaf is None for leaf in flat]))
                    arrays += [leaf for leaf in flat if leaf is not None]
            return arrays
        result = batch_function(per_example, residual_leaves + ct_leaves,
                                [0] * len(residual_leaves + ct_leaves), self.axis_size,
                                self.axis_name)
        cts, entries = layout[0], layout[1:]
        if not isinstance(cts, (tuple, list)):
            return cts
        site = self.site
        leaf_counts = [len(tree_util.tree_leaves(a)) for a in site.dyn_tree(site.leaves)]
        starts = np.cumsum([0] + leaf_counts)
        found = iter(zip(*result))
        out = [None] * len(cts)
        for i, tree, missing in entries:
            first = starts[i] if i < len(leaf_counts) else 0
            same_shape = i < len(leaf_counts) and len(missing) == leaf_counts[i]
            flat = []
            for k, gone in enumerate(missing):
                if gone:
                    flat.append(None)
                    continue
                value, dim = next(found)
                if same_shape:   # else custom_derivatives reports the mismatch
                    value = self._to_argument(value, dim, self.arg_dims[first + k],
                                              site._site.in_avals[first + k])
                flat.append(value)
            out[i] = tree_util.tree_unflatten(tree, flat)
        return type(cts)(out)

    def _to_argument(self, ct, ct_dim, arg_dim, aval):
        if not is_differentiable(aval):
            return ct
        if arg_dim is not_mapped:
            if ct_dim is not_mapped:             # the same per example: n times over
                return P.mul_p.bind(ct, np.array(self.axis_size, aval_of(ct).dtype))
            return P.reduce_sum_p.bind(ct, axes=(ct_dim,))
        return batch_at(ct, ct_dim, arg_dim, self.axis_size)

    def __repr__(self):
        return f"vmap({self.inner!r})"


def _custom_call_rule(prim, batched_rule):
    # `axis_name`: the vmap's, when the body holds a collective over it (then the
    # user's rules, batched later, run under a trace of that name too)
    def rule(axis_size, values, dims, *, call_jaxpr, num_consts, rule, name, axis_name=None):
        out_axes = [0] * len(call_jaxpr.outvars)
        batched = vmap_jaxpr(call_jaxpr, dims, axis_size, out_axes=out_axes,
                             axis_name=axis_name)
        new_rule = batched_rule(rule, batched.jaxpr, dims[num_consts:], num_consts,
                                axis_size, axis_name)
        outs = prim.bind(*values, call_jaxpr=batched.jaxpr, num_consts=num_consts,
                         rule=new_rule, name=name)
        return Batched(list(outs), out_axes)
    return rule


vmap_rules[custom_jvp_call_p] = _custom_call_rule(
    custom_jvp_call_p,
    lambda rule, jaxpr, arg_dims, num_consts, size, name: _BatchedJvpRule(
        rule, arg_dims, size, name))
vmap_rules[custom_vjp_call_p] = _custom_call_rule(
    custom_vjp_call_p,
    lambda rule, jaxpr, arg_dims, num_consts, size, name: _BatchedVjpRule(
        rule, _BatchedSite(rule.site, jaxpr.in_avals[num_consts:]), arg_dims, size, name))
