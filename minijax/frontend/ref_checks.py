"""Ref checks for `jit` and `make_jaxpr`: the misuse that only the call shows.

Read `frontend/refs.py` first. A jitted function is traced once and then runs as one XLA
program whose ref arguments are discharged into values (`transforms/discharge.py`)
and written back afterwards (`backends/eager_ref_runtime.py`). That is only right if

* no box is passed twice -- as two arguments, twice inside one pytree, or as an
  argument *and* a closure: the discharged program would hold two independent
  copies of one box, and a write through one name would be lost;
* no ref is returned -- a ref cannot outlive the trace that made it; return its
  value `r[...]` instead;
* no ref is used after `freeze` / `free_ref`.

Each check runs at trace time (before anything executes, so every ref keeps its
contents) and names the argument by its path, as `args[0]['w']`.
"""
from __future__ import annotations

from jax import tree_util

from ..ir.ref_box import Ref, RefError, check_live
from ..ir.trace import Tracer
from ..ir.types import RefType
from .refs import RefView, describe_ref, is_ref


def path_text(path) -> str:
    """`((0, ...), {...})` paths as the user wrote them: args[0]['w'], kwargs['b']."""
    if not path:
        return "the argument"
    head, *rest = path
    root = "args" if getattr(head, "idx", None) == 0 else "kwargs"
    return root + tree_util.keystr(tuple(rest))


_MAYBE_REF = (Ref, RefView, Tracer)


def check_ref_arguments(args, kwargs, leaves, where: str):
    """Before tracing: refs among the arguments are live, not views, not aliased."""
    # The common case, on every call: no refs, nothing to name. Arrays and scalars
    # are told apart by one `isinstance` each (a ref is a `Ref` box or a tracer of one);
    # only tracers need a look at their avals.
    for leaf in leaves:
        if isinstance(leaf, _MAYBE_REF):
            break
    else:
        return
    if not any(is_ref(leaf) or isinstance(leaf, RefView) for leaf in leaves):
        return
    paths_and_leaves, _ = tree_util.tree_flatten_with_path((tuple(args), kwargs))
    seen: dict[int, str] = {}
    for path, leaf in paths_and_leaves:
        if isinstance(leaf, RefView):
            raise RefError(f"{where}: {path_text(path)} is a view of a ref; pass the ref "
                           f"itself and take the view inside the function")
        if not is_ref(leaf):
            continue
        name = path_text(path)
        if isinstance(leaf, Ref):
            check_live(leaf, f"{where} (as {name})")
        if id(leaf) in seen:
            raise RefError(f"{where}: {describe_ref(leaf)} is passed twice, as "
                           f"{seen[id(leaf)]} and as {name}; a ref may be passed only "
                           f"once (aliasing). Pass it once and use it under both names "
                           f"inside the function.")
        seen[id(leaf)] = name


def check_staged_refs(closed, leaves, where: str):
    """After tracing: no ref is both closed over and passed in, none is returned."""
    passed = {id(leaf) for leaf in leaves if is_ref(leaf)} if closed.consts else ()
    for const in closed.consts:
        if (isinstance(const, Ref) or isinstance(const, Tracer)) and id(const) in passed:
            raise RefError(f"{where}: {describe_ref(const)} is both closed over by the "
                           f"function and passed to it as an argument (aliasing); use "
                           f"one or the other")
    for k, aval in enumerate(closed.out_avals):
        if isinstance(aval, RefType):
            raise RefError(f"{where} returns a ref (output {k}, of type {aval}); a ref "
                           f"cannot be returned from a jitted function. Return its value "
                           f"r[...], or create the ref outside and pass it in.")


def check_returned_refs(out_leaves, out_tree, arg_tracers, in_leaves, where: str,
                        advice: str):
    """While tracing: no output is a ref or a view of one. It runs with the trace
    still live, so a ref made inside is named by the line that made it, and a ref
    passed in by the caller's ref (`in_leaves[k]` for the traced input k).
    Shared by `jit`/`make_jaxpr` and the control-flow bodies (`frontend/control_flow.py`)."""
    for i, leaf in enumerate(out_leaves):
        if not (is_ref(leaf) or isinstance(leaf, RefView)):
            continue
        ref = leaf._ref if isinstance(leaf, RefView) else leaf
        for tracer, outer in zip(arg_tracers, in_leaves or ()):
            if tracer is ref:
                ref = outer
                break
        paths, _ = tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(out_tree, [0] * len(out_leaves)))
        path = tree_util.keystr(paths[i][0])
        at = f" (as output {path})" if path else ""
        view = "a view of " if isinstance(leaf, RefView) else ""
        raise RefError(f"{where} returns {view}{describe_ref(ref)}{at}; {advice}")


def value_of(x):
    """What XLA sees for a leaf or const: a box's current contents."""
    return x._value if isinstance(x, Ref) else x
