"""`lax.ragged_dot` and `lax.ragged_dot_general`: grouped matrix products (mixture of
experts), written as JAX's own CPU implementation computes them.

The ragged axis of `lhs` is cut into consecutive groups of `group_sizes` rows. Each
group is expanded into a dense copy of the operand with the other groups' rows zeroed
(a `select` under a mask from the cumulative group ends), and one `dot_general`
contracts the copies: with the rhs group axis (ragged non-contracting axis, mode 1),
batched over the groups (ragged contracting axis, mode 2, which adds a leading group
axis to the result), or not at all (ragged batch axis, mode 3, where JAX computes the
plain product). The products and sums are JAX's, so values match it; jvp, transpose
and vmap come from the parts, and `group_sizes`, being integer, has no tangent.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from ..ir.trace import aval_of
from ..ir.types import is_integer
from . import lax_ops as lax_
from .eager_jit import jitted_eagerly
from .lax_dot import dot_general

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The `dot_general` dimension numbers plus the lhs ragged axis and the rhs group
    axis (none when the ragged axis is contracting or batch), as JAX's."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions,
                 rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
_NONCONTRACTING, _CONTRACTING, _BATCH = 1, 2, 3


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """`lhs` (m, k) with its rows in groups of `group_sizes` (g,), each multiplied by
    its own slice of `rhs` (g, k, n): an (m, n) result."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)


def _remaining(rank, *used):
    taken = set().union(*map(set, used))
    return [d for d in range(rank) if d not in taken]


def _mode(rank, dnums):
    ragged = dnums.lhs_ragged_dimensions[0]
    (l_contract, _), (l_batch, _) = dnums.dot_dimension_numbers
    noncontract = _remaining(rank, l_contract, l_batch)
    if ragged in noncontract:
        return _NONCONTRACTING
    if ragged in l_contract:
        return _CONTRACTING
    if ragged in l_batch:
        return _BATCH
    raise TypeError(f"lhs_ragged_dim {ragged} not found in lhs_noncontracting "
                    f"{noncontract}, lhs_contracting {list(l_contract)}, or lhs_batch "
                    f"{list(l_batch)}.")


def _prefix_dims(mode, rank, ragged_dim, batch, contract):
    """The operand axes outside the ragged one that `group_sizes` has one axis for."""
    batch, contract = list(batch), list(contract)
    if mode == _NONCONTRACTING:
        noncontract = _remaining(rank, contract, batch)
        return batch + noncontract[:noncontract.index(ragged_dim)]
    if mode == _CONTRACTING:
        return batch + contract[:contract.index(ragged_dim)]
    return batch[:batch.index(ragged_dim)]


def _in_range(dim, rank, what, arg):
    if not 0 <= dim < rank:
        raise TypeError(f"ragged_dot_general requires {what} numbers to be nonnegative "
                        f"and less than the number of axes of the {arg} value, got "
                        f"{dim} for {arg} of rank {rank}.")


def _check(lhs, rhs, gs, dnums):
    """JAX's shape and dtype rules; returns the mode."""
    if len(dnums.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = dnums.lhs_ragged_dimensions[0]
    _in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode = _mode(lhs.ndim, dnums)
    (l_contract, r_contract), (l_batch, r_batch) = dnums.dot_dimension_numbers
    if gs.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if gs.ndim != 1:
        prefix = _prefix_dims(mode, lhs.ndim, ragged, l_batch, l_contract)
        expected = tuple(lhs.shape[i] for i in prefix) + (gs.shape[-1],)
        if tuple(gs.shape) != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got "
                            f"{tuple(gs.shape)}.")
    groups = gs.shape[-1]
    group_dims = dnums.rhs_group_dimensions
    if mode != _NONCONTRACTING and len(group_dims) != 0:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs "
                        "when lhs ragged dimension is contracting or batch.")
    if mode == _NONCONTRACTING:
        if len(group_dims) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group "
                            "dimension when lhs ragged dimension is noncontracting.")
        _in_range(group_dims[0], rhs.ndim, "rhs group dimension", "rhs")
        if group_dims[0] in r_batch or group_dims[0] in r_contract:
            raise TypeError("ragged_dot_general requires rhs group dimension numbers to "
                            "be distinct from contracting and batch dimensions.")
        if rhs.shape[group_dims[0]] != groups:
            raise TypeError(f"expected rhs group dimension size to be {groups}, got "
                            f"{rhs.shape[group_dims[0]]}.")
    if not is_integer(gs.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype "
                        "of np.integer.")
    return mode


def _expand(x, dim, gs, prefix):
    """`x` with a new leading group axis: copy i keeps, along `dim`, only the rows of
    group i (its `prefix` axes pick which row of `gs` holds the sizes)."""
    x_aval = aval_of(x)
    groups = aval_of(gs).shape[-1]
    shape = (groups,) + tuple(x_aval.shape)
    ends = lax_.cumsum(gs, axis=len(prefix))
    starts = lax_.sub(ends, gs)
    # gs's axes are (prefix..., g); broadcast_in_dim wants its target axes increasing.
    order = sorted(range(len(prefix)), key=lambda i: prefix[i])
    perm = [len(prefix)] + order
    targets = [0] + [prefix[i] + 1 for i in order]
    ends, starts = (lax_.broadcast_in_dim(lax_.transpose(a, perm), shape, targets)
                    for a in (ends, starts))
    iota = lax_.broadcasted_iota(aval_of(gs).dtype, shape, dim + 1)
    mask = lax_.bitwise_and(lax_.le(starts, iota), lax_.lt(iota, ends))
    x = lax_.broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    return lax_.select(mask, x, lax_.full_like(x, 0))


# JAX's is one primitive: an eager call is one compiled program here too.
@jitted_eagerly("ragged_dot_dimension_numbers", "precision", "preferred_element_type",
                "group_offset", "out_sharding")
def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers,
                       precision=None, preferred_element_type=None, group_offset=None,
                       out_sharding=None):
    """`dot_general` with one ragged lhs axis; see the module docstring for the modes."""
    dnums = ragged_dot_dimension_numbers
    if not isinstance(dnums, RaggedDotDimensionNumbers):
        raise TypeError(f"ragged_dot_general requires ragged_dot_dimension_numbers to be "
                        f"a RaggedDotDimensionNumbers, got {type(dnums).__name__}")
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: minijax runs on one device and "
                                  "takes no out_sharding")
    lhs, rhs, group_sizes = (x if isinstance(x, (int, float)) or hasattr(x, "dtype")
                             else np.asarray(x) for x in (lhs, rhs, group_sizes))
    la, ra, ga = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    mode = _check(la, ra, ga, dnums)
    ragged = dnums.lhs_ragged_dimensions[0]
    (l_contract, r_contract), (l_batch, r_batch) = dnums.dot_dimension_numbers
    l_prefix = _prefix_dims(mode, la.ndim, ragged, l_batch, l_contract)

    def dot(a, b, dn):
        return dot_general(a, b, dn, precision=precision,
                           preferred_element_type=preferred_element_type)

    if mode == _BATCH:
        return dot(lhs, rhs, dnums.dot_dimension_numbers)
    if ga.ndim == 1:
        group_sizes = lax_.broadcast(group_sizes, [la.shape[i] for i in l_prefix])
    incr = lambda dims: [d + 1 for d in dims]  # noqa: E731
    lhs_dense = _expand(lhs, ragged, group_sizes, l_prefix)
    if mode == _NONCONTRACTING:
        return dot(lhs_dense, rhs, ((incr(l_contract) + [0],
                                     list(r_contract) + [dnums.rhs_group_dimensions[0]]),
                                    (incr(l_batch), list(r_batch))))
    r_ragged = r_contract[list(l_contract).index(ragged)]
    r_prefix = _prefix_dims(mode, ra.ndim, r_ragged, r_batch, r_contract)
    rhs_dense = _expand(rhs, r_ragged, group_sizes, r_prefix)
    return dot(lhs_dense, rhs_dense, ((incr(l_contract), incr(r_contract)),
                                      ([0] + incr(l_batch), [0] + incr(r_batch))))
