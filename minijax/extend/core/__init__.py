"""JAX's `jax.extend.core`: primitives of your own, and the IR's data structures.

`Primitive(name)` makes an operation of minijax's IR that the user gives meaning to
with JAX's API: `def_impl` (eager), `def_abstract_eval` (its type rule), and the
tables of `minijax.interpreters` (`ad.primitive_jvps`, `ad.primitive_transposes`,
`batching.primitive_batchers`, `mlir.register_lowering`). Each rule goes into
minijax's own rule table for that pass, translated from JAX's signature to
minijax's (docs/design.md, "Your own primitives"), so every pass treats the
primitive as one of its own.

A user's primitive is kept out of the catalogue (`primitives_by_name`): two
libraries may name their primitives alike, as JAX allows, the IR text parser does
not know it, and `python -m minijax rules` and the rule-coverage tests list the
catalogue only, so a primitive a test makes does not show there.

`Jaxpr`, `ClosedJaxpr`, `Literal` and `Var` are minijax's own (`ir/core.py`); minijax
calls an equation `Eqn`, and JAX's `JaxprEqn` is that class.
"""
from __future__ import annotations

import functools as _functools

from ...ir import registry as _registry
from ...ir.core import ClosedJaxpr, Eqn as JaxprEqn, Jaxpr, Literal, Var
from ...ir.core import jaxprs_in_params
from ...ir.trace import eager_impls as _eager_impls
from ...ir.types import ShapedArray as _ShapedArray
from ...transforms.ad_util import eval_jaxpr as _eval_jaxpr
from . import primitives

__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var",
           "jaxpr_as_fun", "jaxprs_in_params", "primitives"]

# What JAX says when one of a primitive's rules is missing, by minijax's table name,
# and where the rule goes.
_MISSING = {
    "jvp": ("Differentiation rule for '{}' not implemented",
            "ad.primitive_jvps[p] or ad.defjvp"),
    "transpose": ("Transpose rule (for reverse-mode differentiation) for '{}' not "
                  "implemented", "ad.primitive_transposes[p]"),
    "vmap": ("Batching rule for '{}' not implemented", "batching.primitive_batchers[p]"),
    "xla": ("MLIR translation rule for primitive '{}' not found",
            "mlir.register_lowering(p, mlir.lower_fun(impl))"),
}


class Primitive(_registry.Primitive):
    """An operation of your own. Bind it with `p.bind(*args, **params)`; set
    `p.multiple_results = True` before use when it returns a list."""

    def __init__(self, name: str):
        # Not `super().__init__`: that enters the catalogue, where names are unique.
        self.name = name
        self.multiple_results = False
        self.ref_op = self.allocates_ref = self.has_ref_effects_of_body = False
        self.dce_keeps_effects = self.accepts_keys = False
        _registry.type_rules[self] = self._type_rule
        _eager_impls[self] = self._eager

    def impl(self, *args, **params):
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented; "
                                  f"define one with p.def_impl")

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented; "
                                  f"define one with p.def_abstract_eval")

    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self.abstract_eval = abstract_eval
        _registry.clear_signature_cache()     # answers of an earlier rule are stale
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        def abstract_eval(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise NotImplementedError(
                    f"{self.name}: minijax's user primitives have no effects; its "
                    f"effectful abstract eval returned {set(effects)}")
            return out
        return self.def_abstract_eval(abstract_eval)

    def _outputs(self, out, what):
        if not self.multiple_results:
            return [out]
        try:
            return list(out)
        except TypeError:
            raise TypeError(f"{self.name} has multiple_results set, so its {what} must "
                            f"return a sequence, got {out!r}") from None

    def _type_rule(self, *avals, **params):
        outs = self._outputs(self.abstract_eval(*avals, **params), "abstract eval")
        for out in outs:
            if not isinstance(out, _ShapedArray):
                raise TypeError(f"the abstract eval of {self.name} must return "
                                f"minijax.core.ShapedArray values (build them from the "
                                f"avals it receives), got {out!r}")
        return outs

    def _eager(self, *args, **params):
        return self._outputs(self.impl(*args, **params), "impl")

    def missing_rule_error(self, table, default):
        if table not in _MISSING:
            return default
        words, where = _MISSING[table]
        return NotImplementedError(f"{words.format(self.name)}; register one with "
                                   f"{where} (minijax.interpreters)")


def _run_closed_jaxpr(closed_jaxpr, *args):
    return _eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, args)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args):
    """A function that runs `closed_jaxpr`, as JAX's (curried: the arguments given
    here come first): `jaxpr_as_fun(make_jaxpr(f)(x))(x)` is `f(x)`'s outputs, as a
    list. It binds each equation in the current trace, so transformations apply."""
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun takes a ClosedJaxpr (what make_jaxpr returns), "
                        f"got {type(closed_jaxpr).__name__}")
    return _functools.partial(_run_closed_jaxpr, closed_jaxpr, *args)
