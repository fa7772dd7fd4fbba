"""Derivatives and batching of the collectives (`ir/collective_primitives.py`).

Batching: how `vmap(..., axis_name='i')` gives collectives their meaning
-----------------------------------------------------------------------
Under `vmap` with an axis name, the members of axis 'i' are the examples of the batch,
stored side by side in one stacked array. A collective over 'i' is then an ordinary
array operation across the batch axis, and the `BatchTrace` of that vmap rewrites it
so (`named_axis_rules`, asked before any other rule, even when no operand is batched):

    psum(x, 'i')          reduce_sum over the batch axis       -> one value for all
    pmax / pmin           reduce_max / reduce_min likewise
    all_gather(x, 'i')    the stacked array itself, batch axis moved to `axis`
    psum_scatter          reduce_sum, then the summed axis becomes the batch axis
    ppermute              slices of the batch axis, rearranged (zeros where nobody sends)
    all_to_all            a transpose that swaps the batch axis with the split axis
    axis_index('i')       iota over the batch axis

An unbatched operand is one value shared by every member: `psum` of it is `n * x`.
Results that are the same for every member (`psum`, `all_gather`, ...) stay unbatched,
so `out_axes=None` works for them, as in JAX. A collective over a *different* name
(an outer vmap's, or a shard_map's) is applied to the stacked value as a whole
(`vmap_rules`); the trace that owns that name deals with it later. So
`psum(x, ('i', 'j'))` under nested vmaps is summed by each trace in turn.

A collective over a tuple of names that includes the trace's own is first split into
collectives over one name each (`collective_split.py`). One with `axis_index_groups`
runs the rewrite once per group, under a second batching trace over the groups
(`_grouped`). Users reach these under `shard_map` only (JAX's vmap refuses groups),
through the reference evaluator, which runs a shard_map as nested named vmaps.

A primitive with bodies (`cond`, `while`, `scan`, `remat`, `jit`, a custom_jvp/vjp
call) whose body holds a collective over the vmap's axis is batched by its own vmap rule given `axis_name=`,
which batches each body under a trace of the same name and size (see the end of this
file): the collectives in the bodies are rewritten as above, wherever they sit.

Differentiation
---------------
`psum`, `all_gather`, `psum_scatter`, `ppermute` and `all_to_all` are linear, so their
JVP applies them to the tangent. Their transposes pair up: `all_gather` <->
`psum_scatter`, `ppermute` -> the inverse permutation, `all_to_all` -> the one with
split and concat axes swapped. `psum`'s transpose is subtle: see `_psum_transpose`.
JAX defines no derivative for `pmax` and `pmin`; neither does minijax.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..ir import collective_primitives as C
from ..ir import primitives as P
from ..ir.control_flow_primitives import cond_p, while_p, scan_p
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p
from ..ir.core import Jaxpr, ClosedJaxpr
from ..ir.registry import out_avals_of
from ..ir.remat_primitive import remat_p
from ..ir.shard_map_primitive import shard_map_p
from ..ir.trace import bind, aval_of, set_current_trace, current_trace
from .ad_util import (Zero, tangent_aval, instantiate, const_like, mul,
                      reduce_sum, reshape)
from .batching import (Batched, BatchingError, named_axis_rules, vmap_rules, moveaxis,
                       batch_at, not_mapped)
from .collective_split import split_rules, pick_rows, bound_sizes
from .vmap import BatchTrace
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules

# -- jvp ---------------------------------------------------------------------------------


def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        if type(tangents[0]) is Zero:
            return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
        return JvpResult([out], [bind(prim, instantiate(tangents[0]), **params)])
    return rule


def _not_differentiable_jvp(prim):
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        if type(tangents[0]) is not Zero:
            raise TypeError(f"{prim.name} is not differentiable: JAX defines no "
                            f"derivative for it either (use psum of a one-hot mask, "
                            f"or stop_gradient, to say which member's value to follow)")
        return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
    return rule


def _axis_index_jvp(primals, tangents, **params):
    out = bind(C.axis_index_p, **params)
    return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])


for _prim in (C.psum_p, C.all_gather_p, C.psum_scatter_p, C.ppermute_p, C.all_to_all_p):
    jvp_rules[_prim] = _linear_jvp(_prim)
for _prim in (C.pmax_p, C.pmin_p):
    jvp_rules[_prim] = _not_differentiable_jvp(_prim)
jvp_rules[C.axis_index_p] = _axis_index_jvp


# -- transpose ---------------------------------------------------------------------------

def _psum_transpose(cts, x, **params):
    """The transpose of `psum` is `psum`, as in JAX without shard_map's type checks.

    Per member k, `y_k = sum_j x_j`: the full linear map from all members' x to all
    members' y is the all-ones matrix, which is symmetric, so the cotangent of x_k is
    `sum_j ct_j` -- a psum of the cotangents. This treats every value as one that may
    differ between members (JAX's "varying" values). JAX agrees under `vmap`:
    `vmap(grad(lambda x: psum(x, 'i')), axis_name='i')` is n everywhere, not 1.
    (Inside a `shard_map` with `check_vma=True` JAX tracks which values are
    *invariant* along an axis and then transposes psum of an invariant cotangent to
    a no-op; minijax treats all values as varying, which is `check_vma=False`.)"""
    return [bind(C.psum_p, cts[0], **params)]


def _all_gather_transpose(cts, x, *, axis, **params):
    # member k's x reaches every member's result at block k: its cotangent is the sum
    # over members of block k of their cotangents
    return [bind(C.psum_scatter_p, cts[0], scatter_dimension=axis, **params)]


def _psum_scatter_transpose(cts, x, *, scatter_dimension, **params):
    return [bind(C.all_gather_p, cts[0], axis=scatter_dimension, **params)]


def _ppermute_transpose(cts, x, *, axis_name, perm):
    inverse = tuple((destination, source) for source, destination in perm)
    return [bind(C.ppermute_p, cts[0], axis_name=axis_name, perm=inverse)]


def _all_to_all_transpose(cts, x, *, split_axis, concat_axis, **params):
    return [bind(C.all_to_all_p, cts[0], split_axis=concat_axis, concat_axis=split_axis,
                 **params)]


transpose_rules[C.psum_p] = _psum_transpose
transpose_rules[C.all_gather_p] = _all_gather_transpose
transpose_rules[C.psum_scatter_p] = _psum_scatter_transpose
transpose_rules[C.ppermute_p] = _ppermute_transpose
transpose_rules[C.all_to_all_p] = _all_to_all_transpose


# -- vmap over some other axis: the collective applies to the stacked value ---------------

def _elementwise_vmap(prim):
    def rule(batch_size, values, dims, /, **params):
        return Batched([bind(prim, values[0], **params)], [dims[0]])
    return rule


def _shifting_vmap(prim, *axis_params):
    """Batch axis to the front; the operand's axis params move up by one."""
    def rule(batch_size, values, dims, /, **params):
        x = moveaxis(values[0], dims[0], 0)
        shifted = dict(params, **{name: params[name] + 1 for name in axis_params})
        return Batched([bind(prim, x, **shifted)], [0])
    return rule


def _axis_index_vmap(batch_size, values, dims, /, **params):
    # no operands, so never batched by an unrelated axis
    return Batched([bind(C.axis_index_p, **params)], [not_mapped])


for _prim in (C.psum_p, C.pmax_p, C.pmin_p, C.ppermute_p):
    vmap_rules[_prim] = _elementwise_vmap(_prim)
vmap_rules[C.all_gather_p] = _shifting_vmap(C.all_gather_p, "axis")
vmap_rules[C.psum_scatter_p] = _shifting_vmap(C.psum_scatter_p, "scatter_dimension")
vmap_rules[C.all_to_all_p] = _shifting_vmap(C.all_to_all_p, "split_axis", "concat_axis")
vmap_rules[C.axis_index_p] = _axis_index_vmap


# -- vmap over the named axis itself: the collective becomes array ops --------------------

def _named(prim, rewrite):
    """A `named_axis_rules` entry: if the equation names the trace's axis, run
    `rewrite(n, name, x, batch_dim, **params) -> (value, batch_dim)` one level out.

    A collective over several names (not a reduction, which handles those itself) is
    first split into collectives over one name each (`collective_split.py`), bound in
    this trace: the one over its own name comes back here, the others go on to the
    traces that bind them. A grouped one is the rewrite run on each group (`_grouped`)."""
    def rule(trace, args, params):
        names = C.axis_names_of(prim, params)
        if trace.axis_name not in names:
            return None
        # the per-member operand must fit, as if the collective were staged
        out_avals_of(prim, [aval_of(a) for a in args], params)
        if len(names) > 1 and "axis_index_groups" in params:
            with set_current_trace(trace):
                return [_grouped_over_names(prim, rewrite, names, args[0], params)]
        if prim not in C.reductions and len(names) > 1:
            with set_current_trace(trace):
                return [split_rules[prim](*args, **params)]
        x, d = trace.to_batched(args[0]) if args else (None, not_mapped)
        groups = params.get("axis_index_groups")
        with set_current_trace(trace.parent):
            if groups is None:
                value, dim = rewrite(trace.axis_size, trace.axis_name, x, d, **params)
            else:
                value, dim = _grouped(rewrite, trace.axis_size, trace.axis_name, x, d,
                                      groups, params)
        return [trace.wrap(value, dim)]
    named_axis_rules[prim] = rule


_COMBINED = "<the axes together>"     # the name of the axis _grouped_over_names makes


def _grouped_over_names(prim, rewrite, names, x, params):
    """Groups over a tuple of names mix the members of several traces' axes, so no
    one trace can rewrite them alone. Every member gathers every member's `x` (in the
    row-major order of `names`), computes every member's result of the grouped
    collective on that, and keeps its own row."""
    everyone = split_rules[C.all_gather_p](x, axis_name=names, axis=0, tiled=False,
                                           axis_size=math.prod(bound_sizes(names)))
    n = aval_of(everyone).shape[0]
    params = dict(params, axes=(_COMBINED,)) if prim in C.reductions else params
    rows, _ = _grouped(rewrite, n, _COMBINED, everyone, 0, params["axis_index_groups"],
                       params)
    me = split_rules[C.axis_index_p](axis_name=names)
    shape = aval_of(rows).shape[1:]
    mine = bind(P.dynamic_slice_p, rows, me, *[np.int32(0)] * len(shape),
                slice_sizes=(1,) + shape)
    return reshape(mine, shape)


def _grouped(rewrite, n, own, x, d, groups, params):
    """A collective over `groups` of the axis: the rows of the stacked `x` are put in
    group order, a second (unnamed) batch axis runs over the groups, and within each
    the ungrouped rewrite runs on the group's members; the rows go back in place."""
    n_groups, size = len(groups), len(groups[0])
    order = [i for group in groups for i in group]
    x = batch_at(x, d, 0, n)
    shape = aval_of(x).shape[1:]
    by_group = reshape(pick_rows(x, order), (n_groups, size) + shape)
    ungrouped = {k: v for k, v in params.items() if k != "axis_index_groups"}
    over_groups = BatchTrace(current_trace(), n_groups)
    with set_current_trace(over_groups):
        value, dim = rewrite(size, own, over_groups.wrap(by_group, 0), 0, **ungrouped)
    value, group_dim = over_groups.to_batched(value)
    value = batch_at(value, group_dim, 0, n_groups)           # (groups, *per group)
    value = batch_at(value, None if dim is not_mapped else dim + 1, 1, size)
    rows = reshape(value, (n,) + aval_of(value).shape[2:])    # in group order
    position = {member: k for k, member in enumerate(order)}
    return pick_rows(rows, [position[i] for i in range(n)]), 0


def _reduction_own(prim, reduce, when_shared):
    def rewrite(n, own, x, d, *, axes):
        y = when_shared(x, n) if d is not_mapped else bind(reduce, x, axes=(d,))
        rest = tuple(a for a in axes if a != own)     # outer traces reduce over these
        return (bind(prim, y, axes=rest) if rest else y), not_mapped
    return rewrite


def _all_gather_own(n, own, x, d, *, axis_name, axis, tiled, axis_size):
    _check_size("all_gather", axis_size, n)
    stacked = batch_at(x, d, axis, n)
    if tiled:
        shape = aval_of(stacked).shape
        stacked = reshape(stacked, shape[:axis] + (shape[axis] * shape[axis + 1],)
                          + shape[axis + 2:])
    return stacked, not_mapped


def _psum_scatter_own(n, own, x, d, *, axis_name, scatter_dimension, tiled, axis_size):
    _check_size("psum_scatter", axis_size, n)
    total = mul(x, const_like(x, n)) if d is not_mapped else reduce_sum(x, (d,))
    if tiled:
        shape = aval_of(total).shape
        s = scatter_dimension
        total = reshape(total, shape[:s] + (n, shape[s] // n) + shape[s + 1:])
    return total, scatter_dimension


def _ppermute_own(n, own, x, d, *, axis_name, perm):
    for pair in perm:
        if not all(0 <= i < n for i in pair):
            raise ValueError(f"ppermute: perm {perm} names a member outside the axis "
                             f"{axis_name!r} of size {n}")
    source_of = {destination: source for source, destination in perm}
    return pick_rows(batch_at(x, d, 0, n), [source_of.get(i) for i in range(n)]), 0


def _all_to_all_own(n, own, x, d, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    _check_size("all_to_all", axis_size, n)
    x = batch_at(x, d, 0, n)                       # (senders, *shape)
    shape = aval_of(x).shape[1:]
    s, c = split_axis, concat_axis
    if tiled:
        # split axis s into (receivers, block): block j goes to receiver j
        x = reshape(x, (n,) + shape[:s] + (n, shape[s] // n) + shape[s + 1:])
        y = moveaxis(x, 1 + s, 0)                  # (receivers, senders, *blocked)
        y = moveaxis(y, 1, 1 + c)                  # senders just before concat axis c
        out = aval_of(y).shape
        return reshape(y, out[:1 + c] + (out[1 + c] * out[2 + c],) + out[3 + c:]), 0
    y = moveaxis(x, 1 + s, 0)                      # (receivers, senders, *rest)
    return moveaxis(y, 1, 1 + c), 0


def _axis_index_own(n, own, x, d, *, axis_name):
    return bind(P.iota_p, dtype=np.dtype(np.int32), shape=(n,), dimension=0), 0


def _check_size(name, recorded, n):
    if recorded != n:
        raise BatchingError(f"{name} was traced for an axis of size {recorded}, but the "
                            f"vmap axis it names has size {n}")


_named(C.psum_p, _reduction_own(C.psum_p, P.reduce_sum_p,
                                lambda x, n: mul(x, const_like(x, n))))
_named(C.pmax_p, _reduction_own(C.pmax_p, P.reduce_max_p, lambda x, n: x))
_named(C.pmin_p, _reduction_own(C.pmin_p, P.reduce_min_p, lambda x, n: x))
_named(C.all_gather_p, _all_gather_own)
_named(C.psum_scatter_p, _psum_scatter_own)
_named(C.ppermute_p, _ppermute_own)
_named(C.all_to_all_p, _all_to_all_own)
_named(C.axis_index_p, _axis_index_own)


# -- bodies that use the named axis --------------------------------------------------------

def bodies_of(params):
    """The jaxprs among an equation's params (its bodies)."""
    for value in params.values():
        for item in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(item, ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, Jaxpr):
                yield item


@functools.lru_cache(maxsize=1024)
def jaxpr_uses_axis(jaxpr: Jaxpr, name: str) -> bool:
    """Whether a collective in `jaxpr` (or a body nested in it) names axis `name`."""
    for eqn in jaxpr.eqns:
        if eqn.primitive in C.collective_primitives:
            if name in C.axis_names_of(eqn.primitive, eqn.params):
                return True
        elif any(jaxpr_uses_axis(body, name) for body in bodies_of(eqn.params)):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def collective_names(jaxpr: Jaxpr) -> tuple:
    """The axis names of the collectives in `jaxpr` (or a body nested in it) that
    combine members' values (`axis_index` combines none), in order of appearance."""
    names: list = []
    for eqn in jaxpr.eqns:
        if eqn.primitive in C.collective_primitives and eqn.primitive is not C.axis_index_p:
            found = C.axis_names_of(eqn.primitive, eqn.params)
        else:
            found = [n for body in bodies_of(eqn.params) for n in collective_names(body)]
        names += [n for n in found if isinstance(n, str) and n not in names]
    return tuple(names)


def bodies_use_axis(params, name) -> bool:
    """Whether a body among an equation's params holds a collective over `name`."""
    return any(jaxpr_uses_axis(body, name) for body in bodies_of(params))


def _batch_bodies_naming_axis(prim):
    """The `named_axis_rules` entry of a primitive with bodies (cond, while, scan,
    remat, jit, custom_jvp/custom_vjp calls, shard_map): when a body holds a collective over the trace's axis, the primitive's
    own vmap rule runs with `axis_name=`, which it hands to `vmap_jaxpr` for each
    body. The body's batching trace then names the same axis, with the same size,
    and rewrites those collectives as above. This happens even when no operand is
    batched: `axis_index` in a body makes its results differ per member."""
    def rule(trace, args, params):
        if not bodies_use_axis(params, trace.axis_name):
            return None
        values, dims = zip(*[trace.to_batched(x) for x in args]) if args else ((), ())
        return trace.apply_rule(prim, list(values), list(dims), params,
                                axis_name=trace.axis_name)
    return rule


def refuse_per_example_collectives(bodies, axis_name, what: str):
    """The rules that run the examples one at a time (a `scan` over them, for
    bodies with prints or effects) cannot serve a collective, which needs every
    member's value at once."""
    programs = [b.jaxpr if isinstance(b, ClosedJaxpr) else b for b in bodies]
    if axis_name is not None and any(jaxpr_uses_axis(p, axis_name) for p in programs):
        raise BatchingError(
            f"vmap: {what} runs the examples one at a time, but it holds a collective "
            f"over the vmap axis {axis_name!r}, which needs every example's value at "
            f"once. Move the collective out of the loop or branch, or the print/ref "
            f"effect out of it.")


for _prim in (cond_p, while_p, scan_p, remat_p, P.jit_p, custom_jvp_call_p,
              custom_vjp_call_p, shard_map_p):
    named_axis_rules[_prim] = _batch_bodies_naming_axis(_prim)
