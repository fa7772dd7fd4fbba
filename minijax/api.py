"""The public staging API: `make_jaxpr` and `jit`.

Both trace the user's function once per (pytree structure, input avals, static
arguments) with the staging trace of `ir/staging.py`. `make_jaxpr` hands back the
jaxpr; `jit` binds it as one `jit` equation in the current trace. At the root (eager)
trace that equation runs as a single `jax.jit`-compiled XLA program; under another
transformation (grad, vmap, an outer jit) the transformation's rule for `jit`
applies, so the staged call stays one call.
"""
from __future__ import annotations

import functools
from typing import Callable

from jax import tree_util

from .api_util import (flatten_fun, check_valid_leaf, split_static_args,
                       static_argnums_from_names, fun_name)
from .ir import primitives as P
from .ir.core import ClosedJaxpr
from .ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from .ir.trace import Tracer, bind, aval_of
from .ir.verify import verify_jaxpr
from .backends import xla
from .api_refs import check_ref_arguments, check_staged_refs, value_of
from .transforms.discharge import discharge_jaxpr, mentions_refs


def _trace_flat(fun, args, kwargs, where: str):
    """Trace `fun(*args, **kwargs)` into a closed jaxpr over the flattened inputs."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    for i, leaf in enumerate(leaves):
        check_valid_leaf(leaf, f"{where}: input leaf {i}")
    in_avals = [aval_of(leaf) for leaf in leaves]
    flat_fun, out_tree_cell = flatten_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat_fun, in_avals)
    return closed, leaves, out_tree_cell[0]


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
        closed, _, out_tree = _trace_flat(rebuild, dyn_args, dyn_kwargs, "make_jaxpr")
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
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
        for i, leaf in enumerate(leaves):
            check_valid_leaf(leaf, f"jit({fun_name(self._fun)}): input leaf {i}")
        where = f"jit({fun_name(self._fun)})"
        check_ref_arguments(dyn_args, dyn_kwargs, leaves, where)        # refs: live, unaliased
        # A ref's aval is its RefType, so a trace for one ref type is never reused
        # for another (or for an array of the same shape).
        key = (in_tree, tuple(aval_of(leaf) for leaf in leaves), static_key)
        staged = self._cache.get(key)
        if staged is None:
            closed, _, out_tree = _trace_flat(rebuild, dyn_args, dyn_kwargs, where)
            check_staged_refs(closed, leaves, where)   # refs: not returned, not aliased
            verify_jaxpr(closed)
            staged = _Staged(closed, out_tree)
            # A trace that closed over tracers of an enclosing transformation is only
            # valid inside that transformation, so it is not cached.
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._cache[key] = staged
        return staged, leaves

    def __call__(self, *args, **kwargs):
        staged, leaves = self._stage(args, kwargs)
        outs = bind(P.jit_p, *staged.closed.consts, *leaves,
                    jaxpr=staged.call_jaxpr, name=fun_name(self._fun))
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
