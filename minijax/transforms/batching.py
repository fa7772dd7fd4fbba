"""The vocabulary of batching, shared by `vmap.py` and the modules of batching rules.

What a batching rule receives and returns (`Batched`, `not_mapped`), the rule tables
(`vmap_rules`, `trace_vmap_rules`), the batched tracer, and the axis helpers rules
use. The trace itself and the pass (`vmap_jaxpr`) are in `vmap.py`; read that first.
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir import primitives as P
from ..ir.core import Jaxpr, ClosedJaxpr
from ..ir.registry import register_rule_table, GenericPath
from ..ir.errors import ConcretizationTypeError
from ..ir.trace import (Trace, Tracer, MinijaxError, aval_of, current_trace,
                        set_current_trace, JAX_TRACER_NAMES)
from ..ir.types import RefType

not_mapped = None


class Batched(NamedTuple):
    """What a batching rule returns: one entry per primitive output."""
    values: list
    batch_dims: list     # axis of each value that indexes examples, or not_mapped


class BatchedJaxpr(NamedTuple):
    """What `vmap_jaxpr` returns."""
    jaxpr: Jaxpr | ClosedJaxpr
    out_axes: tuple      # batch axis of each output of `jaxpr`, or None if unbatched


class BatchingError(MinijaxError, ValueError):
    """A vmapped program cannot be batched as written (bad axes, sizes, a ref...)."""


# Ref rules that need the batching trace itself (transforms/ref_rules.py): a ref created
# inside the vmapped function starts unbatched and becomes batched when a batched
# value is written into it. Signature: rule(trace, values, dims, **params) -> Batched.
# The unbatched results of a primitive that `allocates_ref` are remembered by the
# trace as made by the vmapped code (`trace.ref_ledger.made_below`).
trace_vmap_rules: dict = {}

# Rules for primitives that can mention the name of a vmap's axis: the collectives,
# and primitives whose bodies may hold them. A `vmap(..., axis_name=...)` trace asks
# them first, even when no operand is batched (`psum` of an unbatched value still
# sums over the axis). Signature: rule(trace, args, params) -> the primitive's
# outputs as values of that trace, or None when the equation does not involve the
# trace's axis (then batching goes on as usual). `transforms/collective_rules.py`.
# For a primitive with bodies the entry runs its `vmap_rules` rule through
# `trace.apply_rule(..., axis_name=)`: such rules take an `axis_name=None` keyword
# and pass it to `vmap_jaxpr` for each body they batch.
named_axis_rules: dict = {}

vmap_rules: dict = register_rule_table("vmap", {}, GenericPath(
    lambda prim: prim in trace_vmap_rules, "a ref rule that receives the batching trace"))


# -- the tracer ----------------------------------------------------------------------

class BatchTracer(Tracer):
    __slots__ = ("value", "batch_dim", "_aval")

    def __init__(self, trace: "BatchTrace", value, batch_dim: int):
        self._trace = trace
        self.value = value
        self.batch_dim = batch_dim
        self._aval = None

    @property
    def aval(self):
        # The per-example type: the stacked value's type without its batch axis.
        if self._aval is None:
            stacked = aval_of(self.value)
            shape = stacked.shape
            d = self.batch_dim
            if isinstance(stacked, RefType):      # a batched ref: a ref of stacked values
                self._aval = RefType(stacked.inner.update(shape=shape[:d] + shape[d + 1:]))
            else:
                self._aval = stacked.update(shape=shape[:d] + shape[d + 1:])
        return self._aval

    def _short_repr(self):
        return (f"{JAX_TRACER_NAMES[self._trace.kind]}(aval={self.aval}, "
                f"batched={aval_of(self.value)})")

    def _concrete_or_raise(self, what, error=ConcretizationTypeError):
        raise error(
            f"{what} needs one concrete value, but this {self.aval} differs from example "
            f"to example: it depends on an input mapped by vmap. Python control flow "
            f"cannot branch per example; use lax.select / jnp.where or lax.cond, or pass "
            f"the value with in_axes=None if it is the same for every example.")


# -- helpers for rules ---------------------------------------------------------------
#
# Rules run with the parent trace current, so binding a primitive here emits it one
# level out (into the staged program under `jit`, or eagerly at the top).

def moveaxis(x, src: int, dst: int):
    """`x` with axis `src` moved to position `dst`; no equation when they agree."""
    if src == dst:
        return x
    perm = [i for i in range(aval_of(x).ndim) if i != src]
    perm.insert(dst, src)
    return P.transpose_p.bind(x, permutation=tuple(perm))


def batch_at(x, batch_dim, target: int, axis_size: int):
    """`x` with its batch axis at `target`: moved if it is elsewhere, broadcast (one
    copy per example) if `x` is unbatched."""
    if batch_dim is not_mapped:
        aval = aval_of(x)
        shape = aval.shape[:target] + (axis_size,) + aval.shape[target:]
        dims = tuple(i for i in range(aval.ndim + 1) if i != target)
        return P.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)
    return moveaxis(x, batch_dim, target)


def lane_of(value, batch_dim, lane):
    """Example `lane` of a value batched along `batch_dim` (a static slice)."""
    shape = aval_of(value).shape
    start = [0] * len(shape)
    limit = list(shape)
    start[batch_dim], limit[batch_dim] = lane, lane + 1
    sliced = P.slice_p.bind(value, start_indices=tuple(start), limit_indices=tuple(limit),
                            strides=None)
    return P.squeeze_p.bind(sliced, dimensions=(batch_dim,))


def shift_axes(axes, batch_dim: int) -> tuple:
    """Per-example axis numbers -> axis numbers of the stacked value whose batch
    axis is `batch_dim` (axes at or after it move up by one)."""
    return tuple(a + (a >= batch_dim) for a in axes)


def unbatched_ndim(x, batch_dim) -> int:
    return aval_of(x).ndim - (batch_dim is not not_mapped)


# -- named axes: which trace binds a name, and its size ---------------------------------------
#
# A named axis is bound by a vmap's `BatchTrace` (its `axis_name`, `axis_size`) or by an
# `AxisFrame`, which binds the axes of a mesh (`shard_map`, or the reference evaluator
# running a shard_map as nested vmaps) and passes every primitive on unchanged.

class AxisFrame(Trace):
    """A trace that binds mesh axis names (for the collectives to look up) and
    otherwise hands every primitive to its parent unchanged. `check_vma` is the
    shard_map's flag, which decides a few of JAX's errors (`frontend/collectives.py`)."""

    def __init__(self, parent: Trace, mesh_axis_sizes: dict, check_vma: bool = False):
        super().__init__(parent)
        self.mesh_axis_sizes = mesh_axis_sizes
        self.check_vma = check_vma

    def process_primitive(self, prim, args, params):
        with set_current_trace(self.parent):
            return self.parent.process_primitive(prim, args, params)


def axis_binder(name):
    """The trace that binds axis `name` around the current trace (a vmap's trace or
    an `AxisFrame`), or None when nothing does."""
    trace = current_trace()
    while trace is not None:
        if getattr(trace, "axis_name", None) == name:
            return trace
        if name in getattr(trace, "mesh_axis_sizes", ()):
            return trace
        trace = trace.parent
    return None


def named_axes_around() -> tuple:
    """The named axes bound around the current trace, innermost first, as (name,
    size) pairs: what a cached transformation of a body depends on."""
    axes, trace = [], current_trace()
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name is not None:
            axes.append((name, trace.axis_size))
        axes.extend(getattr(trace, "mesh_axis_sizes", {}).items())
        trace = trace.parent
    return tuple(axes)


def bound_axis_size(name):
    """The size of the axis `name` around the current trace, or None if unbound."""
    trace = axis_binder(name)
    if trace is None:
        return None
    sizes = getattr(trace, "mesh_axis_sizes", None)
    return trace.axis_size if sizes is None or name not in sizes else sizes[name]
