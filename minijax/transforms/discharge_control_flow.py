"""Discharge rules for `cond`, `while` and `scan`: refs through branches and loops.

Read `discharge.py` first (refs become values, a `RefSlot` holds each ref's current
value) and `ir/control_flow_primitives.py` (the primitives' params). Bodies are
closed jaxprs, so a ref a body uses arrives as one of the equation's inputs (a
closed-over ref became a leading input when the body was staged).

The idea for each construct is "a ref a body writes is a value the construct
returns":

* `cond`: every branch is discharged to return, after its outputs, the final values
  of the refs that *any* branch writes (a branch that leaves one alone returns it
  unchanged), so all branches still have one output type, and the caller's slots
  take the chosen branch's values.
* `while`: a ref the body writes joins the loop carry -- each iteration sees the
  previous one's writes, and so does the condition, which reads the carried value
  (ordinary sequential semantics). A condition that writes refs runs before every
  body and once more at the end: discharged, it runs once before the loop, and the
  loop body becomes "body, then condition", carrying the predicate it computed.
* `scan`: the same, with written refs carried ahead of the scan's own carry.

A ref only read is passed in as its current value, like any constant. Reordering a
body's inputs and outputs costs nothing: a jaxpr's binders are just a list, so the
discharged body is reused with its variables put in the order the new equation
wants (`_rearranged`).
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.core import Jaxpr, Var, Eqn
from ..ir.primitives import effects_of
from .discharge import (DischargeError, RefSlot, discharge_rules, discharge_with_finals,
                        mentions_refs, written_inputs, _copy_eqn)


def _touches_refs(eqn, inputs, bodies) -> bool:
    return any(isinstance(x, RefSlot) for x in inputs) or any(map(mentions_refs, bodies))


def _value(x):
    return x.value if isinstance(x, RefSlot) else x


def _merge_duplicate_refs(jaxpr: Jaxpr, inputs, offset: int):
    """`jaxpr` (a body taking `inputs[offset:]`) with inputs that are the same ref
    merged into one invar, and the inputs without the repeats.

    `cond` passes each branch's closed-over values to every branch, so a ref two
    branches close over arrives twice: two names, one box. Renaming one to the other
    makes the box one variable again, which is what discharge tracks."""
    body_inputs = inputs[offset:]
    first: dict[int, int] = {}
    rename: dict = {}
    keep = []
    for k, (x, var) in enumerate(zip(body_inputs, jaxpr.invars)):
        if isinstance(x, RefSlot) and id(x) in first:
            rename[var] = jaxpr.invars[first[id(x)]]
            continue
        if isinstance(x, RefSlot):
            first[id(x)] = k
        keep.append(k)
    if not rename:
        return jaxpr, list(inputs)
    eqns = [e.replace(inputs=tuple(rename.get(a, a) if isinstance(a, Var) else a
                                   for a in e.inputs)) for e in jaxpr.eqns]
    outvars = [rename.get(a, a) if isinstance(a, Var) else a for a in jaxpr.outvars]
    merged = Jaxpr(jaxpr.constvars, [jaxpr.invars[k] for k in keep], eqns, outvars)
    return merged, list(inputs[:offset]) + [body_inputs[k] for k in keep]


def _distinct_slots(slots, what):
    seen = set()
    for slot in slots:
        if id(slot) in seen:
            raise DischargeError(f"{what}: one ref reaches the body as two inputs "
                                 f"(aliasing); pass it once")
        seen.add(id(slot))


# -- cond ---------------------------------------------------------------------------------

def _cond(b, eqn, inputs):
    branches = eqn.params["branches"]
    if not _touches_refs(eqn, inputs, branches):
        return _copy_eqn(b, eqn, inputs)
    merged = [_merge_duplicate_refs(branch, inputs, 1) for branch in branches]
    branches = tuple(branch for branch, _ in merged)
    inputs = merged[0][1]      # every branch drops the same repeats
    operands = inputs[1:]
    written = sorted({k for branch in branches for k in written_inputs(branch)})
    new_branches = tuple(discharge_with_finals(branch, tuple(written)).jaxpr
                         for branch in branches)
    outs = b.emit_eqn(CF.cond_p, [inputs[0], *map(_value, operands)],
                      {**eqn.params, "branches": new_branches})
    n = len(eqn.outputs)
    for position, final in zip(written, outs[n:]):
        operands[position].value = final
    return outs[:n]


# -- while ----------------------------------------------------------------------------------

def _rearranged(jaxpr: Jaxpr, invars, outvars) -> Jaxpr:
    return Jaxpr((), invars, jaxpr.eqns, outvars)


def _while(b, eqn, inputs):
    params = eqn.params
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    if not _touches_refs(eqn, inputs, (cond_jaxpr, body_jaxpr)):
        return _copy_eqn(b, eqn, inputs)
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts = inputs[:n_cc], inputs[n_cc:n_cc + n_bc]
    carry = inputs[n_cc + n_bc:]
    if written_inputs(cond_jaxpr):
        return _while_with_writing_cond(b, eqn, inputs)
    # Refs the body writes: carried. Everything else: passed as its current value.
    carried = [body_consts[k] for k in written_inputs(body_jaxpr)]
    _distinct_slots(carried, "while_loop")
    carried_ids = {id(s): i for i, s in enumerate(carried)}

    # The body: non-carried consts, then the carry, then the carried refs' values.
    body = discharge_with_finals(body_jaxpr, tuple(written_inputs(body_jaxpr))).jaxpr
    body_in = list(body.invars)
    carried_vars = [None] * len(carried)
    body_const_vars = []
    for k, (x, var) in enumerate(zip(body_consts, body_in[:n_bc])):
        if isinstance(x, RefSlot) and id(x) in carried_ids:
            carried_vars[carried_ids[id(x)]] = var
        else:
            body_const_vars.append(var)
    n_out = len(body_jaxpr.outvars)
    new_body = _rearranged(body, body_const_vars + body_in[n_bc:] + carried_vars,
                           list(body.outvars[:n_out]) + list(body.outvars[n_out:]))

    # The condition sees the carried refs' current values, in the same places.
    cond = discharge_with_finals(cond_jaxpr, ()).jaxpr
    cond_in = list(cond.invars)
    cond_carried = [Var(s.aval.inner) for s in carried]      # unused unless read below
    cond_const_vars = []
    for x, var in zip(cond_consts, cond_in[:n_cc]):
        if isinstance(x, RefSlot) and id(x) in carried_ids:
            cond_carried[carried_ids[id(x)]] = var
        else:
            cond_const_vars.append(var)
    new_cond = _rearranged(cond, cond_const_vars + cond_in[n_cc:] + cond_carried,
                           list(cond.outvars))

    cond_args = [_value(x) for x in cond_consts
                 if not (isinstance(x, RefSlot) and id(x) in carried_ids)]
    body_args = [_value(x) for x in body_consts
                 if not (isinstance(x, RefSlot) and id(x) in carried_ids)]
    outs = b.emit_eqn(CF.while_p, [*cond_args, *body_args, *carry,
                                   *[s.value for s in carried]],
                      {**params, "cond_jaxpr": new_cond, "body_jaxpr": new_body,
                       "cond_nconsts": len(cond_args), "body_nconsts": len(body_args)})
    n = len(eqn.outputs)
    for slot, final in zip(carried, outs[n:]):
        slot.value = final
    return outs[:n]


def _while_with_writing_cond(b, eqn, inputs):
    """`while` whose condition writes refs. With W the refs either function writes:

        pred, W = cond(carry, W)                         # once before the loop
        while pred:                                      # the new cond reads the carry
            carry, W = body(carry, W); pred, W = cond(carry, W)

    Each of the two is called as a `jit` of its discharged jaxpr (pure now)."""
    params = eqn.params
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts = inputs[:n_cc], inputs[n_cc:n_cc + n_bc]
    carry = inputs[n_cc + n_bc:]
    written: list = []              # distinct slots either function writes
    for consts, jaxpr in ((body_consts, params["body_jaxpr"]),
                          (cond_consts, params["cond_jaxpr"])):
        for k in written_inputs(jaxpr):
            if all(consts[k] is not slot for slot in written):
                written.append(consts[k])

    def state_index(x):
        return next((i for i, slot in enumerate(written) if slot is x), None)

    def caller(jaxpr, consts, name):
        """The discharged `jaxpr` and, per const, its index in W (or None)."""
        at = [state_index(x) if isinstance(x, RefSlot) else None for x in consts]
        finals = tuple(k for k, i in enumerate(at) if i is not None
                       and k in written_inputs(jaxpr))
        return discharge_with_finals(jaxpr, finals).jaxpr, at, finals, name

    body_call = caller(params["body_jaxpr"], body_consts, "while_body")
    cond_call = caller(params["cond_jaxpr"], cond_consts, "while_cond")

    def call(emit, spec, plain_consts, carry_values, state):
        """Call a discharged function: (its outputs, the new state)."""
        jaxpr, at, finals, name = spec
        plain = iter(plain_consts)
        args = [state[i] if i is not None else next(plain) for i in at] + list(carry_values)
        outs = emit(jaxpr, args, name)
        n = len(outs) - len(finals)
        state = list(state)
        for k, final in zip(finals, outs[n:]):
            state[at[k]] = final
        return outs[:n], state

    def plain(consts):
        return [_value(x) for x in consts if state_index(x) is None]

    # Before the loop, in the caller: the first predicate.
    def emit_outer(jaxpr, args, name):
        return b.emit_eqn(P.jit_p, args, {"jaxpr": jaxpr, "name": name})
    (pred,), state = call(emit_outer, cond_call, plain(cond_consts), carry,
                          [slot.value for slot in written])

    # The loop body: body, then condition, as two call equations.
    body_plain = [Var(x.aval) for x in plain(body_consts)]
    cond_plain = [Var(x.aval) for x in plain(cond_consts)]
    carry_vars = [Var(x.aval) for x in carry]
    state_vars = [Var(slot.aval.inner) for slot in written]
    pred_var = Var(pred.aval)
    eqns = []

    def emit_inner(jaxpr, args, name):
        in_avals = [a.aval for a in args]
        params = {"jaxpr": jaxpr, "name": name}
        outs = [Var(a) for a in jaxpr.out_avals]
        eqns.append(Eqn(P.jit_p, args, params, outs, effects_of(P.jit_p, in_avals, params),
                        eqn.source_info))
        return outs
    new_carry, after_body = call(emit_inner, body_call, body_plain, carry_vars, state_vars)
    (new_pred,), after_cond = call(emit_inner, cond_call, cond_plain, new_carry, after_body)
    loop_vars = carry_vars + state_vars + [pred_var]
    new_body = Jaxpr((), body_plain + cond_plain + loop_vars, eqns,
                     list(new_carry) + list(after_cond) + [new_pred])
    cond_vars = [Var(v.aval) for v in loop_vars]
    new_cond = Jaxpr((), cond_vars, [], [cond_vars[-1]])
    outs = b.emit_eqn(CF.while_p, [*plain(body_consts), *plain(cond_consts), *carry,
                                   *state, pred],
                      {**params, "cond_jaxpr": new_cond, "body_jaxpr": new_body,
                       "cond_nconsts": 0, "body_nconsts": len(body_plain) + len(cond_plain)})
    n = len(eqn.outputs)
    for slot, final in zip(written, outs[n:n + len(written)]):
        slot.value = final
    return outs[:n]


# -- scan -----------------------------------------------------------------------------------

def _scan(b, eqn, inputs):
    params = eqn.params
    jaxpr = params["jaxpr"]
    if not _touches_refs(eqn, inputs, (jaxpr,)):
        return _copy_eqn(b, eqn, inputs)
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    consts, rest = inputs[:n_consts], inputs[n_consts:]
    if any(isinstance(x, RefSlot) for x in rest):
        raise DischargeError("a ref cannot be a scan carry or scanned-over value; close "
                             "over it in the body instead")
    written = written_inputs(jaxpr)
    carried = [consts[k] for k in written]
    _distinct_slots(carried, "scan")
    body = discharge_with_finals(jaxpr, tuple(written)).jaxpr
    body_in = list(body.invars)
    written_set = set(written)
    const_vars = [v for k, v in enumerate(body_in[:n_consts]) if k not in written_set]
    carried_vars = [body_in[k] for k in written]
    n_out = len(jaxpr.outvars)
    outvars = list(body.outvars)
    new_body = _rearranged(
        body, const_vars + carried_vars + body_in[n_consts:],
        outvars[n_out:] + outvars[:n_carry] + outvars[n_carry:n_out])
    const_args = [_value(x) for k, x in enumerate(consts) if k not in written_set]
    outs = b.emit_eqn(CF.scan_p, [*const_args, *[s.value for s in carried], *rest],
                      {**params, "jaxpr": new_body, "num_consts": len(const_args),
                       "num_carry": n_carry + len(carried)})
    for slot, final in zip(carried, outs[:len(carried)]):
        slot.value = final
    return outs[len(carried):]


discharge_rules[CF.cond_p] = _cond
discharge_rules[CF.while_p] = _while
discharge_rules[CF.scan_p] = _scan
