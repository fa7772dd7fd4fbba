"""`while` under every pass: jvp, partial evaluation, transpose (an error), vmap.

Read `scan.py` first: the carry fixpoint is the same. `fori_loop` needs no rules of its
own: with static bounds it *is* a `scan`, with traced bounds a `while`.

* jvp: the body is jvp'd over `(body consts + their tangents, carry + carry
  tangents)`; the predicate only reads primals, so `cond_jaxpr` just ignores the
  tangent carries. Forward mode works for any loop.
* partial eval: the carries that do not depend on unknowns are computed by a known
  `while` now; a staged `while` recomputes the whole loop with the unknown carries
  (its prints stripped: they already happened in the known loop). If the *predicate*
  depends on an unknown, nothing is known and the whole loop is staged.
* transpose: impossible. Reverse mode would need every iteration's values, but the
  number of iterations is only known when the loop has run, so there is no
  statically shaped place to keep them. The rule raises an error saying so and
  pointing at `scan` / `fori_loop` with static bounds / forward mode -- JAX does
  the same.
* vmap: if the predicate is unbatched, the loop stays one loop over batched carries.
  If it is batched, examples finish at different times: the loop runs while *any*
  example is still going, and each step keeps the old carry for examples that are
  done (a `select_n` per carry). Every carry becomes batched for that. A body with
  effects (a print) must not run for finished examples: then the examples are
  looped over one at a time with a `scan`, each running its own `while`.
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr
from ..ir.primitives import effects_of
from ..ir.trace import MinijaxError, bind, set_current_trace, aval_of
from .ad_util import Zero, tangent_aval, instantiate, fresh_root
from .control_flow_common import (trace_body, run_body, jvp_body, reorder, split_list,
                                  has_ref_inputs, jvp_through_discharge, custom_rules_take_refs,
                                  partial_eval_through_discharge,
                                  with_unused_inputs, strip_debug_effects,
                                  map_examples_one_at_a_time)
from .jvp import jvp_rules, JvpResult
from .partial_eval import partial_eval_rules, partial_eval_jaxpr
from .dce import dce_rules, dce_jaxpr, DceEqn
from .transpose import transpose_rules
from .vmap import vmap_rules, vmap_jaxpr, Batched, moveaxis, batch_at, not_mapped
from .collective_rules import refuse_per_example_collectives

while_p = CF.while_p


class WhileLoopReverseModeError(MinijaxError, ValueError):
    """Reverse-mode differentiation of a `while_loop` (or dynamic-bound `fori_loop`)."""


# -- jvp --------------------------------------------------------------------------------

def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # A body calling a custom function that takes a ref is jvp'd with its refs as
    # refs (the custom rules need them; `cond_refs.py` says more); any other body
    # using refs is differentiated on values, after discharge.
    if has_ref_inputs(primals) and not custom_rules_take_refs(cond_jaxpr, body_jaxpr):
        return jvp_through_discharge(while_p, primals, tangents, dict(
            cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
            body_nconsts=body_nconsts))
    cond_consts, body_consts, init = split_list(primals, [cond_nconsts, body_nconsts])
    _, body_const_t, init_t = split_list(tangents, [cond_nconsts, body_nconsts])
    const_nz = [type(t) is not Zero for t in body_const_t]
    carry_nz = [type(t) is not Zero for t in init_t]
    n_carry = len(init)
    while True:     # the carry fixpoint, as for scan
        found = jvp_body(body_jaxpr, const_nz + carry_nz, [False] * n_carry).out_nonzeros
        grown = [a or b for a, b in zip(carry_nz, found)]
        if grown == carry_nz:
            break
        carry_nz = grown
    body = jvp_body(body_jaxpr, const_nz + carry_nz, carry_nz)
    # A carry the body returns unchanged is loop-invariant, and so is its tangent: the
    # tangent goes in as a const of the loop, not as a carry. Besides being less work,
    # that keeps it out of the loop in the linear program, so reverse mode works for
    # it (as in JAX) although it cannot for the carries that really change.
    invariant = [nz and body_jaxpr.outvars[k] is body_jaxpr.invars[body_nconsts + k]
                 for k, nz in enumerate(carry_nz)]
    looped = [nz and not inv for nz, inv in zip(carry_nz, invariant)]
    n_jc, n_const_t = len(body.consts), sum(const_nz)
    # (jvp consts, consts, carry, const t., carry t.) -> (jvp consts, consts, const t.,
    # invariant carry t. | carry, looped carry t.); outputs (carry, looped carry t.).
    jc, c, cr, ct, crt = split_list(range(len(body.jaxpr.invars)),
                                    [n_jc, body_nconsts, n_carry, n_const_t])
    nz_carries = [k for k, nz in enumerate(carry_nz) if nz]
    crt_invariant = [i for i, k in zip(crt, nz_carries) if invariant[k]]
    crt_looped = [i for i, k in zip(crt, nz_carries) if not invariant[k]]
    out_looped = [n_carry + j for j, k in enumerate(nz_carries) if not invariant[k]]
    new_body = reorder(body.jaxpr, jc + c + ct + crt_invariant + cr + crt_looped,
                       list(range(n_carry)) + out_looped)
    carry_t_avals = [tangent_aval(v.aval) for v, lp in
                     zip(body_jaxpr.invars[body_nconsts:], looped) if lp]
    new_cond = with_unused_inputs(cond_jaxpr, len(cond_jaxpr.invars), carry_t_avals)
    invariant_tangents = [instantiate(t) for t, inv in zip(init_t, invariant) if inv]
    carry_tangents = [instantiate(t) for t, lp in zip(init_t, looped) if lp]
    outs = bind(while_p, *cond_consts, *body.consts, *body_consts,
                *[t for t in body_const_t if type(t) is not Zero], *invariant_tangents,
                *init, *carry_tangents,
                cond_jaxpr=new_cond, body_jaxpr=new_body, cond_nconsts=cond_nconsts,
                body_nconsts=n_jc + body_nconsts + n_const_t + len(invariant_tangents))
    carry_out, carry_t_out = outs[:n_carry], iter(outs[n_carry:])
    tangents_out = [next(carry_t_out) if lp else init_t[k] if invariant[k]
                    else Zero(tangent_aval(aval_of(p)))
                    for k, (p, lp) in enumerate(zip(carry_out, looped))]
    return JvpResult(carry_out, tangents_out)


jvp_rules[while_p] = _while_jvp


# -- partial evaluation -------------------------------------------------------------------

def _while_partial_eval(trace, args, params):
    if has_ref_inputs(args):
        return partial_eval_through_discharge(trace, while_p, args, params)
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cond_nconsts, body_nconsts = params["cond_nconsts"], params["body_nconsts"]
    unknowns = [trace.is_unknown(x) for x in args]
    cond_uk, const_uk, carry_uk = split_list(unknowns, [cond_nconsts, body_nconsts])
    with set_current_trace(fresh_root()):
        while True:
            split = partial_eval_jaxpr(body_jaxpr, const_uk + carry_uk)
            grown = [a or b for a, b in zip(carry_uk, split.out_unknowns)]
            if grown == carry_uk:
                break
            carry_uk = grown
        pred_uk = partial_eval_jaxpr(cond_jaxpr, cond_uk + carry_uk).out_unknowns[0]
    if pred_uk or all(carry_uk):
        return trace.stage(while_p, args, params)
    # The known loop: only the known carries (which, by the fixpoint, need only known
    # inputs), and a predicate that reads only known carries.
    known_carry = [not u for u in carry_uk]
    with set_current_trace(fresh_root()):
        known_body = dce_jaxpr(body_jaxpr, known_carry, prune_inputs=True)
        known_cond = dce_jaxpr(cond_jaxpr, [True], prune_inputs=True)
    body_used = list(known_body.used_inputs)
    cond_used = list(known_cond.used_inputs)
    if any(used and unknown for used, unknown in zip(body_used[body_nconsts:], carry_uk)):
        # An equation with effects stays in the known body whatever it computes (DCE
        # keeps it), and it may read an unknown carry: a ref the body makes and hands to
        # a `jit` call with that carry. The known loop cannot run it, so none is split off.
        return trace.stage(while_p, args, params)
    # Keep exactly the known carries as inputs of both (a loop's carry in == out).
    body_keep = body_used[:body_nconsts] + known_carry
    cond_keep = cond_used[:cond_nconsts] + known_carry
    known_body_jaxpr = _keep_inputs(body_jaxpr, known_body.jaxpr, body_used, body_keep)
    known_cond_jaxpr = _keep_inputs(cond_jaxpr, known_cond.jaxpr, cond_used, cond_keep)
    cond_consts, body_consts, init = split_list(args, [cond_nconsts, body_nconsts])
    kept_cond_consts = [x for x, k in zip(cond_consts, cond_keep) if k]
    kept_body_consts = [x for x, k in zip(body_consts, body_keep) if k]
    if any(trace.is_unknown(x) for x in kept_cond_consts + kept_body_consts):
        return trace.stage(while_p, args, params)
    with set_current_trace(trace.parent):
        known_outs = bind(while_p, *kept_cond_consts, *kept_body_consts,
                          *[x for x, k in zip(init, known_carry) if k],
                          cond_jaxpr=known_cond_jaxpr, body_jaxpr=known_body_jaxpr,
                          cond_nconsts=len(kept_cond_consts),
                          body_nconsts=len(kept_body_consts))
    known_args = [*kept_cond_consts, *kept_body_consts,
                  *[x for x, k in zip(init, known_carry) if k]]
    trace.known_results(while_p, known_args, dict(
        cond_jaxpr=strip_debug_effects(known_cond_jaxpr),
        body_jaxpr=strip_debug_effects(known_body_jaxpr),
        cond_nconsts=len(kept_cond_consts), body_nconsts=len(kept_body_consts)),
        known_outs, [known_body_jaxpr])
    # The staged loop recomputes everything; its prints already ran in the known loop.
    staged_params = dict(params, cond_jaxpr=strip_debug_effects(cond_jaxpr),
                         body_jaxpr=strip_debug_effects(body_jaxpr))
    staged_outs = trace.stage(while_p, args, staged_params)
    known_iter = iter(known_outs)
    return [staged if u else next(known_iter) for staged, u in zip(staged_outs, carry_uk)]


def _keep_inputs(original, pruned, used, keep):
    """`pruned` (whose invars are the `used` inputs of `original`) taking exactly the
    `keep` inputs of `original` (a superset of `used`)."""
    pruned_vars = iter(pruned.invars)
    invars = []
    for var, u, k in zip(original.invars, used, keep):
        mine = next(pruned_vars) if u else None
        if k:
            invars.append(mine if mine is not None else type(var)(var.aval))
    return Jaxpr((), invars, pruned.eqns, pruned.outvars)


partial_eval_rules[while_p] = _while_partial_eval


# -- transpose: reverse mode is an error ----------------------------------------------------

def _while_transpose(cts, *args, **params):
    raise WhileLoopReverseModeError(
        "Reverse-mode differentiation (grad, vjp, jacrev) does not work for "
        "lax.while_loop, nor for lax.fori_loop with traced (non-static) bounds: the "
        "number of iterations is only known once the loop has run, so there is no "
        "fixed-size place to save each iteration's values for the backward pass. Use "
        "lax.scan, or lax.fori_loop with static Python int bounds (which becomes a "
        "scan), or differentiate in forward mode (jvp, jacfwd).")


transpose_rules[while_p] = _while_transpose


# -- vmap -------------------------------------------------------------------------------------

def _while_vmap(axis_size, values, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                body_nconsts, axis_name=None):
    cond_v, const_v, carry_v = split_list(values, [cond_nconsts, body_nconsts])
    cond_d, const_d, carry_d = split_list(dims, [cond_nconsts, body_nconsts])
    carry_b = [d is not not_mapped for d in carry_d]

    def axes(ds):
        return [None if d is not_mapped else 0 for d in ds]
    cond_axes, const_axes = axes(cond_d), axes(const_d)
    with set_current_trace(fresh_root()):
        while True:
            found = vmap_jaxpr(body_jaxpr, const_axes + [0 if b else None for b in carry_b],
                               axis_size, axis_name=axis_name).out_axes
            grown = [b or d is not None for b, d in zip(carry_b, found)]
            if grown == carry_b:
                break
            carry_b = grown
        pred_batched = vmap_jaxpr(cond_jaxpr, cond_axes + [0 if b else None for b in carry_b],
                                  axis_size, axis_name=axis_name).out_axes[0] is not None
    if pred_batched and (body_jaxpr.effects or cond_jaxpr.effects):
        refuse_per_example_collectives([cond_jaxpr, body_jaxpr], axis_name, "a while_loop "
                                       "whose predicate differs per example and whose "
                                       "body has effects")
        return _vmap_one_example_at_a_time(axis_size, values, dims, cond_jaxpr, body_jaxpr,
                                           cond_nconsts, body_nconsts)
    if pred_batched:
        carry_b = [True] * len(carry_b)     # finished examples must keep their own carry
    carry_axes = [0 if b else None for b in carry_b]
    with set_current_trace(fresh_root()):
        body = vmap_jaxpr(body_jaxpr, const_axes + carry_axes, axis_size,
                          out_axes=carry_axes, axis_name=axis_name).jaxpr
        cond = vmap_jaxpr(cond_jaxpr, cond_axes + carry_axes, axis_size,
                          out_axes=[0 if pred_batched else None], axis_name=axis_name).jaxpr
    cond_consts = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(cond_v, cond_d)]
    body_consts = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(const_v, const_d)]
    init = [batch_at(v, d, 0, axis_size) if b else v
            for v, d, b in zip(carry_v, carry_d, carry_b)]
    if pred_batched:
        cond, body = _run_while_any_lane(cond, body, len(cond_consts), len(body_consts))
        outs = bind(while_p, *cond_consts, *cond_consts, *body_consts, *init,
                    cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=len(cond_consts),
                    body_nconsts=len(cond_consts) + len(body_consts))
    else:
        outs = bind(while_p, *cond_consts, *body_consts, *init, cond_jaxpr=cond,
                    body_jaxpr=body, cond_nconsts=len(cond_consts),
                    body_nconsts=len(body_consts))
    return Batched(list(outs), carry_axes)


def _run_while_any_lane(batched_cond, batched_body, n_cond_consts, n_body_consts):
    """From a batched predicate `(cond consts, carry) -> bool[B]` and body, the loop
    `while any(pred): carry = select(pred, body(carry), carry)`. The new body takes the
    cond consts too, to know which examples are still running."""
    carry_avals = batched_body.in_avals[n_body_consts:]
    cond_const_avals = batched_cond.in_avals[:n_cond_consts]
    body_const_avals = batched_body.in_avals[:n_body_consts]

    def any_running(*args):
        pred = run_body(batched_cond, args)[0]
        return [P.reduce_or_p.bind(pred, axes=(0,))]

    def step(*args):
        cond_consts, body_consts, carry = split_list(args, [n_cond_consts, n_body_consts])
        pred = run_body(batched_cond, cond_consts + carry)[0]
        new = run_body(batched_body, body_consts + carry)
        outs = []
        for old, value in zip(carry, new):
            shape = aval_of(old).shape
            which = pred if len(shape) == 1 else P.broadcast_in_dim_p.bind(
                pred, shape=shape, broadcast_dimensions=(0,))
            outs.append(P.select_n_p.bind(which, old, value))
        return outs
    cond = trace_body(any_running, cond_const_avals + carry_avals)
    body = trace_body(step, cond_const_avals + body_const_avals + carry_avals)
    assert not cond.consts and not body.consts
    return cond.jaxpr, body.jaxpr


def _vmap_one_example_at_a_time(axis_size, values, dims, cond_jaxpr, body_jaxpr,
                                cond_nconsts, body_nconsts):
    """A `scan` over the examples, each running its own `while`: for effectful bodies,
    whose effects must happen only for the iterations each example really runs."""
    outs = map_examples_one_at_a_time(
        lambda *inputs: bind(while_p, *inputs, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                             cond_nconsts=cond_nconsts, body_nconsts=body_nconsts),
        axis_size, values, dims, not_mapped, moveaxis)
    return Batched(outs, [0] * len(outs))


vmap_rules[while_p] = _while_vmap


# -- DCE ----------------------------------------------------------------------------------------

def _while_dce(eqn, used_outputs, dead_refs=()):
    """A carry is needed if it is used after the loop, read by the predicate, or needed
    by the body to compute a needed carry (the carry fixpoint once more)."""
    p = eqn.params
    cond_jaxpr, body_jaxpr = p["cond_jaxpr"], p["body_jaxpr"]
    n_cc, n_bc = p["cond_nconsts"], p["body_nconsts"]
    cond_pruned = dce_jaxpr(cond_jaxpr, [True])
    used = [a or b for a, b in zip(used_outputs, cond_pruned.used_inputs[n_cc:])]
    while True:
        body_pruned = dce_jaxpr(body_jaxpr, used)
        grown = [a or b for a, b in zip(used, body_pruned.used_inputs[n_bc:])]
        if grown == used:
            break
        used = grown
    if all(used) and all(body_pruned.used_inputs[:n_bc]) and all(cond_pruned.used_inputs[:n_cc]):
        return DceEqn(eqn, (True,) * len(eqn.inputs))
    cond_used = list(cond_pruned.used_inputs[:n_cc]) + used
    body_used = list(body_pruned.used_inputs[:n_bc]) + used
    new_cond = Jaxpr((), [v for v, u in zip(cond_jaxpr.invars, cond_used) if u],
                     cond_pruned.jaxpr.eqns, cond_pruned.jaxpr.outvars)
    new_body = Jaxpr((), [v for v, u in zip(body_jaxpr.invars, body_used) if u],
                     body_pruned.jaxpr.eqns, body_pruned.jaxpr.outvars)
    used_inputs = cond_used[:n_cc] + body_used[:n_bc] + used
    inputs = [x for x, u in zip(eqn.inputs, used_inputs) if u]
    params = dict(p, cond_jaxpr=new_cond, body_jaxpr=new_body,
                  cond_nconsts=sum(cond_used[:n_cc]), body_nconsts=sum(body_used[:n_bc]))
    new_eqn = Eqn(while_p, inputs, params, [v for v, u in zip(eqn.outputs, used) if u],
                  effects_of(while_p, [x.aval for x in inputs], params), eqn.source_info)
    return DceEqn(new_eqn, tuple(used_inputs))


dce_rules[while_p] = _while_dce
