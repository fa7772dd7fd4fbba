"""`minijax.debug`: print and call back into Python from inside traced code.

A plain Python `print` inside a jitted function runs once, at trace time, and shows
tracers. `debug.print` instead becomes an equation of the program -- a
`debug_print` primitive carrying the format string -- that prints the *runtime*
values every time the program runs:

    >>> @minijax.jit
    ... def f(x):
    ...     minijax.debug.print("x = {x}", x=x)
    ...     return x * 2

The equation has the `Debug` effect, an *ordered* effect: passes keep it exactly
where it is and never drop it (DCE keeps effectful equations) or duplicate it. What
that means for each transformation (rules in `transforms/debug_rules.py`):

* jit: it prints when the compiled program runs (lowered to an ordered
  `jax.debug.callback`); in a loop body, once per iteration; in a `cond`, only in
  the branch taken;
* jvp / grad / linearize: it prints the primal values, once per forward
  evaluation; the tangent and backward programs print nothing;
* vmap: it prints once per example ("lane"), with that example's values.

`debug.callback(fn, *args)` is the general form: `fn` is called with the runtime
values (NumPy arrays) of `args`, with the same guarantees. Its callback cannot be
written in the text form, so such jaxprs print but do not parse.
"""
from __future__ import annotations

import builtins
import functools
import sys
import weakref
from typing import Callable

import numpy as np
from jax import tree_util

from .frontend.pytrees import check_valid_leaf, checked_avals
from .ir import control_flow_primitives as CF
from .ir.trace import Tracer, bind

__all__ = ["print", "callback", "breakpoint", "log", "inspect_array_sharding", "visualize_array_sharding",
           "visualize_sharding"]


def print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Print `fmt.format(*args, **kwargs)` with the runtime values, as
    `jax.debug.print`. Values may be arrays or tuples/lists/dicts of arrays.

    minijax's prints are always ordered (they happen in program order), so `ordered`
    is accepted for compatibility and changes nothing."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a string, got {fmt!r}")
    leaves = tree_util.tree_leaves((args, kwargs))
    if not builtins.all(map(_is_value, leaves)):
        # A leaf that is no value (a string, a layer's name): formatted on the host
        # with the values, as JAX's print is -- a debug callback that writes the text.
        _call_back(functools.partial(_print_formatted, fmt, np.get_printoptions()),
                   *args, **kwargs)
        return
    layout = ("call", CF.layout_of(tuple(args)), CF.layout_of(dict(kwargs)))
    if _count_leaves(layout) != len(leaves):
        raise TypeError("debug.print formats arrays and tuples, lists and dicts of "
                        "arrays; pass other pytrees' fields separately")
    for i, leaf in enumerate(leaves):
        check_valid_leaf(leaf, f"debug.print: value {i}")
    bind(CF.debug_print_p, *leaves, fmt=fmt, layout=layout)


def _print_formatted(fmt, print_options, *args, **kwargs):
    # NumPy's print options as they were when the print was traced, as in JAX.
    with np.printoptions(**print_options):
        sys.stdout.write(fmt.format(*args, **kwargs) + "\n")


def _count_leaves(layout) -> int:
    if layout == "*":
        return 1
    if layout == "None" or isinstance(layout, str):
        return 0
    if layout[0] == "dict":
        return builtins.sum(_count_leaves(item) for _, item in layout[1:])
    return builtins.sum(_count_leaves(item) for item in layout[1:])


class _FlatCallback:
    """`callback` called with the pytrees rebuilt from flat runtime values; `statics`
    are the leaves that are no values (a string, a function: `(position, leaf)`
    pairs), which JAX passes to the callback as they are, outside the program."""
    __slots__ = ("callback", "in_tree", "statics", "__weakref__")
    # Held weakly: an entry lives only as long as something else -- a staged
    # equation, a compiled program in a cache -- holds it, so the table never grows
    # past what those keep and needs no reset of its own.
    _cache: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()

    def __init__(self, callback, in_tree, statics=()):
        self.callback, self.in_tree, self.statics = callback, in_tree, statics

    @classmethod
    def of(cls, callback, in_tree, statics=()):
        # One object per (callback, tree, statics) keeps eager calls from recompiling
        # each time; unhashable statics make one of their own.
        key = (callback, in_tree, statics)
        try:
            found = cls._cache.get(key)
        except TypeError:
            return cls(callback, in_tree, statics)
        if found is None:
            found = cls._cache[key] = cls(callback, in_tree, statics)
        return found

    def __call__(self, *values):
        leaves = list(values)
        for position, leaf in self.statics:
            leaves.insert(position, leaf)
        args, kwargs = tree_util.tree_unflatten(self.in_tree, leaves)
        self.callback(*args, **kwargs)

    def __repr__(self):
        return getattr(self.callback, "__name__", type(self.callback).__name__)


def callback(callback: Callable | None = None, *args, ordered: bool = False,
             partitioned: bool = False, **kwargs):
    """Call `callback(*args, **kwargs)` on the host with runtime values, as
    `jax.debug.callback`; its return value is ignored. Leaves of `args`/`kwargs` that
    are no array values (strings, functions) reach the callback as they are.

    The two-call form JAX recommends, `debug.callback(ordered=True)(fn, *args)`, gives
    the options first and returns the function taking the callback. minijax runs every
    debug callback in program order, so `ordered` and `partitioned` change nothing."""
    if callback is None:
        if args or kwargs:
            raise TypeError(f"debug.callback: the two-call form takes only options "
                            f"(ordered, partitioned) in its first call, then the "
                            f"callback and its arguments; got {args=} {kwargs=}")
        return _call_back
    _call_back(callback, *args, **kwargs)
    return None


def _call_back(callback: Callable, *args, **kwargs) -> None:
    if not callable(callback):
        raise TypeError(f"debug.callback: expected a callable, got {callback!r}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    try:
        checked_avals(leaves, "debug.callback: value")
        statics = ()
    except TypeError:
        statics = tuple((i, leaf) for i, leaf in enumerate(leaves) if not _is_value(leaf))
        if not statics:
            raise
        leaves = [leaf for leaf in leaves if _is_value(leaf)]
    bind(CF.debug_callback_p, *leaves,
         callback=_FlatCallback.of(callback, in_tree, statics))


def _is_value(leaf) -> bool:
    if isinstance(leaf, Tracer):    # (an escaped one is still refused as a value)
        return True
    try:
        checked_avals([leaf], "debug.callback: value")
    except TypeError:
        return False
    return True


# log and the sharding views: frontend/debugging.py
from .frontend.debugging import (log, inspect_array_sharding,  # noqa: E402
                                 visualize_array_sharding, visualize_sharding)
from .frontend.debugger import breakpoint  # noqa: E402
