"""Helpers shared by the public transforms: pytrees, static arguments, argnums.

Pytrees are `jax.tree_util` itself, so anything registered with JAX (tuples, dicts,
dataclasses, Equinox modules, ...) flattens the same way here.
"""
from __future__ import annotations

import functools

import inspect
from typing import Any, Callable, Sequence

from jax import tree_util

from ..ir.trace import MinijaxError, Tracer
from ..ir.types import aval_of_value


class FlatFun:
    """`fun` on pytrees as a function on flat leaves, the form every trace takes.

    `in_tree` is the structure of the positional arguments, or of `(args, kwargs)`
    with `kwargs_in_tree=True`. After a call, `out_tree` describes the outputs; with
    `has_aux`, `fun` returns `(output, aux)`, the aux leaves come last and
    `num_aux`/`aux_tree` describe them (`split` rebuilds both pytrees). An aux leaf
    that is no value at all (a string, an arbitrary object) does not go through the
    trace: it is kept aside and put back by `split`, as JAX's grad, vjp, jvp and
    linearize hand such aux back unchanged (a metrics dict with a name in it)."""

    def __init__(self, fun: Callable, in_tree, *, kwargs_in_tree: bool = False,
                 has_aux: bool = False, where: str = ""):
        self.fun, self.in_tree, self.has_aux, self.where = fun, in_tree, has_aux, where
        self.kwargs_in_tree = kwargs_in_tree
        self.out_tree = self.aux_tree = None
        self.num_aux = 0
        self.aux_kept = {}      # position among the aux leaves -> the object kept aside

    def __call__(self, *leaves):
        if self.kwargs_in_tree:
            args, kwargs = tree_util.tree_unflatten(self.in_tree, leaves)
            out = self.fun(*args, **kwargs)
        else:
            out = self.fun(*tree_util.tree_unflatten(self.in_tree, leaves))
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{self.where}: a function with has_aux=True must return a "
                                f"pair (output, aux), got {type(out).__name__}")
            out, aux = out
            aux_leaves, self.aux_tree = tree_util.tree_flatten(aux)
            self.aux_kept = {i: leaf for i, leaf in enumerate(aux_leaves)
                             if not _is_value(leaf)}
            aux_leaves = [leaf for i, leaf in enumerate(aux_leaves)
                          if i not in self.aux_kept]
            self.num_aux = len(aux_leaves)
        else:
            aux_leaves = []
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        return list(out_leaves) + list(aux_leaves)

    def split(self, outs):
        """(output pytree, aux pytree or None) from the flat outputs."""
        n_out = len(outs) - self.num_aux
        out = tree_util.tree_unflatten(self.out_tree, outs[:n_out])
        if not self.has_aux:
            return out, None
        traced = iter(outs[n_out:])
        aux_leaves = [self.aux_kept[i] if i in self.aux_kept else next(traced)
                      for i in range(self.num_aux + len(self.aux_kept))]
        return out, tree_util.tree_unflatten(self.aux_tree, aux_leaves)


def _is_value(leaf) -> bool:
    """Whether `leaf` is an array, a tracer, or anything else minijax takes as one."""
    if isinstance(leaf, Tracer):
        return True
    try:
        aval_of_value(leaf)
    except TypeError:
        return False
    return True


def flatten_checked(tree, leaf_name: str):
    """`tree`'s leaves and structure, each leaf checked to be a valid value; an invalid
    one is named `{leaf_name} {i}` in the error."""
    leaves, treedef = tree_util.tree_flatten(tree)
    checked_avals(leaves, leaf_name)
    return leaves, treedef


def checked_avals(leaves, leaf_name: str) -> list:
    """The avals of `leaves`, each checked to be a valid value; an invalid one is named
    `{leaf_name} {i}` in the error. (What checking a leaf computes is its aval, so a
    trace takes its input avals from here rather than computing them again.)"""
    try:
        return [leaf.aval if isinstance(leaf, Tracer) else aval_of_value(leaf)
                for leaf in leaves]
    except TypeError:
        for i, leaf in enumerate(leaves):   # the first invalid leaf, by its name
            check_valid_leaf(leaf, f"{leaf_name} {i}")
        raise


def check_valid_leaf(leaf, where: str):
    """Reject leaves that are not arrays or scalars, naming where they came from."""
    if isinstance(leaf, Tracer):
        return
    try:
        aval_of_value(leaf)
    except MinijaxError:
        raise           # already names the mistake (a ref used after free_ref, say)
    except TypeError:
        raise TypeError(f"{where} of type {type(leaf).__name__} is not a valid minijax "
                        f"value: pass arrays, NumPy values or Python scalars "
                        f"(or mark it static)") from None


class StaticValue:
    """A static argument as a cache key: equal to another only if of the same type as
    well, as JAX's jit keys them. `0` and `0.0`, `1` and `True`, `0` and `np.int32(0)`
    compare equal, but a function may take them differently (`jnp.sum(x, axis=0.0)`
    is a TypeError), so a trace made for one must not serve the other. Only the
    argument itself is typed: inside a tuple, JAX's equality alone decides."""
    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash(value)

    def __eq__(self, other):
        return (type(other) is StaticValue and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return repr(self.value)


def split_static_args(fun: Callable, args: Sequence, kwargs: dict,
                      static_argnums: tuple, static_argnames: tuple):
    """Separate static from dynamic arguments.

    Returns `(dynamic_args, dynamic_kwargs, static_key, rebuild)` where `static_key`
    is hashable and `rebuild(*dynamic_args, **dynamic_kwargs)` calls `fun` with the
    static arguments put back in their places."""
    # Positions past the call's arguments refer to parameters passed by keyword (or
    # left at their defaults); JAX ignores them the same way.
    static_nums = {n % len(args) for n in static_argnums if -len(args) <= n < len(args)}
    static_names = set(static_argnames)
    static_positional = tuple((i, args[i]) for i in sorted(static_nums))
    static_keywords = tuple(sorted((k, v) for k, v in kwargs.items() if k in static_names))
    try:
        static_key = (tuple((i, StaticValue(v)) for i, v in static_positional),
                      tuple((k, StaticValue(v)) for k, v in static_keywords))
    except TypeError:
        raise ValueError("static arguments must be hashable; got "
                         + ", ".join(f"{type(v).__name__}" for _, v in
                                     static_positional + static_keywords)) from None
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}

    def rebuild(*dynamic_args, **dynamic_kwargs):
        it = iter(dynamic_args)
        full = [dict(static_positional)[i] if i in static_nums else next(it)
                for i in range(len(args))]
        return fun(*full, **dynamic_kwargs, **dict(static_keywords))
    return dyn_args, dyn_kwargs, static_key, rebuild


def static_argnums_from_names(fun: Callable, static_argnames: tuple) -> tuple[int, ...]:
    """Positions of named static parameters, so they are static however they are passed.
    Only a positional-or-keyword parameter has one (as JAX infers them): a keyword-only
    parameter after `*args` has none, and its index would name one of the `*args`."""
    if not static_argnames:      # (reading a signature is slow: every jit pays for it)
        return ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple(i for i, p in enumerate(params)
                 if p.name in static_argnames and p.kind is p.POSITIONAL_OR_KEYWORD)


def static_argnames_from_nums(fun: Callable, static_argnums: tuple) -> tuple[str, ...]:
    """Names of the parameters at static positions, so that an argument made static by
    position is static when passed by keyword too (as JAX infers them)."""
    if not static_argnums:
        return ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for i, p in enumerate(params)
                 if i in static_argnums and p.kind is p.POSITIONAL_OR_KEYWORD)


def fun_name(fun: Any) -> str:
    # A functools.partial is named after the function it wraps, as by JAX.
    while isinstance(fun, functools.partial) and not hasattr(fun, "__name__"):
        fun = fun.func
    return getattr(fun, "__name__", type(fun).__name__)
