"""Every ref rule for every pass: jvp, transpose and vmap of the ref primitives.

Read `jvp.py`, `transpose.py` and `vmap.py` first, and the ref section of
`ir/catalogue.py` (the ops `new_ref`, `empty_ref`, `get`, `swap`, `addupdate`,
`freeze`, `free_ref`; `get`/`swap`/`addupdate` take an optional static `indexer` and
trailing dynamic index inputs).

Forward mode: the tangent of a ref is a ref
-------------------------------------------
Under jvp a ref of an inexact dtype is a `JVPTracer` whose primal is the ref and whose
tangent is a *tangent ref* of the same type. `new_ref(x)` makes both (the tangent ref
starts as x's tangent, or zeros), `get` reads both, `swap`/`addupdate` write both (a
zero tangent writes zeros, so overwriting a ref with a constant forgets its
derivative). Ref creation `allocates_ref` (a fact on the primitive): even a ref made from a
constant gets a tangent ref, because a differentiated value may be written into it
later. A ref from outside the differentiated function has no tangent ref; writing a
differentiated value into it is an error (`ExternalRefWriteError`).

Under `linearize` the tangent refs live in the staged linear program: a tangent ref
is always *unknown* (staged), even when it starts as zeros, since its later contents
are tangents.

Reverse mode: get and addupdate are each other's transpose
------------------------------------------------------------
`backward_pass` gives a linear ref a cotangent *ref*, made (zeros) where the backward
sweep first meets it -- at its last use -- and shared by every use:

    forward (linear)                 backward
    v <- t[idx]                      ct[idx] += ct_v
    t[idx] += v                      ct_v <- ct[idx]
    old, t[idx] <- t[idx], v         ct_v, ct[idx] <- ct[idx], ct_old    (swap -> swap)
    t = new_ref x                    ct_x <- ct[...]
    y = freeze t                     ct[...] <- ct_y

vmap: see the second half of this file (batched refs, batched indices, promotion of
refs made inside the vmapped function).
"""
from __future__ import annotations

from ..ir import primitives as P
from ..ir.primitives import out_avals_of
from ..ir.trace import bind, aval_of, current_trace, set_current_trace, MinijaxError
from ..ir.types import is_inexact
from .ad_util import Zero, tangent_aval, instantiate, zeros, scalar
from .jvp import jvp_rules, JvpResult
from .partial_eval import PartialEvalTrace, partial_eval_rules
from .transpose import transpose_rules, is_linear


class ExternalRefWriteError(MinijaxError, TypeError):
    """A differentiated value is written into a ref whose tangent is not tracked."""


def _ref_zero(ref):
    return Zero(aval_of(ref))


# -- jvp ----------------------------------------------------------------------------------

def _tangent_ref(init_tangent, inner_aval):
    """A new tangent ref holding `init_tangent` (zeros for a symbolic Zero).

    Under linearize (the current trace is the partial evaluator) the tangent ref must
    be staged into the linear program even when it starts as zeros: later writes put
    unknown tangents into it, so reads of it can never be done on the known side."""
    trace = current_trace()
    if isinstance(trace, PartialEvalTrace) and not trace.is_unknown(init_tangent):
        init = init_tangent
        if type(init) is Zero:
            init = scalar(0, inner_aval.dtype)
            if inner_aval.shape:
                init = trace.stage(P.broadcast_in_dim_p, [init], dict(
                    shape=inner_aval.shape, broadcast_dimensions=()))[0]
        return trace.stage(P.new_ref_p, [init], {})[0]
    return bind(P.new_ref_p, instantiate(init_tangent))


def _new_ref_jvp(primals, tangents):
    x, = primals
    t, = tangents
    ref = bind(P.new_ref_p, x)
    inner = aval_of(ref).inner
    if not is_inexact(inner.dtype):
        return JvpResult([ref], [_ref_zero(ref)])
    if type(t) is not Zero and aval_of(t) != inner:
        # new_ref drops weak types: make the tangent's type match the ref's contents
        t = bind(P.convert_element_type_p, t, new_dtype=inner.dtype, weak_type=False)
    return JvpResult([ref], [_tangent_ref(t if type(t) is not Zero else Zero(inner), inner)])


def _empty_ref_jvp(primals, tangents, *, shape, dtype):
    ref = bind(P.empty_ref_p, shape=shape, dtype=dtype)
    inner = aval_of(ref).inner
    if not is_inexact(inner.dtype):
        return JvpResult([ref], [_ref_zero(ref)])
    return JvpResult([ref], [_tangent_ref(Zero(inner), inner)])


def _external_write_error(prim_name, ref):
    return ExternalRefWriteError(
        f"`{prim_name}` writes a differentiated value into a {aval_of(ref)} whose "
        f"tangent is not tracked: the ref was created outside the function being "
        f"differentiated (a closed-over or argument ref). Create the ref inside the "
        f"function, or write lax.stop_gradient(value) to store the value without its "
        f"derivative.")


def _get_jvp(primals, tangents, **params):
    ref, *dynamic = primals
    ref_tangent = tangents[0]
    out = bind(P.get_p, ref, *dynamic, **params)
    if type(ref_tangent) is Zero:
        return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
    return JvpResult([out], [bind(P.get_p, ref_tangent, *dynamic, **params)])


def _write_jvp(prim):
    def rule(primals, tangents, **params):
        ref, value, *dynamic = primals
        ref_tangent, value_tangent = tangents[0], tangents[1]
        if type(ref_tangent) is Zero and type(value_tangent) is not Zero:
            raise _external_write_error(prim.name, ref)     # before anything is written
        outs = bind(prim, ref, value, *dynamic, **params)
        outs = [outs] if prim is P.swap_p else []
        if type(ref_tangent) is Zero:
            return JvpResult(outs, [Zero(tangent_aval(aval_of(o))) for o in outs])
        if type(value_tangent) is Zero:
            if prim is P.addupdate_p:
                return JvpResult(outs, [])          # adding zero changes nothing
            value_tangent = zeros(value_tangent.aval)
        tangent_outs = bind(prim, ref_tangent, value_tangent, *dynamic, **params)
        return JvpResult(outs, [tangent_outs] if prim is P.swap_p else [])
    jvp_rules[prim] = rule


def _freeze_jvp(primals, tangents):
    ref, = primals
    ref_tangent, = tangents
    out = bind(P.freeze_p, ref)
    if type(ref_tangent) is Zero:
        return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
    return JvpResult([out], [bind(P.freeze_p, ref_tangent)])


def _free_ref_jvp(primals, tangents):
    ref, = primals
    ref_tangent, = tangents
    bind(P.free_ref_p, ref)
    if type(ref_tangent) is not Zero:
        bind(P.free_ref_p, ref_tangent)
    return JvpResult([], [])


jvp_rules[P.new_ref_p] = _new_ref_jvp
jvp_rules[P.empty_ref_p] = _empty_ref_jvp
jvp_rules[P.get_p] = _get_jvp
_write_jvp(P.swap_p)
_write_jvp(P.addupdate_p)
jvp_rules[P.freeze_p] = _freeze_jvp
jvp_rules[P.free_ref_p] = _free_ref_jvp


# -- partial evaluation -------------------------------------------------------------------

def _write_partial_eval(prim):
    """A known ref written with an unknown value (a tangent ref that started as
    zeros, in a jvp'd jaxpr being split) becomes unknown from here on: a staged ref
    starts from its current (known, saved as a residual) contents, and the trace
    redirects every later use of the known ref to it. Earlier known writes have
    already happened, so effects stay in program order."""
    def rule(trace, args, params):
        ref = args[0]
        if not trace.is_unknown(ref):
            args = [stage_known_ref(trace, ref), *args[1:]]
        return trace.stage(prim, args, params)
    partial_eval_rules[prim] = rule


def stage_known_ref(trace: PartialEvalTrace, ref):
    """A staged ref starting from the known `ref`'s current contents (saved as a
    residual), which replaces `ref` for every later use in `trace`. Also used by the
    `jit` rule (calls.py) for a known ref that the call's body writes unknowns into."""
    with set_current_trace(trace.parent):
        contents = bind(P.get_p, ref)
    staged_ref = trace.stage(P.new_ref_p, [contents], {})[0]
    trace.ref_redirects[id(ref)] = (ref, staged_ref)
    return staged_ref


_write_partial_eval(P.swap_p)
_write_partial_eval(P.addupdate_p)


# -- transpose ----------------------------------------------------------------------------

def _ct_ref(ref, prim_name):
    if not is_linear(ref):
        raise MinijaxError(f"cannot transpose `{prim_name}` of a ref that is not linear")
    return ref.ct_ref


def _new_ref_transpose(cts, x):
    ct_ref, = cts
    if not is_linear(x):
        return [None]
    if type(ct_ref) is Zero:
        return [Zero(x.aval)]
    return [bind(P.get_p, ct_ref)]


def _get_transpose(cts, ref, *dynamic, **params):
    ct, = cts
    ct_ref = _ct_ref(ref, "get")
    if type(ct) is not Zero:
        bind(P.addupdate_p, ct_ref, ct, *dynamic, **params)
    return [None] * (1 + len(dynamic))


def _addupdate_transpose(cts, ref, value, *dynamic, **params):
    ct_ref = _ct_ref(ref, "addupdate")
    ct_value = bind(P.get_p, ct_ref, *dynamic, **params) if is_linear(value) else None
    return [None, ct_value] + [None] * len(dynamic)


def _swap_transpose(cts, ref, value, *dynamic, **params):
    ct_old, = cts
    ct_ref = _ct_ref(ref, "swap")
    ct_value = bind(P.swap_p, ct_ref, instantiate(ct_old), *dynamic, **params)
    return [None, ct_value if is_linear(value) else None] + [None] * len(dynamic)


def _freeze_transpose(cts, ref):
    ct, = cts
    ct_ref = _ct_ref(ref, "freeze")
    if type(ct) is not Zero:
        bind(P.addupdate_p, ct_ref, ct)
    return [None]


transpose_rules[P.new_ref_p] = _new_ref_transpose
transpose_rules[P.empty_ref_p] = lambda cts, **params: []
transpose_rules[P.get_p] = _get_transpose
transpose_rules[P.addupdate_p] = _addupdate_transpose
transpose_rules[P.swap_p] = _swap_transpose
transpose_rules[P.freeze_p] = _freeze_transpose
transpose_rules[P.free_ref_p] = lambda cts, ref: [None]


# -- vmap ---------------------------------------------------------------------------------
#
# A batched ref is a `BatchTracer` whose value is a ref of stacked contents, the batch
# axis at `batch_dim` (a ref argument mapped on any in_axes, or a ref made inside from
# a batched value, batch axis 0). An access to it rewrites the access's indexer to
# carry the batch axis along in front:
#   * a leading `Transpose` view moves the batch axis to 0 (if it is not there);
#   * every later step gets the batch axis as its first axis: `Index` items get a
#     whole `Slice` in front, `Transpose` permutations and `Reshape` sizes are shifted;
#   * a `ds` slice whose start differs per example (`r[ds(i, 3)]`, i mapped) becomes,
#     per example, an integer array of its positions, in a step of its own that
#     keeps every other axis whole (then the rest of the index, that axis whole):
#     the next case then handles it;
#   * when some dynamic index of an `Index` step (any step, not only the last) is
#     batched (a different position per example), that step instead starts with an
#     integer-array item `iota(B)` and each batched index is stacked on axis 0:
#     NumPy's advanced indexing then picks, for example b, its own positions in its
#     own slice, and puts the batch axis first. Per-example integer-array indices work
#     the same way (`iota(B)` gets trailing size-1 axes to broadcast against them); a
#     `Transpose` step puts their axes back where one example's result has them.
# An unbatched ref read at a batched position is viewed as a batch of one
# (`Reshape((1,) + shape)`) and indexed with zeros instead of `iota(B)`.
# A ref made inside the vmapped function from unbatched values stays unbatched until a
# batched value is written into it; it is then replaced by a batched copy, and the
# trace redirects every later use of it to the copy (`trace.ref_redirects`). What the
# trace checks over a whole vmapped call (aliasing, increments of refs from outside,
# undoing a failed call) is in `vmap_refs.py`, with cond's batched-predicate rule.

import numpy as np

from ..ir.ref_indexing import RefIndexer, Index, Transpose, Reshape, Slice, DYNAMIC, \
    DynamicSlice, NewAxis, split_dynamic, indexer_shapes, plan_index
from ..ir.ref_python_index import canonical_items
from . import vmap_refs as ref_checks
from .discharge_indexing import clamp_dynamic
from .vmap import (Batched, BatchingError, vmap_rules, trace_vmap_rules,
                   moveaxis, not_mapped)


def _batched_indexer(indexer, dynamic, dynamic_dims, ref_shape, batch_dim, axis_size,
                     fake_batch=False):
    """The indexer (and dynamic inputs) that performs `indexer`'s per-example access
    on every example of a ref whose contents are stacked on `batch_dim`, so that the
    result has the batch axis first. `ref_shape` is the stacked shape (with
    `fake_batch`, the unbatched shape, viewed as a batch of one)."""
    steps = [] if indexer is None else list(indexer.steps)
    per_step = [[]] * len(steps) if indexer is None else split_dynamic(indexer, dynamic)
    per_step_dims = [[]] * len(steps) if indexer is None else split_dynamic(
        indexer, dynamic_dims)
    rank = len(ref_shape)
    one_shape = tuple(ref_shape) if fake_batch else tuple(
        n for a, n in enumerate(ref_shape) if a != batch_dim)
    new_steps, new_dynamic = [], []
    if fake_batch:
        new_steps.append(Reshape((1,) + tuple(ref_shape)))
    elif batch_dim != 0:
        new_steps.append(Transpose((batch_dim,) + tuple(a for a in range(rank)
                                                         if a != batch_dim)))
    if not steps:
        steps, per_step, per_step_dims = [Index(())], [[]], [[]]
    if any(_per_example_slices(step, dims) for step, dims in zip(steps, per_step_dims)):
        steps, per_step, per_step_dims = _split_per_example_slices(
            steps, per_step, per_step_dims, one_shape)
    one_avals = [_one_example_aval(x, d) for step in zip(per_step, per_step_dims)
                 for x, d in zip(*step)]
    # the per-example shape before each step
    shapes = indexer_shapes(one_shape, RefIndexer(tuple(steps)), one_avals)
    batch = 1 if fake_batch else axis_size     # the size of the leading axis so far
    for k, (step, dyn, dims) in enumerate(zip(steps, per_step, per_step_dims)):
        if isinstance(step, Transpose):
            new_steps.append(Transpose((0,) + tuple(p + 1 for p in step.permutation)))
        elif isinstance(step, Reshape):
            new_steps.append(Reshape((batch,) + tuple(step.sizes)))
        elif all(d is not_mapped for d in dims):
            # (an empty Index stays empty: trailing whole slices are left out, so
            # that each access keeps one canonical indexer)
            new_steps.append(Index((Slice(0, batch, 1),) + tuple(step.items)
                                   if step.items else ()))
            new_dynamic += dyn
        else:
            new_steps += _per_example_index(step, dyn, dims, shapes[k], batch,
                                            axis_size, new_dynamic)
            batch = axis_size
    if new_steps and not isinstance(new_steps[-1], Index):
        new_steps.append(Index(()))
    return RefIndexer(tuple(new_steps)), new_dynamic


def _per_example_slices(step, dims) -> bool:
    """Does the `Index` step have a `ds` slice whose start differs per example?"""
    if not isinstance(step, Index):
        return False
    dynamic_items = [item for item in step.items if item is DYNAMIC
                     or isinstance(item, DynamicSlice)]
    return any(isinstance(item, DynamicSlice) and d is not not_mapped
               for item, d in zip(dynamic_items, dims))


def _split_per_example_slices(steps, per_step, per_step_dims, one_shape):
    """`steps` (with their dynamic inputs and batch dims, per step) with each `ds`
    slice whose start differs per example spelled as an integer array: per example,
    `x[..., ds(i, n, s), ...]` is `x.at[:, ..., positions][..., 0:n, ...]`, where
    `positions` = i (wrapped and clamped as discharge clamps a start) + s * iota(n),
    an array of n positions per example. Its step keeps every other axis whole, so
    the array's axis stays in place (NumPy's rule for one advanced index)."""
    flat = [x for dyn in per_step for x in dyn]
    flat_dims = [d for dims in per_step_dims for d in dims]
    shapes = indexer_shapes(one_shape, RefIndexer(tuple(steps)), [
        _one_example_aval(x, d) for x, d in zip(flat, flat_dims)])
    new_steps, new_dyn, new_dims = [], [], []
    for k, (step, dyn, dims) in enumerate(zip(steps, per_step, per_step_dims)):
        if not _per_example_slices(step, dims):
            new_steps.append(step)
            new_dyn.append(dyn)
            new_dims.append(dims)
            continue
        shape, rest_items, rest_dyn, rest_dims = shapes[k], [], [], []
        dyn, dims, axis = iter(dyn), iter(dims), 0
        for item in step.items:
            if isinstance(item, NewAxis):
                rest_items.append(item)
                continue
            if isinstance(item, DynamicSlice) or item is DYNAMIC:
                x, d = next(dyn), next(dims)
                if isinstance(item, DynamicSlice) and d is not not_mapped:
                    wholes = tuple(Slice(0, n, 1) for n in shape[:axis])
                    new_steps.append(Index(wholes + (DYNAMIC,)))
                    new_dyn.append([_slice_positions(x, d, item, shape[axis])])
                    new_dims.append([0])
                    item = Slice(0, item.size, 1)
                    shape = shape[:axis] + (item.size,) + shape[axis + 1:]
                else:
                    rest_dyn.append(x)
                    rest_dims.append(d)
            rest_items.append(item)
            axis += 1
        rest = Index(canonical_items(rest_items, shape))
        if rest.items or k == len(steps) - 1:
            new_steps.append(rest)
            new_dyn.append(rest_dyn)
            new_dims.append(rest_dims)
    return new_steps, new_dyn, new_dims


class _Binder:
    """`bind` in the shape of discharge's builder (`emit`, `literal`), so that a vmap
    rule can reuse discharge's spelling of JAX's clamping."""
    emit = staticmethod(bind)
    literal = staticmethod(lambda value, dtype: np.dtype(dtype).type(value))


def _slice_positions(start, dim, item: DynamicSlice, n: int):
    """(B, size) positions of a `ds` slice on an axis of size `n` whose start
    differs per example (batch axis `dim` of `start`)."""
    i32 = np.dtype(np.int32)
    start = clamp_dynamic(_Binder, moveaxis(start, dim, 0), n, item.span)
    shape = (aval_of(start).shape[0], item.size)
    steps = bind(P.mul_p, bind(P.iota_p, dtype=i32, shape=shape, dimension=1),
                 np.int32(item.stride))
    return bind(P.add_p, steps, bind(P.broadcast_in_dim_p, start, shape=shape,
                                     broadcast_dimensions=(0,)))


def _one_example_aval(x, d):
    aval = aval_of(x)
    if d is not_mapped:
        return aval
    return aval.update(shape=aval.shape[:d] + aval.shape[d + 1:])


def _per_example_index(step, dyn, dims, one_shape, batch, axis_size, new_dynamic):
    """The steps for an `Index` with positions that differ per example, on a value
    whose leading axis (size `batch`: the examples, or 1 for an unbatched ref) comes
    first: an integer-array item `lanes` picks, for example b, row b (or row 0), and
    each batched index is stacked on axis 0, so NumPy's advanced indexing takes each
    example's own positions in its own row. The broadcast shape of the advanced items
    then leads the result; where the per-example result had it further in, a
    `Transpose` puts it back."""
    one_avals = [_one_example_aval(x, d) for x, d in zip(dyn, dims)]
    array_rank = max((a.ndim for a in one_avals), default=0)
    lanes = bind(P.iota_p, dtype=np.dtype(np.int32), shape=(axis_size,), dimension=0)
    if batch == 1:
        lanes = bind(P.mul_p, lanes, np.int32(0))
    new_dynamic.append(_with_rank(lanes, array_rank))
    for x, d, aval in zip(dyn, dims, one_avals):
        if d is not_mapped:
            new_dynamic.append(x)
        else:
            new_dynamic.append(_with_rank(moveaxis(x, d, 0), array_rank, aval.shape))
    steps = [Index((DYNAMIC,) + tuple(step.items))]
    # where the advanced block sits in one example's result
    layout = plan_index(one_shape, step.items, one_avals).layout
    at = next((i for i, e in enumerate(layout) if e[0] == "array"), 0)
    if at:
        rest = len(layout) - array_rank
        perm = ([0] + [1 + array_rank + i for i in range(at)]
                + [1 + i for i in range(array_rank)]
                + [1 + array_rank + i for i in range(at, rest)])
        steps.append(Transpose(tuple(perm)))
    return steps


def _with_rank(stacked, rank, one_shape=()):
    """A (B, *one_shape) index as (B, 1, ..., 1, *one_shape), of rank 1 + `rank`:
    per example, NumPy broadcasting pads the shorter index shapes on the left."""
    pad = rank - len(one_shape)
    if pad == 0:
        return stacked
    shape = (aval_of(stacked).shape[0],) + (1,) * pad + tuple(one_shape)
    return bind(P.reshape_p, stacked, new_sizes=shape, dimensions=None)


def _access(values, dims, n_leading, params, axis_size):
    """(ref, leading values, batched indexer params, dynamic inputs) of an access whose
    result or value has the batch axis first."""
    ref, ref_dim = values[0], dims[0]
    dynamic, dynamic_dims = values[n_leading:], dims[n_leading:]
    indexer = params.get("indexer")
    any_index_batched = any(d is not not_mapped for d in dynamic_dims)
    fake = ref_dim is not_mapped
    if fake and not any_index_batched:
        return ref, indexer, dynamic       # nothing about the ref access is batched
    if not fake and ref_dim == 0 and not any_index_batched:
        new_indexer = indexer              # already lines up: batch axis 0 stays first
        if indexer is not None:
            new_indexer, dynamic = _batched_indexer(indexer, dynamic, dynamic_dims,
                                                    aval_of(ref).shape, 0, axis_size)
        return ref, new_indexer, dynamic
    new_indexer, dynamic = _batched_indexer(indexer, dynamic, dynamic_dims,
                                            aval_of(ref).shape, ref_dim, axis_size, fake)
    return ref, new_indexer, dynamic


def _params(indexer):
    return {} if indexer is None else {"indexer": indexer}


def _get_vmap(axis_size, values, dims, **params):
    ref, indexer, dynamic = _access(values, dims, 1, params, axis_size)
    out = bind(P.get_p, ref, *dynamic, **_params(indexer))
    return Batched([out], [0])


def _write_value(value, dim, place_shape, axis_size):
    """The value to write, batch axis first, for a place of per-example `place_shape`."""
    if dim is not_mapped:
        value = bind(P.broadcast_in_dim_p, value, shape=(axis_size,) + tuple(place_shape),
                     broadcast_dimensions=tuple(range(1, 1 + len(place_shape))))
        return value
    return moveaxis(value, dim, 0)


def _unbatched_ref_error(prim, trace, ref, value):
    where = (f"a {aval_of(ref)} that is the same for every example (a ref from outside "
             f"the vmapped function, or mapped with in_axes=None)")
    if prim is P.addupdate_p or ref_checks.read_before(trace, ref):
        how = ("`addupdate` adds" if prim is P.addupdate_p else
               "an increment (`r[idx] += v`: a read, then a write) adds")
        return BatchingError(
            f"vmap: {how} an amount that differs per example to {where}: every example "
            f"would update the one ref. Map the ref too (a batched ref argument) to keep "
            f"one total per example, or, for one total over the batch, return the "
            f"amounts from the vmapped function and add their sum to the ref outside it.")
    return BatchingError(
        f"vmap: `{prim.name}` writes a value that differs per example into {where}. "
        f"Map the ref too (a batched ref argument), or create the ref inside the "
        f"vmapped function.")


def _write_vmap(prim):
    def rule(trace, values, dims, **params):
        axis_size = trace.axis_size
        ref, value = values[0], values[1]
        if dims[0] is not_mapped and (dims[1] is not not_mapped or any(
                d is not not_mapped for d in dims[2:])):
            if not trace.ref_ledger.made_here(ref):
                raise _unbatched_ref_error(prim, trace, ref, value)
            values = [ref_checks.promote(trace, ref)] + list(values[1:])
            dims = [0] + list(dims[1:])
        ref, indexer, dynamic = _access(values, dims, 2, params, axis_size)
        # the batched place's shape, batch axis first, from the type rule:
        place_aval = out_avals_of(P.get_p, [aval_of(ref)] + [aval_of(x) for x in dynamic],
                                  _params(indexer))[0]
        value = _write_value(value, dims[1], place_aval.shape[1:], axis_size)
        out = bind(prim, ref, value, *dynamic, **_params(indexer))
        return Batched([out] if prim is P.swap_p else [], [0] if prim is P.swap_p else [])
    trace_vmap_rules[prim] = rule


def _new_ref_vmap(axis_size, values, dims):
    x, = values
    return Batched([bind(P.new_ref_p, moveaxis(x, dims[0], 0))], [0])


def _freeze_vmap(axis_size, values, dims):
    return Batched([bind(P.freeze_p, values[0])], [dims[0]])


def _empty_ref_vmap(axis_size, values, dims, **params):
    # No operands, so nothing to batch: the ref starts unbatched, like any ref created
    # inside, and is promoted when a batched value is written into it.
    return Batched([bind(P.empty_ref_p, **params)], [not_mapped])


def _free_ref_vmap(axis_size, values, dims):
    bind(P.free_ref_p, values[0])
    return Batched([], [])


_write_vmap(P.swap_p)
_write_vmap(P.addupdate_p)
vmap_rules[P.get_p] = _get_vmap
vmap_rules[P.new_ref_p] = _new_ref_vmap
vmap_rules[P.freeze_p] = _freeze_vmap
vmap_rules[P.free_ref_p] = _free_ref_vmap
vmap_rules[P.empty_ref_p] = _empty_ref_vmap
