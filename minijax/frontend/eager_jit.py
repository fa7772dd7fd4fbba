"""`jitted_eagerly`: an eager jnp call runs as one cached compiled program, as JAX's does.

A `minijax.numpy` function is Python that promotes, broadcasts and binds `lax`
operations. Called on concrete arrays, that Python would run on every call, and each
`lax` operation would be dispatched on its own. JAX's own jnp functions are
`jax.jit` functions (inlined when traced), so an eager `jnp.add(x, y)` goes straight
from C++ dispatch to a cached executable. This decorator gives minijax's the same
shape (and the `lax` functions that minijax composes where JAX has one primitive,
`frontend/lax_extras.py`):

* at the root (eager) trace, when every operand is a plain array-like value -- a JAX
  array, a NumPy array or scalar, a Python scalar -- the call goes through one
  `minijax.jit(..., inline=True)` of the function, with the same static arguments as
  JAX's `jax.jit` of that function (`axis`, `dtype`, `keepdims`, ...). Its first
  call per (avals, static arguments) traces the body, so the body's argument checks
  raise there, before anything compiles, with the body's own messages;
* under an *eager transformation* -- `grad`, `vjp`, `jvp`, `vmap`, `jacfwd`,
  `jacrev`, `hessian`, ... on concrete values: no trace of the chain stages a
  program (`Trace.stages_program`, `ir/trace.py`) -- the call is that same
  `minijax.jit`, bound as one `jit` equation marked `inline`, with the
  transformation's tracers as operands. JAX's jnp functions stay one `pjit` there,
  and so does this: the call rules (`transforms/calls.py`) transform the body once
  per (body, which inputs carry tangents / are unknown / are batched) and cache it,
  and the root compiles each transformed body once. So an eager `grad` of an SVD
  loss makes 15 programs (JAX: 17), not one per primitive of each rule's result (50),
  and a repeat call compiles nothing (`benchmarks/eager_transforms.py`). A pullback
  or linearized function keeps the inline calls; traced later (`make_jaxpr`, `jit`)
  they become their bodies' equations at the caller's lines (`ir/staging.py`);
* under a chain that stages a program (`jit`, `make_jaxpr`, remat, loop and
  `shard_map` bodies, an `ensure_compile_time_eval` block) the body runs inline
  directly -- what the staging trace would record for the inline call, without
  tracing the call first -- so traced programs hold the body's equations and no
  nested call;
* operands only the body handles keep the direct path: refs and ref views (tracers
  of a ref too), tracers at the root (escaped ones), lists and other sequences,
  NumPy values of a non-numeric dtype, Python ints that the body would check
  against the promoted dtype (only 0..127 fits every integer dtype, so only those
  are passed as traced weak ints), unhashable static arguments. So do calls under
  `disable_jit` and while `jax_debug_nans` / `jax_debug_infs` is on (at the root or
  under a transformation), so that the error names the operation that made the
  value, as the op-by-op path does.

The compiled programs live in `minijax.jit`'s cache of each function, so
`minijax.clear_caches()` empties them with every other cache.
"""
from __future__ import annotations

import functools
import inspect
import itertools

import jax
import numpy as np

from .jit import UncheckedCall, jit
from ..ir.float_checks import checks_on as float_checks_on
from ..ir.root_modes import modes as _root_modes
from ..ir.trace import EvalTrace, Tracer, current_trace, stages_a_program
from ..ir.types import RefType, jax_array_type

# Operand types that are plain by their type alone; an identity test on them is the
# cheapest check of the common case. The concrete type of a JAX array joins them the
# first time `_plain` meets a JAX array (`jax_array_type` says why not at import).
# (Subclasses, e.g. JAX tracers, do not match.)
_PLAIN_TYPES = frozenset({float, complex, bool})
_SAFE_INTS = range(0, 128)     # a Python int the body would accept for every int dtype
_NUMERIC_KINDS = frozenset("biufc")   # NumPy dtypes JAX takes as arguments as they are


def _plain(value) -> bool:
    """Whether `value` may be passed to the compiled program as an operand."""
    global _PLAIN_TYPES
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return True
    if isinstance(value, jax.Array) and jax_array_type() not in _PLAIN_TYPES:
        # The first JAX array seen (a constant once learned, so no reset is needed).
        _PLAIN_TYPES = _PLAIN_TYPES | {jax_array_type()}
        return kind is jax_array_type()
    if kind is int:
        return value in _SAFE_INTS
    if isinstance(value, (np.ndarray, np.generic)):
        # Strings, objects and dates: the body's own error, not JAX's argument check.
        return value.dtype.kind in _NUMERIC_KINDS
    return value is None


def _plain_or_traced(value) -> bool:
    """`_plain`, or a tracer of a value (not of a ref): an operand of a call under an
    eager transformation, which the transformation's call rule takes in."""
    if isinstance(value, Tracer):
        return not isinstance(value.aval, RefType)
    return _plain(value)


def jitted_eagerly(*static_argnames: str):
    """Decorate a jnp function that JAX itself jits, naming JAX's static arguments."""
    static = frozenset(static_argnames)

    def decorate(fun):
        positions = {p.name: i for i, p in enumerate(inspect.signature(fun).parameters.values())
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}
        static_positions = frozenset(positions[name] for name in static if name in positions)
        compiled = jit(fun, static_argnames=tuple(static) or None, inline=True)

        static_keys = static_positions | static     # positions and names

        def operands_plain(args, kwargs, plain=_plain) -> bool:
            # (Paid on every eager call with static arguments or keywords: the type
            # test before `plain` and the inline `hash` save most of the calls.)
            for key, value in itertools.chain(enumerate(args), kwargs.items()):
                if key in static_keys:
                    try:
                        hash(value)
                    except TypeError:
                        return False
                elif type(value) not in _PLAIN_TYPES and not plain(value):
                    return False
            return True

        cache = compiled.call_cache()

        @functools.wraps(fun)
        def call(*args, **kwargs):
            # Every step here is paid on each eager call, so the common case (the
            # root trace with no NaN checks, one test: `ir/root_modes.py`; array
            # operands, no keywords) is spelled out as a plain loop.
            if not _root_modes.direct:
                trace = current_trace()
                if float_checks_on() or stages_a_program(trace):
                    return fun(*args, **kwargs)
                if type(trace) is EvalTrace:
                    # (`disable_jit`: `compiled` runs `fun` op by op.)
                    return (compiled(*args, **kwargs) if operands_plain(args, kwargs)
                            else fun(*args, **kwargs))
                # An eager transformation: one inline `jit` call, which its rules
                # transform whole (`transforms/calls.py`) and the root compiles once.
                if _root_modes.jit_disabled or not operands_plain(args, kwargs,
                                                                  _plain_or_traced):
                    return fun(*args, **kwargs)
                return compiled.call_checked(args, kwargs)
            if kwargs or static_positions:
                if not operands_plain(args, kwargs):
                    return fun(*args, **kwargs)
            else:
                for value in args:
                    if type(value) not in _PLAIN_TYPES and not _plain(value):
                        return fun(*args, **kwargs)
            # After the first call, straight to JAX's dispatch of the executable.
            executable = cache.fast
            if executable is not None:
                try:
                    return executable(*args, **kwargs)
                except UncheckedCall:     # new avals: `compiled` looks, then traces
                    pass
            return compiled.call_checked(args, kwargs)
        call.eager_jit = compiled      # the cached program, for tests and `clear_cache`
        return call
    return decorate
