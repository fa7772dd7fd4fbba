"""Sharding annotations: `lax.with_sharding_constraint`, `jit(in_shardings=,
out_shardings=)` and `device_put` of traced values with a `Sharding`.

minijax partitions nothing itself. An annotation becomes a `sharding_constraint`
equation (`ir/shard_map_primitive.py`) whose params spell out the mesh and the
`PartitionSpec`, so the text form shows it; the XLA backend hands it to
`jax.lax.with_sharding_constraint`, and XLA's SPMD partitioner does the rest when
the whole program is compiled by `jax.jit`. JAX's own `Mesh`, `PartitionSpec` and
`NamedSharding` objects are the vocabulary; the results are sharded `jax.Array`s.

A `SingleDeviceSharding` (everything on one device) is the constraint of a mesh with
no axes and that one device: `sharding_constraint[device_ids=(1,) mesh_axes=() spec=()]`,
lowered back to a `SingleDeviceSharding`. (This JAX has no `PositionalSharding`; the
GSPMD-free shardings it has are these two.)

A bare `PartitionSpec` names the mesh `jax.set_mesh` put in context, as in JAX. It is
read through JAX's public `jax.sharding.get_abstract_mesh()`, which works inside
`jax.jit` but names no devices, so the constraint's params say "the context mesh"
(`device_ids=None`) and lowering hands XLA the bare spec under that same context.

`jit_placement` checks `jit`'s other placement options (`device`, `backend`,
`compiler_options`) as JAX does, for the compile that applies them.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from jax import tree_util
from jax.sharding import (AxisType, NamedSharding, PartitionSpec, Sharding,
                          SingleDeviceSharding)

from ..backends.xla_collectives import mesh_axes_of
from ..ir.shard_map_primitive import sharding_constraint_p
from ..ir.trace import bind
from .shard_map import _spec_tuple, mesh_params, mesh_or_context

__all__ = ["with_sharding_constraint", "reshard", "constrain_jit_shardings",
           "jit_placement", "sharding_params", "constrain", "apply_out_sharding",
           "takes_out_sharding"]


def sharding_params(sharding, what="sharding", error=RuntimeError, moves=False) -> dict:
    """The `sharding_constraint` params of a `NamedSharding`, `SingleDeviceSharding`
    or bare `PartitionSpec` (on the context mesh; none there is `error`). `moves`:
    the annotation puts the array there (`device_put`, `jit`'s shardings, `reshard`)
    rather than asking for it, which on a mesh with `Explicit` axes is JAX's
    `reshard` (`explicit_axes`)."""
    if isinstance(sharding, SingleDeviceSharding):
        (device,) = sharding.device_set
        return dict(mesh_axes=(), device_ids=(int(device.id),), spec=())
    if isinstance(sharding, PartitionSpec):
        mesh, spec = mesh_or_context(None, what, error), sharding
    elif isinstance(sharding, NamedSharding):
        mesh, spec = sharding.mesh, sharding.spec
    else:
        raise TypeError(f"minijax supports shardings given as jax.sharding.NamedSharding "
                        f"(a Mesh and a PartitionSpec), SingleDeviceSharding or a "
                        f"PartitionSpec under jax.set_mesh, got {sharding!r}")
    params = mesh_params(mesh)
    params["spec"] = _spec_tuple(spec, dict(params["mesh_axes"]), "sharding")
    explicit = explicit_axes_of(mesh)
    if moves and explicit:
        params["explicit_axes"] = explicit
    return params


def explicit_axes_of(mesh) -> tuple:
    """The names of a mesh's axes of JAX's `Explicit` type (its layouts are in types)."""
    return tuple(name for name, kind in zip(mesh.axis_names, mesh.axis_types)
                 if kind == AxisType.Explicit)


def constrain(x, sharding, what="sharding", error=RuntimeError, moves=False):
    """`x` under a `sharding_constraint` to `sharding` (see `sharding_params`)."""
    return bind(sharding_constraint_p, x, **sharding_params(sharding, what, error, moves))


def apply_out_sharding(out, out_sharding, name):
    """`out` placed by a function's `out_sharding=` argument, as JAX reads it: None, or
    a `NamedSharding` on a mesh with no axes (what `jax.typeof(x).sharding` is for an
    unsharded array, which libraries pass on), asks for nothing; a `NamedSharding` or
    a `PartitionSpec` (under `jax.set_mesh`) places the result; anything else is
    JAX's TypeError."""
    if out_sharding is None or (isinstance(out_sharding, NamedSharding)
                                and out_sharding.mesh.empty):
        return out
    if not isinstance(out_sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(f"`out_sharding` argument of {name} only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {out_sharding}")
    return _apply(out, out_sharding, f"{name}'s out_sharding", ValueError, moves=True)


def takes_out_sharding(fun):
    """`fun` taking JAX's keyword `out_sharding=` (the jnp and lax functions of JAX's
    sharding in types), applied to its result by `apply_out_sharding`. A function
    that already takes it is returned as it is.

    A function with an eager frame (`jitted_eagerly`) gets that frame with
    `out_sharding=None` added, which hands any other value to the wrapper: an eager
    `jnp.dot(x, y)` stays one Python frame in front of JAX's dispatch (a wrapper in
    front of the frame cost 10-20% of the call, `benchmarks/eager_dispatch.py`)."""
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        signature = None
    if signature is not None and "out_sharding" in signature.parameters:
        return fun
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def placed(*args, out_sharding=None, **kwargs):
        return apply_out_sharding(fun(*args, **kwargs), out_sharding, name)
    if signature is not None:
        params = list(signature.parameters.values())
        at = len(params) - (params and params[-1].kind == inspect.Parameter.VAR_KEYWORD)
        params.insert(at, inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY,
                                            default=None))
        placed.__signature__ = signature.replace(parameters=params)
    frame_refusing = getattr(fun, "frame_refusing", None)
    if frame_refusing is None:
        return placed
    frame = frame_refusing(("out_sharding",), placed)
    frame.__signature__ = placed.__signature__
    return frame


def _broadcast(shardings, tree, what) -> list:
    flat = []
    try:
        tree_util.tree_map(lambda s, sub: flat.extend([s] * len(tree_util.tree_leaves(sub))),
                           shardings, tree,
                           is_leaf=lambda s: s is None or isinstance(s, (Sharding,
                                                                         PartitionSpec)))
    except ValueError:
        raise ValueError(f"{what} must be a tree prefix of the values it applies to, got "
                         f"{shardings!r}") from None
    return flat


def _apply(tree, shardings, what, error=RuntimeError, moves=False):
    leaves, treedef = tree_util.tree_flatten(tree)
    flat = _broadcast(shardings, tree, what)
    return tree_util.tree_unflatten(treedef, [
        x if s is None else constrain(x, s, what, error, moves)
        for x, s in zip(leaves, flat)])


def with_sharding_constraint(x, shardings):
    """`x` (a pytree), asked to be laid out as `shardings` (a `NamedSharding`,
    `SingleDeviceSharding` or `PartitionSpec` under `jax.set_mesh`, or a pytree prefix
    of them) inside a jitted program, as the JAX function of this name. As in JAX, the
    specs may name only `Auto` mesh axes: a layout on an `Explicit` axis is part of
    the type, and `reshard` is what moves an array there (ValueError)."""
    what = "with_sharding_constraint shardings"
    for sharding in _broadcast(shardings, x, what):
        if isinstance(sharding, (NamedSharding, PartitionSpec)):
            _check_axis_types(sharding, what, explicit=False, error=RuntimeError)
    return _apply(x, shardings, what)


def constrain_jit_shardings(fun, in_shardings, out_shardings, static_argnums=()):
    """`fun` with its (non-static) positional arguments constrained to `in_shardings`
    and its results to `out_shardings`; `jit` traces this instead of `fun`, so the
    compiled program takes and returns arrays laid out that way."""
    static = set(static_argnums or ())

    @functools.wraps(fun, updated=())
    def constrained(*args, **kwargs):
        if in_shardings is not None:
            dynamic = [i for i in range(len(args)) if i not in static]
            shardings = in_shardings if isinstance(in_shardings, tuple) else \
                (in_shardings,) * len(dynamic)
            if len(shardings) != len(dynamic):
                raise ValueError(f"jit in_shardings has {len(shardings)} entries for "
                                 f"{len(dynamic)} positional arguments")
            args = list(args)
            for i, sharding in zip(dynamic, shardings):
                args[i] = _apply(args[i], sharding, "jit in_shardings", moves=True)
        out = fun(*args, **kwargs)
        return out if out_shardings is None else _apply(out, out_shardings,
                                                        "jit out_shardings", moves=True)
    return constrained


def reshard(xs, out_shardings):
    """`xs` (a pytree) moved to `out_shardings` (`NamedSharding`s or, under
    `jax.set_mesh`, `PartitionSpec`s; a pytree prefix), as `jax.sharding.reshard`.
    As in JAX, every mesh axis the specs name must be of the `Explicit` type: that is
    where JAX keeps layouts in types, and the move changes the type's layout."""
    what = "reshard of a PartitionSpec"
    for sharding in _broadcast(out_shardings, xs, "reshard out_shardings"):
        if isinstance(sharding, (NamedSharding, PartitionSpec)):
            _check_axis_types(sharding, what, explicit=True, error=ValueError)
    return _apply(xs, out_shardings, what, ValueError, moves=True)


def _check_axis_types(sharding, what, explicit: bool, error):
    """Every mesh axis the spec names is `Explicit` (`reshard`: it moves layouts kept
    in types) or, with `explicit=False`, none is (`with_sharding_constraint`: it asks
    the partitioner for a layout, which an Explicit axis's type already fixes). No
    context mesh for a bare spec is `error`, as JAX's function words it."""
    if isinstance(sharding, PartitionSpec):
        mesh, spec = mesh_or_context(None, what, error), sharding
    else:
        mesh, spec = sharding.mesh, sharding.spec
    explicit_axes = explicit_axes_of(mesh)
    for names in _spec_tuple(spec, dict(mesh_axes_of(mesh)), what):
        for name in names or ():
            if explicit and name not in explicit_axes:
                raise ValueError(f"reshard: the spec {spec} names the mesh axis {name!r}, "
                                 f"which is not of type Explicit (reshard moves layouts "
                                 f"tracked in types; use with_sharding_constraint for an "
                                 f"Auto axis)")
            if not explicit and name in explicit_axes:
                raise ValueError(f"with_sharding_constraint: the spec {spec} names the "
                                 f"mesh axis {name!r}, which is of type Explicit: a layout "
                                 f"on it is part of the array's type, so it is not a "
                                 f"request to the partitioner; move the array there with "
                                 f"reshard (or make the axis Auto)")


def jit_placement(device, backend, compiler_options, in_shardings) -> dict:
    """The options of `jit` that JAX's jit applies as it compiles, checked as JAX does."""
    if device is not None or backend is not None:
        warnings.warn('backend and device argument on jit is deprecated. You can use '
                      '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the '
                      'inputs to the jitted function to get the same behavior.',
                      DeprecationWarning, stacklevel=3)
        if device is not None and backend is not None:
            raise ValueError(f"can't specify both a device and a backend for jit, got "
                             f"device={device!r} and backend={backend!r}")
        if in_shardings is not None:
            raise ValueError("If backend or device is specified on jit, then in_shardings "
                             "should not be specified.")
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise TypeError(f"jit: compiler_options must be a dict of XLA options, got "
                        f"{compiler_options!r}")
    given = dict(device=device, backend=backend, compiler_options=compiler_options or None)
    return {k: v for k, v in given.items() if v is not None}
