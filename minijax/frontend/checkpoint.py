"""`checkpoint` / `remat`, `checkpoint_name`, and seeing what a remat saves: the code
behind `minijax.ad_checkpoint` (which, as `jax.ad_checkpoint`, a program imports by
name; `minijax.checkpoint` and `minijax.remat` come from here with `import minijax`).

Read `transforms/remat.py` (what remat does to a program) and
`transforms/policies.py` (how a policy chooses) first; this module is the API
around them, with JAX's names and signatures:

* `checkpoint(f, policy=..., prevent_cse=True, static_argnums=())` traces `f` once
  per input signature into a jaxpr and binds one `remat` equation holding it.
  Nothing is recomputed until something differentiates that equation.
* `checkpoint_name(x, 'h')` tags `x` for `save_only_these_names('h')` and friends.
* `saved_residuals(f, *args)` lists what `grad` of `f` keeps from its forward pass
  for its backward pass, as `(aval, where it came from)` in JAX's wording, source
  line and column included; `print_saved_residuals` prints it (diff it against
  `jax.ad_checkpoint.print_saved_residuals`).
* `checkpointed_scan` / `checkpointed_while_loop` (in `frontend/checkpointed_loops.py`) are
  loops whose reverse pass stores a few carries and recomputes the rest
  (`frontend/checkpointed_vjp.py`); `checkpoint_schedule(n, ...)` shows which.
* `remat_report(f, *args)` (in `remat_report.py`) is the teaching view: both programs, the
  saved values with their sizes, the recomputed equations and each ref effect's count
  per phase.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from jax import tree_util

from .tracing import stage_cached
from .pytrees import (FlatFun, split_static_args, fun_name,
                      static_argnums_from_names, static_argnames_from_nums)
from ..ir import primitives as P
from ..ir.core import Literal, Var
from ..ir.remat_primitive import remat_p, name_p
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import bind, aval_of
from ..transforms.policies import as_policy, checkpoint_policies  # noqa: F401
from ..transforms.linearize import linearize_flat
from .checkpointed_loops import (checkpointed_scan, checkpointed_while_loop,  # noqa: F401
                                 checkpoint_schedule)

__all__ = ["checkpoint", "remat", "checkpoint_name", "saved_residuals",
           "print_saved_residuals", "checkpoint_policies", "checkpointed_scan",
           "checkpointed_while_loop", "checkpoint_schedule"]


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy=None,
               static_argnums: int | tuple = (), static_argnames=()) -> Callable:
    """`fun`, made to recompute its intermediate values in the backward pass instead of
    saving them, except those `policy` allows (default: save nothing but the inputs).

    As `jax.checkpoint`: works under every transformation; the static arguments
    (`static_argnums` by position, `static_argnames` by name, each also static when
    passed the other way, as JAX infers them from the signature) are passed as Python
    values and baked into the trace, one trace per value (an unhashable positional one
    is told apart by identity, as in JAX)."""
    if not callable(fun):
        raise TypeError(f"checkpoint expects a callable, got {fun!r}")
    policy = as_policy(policy)
    given = static_argnums
    static_argnums = (given,) if isinstance(given, int) else \
        tuple(given) if isinstance(given, (tuple, list)) else None
    if static_argnums is None or not all(isinstance(n, int) for n in static_argnums):
        raise TypeError(f"checkpoint: static_argnums must be an int or a tuple of "
                        f"ints, got {given!r}")
    given_names = static_argnames
    static_argnames = (given_names,) if isinstance(given_names, str) else \
        tuple(given_names) if isinstance(given_names, (tuple, list, set, frozenset)) else None
    if static_argnames is None or not all(isinstance(n, str) for n in static_argnames):
        raise TypeError(f"checkpoint: static_argnames must be a str or a tuple of "
                        f"strs, got {given_names!r}")
    given_nums = static_argnums
    static_argnums = tuple(sorted(set(static_argnums)
                                  | set(static_argnums_from_names(fun, static_argnames))))
    static_argnames = tuple(sorted(set(static_argnames)
                                   | set(static_argnames_from_nums(fun, static_argnums))))
    cache: dict = {}
    where = f"checkpoint({fun_name(fun)})"

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        args = _static_by_identity(args, static_argnums, given_nums)
        kwargs = {k: _hashable(v) if k in static_argnames else v for k, v in kwargs.items()}
        dyn_args, dyn_kwargs, static_key, rebuild = split_static_args(
            _unwrapping(fun), args, kwargs, static_argnums, static_argnames)
        staged, leaves = stage_cached(cache, rebuild, dyn_args, dyn_kwargs, static_key,
                                      where)
        outs = bind(remat_p, *staged.closed.consts, *leaves, jaxpr=staged.call_jaxpr,
                    policy=policy, prevent_cse=bool(prevent_cse), differentiated=False)
        return tree_util.tree_unflatten(staged.out_tree, outs)
    return fun_remat


remat = checkpoint


class _ByIdentity:
    """An unhashable static argument, keyed by identity (as jax.checkpoint keys it)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value)

    def __eq__(self, other):
        return type(other) is _ByIdentity and other.value is self.value


def _static_by_identity(args, static_argnums, given_nums):
    if not static_argnums:
        return args
    # (A position inferred from `static_argnames` may be passed by keyword instead.)
    if not all(-len(args) <= n < len(args) for n in given_nums):
        raise ValueError(f"checkpoint: static_argnums {given_nums} names a position "
                         f"past the {len(args)} positional argument(s) of this call; "
                         f"pass static arguments positionally")
    static = {n % len(args) for n in static_argnums if -len(args) <= n < len(args)}
    return tuple(_hashable(arg) if i in static else arg for i, arg in enumerate(args))


def _hashable(arg):
    try:
        hash(arg)
    except TypeError:
        return _ByIdentity(arg)
    return arg


def _unwrapping(fun):
    def call(*args, **kwargs):
        return fun(*[a.value if type(a) is _ByIdentity else a for a in args],
                   **{k: v.value if type(v) is _ByIdentity else v for k, v in kwargs.items()})
    return call


def checkpoint_name(x, name: str):
    """`x`, tagged `name` for the name-based policies. Pytrees are tagged leaf by leaf."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {name!r}")
    return tree_util.tree_map(lambda leaf: bind(name_p, leaf, name=name), x)


# -- what is saved -----------------------------------------------------------------------------

def _arg_names(f, args, kwargs) -> list:
    """One name per flattened input leaf, as JAX's debug info spells them: the
    parameter name, then the pytree path (`params['w']`, `xs[0]`)."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        names = list(bound.arguments)
        values = list(bound.arguments.values())
        kinds = {n: p.kind for n, p in inspect.signature(f).parameters.items()}
    except (TypeError, ValueError):
        names, values, kinds = [None] * len(args), list(args), {}
    out = []
    for name, value in zip(names, values):
        if name is not None and kinds.get(name) is inspect.Parameter.VAR_POSITIONAL:
            value = tuple(value)
        paths = tree_util.tree_flatten_with_path(value)[0]
        for path, _ in paths:
            out.append(None if name is None else name + tree_util.keystr(path))
    return out


def saved_residuals(f: Callable, *args, **kwargs) -> list:
    """`[(aval, source), ...]`: the values the backward pass of `f` at `args` reads
    from its forward pass. Sources are worded as JAX's: 'from the argument x',
    "named 'h' from f.py:3:8 (f)", 'output of sin from f.py:4:11 (f)', naming the
    line of the user's code that made the value (`ir/source_info.py`)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    flat_fun = FlatFun(f, in_tree, kwargs_in_tree=True)

    def residuals_of(*xs):
        return list(linearize_flat(flat_fun, list(xs)).linear_jaxpr.consts)
    closed = trace_to_jaxpr(residuals_of, [aval_of(x) for x in leaves])
    names = _arg_names(f, args, kwargs)
    return _describe_residuals(closed.jaxpr, names)


def _describe_residuals(jaxpr, arg_names) -> list:
    # JAX's order: literals, constants, arguments, then equation outputs in program
    # order; each residual variable once.
    wanted = {v for v in jaxpr.outvars if isinstance(v, Var)}
    results = [(v.aval, "from a literal") for v in jaxpr.outvars if isinstance(v, Literal)]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in wanted]
    for i, v in enumerate(jaxpr.invars):
        if v in wanted:
            name = arg_names[i] if i < len(arg_names) else None
            results.append((v.aval, f"from the argument {name}" if name
                            else f"from the argument at flattened index {i}"))
    for eqn in jaxpr.eqns:
        for v in eqn.outputs:
            if v not in wanted:
                continue
            # JAX's `from file:line:column (function)`; JAX too writes `from ` and
            # nothing when it has no user frame for an equation.
            src = f" from {eqn.source_info or ''}"
            # Only a `name` equation's own output is "named" (as in jax 0.10: the
            # value going *into* a name is reported as what made it).
            if eqn.primitive is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}'{src}"))
            elif eqn.primitive is P.jit_p:
                results.append((v.aval, f"output of jitted function "
                                        f"'{eqn.params['name']}'{src}"))
            else:
                results.append((v.aval, f"output of {eqn.primitive.name}{src}"))
    return results


def aval_text(aval) -> str:
    """`f32[3,3]`, `Ref{f32[]}`: as JAX prints a residual."""
    return aval.str_short(short_dtypes=True)


def print_saved_residuals(f: Callable, *args, **kwargs) -> None:
    """Print `saved_residuals(f, *args)` one per line, as JAX prints them."""
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f"{aval_text(aval)} {source}")
