"""JAX's `jax.interpreters.ad`: derivative rules of your own primitives.

* `primitive_jvps[p] = rule`, JAX's signature `rule(primals, tangents, **params) ->
  (primal_out, tangent_out)` (lists of outputs when `p.multiple_results`), becomes
  minijax's `jvp_rules[p]`, which returns `JvpResult([...], [...])`.
* `primitive_transposes[p] = rule`, `rule(ct, *args, **params) -> a cotangent per
  arg` (`ct` a list when `p.multiple_results`; a linear `arg` is an
  `UndefinedPrimal`, test with `is_undefined_primal`; `None` for the others), becomes
  `transpose_rules[p]`, whose rules take the list of output cotangents.
* `defjvp`, `defjvp2`, `deflinear`, `deflinear2`, `defbilinear`: JAX's shorthands,
  built on the two tables.

`Zero` (a symbolic zero tangent or cotangent of type `Zero(aval).aval`),
`UndefinedPrimal`, `instantiate_zeros`, `zeros_like_aval` and `add_tangents` are
minijax's own (`transforms/ad_util.py`, `transforms/transpose.py`).
"""
from __future__ import annotations

import functools

from ..transforms.ad_util import Zero, add_tangents as _add_tangents, instantiate, \
    tangent_aval, zeros
from ..transforms.jvp import JvpResult, jvp_rules as _jvp_rules
from ..transforms.transpose import UndefinedPrimal, transpose_rules as _transpose_rules
from ..ir.trace import aval_of as _aval_of
from ._tables import UserRuleTable, check_user_primitive

__all__ = ["UndefinedPrimal", "Zero", "add_tangents", "defbilinear", "defjvp", "defjvp2",
           "deflinear", "deflinear2", "instantiate_zeros", "is_undefined_primal",
           "primitive_jvps", "primitive_transposes", "zeros_like_aval"]


def is_undefined_primal(x) -> bool:
    """Whether `x`, an argument of a transpose rule, is a linear input (known only by
    its type, `x.aval`)."""
    return isinstance(x, UndefinedPrimal)


def instantiate_zeros(tangent):
    """`tangent` as an array: a symbolic `Zero` becomes zeros of its type."""
    return instantiate(tangent)


def zeros_like_aval(aval):
    return zeros(aval)


def add_tangents(x, y):
    """`x + y` where either may be a symbolic `Zero`."""
    return _add_tangents(x, y)


def _outputs(prim, out):
    if not prim.multiple_results:
        return [out]
    return list(out)


def _translate_jvp(prim, rule):
    def jvp_rule(primals, tangents, **params):
        out = rule(primals, tangents, **params)
        try:
            primal_out, tangent_out = out
        except (TypeError, ValueError):
            raise TypeError(f"the jvp rule of {prim.name} must return a pair "
                            f"(primal_out, tangent_out), got {out!r}") from None
        return JvpResult(_outputs(prim, primal_out), _outputs(prim, tangent_out))
    jvp_rule.__wrapped__ = rule
    return jvp_rule


def _translate_transpose(prim, rule):
    def transpose_rule(cts, *args, **params):
        cts_in = rule(cts if prim.multiple_results else cts[0], *args, **params)
        cts_in = list(cts_in)
        if len(cts_in) != len(args):
            raise TypeError(f"the transpose rule of {prim.name} must return one "
                            f"cotangent per operand ({len(args)}), got {len(cts_in)}")
        return cts_in
    transpose_rule.__wrapped__ = rule
    return transpose_rule


primitive_jvps = UserRuleTable("ad.primitive_jvps", _jvp_rules, _translate_jvp)
primitive_transposes = UserRuleTable("ad.primitive_transposes", _transpose_rules,
                                     _translate_transpose)


def _zero_like(value):
    return Zero(tangent_aval(_aval_of(value)))


def _check_single(prim, where):
    check_user_primitive(prim, where)
    if prim.multiple_results:
        raise TypeError(f"{where} serves single-result primitives; {prim.name} has "
                        f"multiple_results set (set primitive_jvps[p] instead)")


def _standard_jvp(prim, jvprules, with_answer, primals, tangents, **params):
    answer = prim.bind(*primals, **params)
    tangent = _zero_like(answer)
    for rule, t in zip(jvprules, tangents):
        if rule is None or type(t) is Zero:
            continue
        term = rule(t, answer, *primals, **params) if with_answer else \
            rule(t, *primals, **params)
        tangent = add_tangents(tangent, term)
    return answer, tangent


def defjvp(primitive, *jvprules):
    """One rule per operand, `rule(tangent, *primals, **params) -> its term of the
    output tangent` (`None`: the output does not depend on that operand); the terms
    are summed. Operands whose tangent is zero are skipped."""
    _check_single(primitive, "ad.defjvp")
    primitive_jvps[primitive] = functools.partial(_standard_jvp, primitive, jvprules, False)


def defjvp2(primitive, *jvprules):
    """`defjvp` whose rules also receive the primal output: `rule(tangent, ans,
    *primals, **params)`."""
    _check_single(primitive, "ad.defjvp2")
    primitive_jvps[primitive] = functools.partial(_standard_jvp, primitive, jvprules, True)


def _linear_jvp(prim, primals, tangents, **params):
    answer = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        return answer, (list(map(_zero_like, answer)) if prim.multiple_results
                        else _zero_like(answer))
    return answer, prim.bind(*map(instantiate, tangents), **params)


def _zero_cotangents(args):
    return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]


def deflinear(primitive, transpose_rule):
    """A primitive linear in all its operands: its jvp applies it to the tangents,
    and `transpose_rule(ct, **params)` gives the cotangent of every operand."""
    check_user_primitive(primitive, "ad.deflinear")
    primitive_jvps[primitive] = functools.partial(_linear_jvp, primitive)

    def transpose(ct, *args, **params):
        return _zero_cotangents(args) if type(ct) is Zero else transpose_rule(ct, **params)
    primitive_transposes[primitive] = transpose


def deflinear2(primitive, transpose_rule):
    """`deflinear` whose transpose rule also receives the operands:
    `transpose_rule(ct, *args, **params)`."""
    check_user_primitive(primitive, "ad.deflinear2")
    primitive_jvps[primitive] = functools.partial(_linear_jvp, primitive)

    def transpose(ct, *args, **params):
        return _zero_cotangents(args) if type(ct) is Zero else \
            transpose_rule(ct, *args, **params)
    primitive_transposes[primitive] = transpose


def defbilinear(prim, lhs_rule, rhs_rule):
    """A primitive of two operands, linear in each with the other fixed (a product):
    `lhs_rule(ct, x, y, **params)` is the cotangent of `x` when `x` is the linear one
    (`rhs_rule` likewise for `y`)."""
    _check_single(prim, "ad.defbilinear")
    defjvp(prim, lambda g, x, y, **params: prim.bind(g, y, **params),
           lambda g, x, y, **params: prim.bind(x, g, **params))

    def transpose(ct, x, y, **params):
        if is_undefined_primal(x) == is_undefined_primal(y):
            raise TypeError(f"{prim.name} is bilinear: exactly one of its operands may "
                            f"be linear when it is transposed")
        if type(ct) is Zero:
            return _zero_cotangents([x, y])
        if is_undefined_primal(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]
    primitive_transposes[prim] = transpose
