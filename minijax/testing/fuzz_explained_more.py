"""More explained residual differences (docs/fuzzing_findings.md: F64 on JAX 0.10,
F77 and F78), registered in `fuzz_explained.EXPLAINED` like the others: each matcher
accepts a checkpoint row only where its finding accounts for every residual that
differs. Found by the fuzz runs `rm16` and `rm17b` (features
elementwise,control_flow,custom_derivatives,remat)."""
from __future__ import annotations

import numpy as np

from ..ir.core import Var, jaxprs_in_params


def _inexact(aval) -> bool:
    return np.issubdtype(np.dtype(aval.dtype), np.inexact)


def matching(items, owners) -> dict:
    """A maximum matching of `items` to `owners` (each a set of the items it may
    account for), by augmenting paths: owner index -> item index."""
    owner_of = {}

    def assign(i, seen):
        for e, kinds in enumerate(owners):
            if items[i] in kinds and e not in seen:
                seen.add(e)
                if e not in owner_of or assign(owner_of[e], seen):
                    owner_of[e] = i
                    return True
        return False
    for i in range(len(items)):
        assign(i, set())
    return owner_of


def _assigned(residuals, owners) -> bool:
    """Whether each residual can be given its own owner (a set of types it may have)."""
    return len(matching(residuals, owners)) == len(residuals)


def _only_jax_saves_more(transform, row):
    from .fuzz_explained import _unmatched
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if not unmatched or unmatched[0] or not unmatched[1]:
        return None
    return unmatched[1]


def _conds(program):
    from .fuzz_explained import _eqns
    return _eqns(program, ("cond",))


def _branches(cond):
    return [getattr(b, "jaxpr", b) for b in cond.params["branches"]]


def _dead_eqns(jaxpr):
    """The equations of `jaxpr` (one level) that no output needs and that have no
    effect."""
    live = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    dead = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(id(o) in live for o in eqn.outputs):
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
        else:
            dead.append(eqn)
    return dead


def _types_of(atoms):
    from .fuzz_explained import _aval_key
    keys = {_aval_key(a.aval) for a in atoms if _inexact(a.aval)}
    return keys | {("bool", shape) for _, shape in keys}


def _dead_branch_slots(transform, program, row) -> bool:
    """F77, JAX before 0.12: a `cond` branch's dead equation keeps a residual slot.
    JAX 0.12's rule for `cond` under a checkpoint prunes each branch before the
    branches share residual slots; JAX 0.10 and 0.11 keep the residual of an equation
    no branch output needs (`logistic` of an operand, seed `rm17b:128`), so the cond
    saves one array more where that branch is the one saving most of the type. minijax
    prunes first, as JAX 0.12 (pinned by `tests/test_fuzz_regressions_remat.py`).
    The matcher accepts, on JAX before 0.12, a row where minijax saves nothing JAX
    does not and each JAX-only residual has the type of its own dead float equation
    of a branch (an operand's or a result's, or a boolean mask of that shape)."""
    from . import JAX_VERSION
    jax_only = _only_jax_saves_more(transform, row) if JAX_VERSION < (0, 12) else None
    if not jax_only:
        return False
    owners = [_types_of(eqn.inputs + eqn.outputs)
              for cond in _conds(program) for branch in _branches(cond)
              for eqn in _dead_eqns(branch) if any(_inexact(o.aval) for o in eqn.outputs)]
    return bool(owners) and _assigned(jax_only, owners)


def _passed_through_branch_output(transform, program, row) -> bool:
    """F78: a `cond` output that one branch returns as its operand, unchanged, while
    another computes it (seed `rm16:93` on JAX 0.12.0.1: a branch returns `c`, the
    others `-c` or a `custom_vjp` of it). JAX's checkpoint of the `cond` saves that
    operand for the staged `cond` and a slot for the output too; minijax saves the
    known output once, and reads the operand where a branch's derivative does. The
    matcher accepts a row where minijax saves nothing JAX does not and each JAX-only
    residual has the type of its own such output (one per cond output that some but
    not all branches pass through)."""
    jax_only = _only_jax_saves_more(transform, row)
    if not jax_only:
        return False
    from .fuzz_explained import _aval_key
    owners = []
    for cond in _conds(program):
        branches = _branches(cond)
        for j, aval in enumerate(o.aval for o in cond.outputs):
            passed = [any(b.outvars[j] is v for v in b.invars) for b in branches]
            if any(passed) and not all(passed) and _inexact(aval):
                owners.append({_aval_key(aval)})
    return bool(owners) and _assigned(jax_only, owners)


# Primitives whose derivative is zero everywhere: their float results have a symbolic
# zero tangent on both sides.
_ZERO_DERIVATIVE = frozenset({"round", "floor", "ceil", "sign", "stop_gradient",
                              "nextafter"})


def _zero_tangent_barrier_reach(jaxpr):
    """The types a checkpoint may save downstream of a float `optimization_barrier`
    result whose operand has a symbolic-zero tangent (found through the top level of
    the program; values inside a downstream equation's bodies, stacked by a `scan`,
    count too); empty when there is no such result."""
    carries = {id(v) for v in jaxpr.invars if _inexact(v.aval)}
    reached, types = set(), set()
    for eqn in jaxpr.eqns:
        ins = [a for a in eqn.inputs if isinstance(a, Var)]
        if eqn.primitive.name == "optimization_barrier":
            for a, out in zip(eqn.inputs, eqn.outputs):
                if id(a) in carries:
                    carries.add(id(out))
                elif _inexact(a.aval) or id(a) in reached:
                    reached.add(id(out))
            continue
        if eqn.primitive.name not in _ZERO_DERIVATIVE and any(id(a) in carries for a in ins):
            carries.update(id(o) for o in eqn.outputs if _inexact(o.aval))
        if any(id(a) in reached for a in ins):
            reached.update(id(o) for o in eqn.outputs)
            types |= _types_of(eqn.inputs + eqn.outputs)
            types |= _body_types(eqn)
    return types


def _body_types(eqn, lengths=()):
    inner = lengths + (eqn.params["length"],) if eqn.primitive.name == "scan" else lengths
    found = set()
    for body in jaxprs_in_params(eqn.params):
        for sub in getattr(body, "jaxpr", body).eqns:
            for dtype, shape in _types_of(sub.inputs + sub.outputs):
                found |= {(dtype, tuple(inner[len(inner) - k:]) + shape)
                          for k in range(len(inner) + 1)}
            found |= _body_types(sub, inner)
    return found


def _barrier_instantiated_zeros(transform, program, row) -> bool:
    """F64 on JAX 0.10, for a float operand: JAX 0.10's jvp of `optimization_barrier`
    instantiates every symbolic-zero tangent, so the zero tangent of an operand that
    depends on the arguments only through zero-derivative operations (`round(x)`, seed
    `rm17b:122`) becomes a zero array, which every later operation differentiates: a
    checkpoint saves what their jvps read. JAX 0.11 keeps the zero symbolic, as
    minijax does. The matcher accepts, on JAX before 0.11, a row where minijax saves
    nothing JAX does not and every JAX-only residual has the type of an operand or
    result (or a boolean mask of one) of an operation downstream of such a barrier
    result."""
    from . import JAX_VERSION
    jax_only = _only_jax_saves_more(transform, row) if JAX_VERSION < (0, 11) else None
    if not jax_only:
        return False
    types = _zero_tangent_barrier_reach(getattr(program, "jaxpr", program))
    return bool(types) and all(r in types for r in jax_only)
