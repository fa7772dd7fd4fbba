"""Eager dispatch: running one primitive, or one `jit` call, on concrete values.

When no trace stages a program, every `bind` reaches the root trace, which runs the
primitive with its entry in `eager_impls` (`ir/trace.py`). For most primitives that
entry is `apply_primitive` (`install_default_eager_impls`, run once by
`backends/__init__.py` after every backend module has registered its rules): it
compiles a program of that one primitive, from its lowering rule in `xla.py`, and
caches it at two levels:

* by (primitive, params, input avals), the careful path: `_compiled_primitive`, a
  `jax.jit` function named and shaped as JAX's own eager program for the primitive
  (`jit_sin`, a single result returned bare), so equal operations lower to equal
  module texts and a persistent compilation cache compiles them once for both
  libraries;
* by (primitive, params, cheap signatures of the operands), the fast path:
  `_fast_path`, for operands that need no conversion, so a repeated eager op costs a
  dictionary lookup plus JAX's dispatch.

A NumPy operand is put in its canonical dtype by NumPy (`_as_jax_value`), not by a
conversion program. An eager `jit` call runs its body's compiled program, found by
the body, then by its text (`_eager_call_program`), unless it is an inline call of
at most one equation, which goes through that primitive's own dispatch
(`_small_inline_call`). Primitives
that compute nothing (`stop_gradient`, `checkpoint_name`) compile nothing:
`eager_identity`. `clear_caches` forgets every program made here.
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from ..ir import primitives as P
from ..ir.core import Jaxpr, Literal, Var
from ..ir.primitives import out_avals_of
from ..ir.trace import eager_impls
from ..ir.types import aval_of_value, canonical_dtype
from .xla import (lowering_rules, weak_as_typed, interpret_with_table, _no_lowering,
                  compile_jaxpr_by_text)

# JAX's name for a primitive where it is not minijax's: an eager program is named after
# JAX's (below), so that equal module texts are equal names too.
JAX_PRIMITIVE_NAMES = {name: name.replace("_", "-") for name in
                       ("scatter_add", "scatter_mul", "scatter_min", "scatter_max")}


# What runs before JAX traces one primitive's program: `jax_log_compiles` and
# `jax_no_tracing`, which live in the frontend, above this layer (`frontend/jit.py`
# puts `config_flags.before_trace` here).
before_trace = [lambda where, in_avals, fun: None]


@functools.lru_cache(maxsize=8192)
def _compiled_primitive(prim, params_key, in_avals):
    params = dict(params_key)
    # the type rule names a bad call clearly, and says which results are weak
    out_avals = out_avals_of(prim, in_avals, params)
    rule = lowering_rules[prim]

    # Named and shaped as JAX's own eager program for the primitive (`jit_sin`, one
    # result returned bare): the same operation on the same types lowers to the same
    # module text, so a persistent compilation cache compiles it once for both.
    name = JAX_PRIMITIVE_NAMES.get(prim.name, prim.name)

    # JAX runs this body only when it traces (a new signature), which is where JAX's
    # own eager dispatch logs under `jax_log_compiles` and refuses under `jax_no_tracing`.
    def run(*args):
        before_trace[0](f"jit({name})", in_avals, run)
        outs = weak_as_typed(out_avals, rule(*args, **params))
        return outs if prim.multiple_results else outs[0]
    run.__name__ = run.__qualname__ = name
    return jax.jit(run)


def _as_jax_value(value, aval):
    """Python scalars pass through (JAX keeps them weakly typed); NumPy values are
    cast to the canonical (x64-off) dtype by NumPy, which compiles nothing (as JAX's own
    eager dispatch does: `jax.jit` transfers a NumPy value as it is; `jnp.asarray`
    would compile a conversion program per dtype). A 64-bit value out of range wraps
    or becomes inf with NumPy's overflow warning, as in JAX's transfer."""
    if isinstance(value, (bool, int, float, complex, jax.Array)):
        return value
    value = np.asarray(value)
    return value if value.dtype == aval.dtype else value.astype(aval.dtype)


def eager_identity(x):
    """The eager result of a primitive that computes nothing (`stop_gradient`,
    `checkpoint_name`), as JAX's eager primitive gives it, with no program: a jax.Array
    comes back as it was given (the same object); a NumPy value in its canonical dtype
    (64-bit mode off: float64 -> float32), still a NumPy value; a Python number as a
    weakly typed rank-0 jax.Array of its canonical dtype, transferred (a bool stays a
    bool, as in JAX)."""
    if isinstance(x, jax.Array) or type(x) is bool:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind in "OUSMm":
            raise TypeError(f"dtype {x.dtype} is not a valid JAX array type: only "
                            f"arrays of numbers (and bools) are supported")
        x = np.asarray(x)
        return x if x.dtype == canonical_dtype(x.dtype) else x.astype(canonical_dtype(x.dtype))
    if isinstance(x, (int, float, complex)):
        return jax.device_put(x)
    aval_of_value(x)       # anything else that is not a value is named as such
    return x


def _eager_stop_gradient(x):
    return [eager_identity(x)]


eager_impls[P.stop_gradient_p] = _eager_stop_gradient


def _signature(value):
    # What the compiled function depends on, cheaply: jax.Arrays by shape, dtype and
    # weak type; Python scalars by type; NumPy arrays and scalars of a canonical dtype
    # by shape and dtype (`jax.jit` takes them as they are: jnp's promotion makes a
    # NumPy scalar of `x * 2.0`'s constant); anything else forces the careful path.
    if isinstance(value, jax.Array):   # (a jax.Array of keys has no weak_type)
        return (value.shape, value.dtype, getattr(value, "weak_type", False))
    if type(value) in _PY_SCALAR_TYPES:    # not np.float64, a float subclass but strong
        return type(value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc" \
            and canonical_dtype(value.dtype) is value.dtype:
        return (value.shape, value.dtype, False)
    return None


_PY_SCALAR_TYPES = frozenset((bool, int, float, complex))

# (primitive, params, input signatures) -> compiled function, for inputs that need no
# conversion. Cleared by `clear_caches`.
_fast_path: dict = {}


def apply_primitive(prim, *args, **params):
    """Eager execution of one primitive on concrete values."""
    if prim is P.jit_p:
        jaxpr = params["jaxpr"]
        if params.get("inline") and len(jaxpr.eqns) <= 1 and not any(
                type(v) is Literal for v in jaxpr.outvars):
            return _small_inline_call(jaxpr, args)
        return _eager_call_program(jaxpr, bool(params.get("inline")))(*args)
    signature = tuple(map(_signature, args))
    key = (prim, tuple(params.items()), signature)
    fn = _fast_path.get(key)
    if fn is not None:
        return fn(*args) if prim.multiple_results else [fn(*args)]
    in_avals = tuple(aval_of_value(a) for a in args)
    fn = _compiled_primitive(prim, tuple(sorted(params.items())), in_avals)
    if None not in signature:
        _fast_path[key] = fn
    outs = fn(*(_as_jax_value(a, aval) for a, aval in zip(args, in_avals)))
    return outs if prim.multiple_results else [outs]


def _small_inline_call(jaxpr: Jaxpr, args) -> list:
    """An eager inline call whose body is at most one equation (a one-primitive jnp
    function, or a transformed body that came down to one primitive: `vmap(jnp.sin)`,
    the transpose of `jnp.multiply`). One equation runs through its primitive's
    eager dispatch, whose programs every call of that primitive shares, rather than
    compiling a program per function and transformation. Its results are what a
    compiled call gives: an output that is an input given as a Python or NumPy value
    (the tangent `jnp.add`'s jvp forwards, the cotangent its transpose forwards)
    becomes a jax.Array, a Python scalar weakly typed -- a transfer, still no
    program. (A literal output goes to the compiled path, which gives it its aval's
    weak type.)"""
    return [jax.device_put(v) if isinstance(v, _HOST_VALUE_TYPES) else v
            for v in interpret_with_table(jaxpr, (), args, eager_impls, _no_lowering)]


_HOST_VALUE_TYPES = (int, float, complex, np.ndarray, np.generic)


@functools.lru_cache(maxsize=4096)
def _eager_call_program(jaxpr: Jaxpr, inline: bool):
    """The compiled function of an eager `jit` call's body, looked up by the body
    object, then by its text. An eager transformation transforms a body once per
    (body, which inputs carry tangents / are unknown / are batched), but different
    derivation paths (`check_grads`' jvp of a vjp and vjp of a jvp) reach equal
    bodies as distinct objects: one XLA compile serves them all.

    An inline call's body (a jnp function's: `frontend/eager_jit.py`) that returns
    the same value at several positions -- a jvp of a jvp hands the primal out as
    its own tangent's primal, and so on -- compiles with each value once and gives it
    back at every position, as JAX's transformed calls forward a repeated output: the
    bodies that differ only in such repeats share one program. (A user's `jit` keeps
    one array per output, as `jax.jit` does.)"""
    outvars = jaxpr.outvars
    if not inline or len(set(outvars)) == len(outvars) or any(
            type(v) is not Var for v in outvars):
        return compile_jaxpr_by_text(jaxpr)
    unique = tuple(dict.fromkeys(outvars))
    position = {var: i for i, var in enumerate(unique)}
    picks = [position[var] for var in outvars]
    compiled = compile_jaxpr_by_text(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns, unique))

    def run(*args):
        outs = compiled(*args)
        return [outs[i] for i in picks]
    return run


def clear_caches():
    """Forget the eager programs: the fast path's, the per-primitive ones and the call
    bodies'."""
    _fast_path.clear()
    _eager_call_program.cache_clear()
    _compiled_primitive.cache_clear()


def install_default_eager_impls():
    """Give every lowered primitive without an eager impl of its own the default one:
    compile that one primitive (`apply_primitive`). Called once, by
    `backends/__init__.py`, after every backend module registered its rules, so a
    module's own impl wins whatever the order of imports."""
    for prim in lowering_rules:
        eager_impls.setdefault(prim, functools.partial(apply_primitive, prim))
