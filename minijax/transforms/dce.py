"""Dead-code elimination: drop the equations no wanted output depends on.

`dce_jaxpr(jaxpr, used_outputs)` walks the equations once, last to first, keeping
an equation if one of its outputs is used later or if it has an effect (writing a
ref, printing): effects must happen even when nothing reads their result. Inputs
of kept equations become used. The result says which inputs are still used, so a
caller can stop computing values nobody needs (remat and vjp prune residuals so).

Equations with sub-jaxprs can shrink their body too: `dce_rules[prim](eqn,
used_outputs, dead_refs) -> DceEqn(eqn or None, used_inputs)` (for `jit`: see
`calls.py`). `dead_refs` flags the equation's inputs that are refs created in this
jaxpr (or dead refs given to it) which nothing after the equation uses: the body's
effects on them are unobservable unless the body itself reads them back. In a
`linearize`d loop body that calls a `jit` with a ref, the jit's writes to the ref's
tangent are such effects, and only dropping them lets the known loop be split off.
A rule may ignore `dead_refs`: keeping an effect is always safe.
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir.core import Var, Jaxpr, ClosedJaxpr, AllocEffect, REF_EFFECT_TYPES
from ..ir.primitives import register_rule_table, GenericPath

dce_rules: dict = register_rule_table(
    "dce", {}, GenericPath(lambda prim: True, "kept if an output is used or it has effects"))


def _effects_matter(eqn, live, created) -> bool:
    """Whether an equation none of whose outputs is used must stay for its effects.

    Effects on a ref created inside this jaxpr matter only if something kept later
    uses that ref (walking backwards, that use has made the ref `live`); creating a
    ref nobody uses matters not at all. Effects on refs received from outside, and
    prints, always matter."""
    for effect in eqn.effects:
        if isinstance(effect, AllocEffect):
            continue
        if isinstance(effect, REF_EFFECT_TYPES):
            ref = eqn.inputs[effect.input_index]
            if isinstance(ref, Var) and ref in live:
                return True
            if ref not in created:
                return True
            continue
        return True
    return False


class DceResult(NamedTuple):
    jaxpr: Jaxpr | ClosedJaxpr
    used_inputs: tuple       # one bool per invar


class DceEqn(NamedTuple):
    eqn: object              # the (possibly pruned) equation, or None to drop it
    used_inputs: tuple       # one bool per input of the original equation


def dce_jaxpr(jaxpr, used_outputs=None, prune_inputs: bool = False,
              dead_refs=None) -> DceResult:
    """Remove equations that no used output needs (default: all outputs are used).

    Outputs that are not used are dropped from the result. With `prune_inputs`,
    unused invars are dropped too (`used_inputs` says which were kept). `dead_refs`
    (a bool per invar) marks ref inputs nobody reads after this jaxpr: effects on them
    count as effects on a ref created here."""
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else None
    if closed is not None:
        jaxpr = closed.jaxpr
    if used_outputs is None:
        used_outputs = [True] * len(jaxpr.outvars)
    live: set = {v for v, used in zip(jaxpr.outvars, used_outputs)
                 if used and isinstance(v, Var)}
    created = {v for eqn in jaxpr.eqns if eqn.primitive.allocates_ref for v in eqn.outputs}
    created.update(v for v, dead in zip(jaxpr.invars, dead_refs or ()) if dead)
    kept = []
    for eqn in reversed(jaxpr.eqns):
        used = [v in live for v in eqn.outputs]
        if not any(used) and not _effects_matter(eqn, live, created):
            continue
        rule = dce_rules.get(eqn.primitive)
        if rule is not None and (not eqn.effects or eqn.primitive.dce_keeps_effects):
            dead = tuple(isinstance(v, Var) and v in created and v not in live
                         for v in eqn.inputs) if eqn.effects else ()
            # a pruned copy keeps the original's line
            pruned = rule(eqn, used, dead if any(dead) else ())
            if pruned.eqn is None:
                continue
            kept.append(pruned.eqn)
            live.update(v for v, u in zip(eqn.inputs, pruned.used_inputs)
                        if u and isinstance(v, Var))
            continue
        kept.append(eqn)
        live.update(v for v in eqn.inputs if isinstance(v, Var))
    kept.reverse()
    used_inputs = tuple(v in live for v in jaxpr.invars)
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u] if prune_inputs \
        else jaxpr.invars
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs) if used]
    used_consts = [v in live for v in jaxpr.constvars]
    # Unused consts of a closed jaxpr go with their values; an open jaxpr's constvars
    # are part of its calling convention and stay.
    constvars = ([v for v, u in zip(jaxpr.constvars, used_consts) if u]
                 if closed is not None else jaxpr.constvars)
    new = Jaxpr(constvars, invars, kept, outvars)
    if closed is not None:
        new = ClosedJaxpr(new, [c for c, u in zip(closed.consts, used_consts) if u])
    return DceResult(new, used_inputs)
