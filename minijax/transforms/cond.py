"""`cond` under every pass: jvp, partial evaluation, transpose, vmap and DCE.

Read `control_flow_common.py` first. A `cond` equation is `cond[branches] index,
*operands`: each rule transforms every branch the same way and binds a new `cond`.

* jvp: each branch is jvp'd; a branch whose tangent output is provably zero still
  returns zeros when another branch's is not, so all branches return the same types.
  Branches holding collectives are differentiated as the select a vmap makes of them
  when members take different branches (`cond_collectives.py`).
* partial eval (the hub of linearize/grad): with a known index, each branch is split
  into a known and a staged part. The known `cond` runs now and returns the known
  outputs plus *residuals* for the staged `cond`. Branches save different residuals,
  but only one runs: residuals share slots by type (a branch's k-th residual of a
  type goes in that type's k-th slot, as in JAX), each known branch fills its own
  slots and zeros the rest, and each staged branch reads only its own. A residual
  that is a known operand is no slot: the staged `cond` takes that operand. Each
  staged branch is pruned of dead equations first, so their residuals take no slot.
  An unknown index stages the whole `cond`.
* transpose: branch-wise: the transposed `cond` runs the transpose of the branch that
  ran forward (the index is a residual), mapping output cotangents to operand ones.
* vmap: an unbatched index keeps one `cond` of batched branches. A *batched* index
  means examples take different branches: as in JAX, every branch runs on the whole
  batch and `select_n` picks each example's result (an example that does not take a
  branch passes its operands in through `stop_gradient`; in a branch with collectives
  only the paths that lead to none are cut so, `cond_collectives.py`). Branches that
  write refs run each
  on its own copy of those refs, and each example keeps the contents its own branch
  left (`vmap_refs.py`). A print must happen only for the examples that take its
  branch, so with one the examples are looped over one at a time with a `scan`, each
  running its branch.
* DCE: each branch is pruned to the used outputs; an operand stays if any branch
  still reads it.
"""
from __future__ import annotations

import numpy as np

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr, DebugEffect, Var
from ..ir.primitives import effects_of
from ..ir.trace import bind, set_current_trace, aval_of
from ..ir.types import RefType
from .ad_util import (Zero, tangent_aval, instantiate, zeros, fresh_root, eval_jaxpr, eq,
                      const_like, convert)
from .control_flow_common import (Body, trace_body, run_body, jvp_body, merge_bodies,
                                  tangent_or_zero_list,
                                  map_examples_one_at_a_time, has_ref_inputs, strip_debug_effects,
                                  jvp_through_discharge, partial_eval_through_discharge,
                                  custom_rules_take_refs)
from .dce import dce_rules, dce_jaxpr, DceEqn
from .jvp import jvp_rules, JvpResult
from .partial_eval import partial_eval_rules, partial_eval_jaxpr
from .transpose import transpose_rules, backward_pass, UndefinedPrimal, UndefinedRef, is_linear
from .vmap import vmap_rules, vmap_jaxpr, Batched, moveaxis, batch_at, not_mapped
from .collective_rules import refuse_per_example_collectives
from .cond_collectives import has_collectives, cut_branch, jvp_as_select
from . import cond_refs, vmap_refs

cond_p = CF.cond_p


# -- jvp --------------------------------------------------------------------------------

def _cond_jvp(primals, tangents, *, branches):
    if has_ref_inputs(primals) and not custom_rules_take_refs(*branches):
        return jvp_through_discharge(cond_p, primals, tangents, dict(branches=branches))
    if has_collectives(branches) and not any(b.effects for b in branches):
        # members may take different branches, meeting in the collectives
        return jvp_as_select(primals, tangents, branches, _plain_cond_jvp)
    return _plain_cond_jvp(primals, tangents, branches)


def _plain_cond_jvp(primals, tangents, branches):
    index, operands = primals[0], primals[1:]
    nonzeros = [type(t) is not Zero for t in tangents[1:]]
    n_out = len(branches[0].outvars)
    # Which outputs have a tangent in *some* branch: every branch must then give one.
    out_nonzeros = [False] * n_out
    for branch in branches:
        found = jvp_body(branch, nonzeros, [False] * n_out).out_nonzeros
        out_nonzeros = [a or b for a, b in zip(out_nonzeros, found)]
    bodies = [jvp_body(branch, nonzeros, out_nonzeros) for branch in branches]
    jaxprs, consts = merge_bodies([Body(b.jaxpr, b.consts) for b in bodies])
    outs = bind(cond_p, index, *consts, *operands, *tangent_or_zero_list(tangents[1:]),
                branches=tuple(jaxprs))
    primals_out, tangent_outs = outs[:n_out], iter(outs[n_out:])
    tangents_out = [next(tangent_outs) if nz else Zero(tangent_aval(v.aval))
                    for v, nz in zip(branches[0].outvars, bodies[0].out_nonzeros)]
    return JvpResult(primals_out, tangents_out)


jvp_rules[cond_p] = _cond_jvp


# -- partial evaluation -------------------------------------------------------------------

def _split_branches(branches, unknowns, policy):
    """Each branch split into known and staged parts; an output is staged in every
    branch if it is in one. Returns `(splits, out_unknowns)`."""
    with set_current_trace(fresh_root()):
        out_unknowns = [False] * len(branches[0].outvars)
        for branch in branches:
            split = partial_eval_jaxpr(branch, unknowns, policy)
            out_unknowns = [a or b for a, b in zip(out_unknowns, split.out_unknowns)]
        splits = [partial_eval_jaxpr(branch, unknowns, policy, instantiate=out_unknowns)
                  for branch in branches]
    return splits, out_unknowns


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    if has_ref_inputs(args):
        if custom_rules_take_refs(*branches) and not trace.is_unknown(args[0]):
            return cond_refs.partial_eval_keeping_refs(trace, args, branches,
                                                       _split_branches)
        return partial_eval_through_discharge(trace, cond_p, args, params)
    if trace.is_unknown(args[0]):
        return trace.stage(cond_p, args, params)      # which branch runs is unknown
    index, operands = args[0], args[1:]
    unknowns = [trace.is_unknown(x) for x in operands]
    n_out = len(branches[0].outvars)
    splits, out_unknowns = _split_branches(branches, unknowns, trace.policy)
    n_known_out = n_out - sum(out_unknowns)
    known_operands = [x for x, u in zip(operands, unknowns) if not u]
    staged_bodies, plans = zip(*(_residual_plan(split, n_known_out) for split in splits))
    passed = sorted({k for plan in plans for k in plan if type(k) is int})
    all_residual_avals, slots = _shared_residual_slots(
        [[v.aval for v, k in zip(split.residuals, plan) if k is _SLOT]
         for split, plan in zip(splits, plans)])

    known_bodies = [_known_branch(split.known_jaxpr, n_known_out, own_slots,
                                  all_residual_avals, plan)
                    for split, own_slots, plan in zip(splits, slots, plans)]
    staged_jaxprs = [_staged_branch(staged, split, own_slots, all_residual_avals, plan,
                                    passed)
                     for staged, split, own_slots, plan
                     in zip(staged_bodies, splits, slots, plans)]
    known_jaxprs, known_consts = merge_bodies(known_bodies)
    with set_current_trace(trace.parent):
        known_outs = bind(cond_p, index, *known_consts, *known_operands,
                          branches=tuple(known_jaxprs))
    trace.known_results(cond_p, [index, *known_consts, *known_operands],
                        dict(branches=tuple(strip_debug_effects(j) for j in known_jaxprs)),
                        known_outs, known_jaxprs)
    residuals = known_outs[n_known_out:] + [known_operands[k] for k in passed]
    unknown_operands = [x for x, u in zip(operands, unknowns) if u]
    staged_outs = trace.stage(cond_p, [index, *residuals, *unknown_operands],
                              dict(branches=tuple(staged_jaxprs)))
    known_iter, staged_iter = iter(known_outs[:n_known_out]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in out_unknowns]


_SLOT, _DEAD = "slot", "dead"


def _residual_plan(split, n_known_out):
    """The staged part of one branch without its dead equations, and for each of the
    branch's residuals how the staged `cond` gets it: `_DEAD` when only dead equations
    read it; the known operand it is (its index among the known operands), which the
    staged `cond` takes as it is; or `_SLOT`, a value the known `cond` returns.

    Both as JAX's `cond` does under a checkpoint: its staged `cond` takes the known
    operands, so a residual that is one is neither a copy saved apart from the operand
    nor a slot another branch's residual could use; and since JAX 0.12 it prunes each
    branch before sharing slots, so a dead residual of one branch (a tangent no output
    needs) cannot keep a slot that would otherwise be unused."""
    staged = dce_jaxpr(split.staged_jaxpr.jaxpr)
    known = split.known_jaxpr.jaxpr
    position = {id(v): k for k, v in enumerate(known.invars)}
    plan = []
    for j in range(len(split.residuals)):
        if not staged.used_inputs[j]:
            plan.append(_DEAD)
        else:
            k = position.get(id(known.outvars[n_known_out + j]))
            plan.append(_SLOT if k is None else k)
    return staged.jaxpr, plan


def _shared_residual_slots(residual_avals_per_branch):
    """The residuals of the known `cond`, shared between branches: only one branch
    runs, so branches can hand their residuals over in the same slots. A slot holds
    one type; the k-th residual of a type in any branch takes that type's k-th slot
    (as JAX's cond does), so the `cond` saves, per type, the most any one branch
    saves, not the sum over branches. Returns `(slot avals, each branch's slot per
    residual)`."""
    slot_of, slot_avals, slots = {}, [], []
    for avals in residual_avals_per_branch:
        seen, own = {}, []
        for aval in avals:
            key = (aval, seen.get(aval, 0))
            seen[aval] = key[1] + 1
            if key not in slot_of:
                slot_of[key] = len(slot_avals)
                slot_avals.append(aval)
            own.append(slot_of[key])
        slots.append(own)
    return slot_avals, slots


def _known_branch(known, n_known_out, own_slots, all_residual_avals, plan) -> Body:
    """The known part of one branch, returning every residual slot (its own computed
    residuals in its slots, zeros in the others)."""
    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, list(args))
        computed = [r for r, k in zip(outs[n_known_out:], plan) if k is _SLOT]
        residuals = [None] * len(all_residual_avals)
        for slot, value in zip(own_slots, computed):
            residuals[slot] = value
        residuals = [zeros(a) if r is None else r
                     for r, a in zip(residuals, all_residual_avals)]
        return outs[:n_known_out] + residuals
    return trace_body(fun, known.jaxpr.in_avals)


def _staged_branch(staged: Jaxpr, split, own_slots, all_residual_avals, plan,
                   passed) -> Jaxpr:
    """The staged part of one branch, taking every residual slot (reading its own),
    then the known operands any branch reads (`passed`), then the unknown operands."""
    n_res = len(plan)
    slot_vars = [Var(a) for a in all_residual_avals]
    passed_vars = [Var(split.known_jaxpr.jaxpr.invars[k].aval) for k in passed]
    own = iter(own_slots)
    for var, k in zip(staged.invars[:n_res], plan):
        if k is _SLOT:
            slot_vars[next(own)] = var
        elif k is not _DEAD:
            passed_vars[passed.index(k)] = var
    return Jaxpr((), slot_vars + passed_vars + list(staged.invars[n_res:]), staged.eqns,
                 staged.outvars)


partial_eval_rules[cond_p] = _cond_partial_eval


# -- transpose -----------------------------------------------------------------------------

def _cond_transpose(cts, index, *operands, branches):
    if is_linear(index):
        raise TypeError("cond: the branch index cannot be a linear value")
    linear = [is_linear(x) for x in operands]
    nonlinear = [x for x in operands if not is_linear(x)]
    # A linear (tangent) ref's cotangent is a ref, passed in and written in place.
    ct_refs = [x.ct_ref for x in operands if type(x) is UndefinedRef]
    cts = [instantiate(ct) for ct in cts]
    # The branches are transposed at the cotangents' own types, as JAX does: a strong
    # cotangent of a weak output makes the operands' cotangents strong.
    in_avals = [aval_of(x) for x in nonlinear + ct_refs + cts]
    bodies = [trace_body(_transposed_branch(branch, linear, len(nonlinear), len(ct_refs)),
                         in_avals) for branch in branches]
    jaxprs, consts = merge_bodies(bodies)
    outs = iter(bind(cond_p, index, *consts, *nonlinear, *ct_refs, *cts,
                     branches=tuple(jaxprs)))
    return [None] + [next(outs) if lin and type(x) is not UndefinedRef else None
                     for x, lin in zip(operands, linear)]


def _transposed_branch(branch: Jaxpr, linear, n_nonlinear, n_ct_refs):
    def fun(*args):
        values = iter(args[:n_nonlinear])
        ct_refs = iter(args[n_nonlinear:n_nonlinear + n_ct_refs])
        inputs = [(UndefinedRef(v.aval, next(ct_refs)) if isinstance(v.aval, RefType)
                   else UndefinedPrimal(v.aval)) if lin else next(values)
                  for v, lin in zip(branch.invars, linear)]
        cts_in = backward_pass(branch, (), inputs, list(args[n_nonlinear + n_ct_refs:]))
        return [instantiate(ct) for ct, v, lin in zip(cts_in, branch.invars, linear)
                if lin and not isinstance(v.aval, RefType)]
    return fun


transpose_rules[cond_p] = _cond_transpose


# -- vmap ------------------------------------------------------------------------------------

def _cond_vmap(axis_size, values, dims, *, branches, axis_name=None):
    index, operands = values[0], values[1:]
    index_dim, operand_dims = dims[0], list(dims[1:])
    if index_dim is not_mapped:
        return _vmap_unbatched_index(axis_size, index, operands, operand_dims, branches,
                                     axis_name)
    effects = frozenset().union(*(branch.effects for branch in branches))
    if any(isinstance(e, DebugEffect) for e in effects):
        refuse_per_example_collectives(branches, axis_name, "a cond/switch whose "
                                       "predicate differs per example and that prints")
        return _vmap_one_example_at_a_time(axis_size, values, dims, branches)
    # Examples take different branches: run all of them on the whole batch, then let
    # each example pick its branch's result -- and, with ref effects, the contents its
    # branch left in each ref it writes (`vmap_refs.py`).
    index = moveaxis(index, index_dim, 0)
    outs = vmap_refs.cond_selecting_ref_contents(
        axis_size, index, operands, operand_dims, branches,
        lambda number, ops, ds: _run_batched(axis_size, index, number, branches[number],
                                             ops, ds, axis_name))
    return Batched(outs, [0] * len(outs))


def _run_batched(axis_size, index, number, branch, operands, operand_dims, axis_name):
    """Branch `number` on the whole batch, every output batched on axis 0.

    As in JAX, an example that does not take the branch passes its operands in
    through `stop_gradient`: its results are thrown away, so no derivative may flow
    through them. That keeps a NaN derivative of the untaken branch (`sqrt` at 0) out
    of the gradient. A branch with collectives is cut inside instead
    (`cond_collectives.py`): there an example's operands also reach the examples that
    take the branch, and that derivative flows."""
    taken = eq(index, const_like(index, number))
    if has_collectives([branch]):
        return _run_cut_batched(axis_size, taken, branch, operands, operand_dims, axis_name)
    operands, operand_dims = _stop_gradient_unless_taken(axis_size, taken, operands,
                                                         operand_dims)
    with set_current_trace(fresh_root()):
        batched = vmap_jaxpr(branch, operand_dims, axis_size,
                             out_axes=[0] * len(branch.outvars), axis_name=axis_name).jaxpr
    return run_body(batched, operands)


def _run_cut_batched(axis_size, taken, branch, operands, operand_dims, axis_name):
    """A branch with collectives, cut by `taken` (`cond_collectives.py`), on the whole
    batch -- if some example takes it: one nobody takes gives zeros, so that its
    values (a `sqrt` of a negative operand feeding a collective) cannot spoil a
    derivative."""
    body = cut_branch(branch)
    operands = [*body.consts, taken, *operands]
    operand_dims = [not_mapped] * len(body.consts) + [0, *operand_dims]
    with set_current_trace(fresh_root()):
        batched = vmap_jaxpr(body.jaxpr, operand_dims, axis_size,
                             out_axes=[0] * len(branch.outvars), axis_name=axis_name).jaxpr
    skipped = trace_body(lambda *args: [zeros(v.aval) for v in batched.outvars],
                         batched.in_avals)
    jaxprs, consts = merge_bodies([skipped, Body(batched, [])])
    anyone = convert(bind(P.reduce_or_p, taken, axes=(0,)), np.int32)
    return bind(cond_p, anyone, *consts, *operands, branches=tuple(jaxprs))


def _stop_gradient_unless_taken(axis_size, taken, operands, operand_dims):
    operands, operand_dims = list(operands), list(operand_dims)
    for k, (x, d) in enumerate(zip(operands, operand_dims)):
        aval = aval_of(x)
        if isinstance(aval, RefType) or not np.issubdtype(aval.dtype, np.inexact):
            continue
        x = batch_at(x, d, 0, axis_size)
        shape = aval_of(x).shape
        which = taken if len(shape) == 1 else bind(
            P.broadcast_in_dim_p, taken, shape=shape, broadcast_dimensions=(0,))
        operands[k] = bind(P.select_n_p, which, bind(P.stop_gradient_p, x), x)
        operand_dims[k] = 0
    return operands, operand_dims


def _vmap_unbatched_index(axis_size, index, operands, operand_dims, branches, axis_name):
    with set_current_trace(fresh_root()):
        found = [vmap_jaxpr(b, operand_dims, axis_size, axis_name=axis_name).out_axes
                 for b in branches]
        out_batched = [any(d is not None for d in ds) for ds in zip(*found)]
        out_axes = [0 if b else None for b in out_batched]
        batched = [vmap_jaxpr(b, operand_dims, axis_size, out_axes=out_axes,
                              axis_name=axis_name).jaxpr
                   for b in branches]
    outs = bind(cond_p, index, *operands, branches=tuple(batched))
    return Batched(list(outs), out_axes)


def _vmap_one_example_at_a_time(axis_size, values, dims, branches):
    """A `scan` over the examples, each running its own branch: needed when branches
    print, which must happen only for the examples that take the branch."""
    outs = vmap_refs.cond_one_example_at_a_time(
        axis_size, values, dims, branches,
        lambda *inputs: bind(cond_p, *inputs, branches=branches),
        map_examples_one_at_a_time)
    return Batched(outs, [0] * len(outs))


vmap_rules[cond_p] = _cond_vmap


# -- DCE ----------------------------------------------------------------------------------------

def _cond_dce(eqn: Eqn, used_outputs, dead_refs=()) -> DceEqn:
    branches = eqn.params["branches"]
    pruned = [dce_jaxpr(b, list(used_outputs)) for b in branches]
    used_operands = [any(flags) for flags in zip(*(p.used_inputs for p in pruned))]
    if not any(used_outputs):
        return DceEqn(None, (False,) * len(eqn.inputs))
    new_branches = tuple(
        Jaxpr((), [v for v, u in zip(p.jaxpr.invars, used_operands) if u], p.jaxpr.eqns,
              p.jaxpr.outvars) for p in pruned)
    inputs = [eqn.inputs[0]] + [x for x, u in zip(eqn.inputs[1:], used_operands) if u]
    params = dict(eqn.params, branches=new_branches)
    new_eqn = Eqn(cond_p, inputs, params, [v for v, u in zip(eqn.outputs, used_outputs) if u],
                  effects_of(cond_p, [x.aval for x in inputs], params), eqn.source_info)
    return DceEqn(new_eqn, (True,) + tuple(used_operands))


dce_rules[cond_p] = _cond_dce
