"""Derivatives of a `cond` whose branches hold collectives, when members take different
branches (docs/named_axes.md, "A cond taken per member, differentiated").

Under `vmap(..., axis_name='i')` a `cond` whose index differs per member runs every
branch on every member and each member keeps the result of its own branch. So a
collective inside a branch combines the values that *every* member computes in that
branch: a member that does not take the branch still contributes to it, through the
collective, the value the branch computes from its operands. That is the value JAX and
minijax give. Its derivative, the one finite differences measure, has two parts per
branch and member:

* along a path from the member's operands *into a collective*, the member's value
  reaches the members that take the branch, so its derivative flows, whether the
  member takes the branch or not;
* along every other path the value reaches only the member's own result of the branch,
  which it throws away unless it takes the branch, so no derivative may flow there.

`cut_branch` makes this explicit in a branch: given a flag `taken`, every use of a value
by an equation that leads to no collective (and every result) passes through
`select_n(taken, stop_gradient(v), v)`. Values are unchanged; for a member that does
not take the branch, the derivative along those paths is exactly zero. That also keeps
a NaN out: a member outside a branch's domain (`sqrt` of a negative operand) computes a
NaN partial derivative there, and a select, unlike a product with a zero cotangent,
drops it. A branch with no collective is cut at every use of its operands, which is
JAX's `stop_gradient` of the operands of a member that does not take the branch.

The batching rule of `cond` (a derivative *outside* the vmap) runs each such branch cut
by `index == branch`. A derivative *inside* the vmap differentiates the `cond` before the
vmap sees it, member by member, where only the taken branch's residuals exist and a
linear `cond` can only hand each member one branch's cotangents. So `jvp_as_select`
differentiates a `cond` with collectives in its branches as the program the vmap makes
of it: for each branch, a `cond` on "some member of the collectives' axes takes this
branch" (a `pmax`, the same for every member, so it stays one `cond` under the vmap and
skips a branch nobody takes) that runs the cut branch, and a `select_n` on the index.
Every branch's residuals then exist for every member that needs them, and each
branch's cotangents add up.
"""
from __future__ import annotations

import numpy as np

from ..ir import collective_primitives as C
from ..ir import primitives as P
from ..ir.core import Jaxpr, Literal, literal_value
from ..ir.source_info import source_info_from
from ..ir.trace import bind, aval_of, current_trace
from ..ir.types import ShapedArray, is_inexact
from .ad_util import Zero, tangent_aval, instantiate, zeros, eq, const_like, convert
from .collective_rules import bodies_of, collective_names
from .control_flow_common import trace_body, merge_bodies, Body
from .jvp import JvpResult

TAKEN_AVAL = ShapedArray((), np.dtype(bool))


# -- which equations lead to a collective ----------------------------------------------------

def _meets_others(eqn) -> bool:
    """Whether the equation combines members' values (a collective, or a body
    holding one)."""
    if eqn.primitive in C.collective_primitives:
        return eqn.primitive is not C.axis_index_p
    return any(collective_names(body) for body in bodies_of(eqn.params))


def _leads_to_collective(jaxpr: Jaxpr) -> list:
    """Per equation: whether it is a collective, or one of its results is read
    (directly or through later equations) by one."""
    leads = [False] * len(jaxpr.eqns)
    needed: set = set()          # vars read on the way into a collective
    for k in reversed(range(len(jaxpr.eqns))):
        eqn = jaxpr.eqns[k]
        if _meets_others(eqn) or any(v in needed for v in eqn.outputs):
            leads[k] = True
            needed.update(a for a in eqn.inputs if type(a) is not Literal)
    return leads


# -- the cut ------------------------------------------------------------------------------------

def _cut(value, taken):
    """`value` for a member that takes the branch; a constant for one that does not."""
    aval = aval_of(value)
    if not isinstance(aval, ShapedArray) or not is_inexact(aval.dtype):
        return value                             # refs, integers: no derivative to cut
    return bind(P.select_n_p, taken, bind(P.stop_gradient_p, value), value)


def cut_branch(branch: Jaxpr) -> Body:
    """`branch` taking a flag `taken` first: the same values, but the derivative of a
    member with `taken` false flows only along paths into a collective."""
    leads = _leads_to_collective(branch)
    # values a member shares with the others' results: its operands and what it
    # computes on the way into a collective
    reaching = set(branch.invars) | {v for eqn, lead in zip(branch.eqns, leads) if lead
                                     for v in eqn.outputs}

    def fun(taken, *args):
        env = dict(zip(branch.invars, args))

        def read(atom, cut):
            if type(atom) is Literal:
                return literal_value(atom)
            return _cut(env[atom], taken) if cut and atom in reaching else env[atom]

        for eqn, lead in zip(branch.eqns, leads):
            inputs = [read(a, not lead) for a in eqn.inputs]
            with source_info_from(eqn):
                outs = current_trace().process_primitive(eqn.primitive, inputs, eqn.params)
            env.update(zip(eqn.outputs, outs))
        return [_cut(read(v, False), taken) for v in branch.outvars]
    return trace_body(fun, [TAKEN_AVAL, *branch.in_avals])


def has_collectives(branches) -> bool:
    return any(collective_names(b) for b in branches)


# -- jvp ------------------------------------------------------------------------------------------

def jvp_as_select(primals, tangents, branches, plain_jvp) -> JvpResult:
    """The JVP of `cond[branches] index, *operands` (branches holding collectives) as
    the program a vmap makes of it when members take different branches; see the
    module docstring. `plain_jvp(primals, tangents, branches)` is cond's own rule."""
    index, operands = primals[0], list(primals[1:])
    names = tuple(dict.fromkeys(n for b in branches for n in collective_names(b)))
    out_avals = branches[0].out_avals
    results = []
    for number, branch in enumerate(branches):
        taken = eq(index, const_like(index, number))
        anyone = bind(C.pmax_p, convert(taken, np.int32), axes=names)
        skipped = trace_body(lambda taken, *ops: [zeros(a) for a in out_avals],
                             [TAKEN_AVAL, *branch.in_avals])
        jaxprs, consts = merge_bodies([skipped, cut_branch(branch)])
        inner_primals = [anyone, *consts, taken, *operands]
        constant = inner_primals[:len(inner_primals) - len(operands)]
        inner_tangents = [Zero(tangent_aval(aval_of(x))) for x in constant] + list(tangents[1:])
        results.append(plain_jvp(inner_primals, inner_tangents, tuple(jaxprs)))
    primals_out = [bind(P.select_n_p, index, *outs)
                   for outs in zip(*(r.primals_out for r in results))]
    tangents_out = []
    for ts in zip(*(r.tangents_out for r in results)):
        if all(type(t) is Zero for t in ts):
            tangents_out.append(ts[0])
        else:
            tangents_out.append(bind(P.select_n_p, index, *(instantiate(t) for t in ts)))
    return JvpResult(primals_out, tangents_out)
