"""`custom_linear_solve`: a linear solve whose derivatives are implicit.

    custom_linear_solve[const_lengths, jaxprs]  *matvec_consts, *vecmat_consts,
            *solve_consts, *transpose_solve_consts, *b   ->  *x, *aux

`jaxprs` is the 4-tuple `(matvec, vecmat, solve, transpose_solve)` of bodies without
constvars, as JAX's `linear_solve` holds them; `const_lengths` the 4-tuple of how
many leading operands belong to each. Every body takes its consts, then a value of
b's types: `matvec` computes A x, `vecmat` Aᵀ x, `solve` A⁻¹ b (with `has_aux`, also
some aux values after x), `transpose_solve` A⁻ᵀ b. `vecmat` and `transpose_solve`
are None when the user gave no `transpose_solve`: the equation then has no reverse
mode, as in JAX.

The equation means `solve(solve_consts, b)`. Its rules (transforms/linear_solve_rules.py)
never differentiate `solve`: x satisfies A x = b, so ẋ = A⁻¹(ḃ - Ȧx) (a second
`custom_linear_solve` on the right-hand side, Ȧ being the JVP of `matvec` in its
consts), and the transpose in b is the same equation with the roles swapped
(`transposed_params`): matvec ↔ vecmat, solve ↔ transpose_solve.

The outputs are typed as b (weak types included) followed by solve's aux values,
as JAX types them. Bodies may not use refs or have effects: a solver is a pure
function of its operands.
"""
from __future__ import annotations

import numpy as np

from .core import Jaxpr
from .types import RefType
from .registry import Primitive, type_rules, _fail
from .control_flow_primitives import same_types, types_text

__all__ = ["linear_solve_p", "BODY_NAMES", "split_operands", "transposed_params"]

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)

BODY_NAMES = ("matvec", "vecmat", "solve", "transpose_solve")


def split_operands(args, const_lengths):
    """`(four lists of consts, b)` of an equation's operands."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return groups, list(args[start:])


def transposed_params(const_lengths, jaxprs):
    """The params of Aᵀ's solve: matvec ↔ vecmat, solve ↔ transpose_solve (the
    operand groups swap the same way)."""
    m, v, s, t = const_lengths
    jm, jv, js, jt = jaxprs
    return (v, m, t, s), (jv, jm, jt, js)


def _linear_solve_rule(*args, const_lengths, jaxprs):
    name = "custom_linear_solve"
    if (not isinstance(const_lengths, tuple) or len(const_lengths) != 4
            or not all(isinstance(n, (int, np.integer)) and n >= 0 for n in const_lengths)):
        _fail(name, f"const_lengths must be a tuple of 4 non-negative ints, got "
                    f"{const_lengths!r}")
    if not isinstance(jaxprs, tuple) or len(jaxprs) != 4:
        _fail(name, f"jaxprs must be a tuple of 4 (matvec, vecmat, solve, "
                    f"transpose_solve), got {jaxprs!r}")
    if sum(const_lengths) > len(args):
        _fail(name, f"const_lengths {const_lengths} asks for more than the "
                    f"{len(args)} operands")
    groups, b = split_operands(args, const_lengths)
    for value in args:
        if isinstance(value, RefType):
            _fail(name, "cannot pass a ref to a linear solve; read it first (r[...])")
    if (jaxprs[1] is None) != (jaxprs[3] is None):
        _fail(name, "vecmat and transpose_solve are given together or not at all")
    for body_name, jaxpr, consts in zip(BODY_NAMES, jaxprs, groups):
        if jaxpr is None:
            if body_name in ("matvec", "solve"):
                _fail(name, f"{body_name} must be a Jaxpr")
            if consts:
                _fail(name, f"{body_name} is None but has {len(consts)} consts")
            continue
        if not isinstance(jaxpr, Jaxpr) or jaxpr.constvars:
            _fail(name, f"{body_name} must be a Jaxpr with its constants passed as inputs")
        if jaxpr.effects:
            _fail(name, f"{body_name} must have no effects, got {sorted(map(str, jaxpr.effects))}")
        if not same_types(consts + b, jaxpr.in_avals):
            _fail(name, f"{body_name} takes {types_text(jaxpr.in_avals)} but is given "
                        f"{types_text(consts + b)} (its consts, then b)")
        outs = jaxpr.out_avals
        # solve and transpose_solve return x then their aux values (the same count)
        n_aux = 0 if body_name in ("matvec", "vecmat") else len(jaxprs[2].out_avals) - len(b)
        if len(outs) != len(b) + n_aux or not same_types(outs[:len(b)], b):
            _fail(name, f"{body_name} returns {types_text(outs)} but b is {types_text(b)}"
                  + (f" (then {n_aux} aux values)" if n_aux else ""))
    return list(b) + list(jaxprs[2].out_avals[len(b):])


type_rules[linear_solve_p] = _linear_solve_rule
