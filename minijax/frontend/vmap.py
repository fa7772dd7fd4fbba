"""The public `vmap`: JAX's batching API on top of `transforms/vmap.py`.

Read `transforms/vmap.py` first for the batching trace itself. This module only does
what a user sees: pytrees of arguments and results, `in_axes`/`out_axes` given as
tree prefixes of them (an int or None applies to a whole subtree), keyword arguments
(mapped over their axis 0, as in JAX), `axis_size` for when nothing is mapped, and
errors that name the user's argument and the sizes involved.

Ref arguments get the checks `jit` makes before tracing (`frontend/ref_checks.py`: one ref passed
twice is aliasing); the trace is told which refs are mapped, to catch one that is also
closed over, and a call that fails part-way puts back every ref it already wrote
(`transforms/vmap_refs.py`).

`vmap(f)(*args)` runs `f` once on tracers of a fresh `BatchTrace` -- no jaxpr is built
-- so Python control flow on unbatched values works, and an enclosing `jit`, `grad`
or `vmap` sees only the batched primitives. Nesting needs nothing special: an inner
vmap's trace has the outer one as its parent, and its arguments are tracers of it.
"""
from __future__ import annotations

import functools
import inspect
from collections import Counter
from typing import Any, Callable

from jax import tree_util

from .ref_checks import check_ref_arguments
from .pytrees import check_valid_leaf, fun_name
from ..ir import leak_checks
from ..ir.trace import current_trace, set_current_trace, aval_of
from .refs import is_ref
from ..transforms.vmap import BatchTrace, move_batch_axis
from ..backends.eager_ref_runtime import all_or_nothing


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name=None,
         axis_size: int | None = None, spmd_axis_name=None) -> Callable:
    """Vectorise `fun` over a batch axis of its inputs, as `jax.vmap`.

    `in_axes`: an int, None, or a tuple with one entry per positional argument, each a
    pytree prefix of that argument whose leaves are ints (the mapped axis, negative
    counting from the end) or None (not mapped: every example sees the same value).
    Keyword arguments are always mapped over axis 0. `out_axes`: the same for the
    result, saying where its batch axis goes (None: the output must not depend on a
    mapped input). `axis_size` is the batch size when no input is mapped.
    `axis_name` names the batch axis for the collectives inside `fun`
    (`lax.psum(x, axis_name)`, ... see docs/named_axes.md); `spmd_axis_name` is
    accepted for compatibility and has no effect on one device."""
    if not callable(fun):
        raise TypeError(f"vmap expects a callable as its first argument, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)    # JAX reads a top-level list as the tuple of args
    _check_axis_leaves(in_axes, "in_axes")
    _check_axis_leaves(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ValueError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")

    # `updated=()`: copy the name and docstring, not the wrapped object's attributes
    # (a jitted function's `__dict__` holds its cache, which is not ours to share).
    @functools.wraps(fun, updated=())
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple with one entry per "
                f"positional argument of {fun_name(fun)}, but got len(in_axes)="
                f"{len(in_axes)} for {len(args)} positional arguments")
        paths_and_leaves, in_tree = tree_util.tree_flatten_with_path((args, kwargs))
        leaves = [leaf for _, leaf in paths_and_leaves]
        # Argument names are only worked out for an error message: `inspect` is slow.
        names = _LazyNames(fun, [path for path, _ in paths_and_leaves])
        for i, leaf in enumerate(leaves):
            if _invalid(leaf):
                check_valid_leaf(leaf, f"vmap({fun_name(fun)}): {names[i]}")
        # A ref passed twice (aliasing), a dead ref, a view: the checks jit makes.
        check_ref_arguments(args, kwargs, leaves, f"vmap({fun_name(fun)})")
        axes = _broadcast_prefix((in_axes, 0), (args, kwargs), "in_axes")
        axes = _normalize_in_axes(leaves, axes, names)
        size = _mapped_axis_size(leaves, axes, names, axis_size)

        trace = BatchTrace(current_trace(), size, axis_name)
        inputs = [trace.wrap(leaf, axis) for leaf, axis in zip(leaves, axes)]
        for i, (leaf, axis) in enumerate(zip(leaves, axes)):
            if axis is not None and is_ref(leaf):
                trace.ref_ledger.note_mapped_argument(leaf, names[i])
        batched_args, batched_kwargs = tree_util.tree_unflatten(in_tree, inputs)
        with all_or_nothing(), set_current_trace(trace):   # a failed call changes no ref
            out = fun(*batched_args, **batched_kwargs)
        out_paths_and_leaves, out_tree = tree_util.tree_flatten_with_path(out)
        out_axes_flat = _broadcast_prefix(out_axes, out, "out_axes")
        results = []
        for (path, leaf), out_axis in zip(out_paths_and_leaves, out_axes_flat):
            value, batch_dim = trace.to_batched(leaf)
            results.append(move_batch_axis(value, batch_dim, out_axis, size,
                                           _OutputName(path)))
        if leak_checks.checking.on:
            # (This frame's own references go first, or they would count as leaks.)
            inputs = batched_args = batched_kwargs = out = out_paths_and_leaves = leaf = None
            leak_checks.check_no_leaks(trace)
        return tree_util.tree_unflatten(out_tree, results)

    return vmap_f


# -- in_axes / out_axes --------------------------------------------------------------

def _check_axis_leaves(axes, what):
    leaves = tree_util.tree_leaves(axes, is_leaf=lambda x: x is None)
    if any(not (leaf is None or (isinstance(leaf, int) and not isinstance(leaf, bool)))
           for leaf in leaves):
        raise TypeError(f"vmap {what} must be an int, None, or a (nested) container with "
                        f"those as leaves, but got {axes!r}")


def _broadcast_prefix(prefix, tree, what) -> list:
    """One axis per leaf of `tree`: each leaf of the prefix tree `prefix` applies to
    every leaf of the matching subtree of `tree`."""
    flat: list = []

    def expand(axis, subtree):
        flat.extend([axis] * len(tree_util.tree_leaves(subtree)))

    try:
        tree_util.tree_map(expand, prefix, tree, is_leaf=lambda x: x is None)
    except ValueError:
        shown = prefix[0] if what == "in_axes" else prefix
        value = tree[0] if what == "in_axes" else tree
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding "
            f"value, got specification {shown!r} for value tree "
            f"{tree_util.tree_structure(value)}") from None
    return flat


def _normalize_in_axes(leaves, axes, names) -> list:
    out = []
    for i, (leaf, axis) in enumerate(zip(leaves, axes)):
        if axis is None:
            out.append(None)
            continue
        aval = aval_of(leaf)
        if not -aval.ndim <= axis < aval.ndim:
            raise ValueError(
                f"vmap was requested to map {names[i]} along axis {axis}, which implies that "
                f"its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is "
                f"only {aval.ndim} (its shape is {aval.shape})")
        out.append(axis % aval.ndim)
    return out


def _mapped_axis_size(leaves, axes, names, axis_size) -> int:
    mapped = [(aval_of(leaf), axis, i) for i, (leaf, axis) in enumerate(zip(leaves, axes))
              if axis is not None]
    sizes = {aval.shape[axis] for aval, axis, _ in mapped}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) == 1:
        return sizes.pop()
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes, or "
                         "axis_size must be given, to know how many examples there are")
    lines = []
    if axis_size is not None:
        lines.append(f"the `axis_size` argument was {axis_size}")
    counts = Counter(aval.shape[axis] for aval, axis, _ in mapped)
    for size, count in counts.most_common():
        aval, axis, i = next(m for m in mapped if m[0].shape[m[1]] == size)
        shape = ",".join(map(str, aval.shape))
        example = f"axis {axis} of {names[i]} of type {aval.dtype.name}[{shape}]"
        lines.append(f"one axis had size {size}: {example}" if count == 1 else
                     f"{count} axes had size {size}, e.g. {example}")
    raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                     + ";\n".join(f"  * {line}" for line in lines))


# -- naming arguments in errors ---------------------------------------------------------

class _LazyNames:
    """`names[i]` describes leaf i of the arguments, worked out when first asked."""

    def __init__(self, fun, paths):
        self.fun, self.paths = fun, paths

    def __getitem__(self, i):
        return describe_argument(self.fun, self.paths[i])


class _OutputName:
    """Names an output in an error message; the key path is rendered only then."""

    def __init__(self, path):
        self.path = path

    def __str__(self):
        return f"output {_keystr(self.path) or '(the result)'}"


def _invalid(leaf) -> bool:
    try:
        aval_of(leaf)
        return False
    except TypeError:
        return True


def _keystr(path) -> str:
    return tree_util.keystr(tuple(path)) if path else ""


def describe_argument(fun, path) -> str:
    """`argument x`, `argument params['w']`, `kwargs['y']` for a leaf's key path."""
    group, index, rest = path[0].idx, path[1], path[2:]
    if group == 1:
        return f"kwargs[{index.key!r}]{_keystr(rest)}"
    position = index.idx
    name = _positional_name(fun, position)
    if name is None:
        return f"args[{position}]{_keystr(rest)}"
    return f"argument {name}{_keystr(rest)}"


def _positional_name(fun, position) -> str | None:
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    if position < len(params) and params[position].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return params[position].name
    return None
