"""Partial evaluation of a `cond` that keeps its refs as refs.

Read `cond.py` and "Refs under autodiff" in `control_flow_common.py` first. A `cond`
whose branches use refs is normally differentiated on values: discharge turns it
into a pure `cond` first. That cannot serve a branch calling a `custom_jvp` /
`custom_vjp` function that takes a ref, because the user's rules are written for the
ref itself -- the gradient-stashing recipe's `bwd` writes the cotangent into a ref
it kept as a residual, when the pullback runs. So for such branches the `cond` rules
keep the refs: the jvp'd branches receive each ref (and its tangent ref, if it has
one) as an operand, and this module splits that `cond` into a known and a staged
`cond` as `cond.py` does for pure branches, with one difference: a residual that is
a ref cannot be an output of the known `cond` (a branch never returns a ref). Such
a residual is always one of the known operands -- a ref the branch was given, which
`fwd` keeps -- so the staged `cond` receives the known refs as operands directly,
and each staged branch takes its ref residuals from there:

    cond[known]  i  x  r           -> y, res           (res: this branch's array residuals)
    cond[staged] i  res  r  tx     -> ty               (r: the known refs, unchanged)

Transposing the staged `cond` then runs the taken branch's `bwd` on the ref `r`.
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir.trace import MinijaxError, aval_of, bind, set_current_trace
from ..ir.types import RefType
from .ad_util import eval_jaxpr, zeros
from .control_flow_common import merge_bodies, strip_debug_effects, trace_body
from .ref_rules import stage_known_ref


def partial_eval_keeping_refs(trace, args, branches, split_branches) -> list:
    """The partial-evaluation rule of `cond` (known index) for branches that must see
    their refs (see the module docstring). `split_branches(branches, unknowns,
    policy)` is `cond.py`'s split of every branch."""
    index, operands = args[0], list(args[1:])
    while True:
        unknowns = [trace.is_unknown(x) for x in operands]
        splits, out_unknowns = split_branches(branches, unknowns, trace.policy)
        written = [any(flags) for flags in zip(*(s.known_refs_written for s in splits))]
        if not any(written):
            break
        # A branch writes an unknown value into a known ref (a tangent ref that started
        # as zeros): the ref becomes staged out here, as for a `jit` (calls.py), so the
        # branch's writes and every later read meet in one staged ref.
        operands = [stage_known_ref(trace, x) if w else x for x, w in zip(operands, written)]
    n_known_out = len(out_unknowns) - sum(out_unknowns)
    known_operands = [x for x, u in zip(operands, unknowns) if not u]
    known_refs = [k for k, x in enumerate(known_operands)
                  if isinstance(aval_of(x), RefType)]
    plans = [_residual_plan(split, n_known_out, known_refs) for split in splits]
    array_avals = [[r.aval for r in split.residuals if not isinstance(r.aval, RefType)]
                   for split in splits]
    all_array_avals = [a for avals in array_avals for a in avals]

    known_bodies, start = [], 0
    for split, avals in zip(splits, array_avals):
        known_bodies.append(_known_branch(split, n_known_out, start, all_array_avals))
        start += len(avals)
    known_jaxprs, known_consts = merge_bodies(known_bodies)
    with set_current_trace(trace.parent):
        known_outs = bind(CF.cond_p, index, *known_consts, *known_operands,
                          branches=tuple(known_jaxprs))
    trace.known_results(CF.cond_p, [index, *known_consts, *known_operands],
                        dict(branches=tuple(strip_debug_effects(j) for j in known_jaxprs)),
                        known_outs, known_jaxprs)
    array_residuals = known_outs[n_known_out:]
    ref_operands = [known_operands[k] for k in known_refs]
    unknown_operands = [x for x, u in zip(operands, unknowns) if u]
    staged_in_avals = (all_array_avals + [aval_of(x) for x in ref_operands]
                       + [aval_of(x) for x in unknown_operands])
    staged_bodies, start = [], 0
    for split, plan, avals in zip(splits, plans, array_avals):
        staged_bodies.append(trace_body(
            _staged_branch(split, plan, start, len(avals), len(all_array_avals),
                           len(ref_operands)), staged_in_avals))
        start += len(avals)
    staged_jaxprs, staged_consts = merge_bodies(staged_bodies)
    staged_outs = trace.stage(
        CF.cond_p, [index, *staged_consts, *array_residuals, *ref_operands, *unknown_operands],
        dict(branches=tuple(staged_jaxprs)))
    known_iter, staged_iter = iter(known_outs[:n_known_out]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in out_unknowns]


def _residual_plan(split, n_known_out, known_refs) -> list:
    """For each residual of one branch: None for an array (returned by the known
    `cond`), or, for a ref, its place among the known ref operands."""
    known = split.known_jaxpr.jaxpr
    position = {id(v): k for k, v in enumerate(known.invars)}
    plan = []
    for j, residual in enumerate(split.residuals):
        if not isinstance(residual.aval, RefType):
            plan.append(None)
            continue
        k = position.get(id(known.outvars[n_known_out + j]))
        if k is None or k not in known_refs:
            raise MinijaxError(
                "cond: a custom derivative rule inside a differentiated branch keeps, "
                "as a residual, a ref the branch created; keep a ref passed into the "
                "branch (or closed over) instead, or the ref's value r[...]")
        plan.append(known_refs.index(k))
    return plan


def _known_branch(split, n_known_out, start, all_array_avals):
    """The known part of one branch, returning every branch's array residuals (zeros
    for the other branches')."""
    known = split.known_jaxpr
    is_array = [not isinstance(r.aval, RefType) for r in split.residuals]
    n_own = sum(is_array)

    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, list(args))
        own = [x for x, keep in zip(outs[n_known_out:], is_array) if keep]
        return (outs[:n_known_out] + [zeros(a) for a in all_array_avals[:start]] + own
                + [zeros(a) for a in all_array_avals[start + n_own:]])
    return trace_body(fun, known.jaxpr.in_avals)


def _staged_branch(split, plan, start, n_own, n_arrays, n_refs):
    """The staged part of one branch, taking every branch's array residuals, the
    known refs and the unknown operands."""
    staged = split.staged_jaxpr

    def fun(*args):
        own = iter(args[start:start + n_own])
        refs = args[n_arrays:n_arrays + n_refs]
        residuals = [next(own) if k is None else refs[k] for k in plan]
        return eval_jaxpr(staged.jaxpr, staged.consts,
                          residuals + list(args[n_arrays + n_refs:]))
    return fun
