"""The transpose rule of every linear primitive (the `transpose_rules` table).

Read `transpose.py` first. One signature for the table:

    rule(cts_out: list, *inputs, **params) -> list with one cotangent per input

Linear inputs arrive as `UndefinedPrimal(aval)`; the others (a multiplier, indices,
a `select_n` predicate) as values. `None` marks "no cotangent" for non-linear inputs.

A primitive is linear in some operands when, with the others fixed, it is a linear
map: `mul` by a non-linear operand, `div` of a linear numerator, every shape and
indexing op, sums, `dot_general` with one linear side. Each rule applies the
*adjoint* map: a broadcast's adjoint sums, a slice's adjoint pads with zeros, a
gather's adjoint scatter-adds, and so on.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from .ad_util import (Zero, zeros, instantiate, scalar, add, sub, neg, mul, div, convert,
                      reduce_sum, broadcast_in_dim, transpose, reshape, sum_to_shape, eq, iota,
                      window_inside)
from .transpose import transpose_rules, is_linear, NonLinearError


def _linear_and_other(prim_name, x, y):
    if is_linear(x) and is_linear(y):
        raise NonLinearError(f"{prim_name} of two linear values is not linear")


def _add_transpose(cts, x, y):
    ct, = cts
    return [sum_to_shape(ct, x.aval.shape) if is_linear(x) else None,
            sum_to_shape(ct, y.aval.shape) if is_linear(y) else None]


def _sub_transpose(cts, x, y):
    ct, = cts
    return [sum_to_shape(ct, x.aval.shape) if is_linear(x) else None,
            sum_to_shape(neg(ct), y.aval.shape) if is_linear(y) else None]


def _mul_transpose(cts, x, y):
    ct, = cts
    _linear_and_other("mul", x, y)
    if is_linear(x):
        return [sum_to_shape(mul(ct, y), x.aval.shape), None]
    return [None, sum_to_shape(mul(x, ct), y.aval.shape)]


def _div_transpose(cts, x, y):
    ct, = cts
    if is_linear(y):
        raise NonLinearError("div is only linear in its numerator")
    return [sum_to_shape(div(ct, y), x.aval.shape), None]


transpose_rules[P.add_p] = _add_transpose
transpose_rules[P.sub_p] = _sub_transpose
transpose_rules[P.mul_p] = _mul_transpose
transpose_rules[P.div_p] = _div_transpose
transpose_rules[P.neg_p] = lambda cts, x: [neg(cts[0])]


def _convert_transpose(cts, x, *, new_dtype, weak_type=False):
    return [convert(cts[0], x.aval.dtype, x.aval.weak_type)]


transpose_rules[P.convert_element_type_p] = _convert_transpose


def _select_n_transpose(cts, which, *cases):
    ct, = cts
    if is_linear(which):
        raise NonLinearError("select_n is not linear in its predicate")
    zero = zeros(aval_of(ct))
    return [None] + [
        bind(P.select_n_p, which, *[ct if j == i else zero for j in range(len(cases))])
        if is_linear(case) else None for i, case in enumerate(cases)]


transpose_rules[P.select_n_p] = _select_n_transpose


# -- shapes -----------------------------------------------------------------------------------

def _broadcast_in_dim_transpose(cts, x, *, shape, broadcast_dimensions):
    ct, = cts
    new_axes = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [d for i, d in enumerate(broadcast_dimensions)
                 if x.aval.shape[i] == 1 and shape[d] != 1]
    summed = reduce_sum(ct, sorted(new_axes + stretched)) if new_axes or stretched else ct
    return [reshape(summed, x.aval.shape)]


transpose_rules[P.broadcast_in_dim_p] = _broadcast_in_dim_transpose
transpose_rules[P.reshape_p] = lambda cts, x, **params: [reshape(cts[0], x.aval.shape)]
transpose_rules[P.transpose_p] = lambda cts, x, *, permutation: [
    transpose(cts[0], _argsort(permutation))]
transpose_rules[P.squeeze_p] = lambda cts, x, *, dimensions: [
    bind(P.expand_dims_p, cts[0], dimensions=tuple(dimensions))]
transpose_rules[P.expand_dims_p] = lambda cts, x, *, dimensions: [
    bind(P.squeeze_p, cts[0], dimensions=tuple(dimensions))]
# Reversing is a permutation that is its own inverse, so it is its own transpose.
transpose_rules[P.rev_p] = lambda cts, x, *, dimensions: [
    bind(P.rev_p, cts[0], dimensions=tuple(dimensions))]


def _reduce_sum_transpose(cts, x, *, axes):
    shape = x.aval.shape
    kept = [d for d in range(len(shape)) if d not in axes]
    return [broadcast_in_dim(cts[0], shape, kept)]


transpose_rules[P.reduce_sum_p] = _reduce_sum_transpose


def _cumsum_transpose(cts, x, *, axis, reverse=False):
    return [bind(P.cumsum_p, cts[0], axis=axis, reverse=not reverse)]


transpose_rules[P.cumsum_p] = _cumsum_transpose


def _slice_like(ct, start, limit):
    ndim = len(start)
    return bind(P.slice_p, ct, start_indices=tuple(start), limit_indices=tuple(limit),
                strides=None) if ndim else ct


def _concatenate_transpose(cts, *operands, dimension):
    ct, = cts
    shape = list(aval_of(ct).shape)
    out, offset = [], 0
    for x in operands:
        size = x.aval.shape[dimension] if is_linear(x) else aval_of(x).shape[dimension]
        if is_linear(x):
            start = [0] * len(shape)
            limit = list(shape)
            start[dimension], limit[dimension] = offset, offset + size
            out.append(_slice_like(ct, start, limit))
        else:
            out.append(None)
        offset += size
    return out


transpose_rules[P.concatenate_p] = _concatenate_transpose


def _pad_transpose(cts, x, padding_value, *, padding_config):
    ct, = cts
    zero = scalar(0, aval_of(ct).dtype)
    # Undo the edges (a negative edge cut the operand: give it back as zeros), then
    # step over the interior padding.
    unpadded = bind(P.pad_p, ct, zero,
                    padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    shape = aval_of(unpadded).shape
    operand_part = bind(P.slice_p, unpadded, start_indices=(0,) * len(shape),
                        limit_indices=shape,
                        strides=tuple(interior + 1 for _, _, interior in padding_config))
    ct_x = operand_part if is_linear(x) else None
    ct_value = None
    if is_linear(padding_value):
        # Every element of the result that is not the operand's is the padding value.
        everything = reduce_sum(ct, range(len(aval_of(ct).shape)))
        ct_value = sub(everything, reduce_sum(operand_part, range(len(shape))))
    return [ct_x, ct_value]


transpose_rules[P.pad_p] = _pad_transpose


def _slice_transpose(cts, x, *, start_indices, limit_indices, strides=None):
    ct, = cts
    strides = strides or (1,) * len(start_indices)
    config = []
    for n, start, m, stride in zip(x.aval.shape, start_indices, aval_of(ct).shape, strides):
        occupied = start + (m - 1) * stride + 1 if m else start
        config.append((start, n - occupied, stride - 1))
    return [bind(P.pad_p, ct, scalar(0, aval_of(ct).dtype), padding_config=tuple(config))]


transpose_rules[P.slice_p] = _slice_transpose


# -- indexing -----------------------------------------------------------------------------------

def _dynamic_slice_transpose(cts, x, *starts, slice_sizes):
    return [bind(P.dynamic_update_slice_p, zeros(x.aval), cts[0], *starts)] + [None] * len(starts)


def _dynamic_update_slice_transpose(cts, x, update, *starts):
    ct, = cts
    update_aval = update.aval if is_linear(update) else aval_of(update)
    ct_x = bind(P.dynamic_update_slice_p, ct, zeros(update_aval), *starts) \
        if is_linear(x) else None
    ct_update = bind(P.dynamic_slice_p, ct, *starts, slice_sizes=update_aval.shape) \
        if is_linear(update) else None
    return [ct_x, ct_update] + [None] * len(starts)


transpose_rules[P.dynamic_slice_p] = _dynamic_slice_transpose
transpose_rules[P.dynamic_update_slice_p] = _dynamic_update_slice_transpose


def _gather_transpose(cts, operand, indices, *, offset_dims, collapsed_slice_dims,
                      start_index_map, slice_sizes, mode="clip"):
    # the zeros are strongly typed, as JAX's (they have a dtype, not a weak value):
    # the scatter's result, typed like its operand, is then strong too
    ct_operand = bind(P.scatter_add_p, zeros(operand.aval.strip_weak_type()), indices, cts[0],
                      update_window_dims=tuple(offset_dims),
                      inserted_window_dims=tuple(collapsed_slice_dims),
                      scatter_dims_to_operand_dims=tuple(start_index_map), mode=mode)
    return [ct_operand, None]


transpose_rules[P.gather_p] = _gather_transpose


def _gather_updates(ct, indices, update_aval, update_window_dims, inserted_window_dims,
                    scatter_dims_to_operand_dims, mode):
    """The adjoint of scattering updates: gather the windows they were written to."""
    window_sizes = iter(update_aval.shape[d] for d in update_window_dims)
    slice_sizes = tuple(1 if axis in inserted_window_dims else next(window_sizes)
                        for axis in range(aval_of(ct).ndim))
    gathered = bind(P.gather_p, ct, indices, offset_dims=tuple(update_window_dims),
                    collapsed_slice_dims=tuple(inserted_window_dims),
                    start_index_map=tuple(scatter_dims_to_operand_dims),
                    slice_sizes=slice_sizes, mode=mode)
    if mode != "fill" or not scatter_dims_to_operand_dims:
        return gathered
    # A 'fill' gather reads NaN out of bounds, but an update the scatter dropped there
    # has no effect on its result: its cotangent is 0 (JAX gathers with fill_value=0).
    inside = window_inside(indices, aval_of(ct).shape, slice_sizes,
                            scatter_dims_to_operand_dims)
    batch_dims = [d for d in range(update_aval.ndim) if d not in update_window_dims]
    inside = broadcast_in_dim(inside, update_aval.shape, batch_dims)
    return bind(P.select_n_p, inside, zeros(aval_of(gathered)), gathered)


def _scatter_transpose_rule(overwrites):
    def rule(cts, operand, indices, updates, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, mode="fill"):
        ct, = cts
        dnums = dict(update_window_dims=update_window_dims,
                     inserted_window_dims=inserted_window_dims,
                     scatter_dims_to_operand_dims=scatter_dims_to_operand_dims)
        update_aval = updates.aval if is_linear(updates) else aval_of(updates)
        ct_operand = None
        if is_linear(operand):
            # scatter_add passes the operand through; scatter overwrites the windows,
            # so their cotangent goes to the updates instead.
            ct_operand = bind(P.scatter_p, ct, indices, zeros(update_aval), mode=mode,
                              **dnums) if overwrites else ct
        ct_updates = None
        if is_linear(updates):
            ct_updates = _gather_updates(ct, indices, update_aval, mode=mode, **dnums)
            if overwrites:
                # Repeated indices: only the update the scatter left in place reaches
                # the output, so only it gets the cotangent (the others are overwritten).
                ct_updates = bind(P.select_n_p, _written_updates(aval_of(ct), indices,
                                                                update_aval, mode, dnums),
                                  zeros(update_aval), ct_updates)
        return [ct_operand, None, ct_updates]
    return rule


def _written_updates(operand_aval, indices, update_aval, mode, dnums):
    """bool, shaped like the updates: whether each update element is the one a scatter
    (overwriting, indices possibly repeated) leaves in the result. Scatter each
    element's id (1, 2, ...) into an operand of -1s the same way, then read back which
    id each element's target holds; an element dropped out of bounds reads no id."""
    size = int(np.prod(update_aval.shape, dtype=np.int64))
    ids = reshape(add(iota(np.int32, (size,), 0), scalar(1, np.int32)), update_aval.shape)
    minus_ones = broadcast_in_dim(scalar(-1, np.int32), operand_aval.shape, ())
    written = bind(P.scatter_p, minus_ones, indices, ids, mode=mode, **dnums)
    return eq(_gather_updates(written, indices, update_aval, mode=mode, **dnums), ids)


transpose_rules[P.scatter_add_p] = _scatter_transpose_rule(overwrites=False)
transpose_rules[P.scatter_p] = _scatter_transpose_rule(overwrites=True)


def _argsort(axes) -> list:
    """The positions of distinct axis numbers in increasing order (the inverse of a
    permutation): NumPy's argsort without converting a short list to an array, which
    costs more than sorting it, once per transposed equation."""
    return sorted(range(len(axes)), key=axes.__getitem__)


# -- contraction --------------------------------------------------------------------------------

def _dot_general_transpose_one_side(ct, other, this_aval, this_contract, other_contract,
                                    this_batch, other_batch, this_free_first, precision,
                                    preferred_element_type):
    """Cotangent of one operand of `dot_general` (`this`), the other being fixed.

    `ct` has axes (batch, lhs free, rhs free). Contract its `other`-free axes with
    `other`'s free axes, batching as before, and permute the result back into `this`
    operand's layout. The operands go in the order that makes that permutation the
    identity in the common cases: for the lhs, `ct . other` gives (batch, this free,
    this contracting); for the rhs, `other . ct` gives (batch, this contracting, this
    free) -- a weight's cotangent `x^T @ ct` comes out as [in, out] with no transpose.

    The product keeps the forward `preferred_element_type`, as JAX's does, and only
    its result is converted to this operand's dtype: a bf16 weight multiplied with
    float32 accumulation gets its cotangent from the float32 one, not from a bf16
    rounding of it."""
    this_ndim, other_ndim = this_aval.ndim, aval_of(other).ndim
    this_free = [d for d in range(this_ndim) if d not in this_contract and d not in this_batch]
    other_free = [d for d in range(other_ndim)
                  if d not in other_contract and d not in other_batch]
    n_batch = len(this_batch)
    if this_free_first:     # `this` is the lhs: ct axes are (batch, this free, other free)
        ct_other_free = list(range(n_batch + len(this_free), aval_of(ct).ndim))
    else:
        ct_other_free = list(range(n_batch, n_batch + len(other_free)))
    order = _argsort(other_contract)
    this_contract_in_other_order = [this_contract[j] for j in order]
    if this_free_first:
        dims = ((tuple(ct_other_free), tuple(other_free)),
                (tuple(range(n_batch)), tuple(other_batch)))
        result = bind(P.dot_general_p, ct, other, dimension_numbers=dims,
                      precision=precision, preferred_element_type=preferred_element_type)
        source_axes = list(this_batch) + this_free + this_contract_in_other_order
    else:
        dims = ((tuple(other_free), tuple(ct_other_free)),
                (tuple(other_batch), tuple(range(n_batch))))
        # JAX's rule multiplies (ct, other) with the pair as given; here the operands
        # come the other way round, so the pair does too: each gets the precision JAX's does
        result = bind(P.dot_general_p, other, ct, dimension_numbers=dims,
                      precision=precision[::-1] if isinstance(precision, tuple)
                      else precision,
                      preferred_element_type=preferred_element_type)
        source_axes = list(this_batch) + this_contract_in_other_order + this_free
    result = transpose(result, _argsort(source_axes))
    if aval_of(result).dtype != this_aval.dtype:
        result = convert(result, this_aval.dtype, this_aval.weak_type)
    return result


def _dot_general_transpose(cts, lhs, rhs, *, dimension_numbers, precision=None,
                           preferred_element_type=None):
    ct, = cts
    _linear_and_other("dot_general", lhs, rhs)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if is_linear(lhs):
        return [_dot_general_transpose_one_side(ct, rhs, lhs.aval, lhs_contract,
                                                rhs_contract, lhs_batch, rhs_batch,
                                                this_free_first=True, precision=precision,
                                                preferred_element_type=preferred_element_type),
                None]
    return [None, _dot_general_transpose_one_side(ct, lhs, rhs.aval, rhs_contract,
                                                  lhs_contract, rhs_batch, lhs_batch,
                                                  this_free_first=False, precision=precision,
                                                  preferred_element_type=preferred_element_type)]


transpose_rules[P.dot_general_p] = _dot_general_transpose
