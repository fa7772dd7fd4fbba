"""Tracing a user's function into a jaxpr: `make_jaxpr`, `eval_shape`, and the one
staging cache that `jit` and `checkpoint` share (`stage_cached`).

Every staged call takes the same two steps, so a program one of them rejects the
others reject too, with the same message:

* `flatten_call_inputs`, before tracing: the inputs' leaves are valid values, and
  refs among them are live, not views, and not passed twice;
* `trace_flat`, while and after tracing with the staging trace (`ir/staging.py`):
  no ref is returned, and none is both closed over and passed in
  (`frontend/ref_checks.py`).

`make_jaxpr` hands the jaxpr back; `eval_shape` only its output types. `jit`
(`frontend/jit.py`) and `checkpoint` (`minijax/ad_checkpoint.py`) keep each trace in a
cache keyed by (pytree structure, input avals, static arguments, the JAX flags a trace
reads, the context mesh and the named axes bound around the call): `stage_cached`,
whose entries are `Staged`.
"""
from __future__ import annotations

import functools
from typing import Callable

import jax
import numpy as np
from jax import tree_util

from . import events
from .pytrees import FlatFun, checked_avals, split_static_args, fun_name
from ..ir.core import ClosedJaxpr
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import Tracer, current_trace, set_current_trace
from ..ir.types import RefType, is_key
from ..ir.verify import verify_jaxpr
from ..ir import root_modes
from ..transforms.batching import AxisFrame
from ..transforms.key_reuse import check_jaxpr as check_key_reuse
from ..backends.xla_collectives import context_mesh
from .ref_checks import check_ref_arguments, check_staged_refs, check_returned_refs
from .collectives import bound_axis_env


_RETURNED_REF = ("a ref cannot be returned from a traced function (jit, make_jaxpr, "
                 "checkpoint). "
                 "Return its value r[...] instead, or create the ref outside and pass "
                 "it in.")


def flatten_call_inputs(args, kwargs, where: str):
    """The inputs' leaves, their avals and the structure of `(args, kwargs)`, after
    the checks every staged call needs before tracing: each leaf is a valid input, and
    refs are live, unaliased and not views."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), kwargs))
    in_avals = checked_avals(leaves, f"{where}: input leaf")
    check_ref_arguments(args, kwargs, leaves, where)
    return leaves, in_avals, in_tree


def trace_flat(fun, args, kwargs, leaves, in_avals, in_tree, where: str,
               event_name: str | None = None):
    """Trace `fun(*args, **kwargs)` into a closed jaxpr over the flattened inputs
    (`leaves`, of `in_avals`), then check what only the trace shows: no ref is
    returned, none is both closed over and passed in. `jit` and `make_jaxpr` share
    this path, so a program one rejects the other rejects too, with the same message.

    `event_name`: the function name of the trace event `minijax.monitoring` records,
    for the traces JAX records one for (those of `jit`, `make_jaxpr` and `eval_shape`,
    which JAX traces through `jit`); None records none (`checkpoint`)."""
    flat_fun = FlatFun(fun, in_tree, kwargs_in_tree=True)

    def checked_fun(*tracers):
        outs = flat_fun(*tracers)
        check_returned_refs(outs, flat_fun.out_tree, tracers, leaves, where, _RETURNED_REF)
        return outs
    if event_name is None:
        closed = trace_to_jaxpr(checked_fun, in_avals)
    else:
        with events.timed(events.JAXPR_TRACE_EVENT, event_name):
            closed = trace_to_jaxpr(checked_fun, in_avals)
    check_staged_refs(closed, leaves, where)
    return closed, flat_fun.out_tree


def make_jaxpr(fun: Callable, static_argnums=(), axis_env=None,
               return_shape: bool = False, *, static_argnames=()):
    """`make_jaxpr(f)(*args)` is the `ClosedJaxpr` minijax traces `f` into.

    As `jax.make_jaxpr`: pytree inputs and outputs, static arguments by position or
    name, `axis_env` -- `(name, size)` pairs -- to bind axis names, so that a body
    written for `vmap(..., axis_name=)` or `shard_map` shows its collectives, and
    `return_shape=True` to also get the output's `ShapeDtypeStruct` tree."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if axis_env:
        fun = _with_bound_axes(fun, _axis_env_sizes(axis_env))

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        where = f"make_jaxpr({fun_name(fun)})"
        if axis_env:        # `fun` is wrapped for this call: nothing to share
            dyn_args, dyn_kwargs, _, rebuild = split_static_args(
                fun, args, kwargs, static_argnums, static_argnames)
            leaves, in_avals, in_tree = flatten_call_inputs(dyn_args, dyn_kwargs, where)
            closed, out_tree = trace_flat(rebuild, dyn_args, dyn_kwargs, leaves,
                                          in_avals, in_tree, where,
                                          event_name=fun_name(fun))
        else:               # from (and into) the trace cache of `jit(fun)`, as JAX's
            from .jit import jit
            staged = jit(fun, static_argnums=static_argnums or None,
                         static_argnames=static_argnames or None).staged_as(
                             where, args, kwargs)
            closed, out_tree = staged.closed, staged.out_tree
        if root_modes.modes.key_reuse:      # JAX's make_jaxpr is a jit trace, checked too
            check_key_reuse(closed.jaxpr)
        if not return_shape:
            return closed
        shapes = [shape_dtype_struct(a) for a in closed.out_avals]
        return closed, tree_util.tree_unflatten(out_tree, shapes)
    return make_jaxpr_f


def _axis_env_sizes(axis_env) -> dict:
    sizes = {}
    for entry in axis_env:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
            raise ValueError(f"make_jaxpr: axis_env must be a sequence of (name, size) "
                             f"pairs, got {axis_env!r}")
        name, size = entry
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ValueError(f"make_jaxpr: the size of axis {name!r} in axis_env must be "
                             f"a positive int, got {size!r}")
        sizes[name] = int(size)
    return sizes


def _with_bound_axes(fun, sizes: dict):
    """`fun` run inside a frame that binds `sizes`' axis names (as a shard_map body's
    mesh axes are bound) and stages every operation into the enclosing trace."""
    @functools.wraps(fun)
    def in_axis_frame(*args, **kwargs):
        with set_current_trace(AxisFrame(current_trace(), sizes)):
            return fun(*args, **kwargs)
    return in_axis_frame


class Staged:
    """One trace of a jitted function: the jaxpr to bind and how to rebuild outputs.
    A trace is verified before anything binds or lowers it (`verified`): `make_jaxpr`
    and `eval_shape` store theirs in `jit`'s cache unverified, since verifying would
    double their cost, and the first call that uses one verifies it."""
    __slots__ = ("closed", "call_jaxpr", "out_tree", "verified")

    def __init__(self, closed: ClosedJaxpr, out_tree):
        self.closed = closed
        self.call_jaxpr = convert_constvars_to_invars(closed.jaxpr)
        self.out_tree = out_tree
        self.verified = False

    def ensure_verified(self) -> "Staged":
        if not self.verified:
            verify_jaxpr(self.closed)
            self.verified = True
        return self

    @classmethod
    def trace(cls, fun, args, kwargs, leaves, in_avals, in_tree, where: str,
              event_name: str | None = None, verify: bool = True):
        """`fun` traced (`trace_flat`) and, unless `verify` is False, verified: what a
        staging cache stores."""
        closed, out_tree = trace_flat(fun, args, kwargs, leaves, in_avals, in_tree, where,
                                      event_name)
        staged = cls(closed, out_tree)
        return staged.ensure_verified() if verify else staged


def stage_cached(traces: dict, fun, args, kwargs, static_key, where: str, on_miss=None,
                 event_name: str | None = None, verify: bool = True):
    """`(staged, leaves)`: the trace of `fun(*args, **kwargs)` from `traces`, made and
    stored on a miss, and the call's input leaves. `args` and `kwargs` are the
    dynamic arguments (`fun` puts the static ones back; `static_key` names them).
    The one staging cache of `jit` and `checkpoint`; `on_miss(in_avals, key)` runs
    before a trace is made; `event_name` is `trace_flat`'s; `verify=False` (tracing
    only, for `make_jaxpr`) leaves the verifier to the first call that binds it."""
    leaves, in_avals, in_tree = flatten_call_inputs(args, kwargs, where)
    # A ref's aval is its RefType, so a trace for one ref type is never reused
    # for another (or for an array of the same shape).
    key = staging_key(in_tree, in_avals, static_key)
    axis_env = bound_axis_env()     # vmap/shard_map axis names around this call
    if axis_env:
        key += (axis_env,)
    staged = traces.get(key)
    if staged is None:
        if on_miss is not None:
            on_miss(in_avals, key)
        staged = Staged.trace(fun, args, kwargs, leaves, in_avals, in_tree, where,
                              event_name, verify)
        # A trace that closed over tracers of an enclosing transformation is only
        # valid inside that transformation, so it is not cached.
        if not any(isinstance(c, Tracer) for c in staged.closed.consts):
            traces[key] = staged
    else:
        if verify:
            staged.ensure_verified()
        if staged.closed.consts and any(isinstance(a, RefType) for a in key[1]):
            # A cached trace may close over the very ref this call passes in.
            check_staged_refs(staged.closed, leaves, where)
    return staged, leaves


def staging_key(in_tree, in_avals, static_key) -> tuple:
    """The key of a trace in a staging cache, at the root (`stage_cached` adds the
    named axes bound around a call): the inputs' structure and avals, the static
    arguments, the JAX flags a trace reads, whether keys are checked for reuse (the
    samplers mark the keys they use only then) and the context mesh. `jit`'s fast path
    (`frontend/jit.py`) looks its traces up by this key too, so the two share them."""
    return ((in_tree, tuple(in_avals), static_key, flags_key(), root_modes.modes.key_reuse)
            + mesh_key())


def flags_key() -> bool:
    """What a trace depends on of JAX's flags: `jax_check_static_indices` turns a static
    index out of range from a clamp into an IndexError (`numpy/_indexing.py`). JAX's
    cache of `jit`'s fast-path function keys on it too, so after the flag changes a
    call misses it and traces again."""
    return bool(getattr(jax.config, "jax_check_static_indices", False))


def mesh_key() -> tuple:
    """What a trace depends on of the context mesh (`jax.set_mesh`): a bare
    `PartitionSpec` or a `shard_map` without `mesh=` is traced on it."""
    mesh = context_mesh()
    return () if mesh is None else (("context mesh", mesh),)



def shape_dtype_struct(aval) -> jax.ShapeDtypeStruct:
    """The `jax.ShapeDtypeStruct` JAX gives a value of type `aval`: weak type kept, and
    a key array's dtype JAX's `key<fry>` (minijax's own is a NumPy struct)."""
    dtype = jax.random.key_dtype("threefry2x32") if is_key(aval.dtype) else aval.dtype
    return jax.ShapeDtypeStruct(aval.shape, dtype, weak_type=aval.weak_type)


def eval_shape(fun: Callable, *args, **kwargs):
    """The output of `fun(*args, **kwargs)` as a pytree of `jax.ShapeDtypeStruct`s,
    computed by tracing only (nothing runs), as `jax.eval_shape`. Arguments may be
    arrays, scalars or `ShapeDtypeStruct`s."""
    from .jit import jit        # traced from (and into) jit(fun)'s cache, as JAX's
    staged = jit(fun).staged_as(f"eval_shape({fun_name(fun)})", args, kwargs)
    closed, out_tree = staged.closed, staged.out_tree
    shapes = [shape_dtype_struct(a) for a in closed.out_avals]
    return tree_util.tree_unflatten(out_tree, shapes)
