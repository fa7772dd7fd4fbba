"""Helpers shared by the public transforms: pytrees, static arguments, argnums.

Pytrees are `jax.tree_util` itself, so anything registered with JAX (tuples, dicts,
dataclasses, Equinox modules, ...) flattens the same way here.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from jax import tree_util

from ..ir.trace import MinijaxError, Tracer
from ..ir.types import aval_of_value


def flatten_fun(fun: Callable, in_tree) -> tuple[Callable, list]:
    """`fun` taking pytrees -> a function of flat leaves returning flat leaves.

    The output tree is stored in the returned one-element list once the flat
    function has run (tracing fills it)."""
    out_tree_cell: list = []

    def flat_fun(*leaves):
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_tree_cell[:] = [out_tree]
        return out_leaves
    return flat_fun, out_tree_cell


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
    static_key = (static_positional, static_keywords)
    try:
        hash(static_key)
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
    """Positions of named static parameters, so they are static however they are passed."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return ()
    return tuple(params.index(name) for name in static_argnames if name in params)


def static_argnames_from_nums(fun: Callable, static_argnums: tuple) -> tuple[str, ...]:
    """Names of the parameters at static positions, so that an argument made static by
    position is static when passed by keyword too (as JAX infers them)."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for i, p in enumerate(params)
                 if i in static_argnums and p.kind is p.POSITIONAL_OR_KEYWORD)


def fun_name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)
