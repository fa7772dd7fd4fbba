"""`scan` under every pass: jvp, partial evaluation, transpose, vmap and DCE.

Read `control_flow_common.py` and `cond.py` first. A scan equation is
`scan[jaxpr, num_consts, num_carry, length, reverse] *consts, *init, *xs`, its body
`(consts, carry, x) -> (carry, y)`. Loops add one idea to the branch-wise rules of
`cond`: a **fixpoint over the carry**. Whether a carry has a tangent (jvp), is
unknown (partial eval), is batched (vmap) or is needed (DCE) can change from one
iteration to the next: a carry that starts with a zero tangent gets one if the body
mixes a differentiated value into it. The rules start from what holds for the
initial carry, transform the body, see which carry *outputs* then have the property,
add those to the inputs, and repeat until nothing changes (at most once per carry).

* jvp: `(consts, carry, x) -> (carry, y)` becomes a scan over
  `(consts + const tangents, carry + carry tangents, xs + x tangents)`.
* partial eval: the known scan runs now, and its body also emits the residuals the
  staged body needs -- *one per iteration*, stacked as extra `ys` (so grad of a scan
  of length n keeps O(n) residuals, as in JAX). What the body computes from known
  consts alone is the same every iteration: it is hoisted, computed once before the
  loop, and such loop-invariant residuals are passed to the staged scan once, as
  consts, as JAX does. An x slice passed straight through is read from the original
  `xs`. Neither is copied per iteration. Under a remat policy the body is split by
  the policy: only what it saves is stacked, and the staged scan also carries the
  known carries, recomputing them from their initial values (as JAX does).
* transpose: the staged, linear scan runs backwards: a scan in the *opposite*
  direction whose carry holds the carry cotangents plus accumulators for the
  cotangents of linear consts, and whose `xs` are the stacked residuals and the
  `ys` cotangents; its `ys` are the cotangents of the linear `xs`. A scan that
  also carries primal values (the staged scan under a policy) is split first.
* vmap: batched consts/carries on axis 0, batched `xs` on axis 1 (axis 0 is the
  one scanned over), the carry fixpoint deciding which carries must be batched.
* DCE: a carry is needed if its final value is used or if the body needs it to
  compute something needed -- another fixpoint.
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir.core import Eqn, Jaxpr, Var
from ..ir.primitives import effects_of
from ..ir.trace import bind, set_current_trace, aval_of
from ..ir.types import RefType
from .ad_util import (Zero, tangent_aval, instantiate, zeros, fresh_root, add_tangents,
                      eval_jaxpr)
from .control_flow_common import (custom_rules_take_refs, partial_eval_unrolled_scan,
                                  trace_body, jvp_body, reorder, split_list, has_ref_inputs,
                                  strip_debug_effects,
                                  jvp_through_discharge, partial_eval_through_discharge)
from .dce import dce_rules, dce_jaxpr, DceEqn
from .jvp import jvp_rules, JvpResult
from .partial_eval import partial_eval_rules, partial_eval_jaxpr
from .transpose import transpose_rules, backward_pass, UndefinedPrimal, is_linear
from .vmap import vmap_rules, vmap_jaxpr, Batched, moveaxis, batch_at, not_mapped

scan_p = CF.scan_p


def _bind_scan(consts, init, xs, jaxpr, like_params, **changes):
    params = dict(like_params, jaxpr=jaxpr, num_consts=len(consts), num_carry=len(init))
    params.update(changes)
    return bind(scan_p, *consts, *init, *xs, **params)


# -- jvp --------------------------------------------------------------------------------

def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, **params):
    # A body calling a custom function that takes a ref keeps its refs as refs (the
    # custom rules need them; `cond_refs.py` says more); any other body using refs is
    # differentiated on values, after discharge.
    if has_ref_inputs(primals) and not custom_rules_take_refs(jaxpr):
        return jvp_through_discharge(scan_p, primals, tangents, dict(
            params, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry))
    nonzeros = [type(t) is not Zero for t in tangents]
    const_nz, carry_nz, x_nz = split_list(nonzeros, [num_consts, num_carry])
    n_ys = len(jaxpr.outvars) - num_carry
    # The carry fixpoint: a carry has a tangent if it starts with one or if the body
    # gives it one from any input that has a tangent.
    while True:
        found = jvp_body(jaxpr, const_nz + carry_nz + x_nz,
                         [False] * len(jaxpr.outvars)).out_nonzeros[:num_carry]
        grown = [a or b for a, b in zip(carry_nz, found)]
        if grown == carry_nz:
            break
        carry_nz = grown
    body = jvp_body(jaxpr, const_nz + carry_nz + x_nz, carry_nz + [False] * n_ys)
    n_const_t, n_carry_t = sum(const_nz), sum(carry_nz)
    n_in = len(jaxpr.invars)
    n_jc = len(body.consts)
    # The jvp body takes (jvp consts, consts, carry, xs, const t., carry t., x t.) and
    # returns (carry, ys, carry t., y t.); scan wants (consts, carry, xs) -> (carry, ys).
    jc = list(range(n_jc))
    c, cr, x = split_list(range(n_jc, n_jc + n_in), [num_consts, num_carry])
    ct, crt, xt = split_list(range(n_jc + n_in, len(body.jaxpr.invars)), [n_const_t, n_carry_t])
    y_nz = body.out_nonzeros[num_carry:]
    n_yt = sum(y_nz)
    co, yo, crto, yto = split_list(range(len(body.jaxpr.outvars)),
                                   [num_carry, n_ys, n_carry_t])
    scan_body = reorder(body.jaxpr, jc + c + ct + cr + crt + x + xt, co + crto + yo + yto)

    const_p, init_p, xs_p = split_list(primals, [num_consts, num_carry])
    const_t, init_t, xs_t = split_list(tangents, [num_consts, num_carry])
    carry_tangents = [instantiate(t) for t, nz in zip(init_t, carry_nz) if nz]
    outs = _bind_scan(body.consts + const_p + [t for t in const_t if type(t) is not Zero],
                      init_p + carry_tangents,
                      xs_p + [t for t in xs_t if type(t) is not Zero],
                      scan_body, params)
    carry_out, carry_t_out, ys_out, ys_t_out = split_list(outs, [num_carry, n_carry_t, n_ys])
    carry_t_iter, y_t_iter = iter(carry_t_out), iter(ys_t_out)
    tangents_out = [next(carry_t_iter) if nz else Zero(tangent_aval(aval_of(p)))
                    for p, nz in zip(carry_out, carry_nz)]
    tangents_out += [next(y_t_iter) if nz else Zero(tangent_aval(aval_of(p)))
                     for p, nz in zip(ys_out, y_nz)]
    assert n_yt == len(ys_t_out)
    return JvpResult(carry_out + ys_out, tangents_out)


jvp_rules[scan_p] = _scan_jvp


# -- partial evaluation -------------------------------------------------------------------

def _scan_partial_eval(trace, args, params):
    if has_ref_inputs(args):
        if not custom_rules_take_refs(params["jaxpr"]):
            return partial_eval_through_discharge(trace, scan_p, args, params)
        if any(trace.is_unknown(x) and isinstance(aval_of(x), RefType) for x in args):
            return partial_eval_unrolled_scan(trace, args, **params)
        # Otherwise the refs are known consts: a ref residual (the ref `fwd` keeps) is
        # then an invariant residual below, passed to the staged scan as a const.
    jaxpr, num_consts, num_carry = params["jaxpr"], params["num_consts"], params["num_carry"]
    length = params["length"]
    args, jaxpr, num_consts = _hoist_loop_invariant(trace, list(args), jaxpr, num_consts)
    unknowns = [trace.is_unknown(x) for x in args]
    const_uk, carry_uk, x_uk = split_list(unknowns, [num_consts, num_carry])
    n_ys = len(jaxpr.outvars) - num_carry
    with set_current_trace(fresh_root()):
        while True:     # the carry fixpoint: unknown in, or made unknown by the body
            split = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + x_uk, trace.policy)
            grown = [a or b for a, b in zip(carry_uk, split.out_unknowns[:num_carry])]
            if grown == carry_uk:
                break
            carry_uk = grown
        # Under a remat policy the staged scan carries the known carries too and
        # recomputes them, from their initial values, with what the policy saved
        # (JAX's rule does the same): a known carry the staged body reads is then no
        # per-iteration residual -- saving it would be saving a value no policy
        # allowed -- while the body's saveable values (its dots, under
        # `dots_saveable`) are saved stacked. The body gets each known carry's new
        # value once more as an extra output, forced onto the staged side.
        recompute = trace.policy is not None and not all(carry_uk)
        known_carry = [i for i in range(num_carry) if not carry_uk[i]] if recompute else []
        split_body = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns,
                           list(jaxpr.outvars) + [jaxpr.outvars[i] for i in known_carry])
        split = partial_eval_jaxpr(
            split_body, const_uk + carry_uk + x_uk, trace.policy,
            instantiate=carry_uk + [False] * n_ys + [True] * len(known_carry),
            available=[False] * num_consts + [recompute and not u for u in carry_uk]
            + [False] * len(x_uk))
    out_uk = list(split.out_unknowns[:len(jaxpr.outvars)])
    known = split.known_jaxpr
    n_known_consts = num_consts - sum(const_uk)
    n_known_carry = num_carry - sum(carry_uk)
    n_known_out = len(out_uk) - sum(out_uk)
    n_known_carry_out = n_known_carry
    n_res = split.num_residuals

    # Residuals come in three kinds. One that does not change from one iteration to
    # the next is passed to the staged scan once, as a const ("invariant"): a known
    # const passed straight through (which includes everything hoisted above), or a
    # value the split itself made from known consts alone (a nested scan's rule
    # hoists its own invariants into this body), computed once, here. A known x
    # slice passed straight through is already stacked: the staged scan reads the
    # original xs ("forwarded"). Everything else is emitted by the known scan as an
    # extra y, one per iteration ("stacked").
    known_invars = list(known.jaxpr.invars)
    res_outvars = list(known.jaxpr.outvars[n_known_out:])
    const_side = list(known.jaxpr.constvars) + known_invars[:n_known_consts]
    x_side = known_invars[n_known_consts + n_known_carry:]
    body_invars = const_side + known_invars[n_known_consts:]
    invariant_eqns, varying = _split_loop_invariant(known.jaxpr.eqns,
                                                    body_invars[len(const_side):])
    kinds = ["forwarded" if isinstance(v, Var) and v in x_side else
             "stacked" if isinstance(v, Var) and v in varying else "invariant"
             for v in res_outvars]

    # Staged body: (residuals, unknown consts, staged carry, unknown xs), reordered to
    # (invariant residuals, unknown consts | staged carry | per-iteration residuals,
    # unknown xs), returning (staged carry, unknown ys). The staged carries are the
    # unknown ones and, under a policy, the known ones it recomputes.
    staged_carry = [u or recompute for u in carry_uk]
    staged = split.staged_jaxpr.jaxpr
    uc, ucr, ux = split_list(range(n_res, len(staged.invars)),
                             [sum(const_uk), sum(staged_carry)])
    inv_pos = [i for i in range(n_res) if kinds[i] == "invariant"]
    per_iteration_pos = [i for i in range(n_res) if kinds[i] != "invariant"]
    n_uk_carry, n_uk_out = sum(carry_uk), sum(out_uk)
    unknown_carry_out, copy_out = iter(range(n_uk_carry)), iter(range(n_uk_out, len(staged.outvars)))
    carry_out_pos = [next(unknown_carry_out) if u else next(copy_out)
                     for u, s in zip(carry_uk, staged_carry) if s]
    staged_body = reorder(staged, inv_pos + uc + ucr + per_iteration_pos + ux,
                          carry_out_pos + list(range(n_uk_carry, n_uk_out)))
    staged_body, keep = _prune_recomputed_carries(
        staged_body, len(inv_pos) + len(uc),
        [u for u, s in zip(carry_uk, staged_carry) if s], n_uk_out - n_uk_carry,
        droppable=[True] * len(inv_pos) + [False] * len(uc)
        + [not u for u, s in zip(carry_uk, staged_carry) if s]
        + [True] * len(per_iteration_pos) + [False] * len(ux))
    keep_inv, _, keep_carry, keep_per_iteration, _ = split_list(
        keep, [len(inv_pos), len(uc), len(ucr), len(per_iteration_pos)])
    used_res = set(p for p, k in zip(inv_pos, keep_inv) if k)
    used_res.update(p for p, k in zip(per_iteration_pos, keep_per_iteration) if k)
    inv_pos = [p for p in inv_pos if p in used_res]
    per_iteration_pos = [p for p in per_iteration_pos if p in used_res]
    kinds = [k if i in used_res else "unused" for i, k in enumerate(kinds)]

    const_args, carry_args, x_args = split_list(args, [num_consts, num_carry])
    known_consts = [x for x, u in zip(const_args, const_uk) if not u]
    known_init = [x for x, u in zip(carry_args, carry_uk) if not u]
    known_xs = [x for x, u in zip(x_args, x_uk) if not u]
    const_side_values = list(known.consts) + known_consts
    # The invariant residuals, computed once, here: in this trace, so that a remat
    # policy decides about each of their equations as about any known equation.
    hoisted = dce_jaxpr(Jaxpr((), const_side, invariant_eqns,
                              [v for v, k in zip(res_outvars, kinds) if k == "invariant"]))
    with set_current_trace(trace):
        invariant_values = eval_jaxpr(hoisted.jaxpr, (), const_side_values)
    # Known body: (closed consts, known consts, known carry, known xs) ->
    # (known carry, known ys, stacked residuals); what only the invariant residuals
    # needed is gone from it.
    pruned = dce_jaxpr(Jaxpr((), body_invars, known.jaxpr.eqns,
                             list(known.jaxpr.outvars[:n_known_out])
                             + [v for v, k in zip(res_outvars, kinds) if k == "stacked"]))
    # A const the known loop no longer reads (one only the staged side needs) is
    # not passed to it.
    used_const = pruned.used_inputs[:len(const_side)]
    loop_consts = [x for x, u in zip(const_side_values, used_const) if u]
    known_body = Jaxpr((), [v for v, u in zip(const_side, used_const) if u]
                       + body_invars[len(const_side):], pruned.jaxpr.eqns, pruned.jaxpr.outvars)
    known_args = loop_consts + known_init + known_xs
    with set_current_trace(trace.parent):
        known_outs = _bind_scan(loop_consts, known_init, known_xs, known_body, params)
    # Under a remat policy, a per-iteration residual that an equation the policy may
    # not save made, or a known result the policy would not save, is recomputed: the
    # backward side runs the known scan again.
    trace.known_results(scan_p, known_args, dict(
        params, jaxpr=strip_debug_effects(known_body), num_consts=len(loop_consts),
        num_carry=len(known_init)), known_outs, [known_body])
    known_carry_out, known_ys, stacked_values = split_list(
        known_outs, [n_known_carry_out, n_known_out - n_known_carry_out])
    known_carry_out = _forward_known_carries(known_carry_out, known_body, loop_consts,
                                             known_init, length)
    stacked_iter, invariant_iter = iter(stacked_values), iter(invariant_values)
    residual_values = [next(invariant_iter) if k == "invariant" else
                       known_xs[x_side.index(v)] if k == "forwarded" else
                       next(stacked_iter) if k == "stacked" else None
                       for v, k in zip(res_outvars, kinds)]

    unknown_consts = [x for x, u in zip(const_args, const_uk) if u]
    staged_init = [x for x, s, k in zip(carry_args, staged_carry, _expand(keep_carry, staged_carry))
                   if s and k]
    unknown_xs = [x for x, u in zip(x_args, x_uk) if u]
    staged_inputs = ([residual_values[i] for i in inv_pos] + unknown_consts + staged_init
                     + [residual_values[i] for i in per_iteration_pos] + unknown_xs)
    staged_outs = trace.stage(scan_p, staged_inputs, dict(
        params, jaxpr=staged_body, num_consts=len(inv_pos) + len(unknown_consts),
        num_carry=len(staged_init), length=length))
    # The staged scan's results: its carries (the unknown ones wanted here, the
    # recomputed known ones dropped), then the unknown ys.
    staged_carry_outs, staged_ys = split_list(staged_outs, [len(staged_init)])
    kept_carry_uk = [u for u, s, k in zip(carry_uk, staged_carry,
                                          _expand(keep_carry, staged_carry)) if s and k]
    staged_iter = iter([x for x, u in zip(staged_carry_outs, kept_carry_uk) if u]
                       + list(staged_ys))
    known_iter = iter(list(known_carry_out) + list(known_ys))
    return [next(staged_iter) if u else next(known_iter) for u in out_uk]


def _forward_known_carries(carry_out, body: Jaxpr, consts, init, length):
    """The known final carries, each that is an input of the loop replaced by it: the
    initial value when the loop does not run or the body passes the carry through, a
    const when the body sets the carry to it and the loop runs at least once.

    After hoisting, a carry whose new value the body computes from consts alone
    (`c = solve(k, w)` for a closed-over `w`) is set to a const. A staged equation
    that reads the final carry then reads the loop's input, which the backward pass
    may keep anyway (the staged scan's invariant residual, an argument); the loop's
    own output would be a second residual of the same value. JAX's rule saves none
    for it: its backward scan produces the final carry again (fuzz finding F73, seed
    `fz14:754`)."""
    const_vars = body.invars[:len(consts)]
    carry_vars = body.invars[len(consts):len(consts) + len(init)]
    out = list(carry_out)
    for i, v in enumerate(body.outvars[:len(carry_out)]):
        if length == 0 or v is carry_vars[i]:
            out[i] = init[i]
        elif isinstance(v, Var) and v in const_vars:
            out[i] = consts[const_vars.index(v)]
    return out


def _prune_recomputed_carries(body: Jaxpr, carry_start, carry_needed, n_ys, droppable):
    """`body` (a staged scan body) without the carries and inputs nothing needs.

    The body's outputs are its carries then `n_ys` ys, all of the ys and the carries
    flagged in `carry_needed` wanted; a carry is also needed when a needed value
    reads it (the fixpoint of scan's DCE). Returns the pruned body and which inputs
    it keeps: every input not `droppable`, and every one that is needed."""
    num_carry = len(carry_needed)
    needed = list(carry_needed)
    while True:
        pruned = dce_jaxpr(body, needed + [True] * n_ys)
        grown = [a or b for a, b in zip(
            needed, pruned.used_inputs[carry_start:carry_start + num_carry])]
        if grown == needed:
            break
        needed = grown
    keep = [u or not d for u, d in zip(pruned.used_inputs, droppable)]
    keep[carry_start:carry_start + num_carry] = needed
    return Jaxpr((), [v for v, k in zip(body.invars, keep) if k], pruned.jaxpr.eqns,
                 pruned.jaxpr.outvars), keep


partial_eval_rules[scan_p] = _scan_partial_eval


def _hoist_loop_invariant(trace, args, jaxpr, num_consts):
    """Compute, once and before the loop, what the body computes from known consts
    alone; return the scan's new inputs, body and number of consts.

    Such values (`sin(w)` for a closed-over `w`) are the same in every iteration. As
    equations of this trace they are known equations like any other: a remat policy
    decides whether each is saved or recomputed -- and a recomputation is then once,
    outside the backward loop, as in JAX. The body takes them as leading consts."""
    if jaxpr.constvars:
        return args, jaxpr, num_consts
    known_consts = [i for i in range(num_consts) if not trace.is_unknown(args[i])]
    known_const_vars = [jaxpr.invars[i] for i in known_consts]
    known_set = set(known_const_vars)
    invariant_eqns, _ = _split_loop_invariant(
        jaxpr.eqns, [v for v in jaxpr.invars if v not in known_set])
    if not invariant_eqns:
        return args, jaxpr, num_consts
    invariant_ids = {id(e) for e in invariant_eqns}
    loop_eqns = [e for e in jaxpr.eqns if id(e) not in invariant_ids]
    needed = {a for e in loop_eqns for a in e.inputs if isinstance(a, Var)}
    needed.update(v for v in jaxpr.outvars if isinstance(v, Var))
    hoisted_vars = [v for e in invariant_eqns for v in e.outputs if v in needed]
    hoisted = dce_jaxpr(Jaxpr((), known_const_vars, invariant_eqns, hoisted_vars)).jaxpr
    with set_current_trace(trace):
        values = eval_jaxpr(hoisted, (), [args[i] for i in known_consts])
    body = Jaxpr((), hoisted_vars + list(jaxpr.invars), loop_eqns, jaxpr.outvars)
    return list(values) + args, body, num_consts + len(hoisted_vars)


def _split_loop_invariant(eqns, varying_invars):
    """The equations of a loop body whose results are the same in every iteration,
    and the set of the body's variables that are not.

    A variable varies if it is a varying input (a carry, an x slice) or an output of
    an equation with a varying input or with an effect: an effect (a print, a ref
    read) must happen once per iteration, and a ref read sees the loop's writes."""
    varying = set(varying_invars)
    invariant = []
    for eqn in eqns:
        if eqn.effects or any(isinstance(a, Var) and a in varying for a in eqn.inputs):
            varying.update(eqn.outputs)
        else:
            invariant.append(eqn)
    return invariant, varying


# -- transpose ---------------------------------------------------------------------------------

def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    params = dict(jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry, length=length,
                  reverse=reverse, unroll=unroll)
    if not all(is_linear(x) for x in args[num_consts:num_consts + num_carry]):
        split_cts = _transpose_with_primal_carries(cts, args, params)
        if split_cts is not None:
            return split_cts
    const_args, carry_args, x_args = split_list(args, [num_consts, num_carry])
    const_lin = [is_linear(x) for x in const_args]
    x_lin = [is_linear(x) for x in x_args]
    # A carry of a linear scan is linear even when its initial value is a known
    # constant (a zero tangent instantiated by the jvp rule): the body is transposed
    # with every carry linear, and such a constant simply gets no cotangent.
    carry_lin = [is_linear(x) for x in carry_args]
    res_consts = [x for x, lin in zip(const_args, const_lin) if not lin]
    res_xs = [x for x, lin in zip(x_args, x_lin) if not lin]
    lin_const_avals = [x.aval for x, lin in zip(const_args, const_lin) if lin]
    # The cotangent carry has the types of the carry coming out, as in JAX: where a
    # weakly typed initial carry comes out strong, so do the cotangents.
    carry_avals = list(jaxpr.out_avals[:num_carry])
    ct_carry, ct_ys = split_list(cts, [num_carry])
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    n_rc, n_lc, n_rx = len(res_consts), len(lin_const_avals), len(res_xs)

    def transposed_step(*step_args):
        rc, acc, ctc, rx, cty = split_list(step_args, [n_rc, n_lc, num_carry, n_rx])
        rc_iter, rx_iter = iter(rc), iter(rx)
        inputs = ([UndefinedPrimal(v.aval) if lin else next(rc_iter)
                   for v, lin in zip(jaxpr.invars[:num_consts], const_lin)]
                  + [UndefinedPrimal(v.aval) for v in jaxpr.invars[num_consts:num_consts + num_carry]]
                  + [UndefinedPrimal(v.aval) if lin else next(rx_iter)
                     for v, lin in zip(jaxpr.invars[num_consts + num_carry:], x_lin)])
        cts_in = backward_pass(jaxpr, (), inputs, list(ctc) + list(cty))
        ct_consts, ct_carry_in, ct_xs = split_list(cts_in, [num_consts, num_carry])
        new_acc = [instantiate(add_tangents(a, ct)) for a, ct, lin in
                   zip(_expand(acc, const_lin), ct_consts, const_lin) if lin]
        return (new_acc + [instantiate(ct) for ct in ct_carry_in]
                + [instantiate(ct) for ct, lin in zip(ct_xs, x_lin) if lin])

    step_avals = ([aval_of(x) for x in res_consts] + lin_const_avals + carry_avals
                  + [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in res_xs] + y_avals)
    body = trace_body(transposed_step, step_avals)
    init = [zeros(a) for a in lin_const_avals] + [instantiate(ct) for ct in ct_carry]
    outs = bind(scan_p, *body.consts, *res_consts, *init, *res_xs,
                *[instantiate(ct) for ct in ct_ys], jaxpr=body.jaxpr,
                num_consts=len(body.consts) + n_rc, num_carry=n_lc + num_carry,
                length=length, reverse=not reverse, unroll=unroll)
    ct_lin_consts, ct_init, ct_lin_xs = split_list(outs, [n_lc, num_carry])
    consts_iter, xs_iter = iter(ct_lin_consts), iter(ct_lin_xs)
    return ([next(consts_iter) if lin else None for lin in const_lin]
            + [ct if lin else None for ct, lin in zip(ct_init, carry_lin)]
            + [next(xs_iter) if lin else None for lin in x_lin])


def _transpose_with_primal_carries(cts, args, params):
    """Transpose a scan that also carries primal values, or None if it does not.

    Under a remat policy the staged scan recomputes known carries beside the
    tangent ones (see the partial-eval rule), so its body is not linear in every
    carry. Such a scan is split once more, the linear inputs unknown: the primal
    part runs forward here and the linear part is transposed. A carry whose initial
    value is a known constant but that the body mixes linear values into (a zero
    tangent the jvp rule instantiated) comes out of the split unknown; when every
    carry does, there is nothing to split and None says so."""
    num_carry, num_consts = params["num_carry"], params["num_consts"]
    linear = [is_linear(x) for x in args]
    body = trace_body(lambda *xs: bind(scan_p, *xs, **params),
                      [x.aval if lin else aval_of(x) for x, lin in zip(args, linear)])
    n_closed = len(body.consts)
    with set_current_trace(fresh_root()):
        split = partial_eval_jaxpr(body.jaxpr, [False] * n_closed + linear)
    if all(split.out_unknowns[:num_carry]):
        return None
    known_args = body.consts + [x for x, lin in zip(args, linear) if not lin]
    known_outs = eval_jaxpr(split.known_jaxpr.jaxpr, split.known_jaxpr.consts, known_args)
    residuals = known_outs[len(split.out_unknowns) - sum(split.out_unknowns):]
    staged_cts = [ct for ct, u in zip(cts, split.out_unknowns) if u]
    cts_in = backward_pass(split.staged_jaxpr.jaxpr, split.staged_jaxpr.consts,
                           residuals + [x for x, lin in zip(args, linear) if lin], staged_cts)
    linear_cts = iter(cts_in[len(residuals):])
    return [next(linear_cts) if lin else None for lin in linear]


def _expand(values, mask):
    """`values` placed at the True positions of `mask` (None elsewhere)."""
    it = iter(values)
    return [next(it) if m else None for m in mask]


transpose_rules[scan_p] = _scan_transpose


# -- vmap ----------------------------------------------------------------------------------------

def _scan_vmap(axis_size, values, dims, *, jaxpr, num_consts, num_carry, length,
               axis_name=None, **params):
    const_v, carry_v, x_v = split_list(values, [num_consts, num_carry])
    const_d, carry_d, x_d = split_list(dims, [num_consts, num_carry])
    const_b = [d is not not_mapped for d in const_d]
    carry_b = [d is not not_mapped for d in carry_d]
    x_b = [d is not not_mapped for d in x_d]

    def in_axes(carry_batched):
        return ([0 if b else None for b in const_b] + [0 if b else None for b in carry_batched]
                + [0 if b else None for b in x_b])
    with set_current_trace(fresh_root()):
        while True:     # the carry fixpoint: batched in, or made batched by the body
            found = vmap_jaxpr(jaxpr, in_axes(carry_b), axis_size, axis_name=axis_name).out_axes
            grown = [b or d is not None for b, d in zip(carry_b, found[:num_carry])]
            if grown == carry_b:
                break
            carry_b = grown
        y_b = [d is not None for d in found[num_carry:]]
        out_axes = [0 if b else None for b in carry_b + y_b]
        body = vmap_jaxpr(jaxpr, in_axes(carry_b), axis_size, out_axes=out_axes,
                          axis_name=axis_name).jaxpr
    consts = [moveaxis(v, d, 0) if b else v for v, d, b in zip(const_v, const_d, const_b)]
    init = [batch_at(v, d, 0, axis_size) if b else v for v, d, b in zip(carry_v, carry_d, carry_b)]
    xs = [moveaxis(v, d, 1) if b else v for v, d, b in zip(x_v, x_d, x_b)]
    outs = bind(scan_p, *consts, *init, *xs, jaxpr=body, num_consts=num_consts,
                num_carry=num_carry, length=length, **params)
    return Batched(list(outs), [0 if b else None for b in carry_b]
                   + [1 if b else None for b in y_b])


vmap_rules[scan_p] = _scan_vmap


# -- DCE ------------------------------------------------------------------------------------------

def _scan_dce(eqn: Eqn, used_outputs, dead_refs=()) -> DceEqn:
    p = eqn.params
    jaxpr, num_consts, num_carry = p["jaxpr"], p["num_consts"], p["num_carry"]
    used_carry, used_ys = split_list(used_outputs, [num_carry])
    used_carry = list(used_carry)
    while True:     # a carry is needed if used after the loop or by a needed value
        pruned = dce_jaxpr(jaxpr, used_carry + list(used_ys))
        needed = pruned.used_inputs[num_consts:num_consts + num_carry]
        grown = [a or b for a, b in zip(used_carry, needed)]
        if grown == used_carry:
            break
        used_carry = grown
    used_in = list(pruned.used_inputs)
    used_in[num_consts:num_consts + num_carry] = used_carry
    body = Jaxpr((), [v for v, u in zip(jaxpr.invars, used_in) if u], pruned.jaxpr.eqns,
                 pruned.jaxpr.outvars)
    inputs = [x for x, u in zip(eqn.inputs, used_in) if u]
    outputs = [v for v, u in zip(eqn.outputs, used_carry + list(used_ys)) if u]
    params = dict(p, jaxpr=body, num_consts=sum(used_in[:num_consts]),
                  num_carry=sum(used_carry))
    new_eqn = Eqn(scan_p, inputs, params, outputs,
                  effects_of(scan_p, [x.aval for x in inputs], params), eqn.source_info)
    return DceEqn(new_eqn, tuple(used_in))


dce_rules[scan_p] = _scan_dce
