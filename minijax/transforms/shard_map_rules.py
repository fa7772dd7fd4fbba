"""`shard_map` under jvp, transpose and vmap: transform the per-shard body.

Like `jit` (`calls.py`), a `shard_map` re-binds itself on its transformed body; what
is its own is that every input and output carries a spec, so each rule also says the
spec of every input and output it adds:

* jvp: a tangent is split like its primal; the constants the JVP of the body needs
  come in replicated (spec `()`).
* transpose: the cotangent of an output is split like the output, that of an input
  like the input. Two corrections make the per-device transpose the transpose of the
  *global* function, as JAX's shard_map does when it does not track which values are
  the same on every device (`check_vma=False`): an output replicated along some mesh
  axes is read from one copy, yet the per-device transpose hands the cotangent to
  every copy, so it is divided by the number of copies; and an input replicated along
  some axes is used by every copy, so the per-device cotangents are summed over those
  axes (a `psum`). With psum's transpose being psum (`collective_rules.py`) this
  gives the derivative of the global function.
* vmap: the batch axis becomes a leading axis of every block that no mesh axis splits
  (spec entry `None`); the body is batched with `vmap_jaxpr`. A body with a
  collective over the vmap's own axis name is batched under that name and size
  (`collective_rules.py`), so the collective sees every member, as in JAX.

* partial eval: the body is split into a known and a staged shard_map. The residuals
  between them may differ from device to device, so each leaves the known shard_map
  with a new leading axis of size 1 per device, split over every mesh axis (global
  shape `(devices, *block)`), and the staged one takes its block back off.

Only the manual mesh axes count in all this: along the `auto_axes` of a shard_map
over part of its mesh the body sees whole arrays, and XLA lays them out.

* discharge: a ref passed in becomes its block's value passed in, and the final
  value of each ref the body writes comes back as an extra output split like the
  ref, which is written back into it (as for `jit`, `calls.py`).

DCE takes the generic path: a shard_map whose outputs are all unused, and that
writes no ref, is dropped.
"""
from __future__ import annotations

import math

from ..ir.shard_map_primitive import (shard_map_p, sharding_constraint_p, unmentioned_axes,
                                      manual_axes)
from ..ir.collective_primitives import psum_p
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir import primitives as P
from ..ir.trace import bind, aval_of, set_current_trace, current_trace
from ..ir.types import RefType
from .ad_util import (Zero, tangent_aval, is_differentiable, zeros, eval_jaxpr, div,
                      const_like, reshape)
from .batching import Batched, vmap_rules, moveaxis
from .partial_eval import partial_eval_rules, partial_eval_jaxpr_for_call
from .jvp import jvp_rules, jvp_jaxpr_for_call, jvp_flat, JvpResult
from .transpose import transpose_rules, transpose_jaxpr_for_call, is_linear
from .vmap import vmap_jaxpr
from .discharge import (discharge_rules, discharge_jaxpr, thread_refs_through, write_back,
                        mentions_refs, RefSlot, _copy_eqn)


def _refuse_refs(jaxpr, what):
    if any(isinstance(v.aval, RefType) for v in list(jaxpr.invars) + list(jaxpr.outvars)):
        raise TypeError(f"shard_map: {what} of a shard_map whose inputs or outputs are "
                        f"refs is not supported; keep refs inside the mapped function")


def _jvp(primals, tangents, *, jaxpr, in_specs, out_specs, **params):
    if any(isinstance(v.aval, RefType) for v in jaxpr.invars):
        return _jvp_discharged(primals, tangents, jaxpr=jaxpr, in_specs=in_specs,
                               out_specs=out_specs, **params)
    _refuse_refs(jaxpr, "the derivative")
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp = jvp_jaxpr_for_call(jaxpr, nonzeros)
    tangent_specs = tuple(s for s, nz in zip(in_specs, nonzeros) if nz)
    differentiable_specs = [s for v, s in zip(jaxpr.outvars, out_specs)
                            if is_differentiable(v.aval)]
    out_tangent_specs = tuple(s for s, nz in zip(differentiable_specs, jvp.out_nonzeros)
                              if nz)
    outs = bind(shard_map_p, *jvp.consts, *primals,
                *[t for t in tangents if type(t) is not Zero], jaxpr=jvp.jaxpr,
                in_specs=((),) * len(jvp.consts) + tuple(in_specs) + tangent_specs,
                out_specs=tuple(out_specs) + out_tangent_specs, **params)
    n_out = len(jaxpr.outvars)
    nonzero_tangents = iter(outs[n_out:])
    has_tangent = iter(jvp.out_nonzeros)
    tangents_out = [next(nonzero_tangents) if is_differentiable(v.aval) and next(has_tangent)
                    else Zero(tangent_aval(v.aval)) for v in jaxpr.outvars]
    return JvpResult(outs[:n_out], tangents_out)


def _jvp_discharged(primals, tangents, *, jaxpr, in_specs, out_specs, **params):
    """The jvp of a shard_map that takes refs: of the same shard_map discharged (the
    refs' contents read before it, passed in, and their final values, split like the
    refs, written back after it). The body only touches its own refs' blocks, so
    reading all before and writing all after is the same program; the reads and
    writes are then differentiated by the ref rules (`ref_rules.py`), tangent refs
    and all."""
    result = discharge_jaxpr(jaxpr)
    n_outs = result.info.num_outputs
    finals_specs = tuple(in_specs[i] for i in result.info.written)

    def discharged(*args):
        values = [bind(P.get_p, x) if isinstance(v.aval, RefType) else x
                  for x, v in zip(args, jaxpr.invars)]
        outs = bind(shard_map_p, *values, jaxpr=result.jaxpr, in_specs=in_specs,
                    out_specs=tuple(out_specs) + finals_specs, **params)
        for position, final in zip(result.info.written, outs[n_outs:]):
            bind(P.swap_p, args[position], final)
        return list(outs[:n_outs])
    return jvp_flat(discharged, primals, tangents, current_trace())


def _transpose(cts, *args, jaxpr, in_specs, out_specs, **params):
    _refuse_refs(jaxpr, "the transpose")
    linear = tuple(is_linear(x) for x in args)
    body, consts = transpose_jaxpr_for_call(jaxpr, linear)
    # copies along an auto axis are XLA's business: only manual axes count
    mesh_axes = manual_axes(params["mesh_axes"], params.get("auto_axes", ()))
    sizes = dict(mesh_axes)
    cts = [zeros(ct.aval) if type(ct) is Zero else ct for ct in cts]
    # an output replicated n times is read once: each copy gets 1/n of its cotangent
    scaled = []
    for ct, spec in zip(cts, out_specs):
        copies = math.prod(sizes[a] for a in unmentioned_axes(spec, mesh_axes))
        scaled.append(ct if copies == 1 else div(ct, const_like(ct, copies)))
    linear_specs = [s for s, lin in zip(in_specs, linear) if lin]
    summed = _sum_over_replicas(body, [unmentioned_axes(s, mesh_axes) for s in linear_specs])
    nonlinear = [x for x in args if not is_linear(x)]
    nonlinear_specs = tuple(s for s, lin in zip(in_specs, linear) if not lin)
    outs = iter(bind(shard_map_p, *consts, *nonlinear, *scaled, jaxpr=summed,
                     in_specs=((),) * len(consts) + nonlinear_specs + tuple(out_specs),
                     out_specs=tuple(linear_specs), **params))
    return [next(outs) if lin else None for lin in linear]


def _sum_over_replicas(body, axes_per_output):
    """`body` followed by a psum of each output over the axes it is replicated on."""
    if not any(axes_per_output):
        return body

    def summed(*args):
        outs = eval_jaxpr(body, [], list(args))
        return [bind(psum_p, o, axes=axes) if axes else o
                for o, axes in zip(outs, axes_per_output)]
    closed = trace_to_jaxpr(summed, [v.aval for v in body.invars])
    if closed.consts:
        raise AssertionError("summing a transposed shard_map body made constants")
    return convert_constvars_to_invars(closed.jaxpr)


def _vmap(batch_size, values, dims, /, *, jaxpr, in_specs, out_specs, axis_name=None,
          **params):
    for x, d in zip(values, dims):
        # a ref's batch axis cannot be moved; the trace stacks refs' rows at axis 0
        if isinstance(aval_of(x), RefType) and d not in (None, 0):
            raise TypeError("shard_map: vmap of a ref batched along an axis other than "
                            "the first is not supported")
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(values, dims)]
    body_axes = [None if d is None else 0 for d in dims]
    batched = vmap_jaxpr(jaxpr, body_axes, batch_size, out_axes=[0] * len(jaxpr.outvars),
                         axis_name=axis_name)
    specs = tuple(s if d is None else (None,) + tuple(s) for s, d in zip(in_specs, dims))
    o_specs = tuple((None,) + tuple(s) for s in out_specs)
    outs = bind(shard_map_p, *moved, jaxpr=batched.jaxpr, in_specs=specs,
                out_specs=o_specs, **params)
    return Batched(list(outs), [0] * len(outs))


def _discharge(b, eqn, inputs):
    params = eqn.params
    if not mentions_refs(params["jaxpr"]) and not any(isinstance(x, RefSlot)
                                                      for x in inputs):
        return _copy_eqn(b, eqn, inputs)
    result, args = thread_refs_through(b, inputs, params["jaxpr"])
    finals_specs = tuple(params["in_specs"][i] for i in result.info.written)
    outs = b.emit_eqn(shard_map_p, args, dict(
        params, jaxpr=result.jaxpr, out_specs=tuple(params["out_specs"]) + finals_specs))
    return write_back(inputs, result, outs)


discharge_rules[shard_map_p] = _discharge
jvp_rules[shard_map_p] = _jvp
transpose_rules[shard_map_p] = _transpose
vmap_rules[shard_map_p] = _vmap


def _partial_eval(trace, args, params):
    jaxpr = params["jaxpr"]
    mesh_axes = manual_axes(params["mesh_axes"], params.get("auto_axes", ()))
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    _refuse_refs(jaxpr, "partial evaluation")
    unknowns = tuple(trace.is_unknown(x) for x in args)
    split = partial_eval_jaxpr_for_call(jaxpr, unknowns, trace.policy)
    if any(split.known_refs_written):
        raise TypeError("shard_map: refs passed into a shard_map are not supported")
    known = split.known_jaxpr
    n_known_outs = len(split.out_unknowns) - sum(split.out_unknowns)
    every_axis = (tuple(name for name, _ in mesh_axes),)
    known_body, residual_avals = _residuals_out(known.jaxpr, n_known_outs)
    known_inputs = [*known.consts, *[x for x, u in zip(args, unknowns) if not u]]
    known_specs = ((),) * len(known.consts) + tuple(
        s for s, u in zip(in_specs, unknowns) if not u)
    known_out_specs = tuple(s for s, u in zip(out_specs, split.out_unknowns) if not u)
    with_trace_parent = dict(params, jaxpr=known_body, in_specs=known_specs,
                             out_specs=known_out_specs + (every_axis,) * len(residual_avals))
    with set_current_trace(trace.parent):
        known_outs = bind(shard_map_p, *known_inputs, **with_trace_parent)
    residuals = known_outs[n_known_outs:]
    staged_body = _residuals_in(split.staged_jaxpr.jaxpr, residual_avals)
    staged_specs = (every_axis,) * len(residuals) + tuple(
        s for s, u in zip(in_specs, unknowns) if u)
    staged_out_specs = tuple(s for s, u in zip(out_specs, split.out_unknowns) if u)
    staged_outs = trace.stage(shard_map_p, list(residuals) + [x for x, u in zip(args, unknowns)
                                                              if u],
                              dict(params, jaxpr=staged_body, in_specs=staged_specs,
                                   out_specs=staged_out_specs))
    known_iter, staged_iter = iter(known_outs[:n_known_outs]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in split.out_unknowns]


def _residuals_out(jaxpr, n_outputs):
    """The known body, constvars as leading inputs, each residual given a leading 1."""
    body = convert_constvars_to_invars(jaxpr)
    residual_avals = [v.aval for v in body.outvars[n_outputs:]]

    def known(*args):
        outs = eval_jaxpr(body, [], list(args))
        return outs[:n_outputs] + [reshape(r, (1,) + aval_of(r).shape)
                                   for r in outs[n_outputs:]]
    return _traced(known, [v.aval for v in body.invars]), residual_avals


def _residuals_in(jaxpr, residual_avals):
    n = len(residual_avals)

    def staged(*args):
        residuals = [reshape(r, a.shape) for r, a in zip(args[:n], residual_avals)]
        return eval_jaxpr(jaxpr, [], residuals + list(args[n:]))
    in_avals = [a.update(shape=(1,) + a.shape) for a in residual_avals] + [
        v.aval for v in jaxpr.invars[n:]]
    return _traced(staged, in_avals)


def _traced(fun, in_avals):
    closed = trace_to_jaxpr(fun, in_avals)
    if closed.consts:
        raise AssertionError("rewriting a shard_map body made constants")
    return convert_constvars_to_invars(closed.jaxpr)


partial_eval_rules[shard_map_p] = _partial_eval


# -- sharding_constraint: the identity, as far as values go ---------------------------------
# Its tangent and cotangent are constrained the same way (as JAX does), and under vmap
# the batch axis is left unsplit.

def _constraint_jvp(primals, tangents, **params):
    out = bind(sharding_constraint_p, primals[0], **params)
    if type(tangents[0]) is Zero:
        return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
    return JvpResult([out], [bind(sharding_constraint_p, tangents[0], **params)])


def _constraint_transpose(cts, x, **params):
    return [bind(sharding_constraint_p, cts[0], **params)]


def _constraint_vmap(batch_size, values, dims, /, *, spec, **params):
    (x,), (d,) = values, dims
    spec = tuple(spec) + (None,) * (aval_of(x).ndim - 1 - len(spec))
    return Batched([bind(sharding_constraint_p, x, spec=spec[:d] + (None,) + spec[d:],
                         **params)], [d])


jvp_rules[sharding_constraint_p] = _constraint_jvp
transpose_rules[sharding_constraint_p] = _constraint_transpose
vmap_rules[sharding_constraint_p] = _constraint_vmap
