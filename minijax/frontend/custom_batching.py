"""`custom_vmap` and `sequential_vmap` (public as `minijax.custom_batching`): a function
whose batching is the user's own rule.

`f = custom_vmap(fun)`, then `@f.def_vmap` a rule `(axis_size, in_batched, *args) ->
(out, out_batched)`. Called under a trace, `f(*args)` traces `fun` once and binds one
`custom_vmap_call` equation (`ir/custom_primitives.py`) holding the body and the rule;
vmap calls the rule, jvp differentiates through the call
(`transforms/custom_vmap_rules.py`), and everything else runs the body. Called on
concrete values it is just `fun`.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from jax import tree_util

from .control_flow import map as lax_map
from .pytrees import checked_avals
from ..ir.custom_primitives import custom_vmap_call_p
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import EvalTrace, bind, current_trace
from ..transforms.ad_util import as_results
from ..transforms.custom_vmap_rules import VmapRule

__all__ = ["custom_vmap", "sequential_vmap"]


def _positional(fun, args, kwargs, name):
    """JAX's `resolve_kwargs`: every keyword argument moved to its position."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(bound.kwargs)}")
    except TypeError as e:
        raise TypeError(f"The input arguments to the custom_vmap-decorated function {name} "
                        f"could not be resolved to positional-only arguments. Binding "
                        f"failed with the error:\n{e}") from e
    return tuple(bound.args)


class custom_vmap:
    """`fun` with its own vmap rule, as `jax.custom_batching.custom_vmap`: under `vmap`,
    `rule(axis_size, in_batched, *args)` runs instead of `fun` on the batch and returns
    `(out, out_batched)`. Forward-mode autodiff goes through it (the jvp is batched
    with the rule); reverse mode needs a `custom_vjp` around it, as in JAX."""

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", type(self.fun).__name__)
        args = _positional(self.fun, args, kwargs, name)
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 f"using def_vmap.")
        if isinstance(current_trace(), EvalTrace):
            return as_results(self.fun(*args))
        leaves, in_tree = tree_util.tree_flatten(args)
        trees = []

        def flat(*values):
            out_leaves, out_tree = tree_util.tree_flatten(
                self.fun(*tree_util.tree_unflatten(in_tree, list(values))))
            trees.append(out_tree)
            return out_leaves
        closed = trace_to_jaxpr(flat, checked_avals(leaves, f"custom_vmap function {name}: "
                                                            f"argument"))
        call_jaxpr = convert_constvars_to_invars(closed.jaxpr)
        outs = bind(custom_vmap_call_p, *closed.consts, *leaves, call_jaxpr=call_jaxpr,
                    num_consts=len(closed.consts),
                    rule=VmapRule(self.vmap_rule, in_tree, trees[0]), name=name)
        return tree_util.tree_unflatten(trees[0], outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` batched by a loop over the examples (`lax.map`), as
    `jax.custom_batching.sequential_vmap`: for functions that do not batch."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        args = list(args)
        mapped = tree_util.tree_map(lambda b, x: x if b else None, in_batched, args)
        fixed = tree_util.tree_map(lambda b, x: None if b else x, in_batched, args)

        def one(mapped_args):
            merged = tree_util.tree_map(lambda b, m, c: m if b else c,
                                        in_batched, mapped_args, fixed)
            return f(*merged)
        out = lax_map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)
    return f
