"""The primitives behind `custom_jvp`, `custom_vjp` and `custom_vmap`: calls with their
own derivatives or batching.

Read `catalogue.py` (the `jit` call) first. Like `jit`, the custom calls carry their
primal body as a jaxpr (closed-over values passed as the first `num_consts`
operands), so they print and verify like any equation. The derivative rules are
the user's Python functions, kept as opaque `rule` params and called only when the
call is differentiated -- as in JAX, where they print as `jvp=...`/`fwd=...`.
(A rule is Python code, so the exact text form cannot write these params.)

* `custom_jvp_call[call_jaxpr, num_consts, rule, name]`: operands consts, args.
* `custom_vjp_call[call_jaxpr, num_consts, rule, name]`: operands consts, args.
* `custom_lin[rule, num_residuals, name]`: operands residuals, tangents of the float
  args; results tangents of the float outputs. The tangent map of a custom_vjp
  function: linear, known only through its transpose (the user's `bwd`). `linearize`
  stages it; `transpose` calls `bwd`; evaluating it (forward mode) is an error, as
  in JAX. Its `rule` knows the output types (`rule.tangent_out_avals`).
* `custom_vmap_call[call_jaxpr, num_consts, rule, name]`: operands consts, args. A
  call whose batching is the user's `def_vmap` rule (`transforms/custom_vmap_rules.py`);
  every other pass sees the body. Its operands are never refs.
"""
from __future__ import annotations

from .core import Jaxpr, REF_EFFECT_TYPES
from .registry import Primitive, type_rules, effect_rules, _fail
from .types import ShapedArray, RefType

# A custom function's body may use refs -- its own, or refs passed in as arguments or
# closed over -- and the call then has the body's effects on its operands, as `jit`.
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True,
                              has_ref_effects_of_body=True)
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True,
                              has_ref_effects_of_body=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)


def _custom_call_rule(prim_name):
    def type_rule(*in_avals, call_jaxpr, num_consts, rule, name):
        if not isinstance(call_jaxpr, Jaxpr) or call_jaxpr.constvars:
            _fail(prim_name, "call_jaxpr must be a Jaxpr with its constants passed as inputs")
        expected = call_jaxpr.in_avals
        if len(in_avals) != len(expected) or any(
                a.strip_weak_type() != b.strip_weak_type()
                if isinstance(a, ShapedArray) and isinstance(b, ShapedArray) else a != b
                for a, b in zip(in_avals, expected)):
            _fail(prim_name, f"operands ({', '.join(map(str, in_avals))}) do not match the "
                  f"call's inputs ({', '.join(map(str, expected))})")
        return call_jaxpr.out_avals
    return type_rule


def _custom_call_effects(*in_avals, call_jaxpr, num_consts, rule, name):
    """The body's effects, on the operands it receives (refs are never residuals)."""
    return frozenset(type(e)(e.input_index) if isinstance(e, REF_EFFECT_TYPES) else e
                     for e in call_jaxpr.effects)


def _custom_lin_rule(*in_avals, rule, num_residuals, name):
    return list(rule.tangent_out_avals)


type_rules[custom_jvp_call_p] = _custom_call_rule("custom_jvp_call")
type_rules[custom_vjp_call_p] = _custom_call_rule("custom_vjp_call")
type_rules[custom_lin_p] = _custom_lin_rule


def _custom_vmap_call_rule(*in_avals, **params):
    if any(isinstance(a, RefType) for a in in_avals):
        _fail("custom_vmap_call", "a custom_vmap function cannot take a ref; pass r[...]")
    return _custom_call_rule("custom_vmap_call")(*in_avals, **params)


type_rules[custom_vmap_call_p] = _custom_vmap_call_rule
effect_rules[custom_vmap_call_p] = _custom_call_effects
effect_rules[custom_jvp_call_p] = _custom_call_effects
effect_rules[custom_vjp_call_p] = _custom_call_effects
