"""Call primitives: a primitive that carries a body and re-binds itself with it transformed.

Read `jvp.py`, `partial_eval.py` and `transpose.py` first. `jit` and `remat` each
carry their body as a jaxpr without constvars (param `jaxpr`). Under each pass the
rule transforms the *body* with the pass's own jaxpr -> jaxpr function and binds the
*same* primitive, other params unchanged, on the result -- so that `grad(jit(f))` is
a `jit` of the forward pass and a `jit` of the backward pass rather than `f` inlined:

* jvp: `prim(jvp_jaxpr(body))` of the primals and the non-zero tangents;
* transpose: `prim(transpose_jaxpr(body))` of the non-linear inputs and cotangents;
* vmap: `prim(vmap_jaxpr(body))` of the batched values;
* dce: the body is pruned to the outputs that are used -- and may be pruned although
  the call has effects: the body's own DCE keeps every effectful equation;
* discharge: the refs the body uses are threaded through it as values.

These rules are written once, here, for any call primitive (`call_rules`). What a
call primitive does differently it says itself: `jit`'s partial eval (below) binds
the known body as a `jit` and forwards inputs that are residuals; `remat`'s
(`remat.py`) applies its policy, inlines the known part and rewrites away refs
from outside, and its lowering puts an optimisation barrier in front of the body.

Refs passed into the call (as arguments, or closed over: the call's leading inputs)
follow the rules of `ref_rules.py` through the body:

* jvp: a ref with a tangent ref has it passed in beside it, as the body's tangent
  input; the jvp'd body reads and writes both. A ref without one (from outside the
  differentiated function) gets none, and a differentiated write to it in the body
  is refused while the body is transformed, before anything runs;
* partial eval: the known call performs the known refs' effects, once, in program
  order; the staged call works on the unknown (tangent) refs. A known ref into which
  the body writes an unknown value (a tangent ref that started as zeros) is made
  unknown *before* the call (`stage_known_ref`) and the split redone, so that the
  body's writes and the caller's later reads meet in one staged ref;
* transpose: a linear (tangent) ref's cotangent ref is passed into the transposed
  call, which reads and writes it in place (`transpose_jaxpr`).

The transformed bodies are cached by (body, which inputs are linear/unknown/...),
so repeated calls of a jitted function under `grad` trace each pass once.
"""
from __future__ import annotations

import functools

from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr
from ..ir.primitives import effects_of
from ..ir.trace import aval_of, bind, set_current_trace
from ..ir.types import RefType
from .ad_util import Zero, tangent_aval, is_differentiable, zeros
from .dce import dce_rules, dce_jaxpr, DceEqn
from .discharge import (discharge_rules, mentions_refs, thread_refs_through, write_back,
                        RefSlot, _copy_eqn)
from .jvp import jvp_rules, jvp_jaxpr_for_call, JvpResult
from .partial_eval import partial_eval_rules, partial_eval_jaxpr_for_call
from .ref_rules import stage_known_ref
from .transpose import transpose_rules, transpose_jaxpr_for_call, is_linear, UndefinedRef
from .vmap import vmap_rules, vmap_jaxpr, Batched
from .batching import named_axes_around


# -- the rules every call primitive shares ----------------------------------------------

def call_jvp(prim, primals, tangents, **params):
    jaxpr = params["jaxpr"]
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp = jvp_jaxpr_for_call(jaxpr, nonzeros)
    # `jvp.jaxpr` takes its constants as leading inputs (a call body has no constvars).
    outs = bind(prim, *jvp.consts, *primals, *[t for t in tangents if type(t) is not Zero],
                **dict(params, jaxpr=jvp.jaxpr))
    n_out = len(jaxpr.outvars)
    nonzero_tangents = iter(outs[n_out:])
    has_tangent = iter(jvp.out_nonzeros)    # one per differentiable output
    tangents_out = [next(nonzero_tangents) if is_differentiable(v.aval) and next(has_tangent)
                    else Zero(v.aval) if isinstance(v.aval, RefType)
                    else Zero(tangent_aval(v.aval)) for v in jaxpr.outvars]
    return JvpResult(outs[:n_out], tangents_out)


def call_transpose(prim, cts, *args, transform_body=None, **params):
    """`transform_body`: what the primitive does to the transposed body before binding
    it (remat prunes it), with any params it changes."""
    linear = tuple(is_linear(x) for x in args)
    cts = [zeros(ct.aval) if type(ct) is Zero else ct for ct in cts]
    # The body is transposed for the cotangents' own weak types (F62).
    cts_weak = tuple(bool(getattr(aval_of(ct), "weak_type", False)) for ct in cts)
    body, consts = transpose_jaxpr_for_call(params["jaxpr"], linear, cts_weak)
    params = dict(params, jaxpr=body)
    if transform_body is not None:
        params = transform_body(params)
    # A tangent ref passed in has its cotangent ref passed in too, written in place.
    ct_refs = [x.ct_ref for x in args if type(x) is UndefinedRef]
    outs = iter(bind(prim, *consts, *[x for x in args if not is_linear(x)], *ct_refs, *cts,
                     **params))
    return [next(outs) if lin and type(x) is not UndefinedRef else None
            for x, lin in zip(args, linear)]


def call_vmap(prim, axis_size, values, dims, *, axis_name=None, **params):
    batched = _batched_call_body(params["jaxpr"], tuple(dims), axis_size, axis_name,
                                 named_axes_around())
    outs = bind(prim, *values, **dict(params, jaxpr=batched.jaxpr))
    return Batched(list(outs), list(batched.out_axes))


@functools.lru_cache(maxsize=1024)
def _batched_call_body(jaxpr: Jaxpr, dims: tuple, axis_size, axis_name, named_axes):
    """The batched body, the same object for the same call, so that an eager call
    compiles it once (`compile_jaxpr` is cached by the body). `named_axes`: the
    named axes bound around the call (name, size), which the body's collectives see
    while it is batched: a body batched under other axes is another body."""
    return vmap_jaxpr(jaxpr, list(dims), axis_size, axis_name=axis_name)


def call_dce(prim, eqn: Eqn, used_outputs, dead_refs=()) -> DceEqn:
    jaxpr = eqn.params["jaxpr"]
    if all(used_outputs) and not dead_refs and _dce_fixed_point(jaxpr):
        return DceEqn(eqn, (True,) * len(eqn.inputs))
    pruned = _dce_call_body(jaxpr, tuple(used_outputs), tuple(dead_refs))
    if not pruned.jaxpr.outvars and not pruned.jaxpr.effects:
        return DceEqn(None, (False,) * len(eqn.inputs))
    inputs = [x for x, u in zip(eqn.inputs, pruned.used_inputs) if u]
    outputs = [v for v, u in zip(eqn.outputs, used_outputs) if u]
    params = dict(eqn.params, jaxpr=pruned.jaxpr)
    new_eqn = Eqn(prim, inputs, params, outputs,
                  effects_of(prim, [x.aval for x in inputs], params), eqn.source_info)
    return DceEqn(new_eqn, pruned.used_inputs)


@functools.lru_cache(maxsize=1024)
def _dce_call_body(jaxpr: Jaxpr, used_outputs: tuple, dead_refs: tuple = ()):
    return dce_jaxpr(jaxpr, list(used_outputs), prune_inputs=True,
                     dead_refs=dead_refs or None)


@functools.lru_cache(maxsize=1024)
def _dce_fixed_point(jaxpr: Jaxpr) -> bool:
    """Whether the body has nothing to remove when all its outputs are used."""
    pruned = _dce_call_body(jaxpr, (True,) * len(jaxpr.outvars))
    return (len(pruned.jaxpr.eqns) == len(jaxpr.eqns) and all(pruned.used_inputs))


def call_discharge(prim, b, eqn, inputs):
    body = eqn.params["jaxpr"]
    if not mentions_refs(body) and not any(isinstance(x, RefSlot) for x in inputs):
        return _copy_eqn(b, eqn, inputs)
    result, args = thread_refs_through(b, inputs, body)
    outs = b.emit_eqn(prim, args, dict(eqn.params, jaxpr=result.jaxpr))
    return write_back(inputs, result, outs)


def register_call_rules(prim, *, partial_eval, jvp=None, transpose=None):
    """Give the call primitive `prim` the shared rules of every pass, and its own
    `partial_eval` rule (and, where it has its own, `jvp` and `transpose` rules)."""
    jvp_rules[prim] = jvp or functools.partial(call_jvp, prim)
    partial_eval_rules[prim] = partial_eval
    transpose_rules[prim] = transpose or functools.partial(call_transpose, prim)
    vmap_rules[prim] = functools.partial(call_vmap, prim)
    dce_rules[prim] = functools.partial(call_dce, prim)
    discharge_rules[prim] = functools.partial(call_discharge, prim)


# -- jit: what is its own ----------------------------------------------------------------


def _jit_partial_eval(trace, args, params):
    # (Both calls keep the other params: an `inline` call splits into two inline calls.)
    jaxpr = params["jaxpr"]
    unknowns = tuple(trace.is_unknown(x) for x in args)
    split = partial_eval_jaxpr_for_call(jaxpr, unknowns, trace.policy)
    while any(split.known_refs_written):
        # The body writes an unknown value into a known ref passed in (a tangent ref
        # that started as zeros): split inside, that write would go to a copy the
        # caller never sees. Make the ref unknown out here, before the call, so the
        # body's accesses to it and every later one outside go to one staged ref.
        # (Each round makes at least one more input unknown, so this ends.)
        args = [stage_known_ref(trace, x) if written else x
                for x, written in zip(args, split.known_refs_written)]
        unknowns = tuple(trace.is_unknown(x) for x in args)
        split = partial_eval_jaxpr_for_call(jaxpr, unknowns, trace.policy)
    known_body = split.known_jaxpr
    known_inputs = [*known_body.consts, *[x for x, u in zip(args, unknowns) if not u]]
    n_known = len(split.out_unknowns) - sum(split.out_unknowns)
    body, forwarded = _forwarding_inputs(_without_consts(known_body.jaxpr), n_known)
    known_params = dict(params, jaxpr=body)
    with set_current_trace(trace.parent):
        known_outs = bind(P.jit_p, *known_inputs, **known_params)
    trace.known_results(P.jit_p, known_inputs, known_params, known_outs, [body])
    computed = iter(known_outs[n_known:])
    residuals = [known_inputs[k] if k is not None else next(computed) for k in forwarded]
    staged_outs = trace.stage(P.jit_p, residuals + [x for x, u in zip(args, unknowns) if u],
                              dict(params, jaxpr=split.staged_jaxpr.jaxpr))
    known_iter, staged_iter = iter(known_outs[:n_known]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in split.out_unknowns]


@functools.lru_cache(maxsize=1024)
def _without_consts(jaxpr: Jaxpr) -> Jaxpr:
    return Jaxpr((), jaxpr.constvars + jaxpr.invars, jaxpr.eqns, jaxpr.outvars)


@functools.lru_cache(maxsize=1024)
def _forwarding_inputs(jaxpr: Jaxpr, n_outputs: int):
    """`jaxpr` (outputs, then residuals) without the residuals that are merely its
    own inputs, and for each residual the input it forwards (None if computed): the
    caller passes that input on as the residual itself, as JAX does, rather than
    have the call return a copy -- `saved_residuals` then says "from the argument"."""
    position = {id(v): k for k, v in enumerate(jaxpr.invars)}
    forwarded = tuple(position.get(id(v)) for v in jaxpr.outvars[n_outputs:])
    if all(k is None for k in forwarded):
        return jaxpr, forwarded
    kept = tuple(v for v, k in zip(jaxpr.outvars[n_outputs:], forwarded) if k is None)
    return Jaxpr((), jaxpr.invars, jaxpr.eqns, jaxpr.outvars[:n_outputs] + kept), forwarded


# (Eagerly, jit's jvp and transpose are jit calls, as JAX's are -- the transpose since
# JAX 0.12 -- so a forwarded Python or NumPy tangent comes back a jax.Array:
# `backends/eager_dispatch._small_inline_call`.)
register_call_rules(P.jit_p, partial_eval=_jit_partial_eval)
