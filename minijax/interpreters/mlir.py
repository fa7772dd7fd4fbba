"""JAX's `jax.interpreters.mlir`: how a primitive of your own reaches XLA.

minijax lowers through `jax.lax` calls, not by building MLIR: the one lowering it
serves is `register_lowering(p, lower_fun(impl, multiple_results=...))`, where
`impl` is written with minijax's own operations (`minijax.numpy`, `minijax.lax`).
minijax traces `impl` into a jaxpr at the operands' types (once per types and
params), and lowers that jaxpr with its XLA backend (`backends/xla.py`), so the
primitive's `xla` rule is "lower this jaxpr". The same jaxpr, run by the reference
evaluator, is its `reference` rule. A hand-written MLIR rule (one that builds `hlo`
ops from a `ctx`) cannot be served, and `register_lowering` says so.
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from ..backends.reference import eval_jaxpr as _reference_eval
from ..backends.reference_rules import reference_rules as _reference_rules
from ..backends.xla import (lower_jaxpr as _lower_jaxpr, lowering_rules as _lowering_rules,
                            weakened as _weakened)
from ..ir.registry import out_avals_of as _out_avals_of
from ..ir.staging import trace_to_jaxpr as _trace_to_jaxpr
from ..ir.trace import root_trace as _root_trace, set_current_trace as _set_current_trace
from ..ir.types import ShapedArray as _ShapedArray, aval_of_value as _aval_of_value
from ._tables import check_user_primitive

__all__ = ["lower_fun", "register_lowering"]


class _LoweredFunction:
    """What `lower_fun` returns: `fun` to be traced with minijax, once per operand
    types and params (`traced`: the jaxpr, and the out avals the abstract eval
    declares)."""

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results
        self._jaxprs = {}

    def __call__(self, *args, **params):
        raise TypeError("a lower_fun(...) result is for mlir.register_lowering; minijax "
                        "calls it itself (call the function you gave lower_fun instead)")

    def traced(self, prim, in_avals, params):
        try:
            key = (in_avals, tuple(sorted(params.items())))
            found = self._jaxprs.get(key)
        except TypeError:       # an unhashable param: trace every time
            key, found = None, None
        if found is None:
            found = self._trace(prim, in_avals, params)
            if key is not None:
                self._jaxprs[key] = found
        return found

    def _trace(self, prim, in_avals, params):
        def body(*args):
            out = self.fun(*args, **params)
            return list(out) if self.multiple_results else [out]
        with _set_current_trace(_root_trace()):
            closed = _trace_to_jaxpr(body, list(in_avals))
        declared = _out_avals_of(prim, in_avals, params)
        got = [(a.shape, a.dtype) for a in closed.jaxpr.out_avals]
        if got != [(a.shape, a.dtype) for a in declared]:
            show = lambda avals: ", ".join(f"{np.dtype(a.dtype).name}{list(a.shape)}"
                                           for a in avals)
            raise TypeError(f"the function lower_fun lowers {prim.name} with returns "
                            f"({show(closed.jaxpr.out_avals)}), but its abstract eval "
                            f"says ({show(declared)})")
        return closed, declared


def lower_fun(fun, multiple_results: bool = True):
    """`fun(*operands, **params)`, written with minijax's operations, as the lowering of
    a primitive (for `register_lowering`). As in JAX, `multiple_results` (default
    True) says that `fun` returns a sequence of results."""
    if not callable(fun):
        raise TypeError(f"lower_fun takes a function, got {fun!r}")
    return _LoweredFunction(fun, bool(multiple_results))


# JAX's platform names for what `jax.default_backend()` calls "gpu".
_GPU_PLATFORMS = ("cuda", "rocm", "gpu")


def _choose(prim):
    rules = prim._minijax_lowerings
    backend = jax.default_backend()
    for platform in ((backend,) + (_GPU_PLATFORMS if backend == "gpu" else ()) + (None,)):
        if platform in rules:
            return rules[platform]
    raise NotImplementedError(f"MLIR translation rule for primitive '{prim.name}' not "
                              f"found for platform {jax.export.default_export_platform()}; "
                              f"its lowerings are for "
                              f"{sorted(rules)}")


def _jax_value_aval(value):
    aval = getattr(value, "aval", None)      # a tracer of jax.jit, or a jax.Array
    if aval is not None and hasattr(value, "dtype"):
        return _ShapedArray(value.shape, value.dtype, getattr(aval, "weak_type", False))
    return _aval_of_value(value)


def _as_declared(value, aval):
    # The abstract eval, not the traced function, says whether a result is weak (a
    # function of weak operands gives weak results; JAX's primitive gives its type's).
    if aval.weak_type:
        return _weakened(value)
    return jax.lax.convert_element_type(value, value.dtype) if value.weak_type else value


def _lower(prim, *values, **params):
    in_avals = tuple(_jax_value_aval(v) for v in values)
    closed, declared = _choose(prim).traced(prim, in_avals, params)
    outs = _lower_jaxpr(closed.jaxpr, closed.consts, values)
    return [_as_declared(v, a) for v, a in zip(outs, declared)]


def _reference(prim, *values, **params):
    in_avals = tuple(_aval_of_value(v) for v in values)
    closed, _ = _choose(prim).traced(prim, in_avals, params)
    return _reference_eval(closed.jaxpr, closed.consts, *values)


def register_lowering(prim, rule, platform: str | None = None, inline: bool = True,
                      cacheable: bool = True) -> None:
    """Lower `prim` with `rule`, which must be `lower_fun(impl, ...)`; `platform`
    ("cpu", "cuda", "rocm", "tpu"; None: any) picks where it applies. `inline` and
    `cacheable` are JAX's MLIR settings; minijax has no use for them."""
    del inline, cacheable
    check_user_primitive(prim, "mlir.register_lowering")
    if not isinstance(rule, _LoweredFunction):
        raise NotImplementedError(
            f"minijax cannot use a hand-written MLIR lowering for {prim.name}: it lowers "
            f"through jax.lax, not MLIR. Write the operation with minijax.numpy or "
            f"minijax.lax and register mlir.lower_fun(impl, multiple_results=...) instead")
    if platform is not None and not isinstance(platform, str):
        raise TypeError(f"register_lowering's platform is a name such as 'cpu' or "
                        f"'cuda', or None, got {platform!r}")
    if "_minijax_lowerings" not in vars(prim):
        prim._minijax_lowerings = {}
    prim._minijax_lowerings[platform] = rule
    _lowering_rules[prim] = functools.partial(_lower, prim)
    _reference_rules[prim] = functools.partial(_reference, prim)
