"""The public staging API: `make_jaxpr` and `jit`.

Both trace the user's function once per (pytree structure, input avals, static
arguments) with the staging trace of `ir/staging.py`. `make_jaxpr` hands back the
jaxpr; `jit` binds it as one `jit` equation in the current trace. At the root (eager)
trace that equation runs as a single `jax.jit`-compiled XLA program; under another
transformation (grad, vmap, an outer jit) the transformation's rule for `jit`
applies, so the staged call stays one call.

Both check refs the same way, through the same two functions: `_flatten_inputs`
before tracing (refs live, not views, not passed twice) and `_trace_flat` while and
after tracing (no ref returned, none both closed over and passed in); see
`frontend/ref_checks.py`. So `make_jaxpr` never shows a program that `jit` would refuse.
"""
from __future__ import annotations

import functools
from typing import Callable

from jax import tree_util

from .pytrees import (flatten_fun, check_valid_leaf, split_static_args,
                       static_argnums_from_names, fun_name)
from ..ir import primitives as P
from ..ir.core import ClosedJaxpr
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import Tracer, bind, aval_of
from ..ir.types import RefType
from ..ir.verify import verify_jaxpr
from ..backends import xla
from .ref_checks import check_ref_arguments, check_staged_refs, check_returned_refs, value_of
from .refs import check_call_writes
from ..transforms.discharge import discharge_jaxpr, mentions_refs


_RETURNED_REF = ("a ref cannot be returned from a traced function (jit, make_jaxpr). "
                 "Return its value r[...] instead, or create the ref outside and pass "
                 "it in.")


def _flatten_inputs(args, kwargs, where: str):
    """The inputs' leaves and structure, after the checks every call needs before
    tracing: each leaf is a valid input, and refs are live, unaliased and not views."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    for i, leaf in enumerate(leaves):
        check_valid_leaf(leaf, f"{where}: input leaf {i}")
    check_ref_arguments(args, kwargs, leaves, where)
    return leaves, in_tree


def _trace_flat(fun, args, kwargs, leaves, in_tree, where: str):
    """Trace `fun(*args, **kwargs)` into a closed jaxpr over the flattened inputs,
    then check what only the trace shows: no ref is returned, none is both closed
    over and passed in. `jit` and `make_jaxpr` share this path, so a program one
    rejects the other rejects too, with the same message."""
    in_avals = [aval_of(leaf) for leaf in leaves]
    flat_fun, out_tree_cell = flatten_fun(fun, in_tree)

    def checked_fun(*tracers):
        outs = flat_fun(*tracers)
        check_returned_refs(outs, out_tree_cell[0], tracers, leaves, where, _RETURNED_REF)
        return outs
    closed = trace_to_jaxpr(checked_fun, in_avals)
    check_staged_refs(closed, leaves, where)
    return closed, out_tree_cell[0]


def make_jaxpr(fun: Callable, static_argnums=(), static_argnames=(),
               return_shape: bool = False):
    """`make_jaxpr(f)(*args)` is the `ClosedJaxpr` minijax traces `f` into.

    As `jax.make_jaxpr`: pytree inputs and outputs, static arguments by position or
    name, and `return_shape=True` to also get the output's `ShapeDtypeStruct` tree."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        dyn_args, dyn_kwargs, _, rebuild = split_static_args(
            fun, args, kwargs, static_argnums, static_argnames)
        where = f"make_jaxpr({fun_name(fun)})"
        leaves, in_tree = _flatten_inputs(dyn_args, dyn_kwargs, where)
        closed, out_tree = _trace_flat(rebuild, dyn_args, dyn_kwargs, leaves, in_tree, where)
        if not return_shape:
            return closed
        import jax
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
        return closed, tree_util.tree_unflatten(out_tree, shapes)
    return make_jaxpr_f


class _Staged:
    """One trace of a jitted function: the jaxpr to bind and how to rebuild outputs."""
    __slots__ = ("closed", "call_jaxpr", "out_tree")

    def __init__(self, closed: ClosedJaxpr, out_tree):
        self.closed = closed
        self.call_jaxpr = convert_constvars_to_invars(closed.jaxpr)
        self.out_tree = out_tree


class JitFunction:
    """What `minijax.jit(f)` returns: call it, or `.lower(...)` / `.trace(...)` it."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=()):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        self._fun = fun
        static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self._static_argnums = tuple(sorted(set(static_argnums)
                                            | set(static_argnums_from_names(fun, static_argnames))))
        self._static_argnames = static_argnames
        self._cache: dict = {}
        # updated=(): copying fun.__dict__ would let jit(jit(f)) take over the inner
        # function's trace cache.
        functools.update_wrapper(self, fun, updated=())

    def _stage(self, args, kwargs):
        dyn_args, dyn_kwargs, static_key, rebuild = split_static_args(
            self._fun, args, kwargs, self._static_argnums, self._static_argnames)
        where = f"jit({fun_name(self._fun)})"
        leaves, in_tree = _flatten_inputs(dyn_args, dyn_kwargs, where)
        # A ref's aval is its RefType, so a trace for one ref type is never reused
        # for another (or for an array of the same shape).
        key = (in_tree, tuple(aval_of(leaf) for leaf in leaves), static_key)
        staged = self._cache.get(key)
        if staged is None:
            closed, out_tree = _trace_flat(rebuild, dyn_args, dyn_kwargs, leaves, in_tree,
                                           where)
            verify_jaxpr(closed)
            staged = _Staged(closed, out_tree)
            # A trace that closed over tracers of an enclosing transformation is only
            # valid inside that transformation, so it is not cached.
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._cache[key] = staged
        elif staged.closed.consts and any(isinstance(a, RefType) for a in key[1]):
            # A cached trace may close over the very ref this call passes in.
            check_staged_refs(staged.closed, leaves, where)
        return staged, leaves

    def __call__(self, *args, **kwargs):
        staged, leaves = self._stage(args, kwargs)
        inputs = [*staged.closed.consts, *leaves]
        check_call_writes(staged.call_jaxpr, inputs, fun_name(self._fun))
        outs = bind(P.jit_p, *inputs, jaxpr=staged.call_jaxpr, name=fun_name(self._fun))
        return tree_util.tree_unflatten(staged.out_tree, outs)

    def trace(self, *args, **kwargs) -> ClosedJaxpr:
        """The closed jaxpr this function stages for these arguments."""
        return self._stage(args, kwargs)[0].closed

    def lower(self, *args, **kwargs):
        """JAX's `Lowered` object for the XLA program minijax emits for these arguments:
        `.as_text()` is its StableHLO, `.compile()` its executable."""
        staged, leaves = self._stage(args, kwargs)
        closed = staged.closed
        if mentions_refs(closed.jaxpr):
            # XLA never sees a ref: lower the discharged program on the boxes' contents.
            discharged = discharge_jaxpr(closed).jaxpr
            closed = ClosedJaxpr(discharged.jaxpr, [value_of(c) for c in closed.consts])
            leaves = [value_of(leaf) for leaf in leaves]
        return xla.lower_closed_jaxpr(closed, *leaves)

    def clear_cache(self):
        self._cache.clear()

    def __repr__(self):
        return f"<minijax.jit of {fun_name(self._fun)}>"


def jit(fun: Callable | None = None, *, static_argnums=(), static_argnames=()):
    """Compile `fun` with XLA, as `jax.jit`. Usable as `@jit` or `@jit(static_argnums=...)`."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    return JitFunction(fun, static_argnums, static_argnames)
