"""The class behind `minijax.extend.core.Primitive`: an operation of the user's, given
meaning with JAX's API (read `minijax/extend/core/__init__.py` first).

Its type rule and eager impl are entered in minijax's tables when it is made, and
call whatever `def_abstract_eval` / `def_impl` set (by default they raise JAX's
"not implemented" errors); the other passes' rules come from `minijax.interpreters`.
"""
from __future__ import annotations

import jax

from ..ir import registry as _registry
from ..ir.trace import eager_impls as _eager_impls
from ..ir.types import ShapedArray as _ShapedArray

# What JAX says when one of a primitive's rules is missing, by minijax's table name,
# and where the rule goes.
_MISSING = {
    "jvp": ("Differentiation rule for '{}' not implemented",
            "ad.primitive_jvps[p] or ad.defjvp"),
    "transpose": ("Transpose rule (for reverse-mode differentiation) for '{}' not "
                  "implemented", "ad.primitive_transposes[p]"),
    "vmap": ("Batching rule for '{}' not implemented", "batching.primitive_batchers[p]"),
    "xla": ("MLIR translation rule for primitive '{}' not found for platform {}",
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

    def abstract_eval(self, *args, **params):
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
        # JAX names the platform it lowers for as `platform_dependent` does ('cuda',
        # where `default_backend()` says 'gpu').
        words = words.format(self.name, jax.export.default_export_platform())
        return NotImplementedError(f"{words}; register one with "
                                   f"{where} (minijax.interpreters)")
