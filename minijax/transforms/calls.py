"""The `jit` primitive under every autodiff pass: it stays one staged call.

Read `jvp.py`, `partial_eval.py` and `transpose.py` first. A `jit` equation carries
its body as a jaxpr (no constvars). Each pass transforms the *body* with the pass's
own jaxpr -> jaxpr function and binds a new `jit` of the result, so that
`grad(jit(f))` is a `jit` of the forward pass and a `jit` of the backward pass
rather than `f` inlined:

* jvp: `jit(jvp_jaxpr(body))` of the primals and the non-zero tangents;
* partial eval: `partial_eval_jaxpr(body)` gives a known body, bound as a `jit` in
  the parent trace, and a staged body, bound as a `jit` in the staged jaxpr, with
  the residuals flowing from one to the other;
* transpose: `jit(transpose_jaxpr(body))` of the non-linear inputs and cotangents;
* dce: the body is pruned to the outputs that are used.

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
  call, which reads and writes it in place (`transpose_jaxpr`);
* dce: may prune a call with effects too -- the body's dce keeps every effectful
  equation, so the writes stay.

The transformed bodies are cached by (body, which inputs are linear/unknown/...),
so repeated calls of a jitted function under `grad` trace each pass once.
"""
from __future__ import annotations

import functools

from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr
from ..ir.primitives import effects_of
from ..ir.trace import bind, set_current_trace
from .ad_util import Zero, tangent_aval
from .dce import dce_rules, dce_jaxpr, DceEqn, effect_preserving_dce
from .jvp import jvp_rules, jvp_jaxpr_for_call, JvpResult
from .partial_eval import partial_eval_rules, partial_eval_jaxpr_for_call
from .ref_rules import stage_known_ref
from .transpose import transpose_rules, transpose_jaxpr_for_call, is_linear, UndefinedRef


def _jit_jvp(primals, tangents, *, jaxpr, name):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp = jvp_jaxpr_for_call(jaxpr, nonzeros)
    outs = bind(P.jit_p, *jvp.consts, *primals, *[t for t in tangents if type(t) is not Zero],
                jaxpr=jvp.jaxpr, name=name)
    n_out = len(jaxpr.outvars)
    nonzero_tangents = iter(outs[n_out:])
    differentiable = iter(jvp.out_nonzeros)
    tangents_out = []
    for var in jaxpr.outvars:
        has_tangent = tangent_aval(var.aval) is var.aval and next(differentiable)
        tangents_out.append(next(nonzero_tangents) if has_tangent
                            else Zero(tangent_aval(var.aval)))
    return JvpResult(outs[:n_out], tangents_out)


jvp_rules[P.jit_p] = _jit_jvp


def _jit_partial_eval(trace, args, params):
    jaxpr, name = params["jaxpr"], params["name"]
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
    with set_current_trace(trace.parent):
        known_outs = bind(P.jit_p, *known_inputs, jaxpr=body, name=name)
    computed = iter(known_outs[n_known:])
    residuals = [known_inputs[k] if k is not None else next(computed) for k in forwarded]
    staged_outs = trace.stage(P.jit_p, residuals + [x for x, u in zip(args, unknowns) if u],
                              dict(jaxpr=split.staged_jaxpr.jaxpr, name=name))
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


partial_eval_rules[P.jit_p] = _jit_partial_eval


def _jit_transpose(cts, *args, jaxpr, name):
    linear = tuple(is_linear(x) for x in args)
    body, consts = transpose_jaxpr_for_call(jaxpr, linear)
    cts = [ct if type(ct) is not Zero else _zeros_like(ct) for ct in cts]
    # A tangent ref passed in has its cotangent ref passed in too, written in place.
    ct_refs = [x.ct_ref for x in args if type(x) is UndefinedRef]
    outs = iter(bind(P.jit_p, *consts, *[x for x in args if not is_linear(x)], *ct_refs,
                     *cts, jaxpr=body, name=name))
    return [next(outs) if lin and type(x) is not UndefinedRef else None
            for x, lin in zip(args, linear)]


def _zeros_like(zero: Zero):
    from .ad_util import zeros
    return zeros(zero.aval)


transpose_rules[P.jit_p] = _jit_transpose


def _jit_dce(eqn: Eqn, used_outputs) -> DceEqn:
    jaxpr = eqn.params["jaxpr"]
    if all(used_outputs) and _dce_fixed_point(jaxpr):
        return DceEqn(eqn, (True,) * len(eqn.inputs))
    pruned = _dce_call_body(jaxpr, tuple(used_outputs))
    if not pruned.jaxpr.outvars and not pruned.jaxpr.effects:
        return DceEqn(None, (False,) * len(eqn.inputs))
    inputs = [x for x, u in zip(eqn.inputs, pruned.used_inputs) if u]
    outputs = [v for v, u in zip(eqn.outputs, used_outputs) if u]
    params = dict(eqn.params, jaxpr=pruned.jaxpr)
    new_eqn = Eqn(P.jit_p, inputs, params, outputs,
                  effects_of(P.jit_p, [x.aval for x in inputs], params), eqn.source_info)
    return DceEqn(new_eqn, pruned.used_inputs)


@functools.lru_cache(maxsize=1024)
def _dce_call_body(jaxpr: Jaxpr, used_outputs: tuple):
    return dce_jaxpr(jaxpr, list(used_outputs), prune_inputs=True)


@functools.lru_cache(maxsize=1024)
def _dce_fixed_point(jaxpr: Jaxpr) -> bool:
    """Whether the body has nothing to remove when all its outputs are used."""
    pruned = _dce_call_body(jaxpr, (True,) * len(jaxpr.outvars))
    return (len(pruned.jaxpr.eqns) == len(jaxpr.eqns) and all(pruned.used_inputs))


dce_rules[P.jit_p] = _jit_dce
effect_preserving_dce.add(P.jit_p)   # a body's writes to refs passed in stay
