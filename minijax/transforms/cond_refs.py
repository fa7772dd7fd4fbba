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
a ref cannot be an output of the known `cond` (a branch never returns a ref). A
ref residual that is one of the known operands -- a ref the branch was given, which
`fwd` keeps -- is not returned: the staged `cond` receives the known refs as
operands directly, and each staged branch takes its ref residuals from there:

    cond[known]  i  x  r           -> y, res           (res: this branch's array residuals)
    cond[staged] i  res  r  tx     -> ty               (r: the known refs, unchanged)

Transposing the staged `cond` then runs the taken branch's `bwd` on the ref `r`.
(A ref the branch made itself leaves the known `cond` as its contents, and a fresh
ref holding them is passed on with the known refs.)
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.trace import aval_of, bind, set_current_trace
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
    array_avals = [[r.aval.inner if isinstance(r.aval, RefType) else r.aval
                    for r, k in zip(split.residuals, plan) if not isinstance(k, int)]
                   for split, plan in zip(splits, plans)]
    all_array_avals = [a for avals in array_avals for a in avals]

    known_bodies, start = [], 0
    for split, plan, avals in zip(splits, plans, array_avals):
        known_bodies.append(_known_branch(split, plan, n_known_out, start, all_array_avals))
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
    # A ref a branch made goes on as a ref made here, out of the contents it had.
    start = 0
    for b, (plan, avals) in enumerate(zip(plans, array_avals)):
        own = iter(range(start, start + len(avals)))
        for j, k in enumerate(plan):
            slot = next(own) if not isinstance(k, int) else None
            if k is _CONTENTS:
                with set_current_trace(trace.parent):
                    ref_operands.append(bind(P.new_ref_p, array_residuals[slot]))
                plan[j] = (_CONTENTS, len(ref_operands) - 1)
        start += len(avals)
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
    `cond`); for a ref the branch was given, its place among the known ref operands;
    for a ref the branch made, `_CONTENTS`: the known `cond` returns what it holds,
    and a ref made from that after it is passed to the staged `cond` with the known
    refs. (Nothing after the branch can see the branch's own ref, so a rule writing
    the copy later writes where no one reads, as it would write the original.)"""
    known = split.known_jaxpr.jaxpr
    position = {id(v): k for k, v in enumerate(known.invars)}
    plan = []
    for j, residual in enumerate(split.residuals):
        if not isinstance(residual.aval, RefType):
            plan.append(None)
            continue
        k = position.get(id(known.outvars[n_known_out + j]))
        plan.append(known_refs.index(k) if k in known_refs else _CONTENTS)
    return plan


_CONTENTS = "contents"


def _known_branch(split, plan, n_known_out, start, all_array_avals):
    """The known part of one branch, returning every branch's array residuals (zeros
    for the other branches')."""
    known = split.known_jaxpr
    n_own = sum(not isinstance(k, int) for k in plan)

    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, list(args))
        own = [bind(P.get_p, x) if k is _CONTENTS else x
               for x, k in zip(outs[n_known_out:], plan) if not isinstance(k, int)]
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
        residuals = []
        for k in plan:
            if isinstance(k, tuple):        # a ref the branch made: its copy made outside
                next(own)
                residuals.append(refs[k[1]])
            else:
                residuals.append(next(own) if k is None else refs[k])
        return eval_jaxpr(staged.jaxpr, staged.consts,
                          residuals + list(args[n_arrays + n_refs:]))
    return fun
