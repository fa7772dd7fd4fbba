"""The public `pmap`: a map whose examples run on separate devices.

`pmap(f, axis_name='i')(x)` runs `f` once per slice of `x` along its mapped axis, each
slice on its own device, and the slices may talk through collectives over `'i'`. It
means the same as `vmap(f, axis_name='i')` -- only where the work happens differs --
so minijax writes it, as JAX 0.10 does, with pieces it already has:

* a one-axis mesh of the first n devices (n: the mapped axis size), the axis named
  `axis_name`;
* a `shard_map` over that mesh whose in/out specs split each mapped axis over the
  mesh axis (`P(None, 'i')` for `in_axes=1`), so that each device's block keeps the
  mapped axis with size 1, and whose body squeezes that axis out of the arguments,
  calls `f`, and puts it back into the results at `out_axes`. The collectives in `f`
  are then collectives over a mesh axis, which `shard_map` already lowers and
  differentiates (`transforms/shard_map_rules.py`);
* the whole under minijax's `jit`, so a call compiles once per argument shapes (and
  static argument values) and the results are `jax.Array`s split over the devices
  (`NamedSharding(mesh, P('i'))`), as JAX's pmap returns.

So `make_jaxpr(pmap(f))` shows a `shard_map` equation, and `grad`, `jvp`, `vmap` and
`jit` compose with `pmap` through the rules of `shard_map`. Without `axis_name` the
mesh axis gets a name no user code refers to, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import numpy as np
from jax import tree_util
from jax.sharding import Mesh, PartitionSpec

from ..ir.trace import aval_of, current_trace
from .jit import jit
from .lax_ops import squeeze, expand_dims
from .pytrees import fun_name
from .shard_map import shard_map
from .vmap import vmap

__all__ = ["pmap"]

# JAX's name for the mesh axis of a pmap without `axis_name` (so both print alike).
UNNAMED_AXIS = "_internal_pmap_axis_name"


def _index_tuple(argnums, what) -> tuple:
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in argnums):
        raise TypeError(f"pmap {what} must be an int or a collection of ints, got "
                        f"{argnums!r}")
    return argnums


def _check_axis_leaves(axes, what):
    leaves = tree_util.tree_leaves(axes, is_leaf=lambda x: x is None)
    if not all(leaf is None or type(leaf) is int for leaf in leaves):
        raise TypeError(f"pmap {what} must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {axes}.")


def pmap(fun: Callable, axis_name=None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums=(), devices=None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums=()) -> Callable:
    """Map `fun` over an axis of its arguments, one example per device, as `jax.pmap`.

    `in_axes`/`out_axes`: as `vmap`'s (ints or None, as tree prefixes of the positional
    arguments / the result; keyword arguments are mapped over axis 0). The mapped size
    n must not exceed the number of devices; the first n of `devices` (default: all
    devices of `backend`) run it. `axis_name` names the mapped axis for the
    collectives in `fun`. `static_broadcasted_argnums`: positional arguments that are
    compile-time constants, given whole to every device (hashable). `axis_size`, if
    given, must equal the mapped size. `donate_argnums`: as `jit`'s."""
    if not callable(fun):
        raise TypeError(f"pmap expects a callable as its first argument, got {fun!r}")
    if devices is not None:
        devices = tuple(devices)
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    static = _index_tuple(static_broadcasted_argnums, "static_broadcasted_argnums")
    donated = _index_tuple(donate_argnums, "donate_argnums")
    if set(static) & set(donated):
        raise ValueError(f"pmap arguments {sorted(set(static) & set(donated))} are both "
                         f"static and donated; a static argument has no buffer to donate")
    _check_axis_leaves(in_axes, "in_axes")
    _check_axis_leaves(out_axes, "out_axes")
    if any(axis is not None and axis < 0 for axis in tree_util.tree_leaves(out_axes)):
        # the result specs are made before `fun` runs, so its ranks are not known yet
        raise ValueError(f"pmap out_axes must be non-negative (or None), got {out_axes}")
    if axis_name is not None and not isinstance(axis_name, str):
        # JAX documents any hashable, but its 0.10 pmap, a shard_map too, fails when
        # lowering a mesh axis that is not named by a string
        raise TypeError(f"pmap axis_name must be a string (the name of a mesh axis), "
                        f"got {axis_name!r}")
    name = UNNAMED_AXIS if axis_name is None else axis_name

    def on_devices(*args, **kwargs):
        # Runs while minijax's jit traces: `args` are tracers, static ones are values.
        dynamic = [i for i in range(len(args)) if i not in static]
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"pmap in_axes must be an int, None, or a tuple with one entry per "
                f"positional argument of {fun_name(fun)}, but got len(in_axes)="
                f"{len(in_axes)} for {len(args)} positional arguments")
        dyn_in_axes = (tuple(in_axes[i] for i in dynamic) if isinstance(in_axes, tuple)
                       else in_axes)
        dyn_args = tuple(args[i] for i in dynamic)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        axes = _flat_axes((dyn_in_axes, 0), (dyn_args, kwargs))
        axes = [_check_rank(leaf, axis) for leaf, axis in zip(leaves, axes)]
        size = _mapped_size(leaves, axes, axis_size)

        def per_example(*flat):
            dyn, kw = tree_util.tree_unflatten(in_tree, list(flat))
            full = list(dyn)
            for i in sorted(static):
                full.insert(i, args[i])
            return fun(*full, **kw)

        outer = _devices_taken_by_enclosing_maps()
        if outer is not None:
            # Inside another pmap (or shard_map) each of its devices runs this map by
            # itself, as a vmap naming the axis: the values JAX's docs promise for
            # nested pmaps, whose sizes' product must not exceed the device count.
            if devices is not None:
                raise ValueError("Nested pmaps with devices= are not supported (as in "
                                 "JAX): give devices to the outer pmap only")
            _devices_for(outer * size, None, backend, nested=True)
            return vmap(per_example, in_axes=tuple(axes), out_axes=out_axes,
                        axis_name=name)(*leaves)
        mesh = Mesh(np.array(_devices_for(size, devices, backend)), (name,))

        def per_device(*blocks):
            out = per_example(*[b if axis is None else squeeze(b, [axis])
                                for b, axis in zip(blocks, axes)])
            out_axes_flat = _flat_axes(out_axes, out, "out_axes")
            outs, out_tree = tree_util.tree_flatten(out)
            outs = [o if axis is None else expand_dims(o, [axis])
                    for o, axis in zip(outs, out_axes_flat)]
            return tree_util.tree_unflatten(out_tree, outs)

        in_specs = tuple(_spec(name, axis) for axis in axes)
        out_specs = tree_util.tree_map(lambda axis: _spec(name, axis), out_axes,
                                       is_leaf=lambda x: x is None)
        mapped = shard_map(per_device, mesh=mesh, in_specs=in_specs,
                           out_specs=out_specs, check_vma=False)
        return mapped(*leaves)

    on_devices.__name__ = f"pmap({fun_name(fun)})"
    compiled = jit(on_devices, static_argnums=static or None,
                   donate_argnums=donated or None)

    @functools.wraps(fun, updated=())
    def pmapped(*args, **kwargs):
        if static and max(static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was "
                f"called with only {len(args)} positional argument"
                f"{'s' if len(args) != 1 else ''}. All static broadcasted arguments "
                f"must be passed positionally.")
        return compiled(*args, **kwargs)
    return pmapped


def _spec(name, axis) -> PartitionSpec:
    """The spec splitting array axis `axis` (None: replicated) over the mesh axis."""
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, name)


def _flat_axes(prefix, tree, what="in_axes") -> list:
    flat: list = []
    try:
        tree_util.tree_map(lambda axis, sub: flat.extend(
            [axis] * len(tree_util.tree_leaves(sub))), prefix, tree,
            is_leaf=lambda x: x is None)
    except ValueError:
        shown = prefix[0] if what == "in_axes" else prefix
        value = tree[0] if what == "in_axes" else tree
        raise ValueError(f"pmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {shown!r} for value "
                         f"tree {tree_util.tree_structure(value)}") from None
    return flat


def _check_rank(leaf, axis):
    if axis is None:
        return None
    ndim = aval_of(leaf).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"pmap was requested to map an argument along axis {axis}, which "
                         f"implies that its rank should be at least "
                         f"{axis + 1 if axis >= 0 else -axis}, but is only {ndim} (its "
                         f"shape is {aval_of(leaf).shape})")
    return axis % ndim


def _mapped_size(leaves, axes, axis_size) -> int:
    sizes = [aval_of(leaf).shape[axis] for leaf, axis in zip(leaves, axes)
             if axis is not None]
    if not sizes:
        raise ValueError("pmap requires at least one argument with a mapped axis.")
    if len(set(sizes)) > 1:
        raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: "
                         f"{sorted(set(sizes))}")
    if axis_size is not None and axis_size != sizes[0]:
        raise ValueError(f"Specified axis_size {axis_size} doesn't match received "
                         f"axis_size {sizes[0]}.")
    return sizes[0]


def _devices_for(size: int, devices, backend, nested=False) -> tuple:
    """The first `size` of the devices pmap may use; too few is JAX's ValueError."""
    available = devices if devices is not None else tuple(jax.devices(backend))
    if size > len(available):
        what = ("nested pmaps' mapped axes have sizes whose product is" if nested else
                "pmap's mapped axis has size")
        raise ValueError(f"{what} {size}, which requires {size} replicas, but only "
                         f"{len(available)} XLA devices are available"
                         f"{' (devices=)' if devices is not None else ''}")
    return available[:size]


def _devices_taken_by_enclosing_maps():
    """How many devices the pmaps and shard_maps around the current trace span (the
    product of their mesh axes' sizes), or None outside all of them."""
    trace, total = current_trace(), None
    while trace is not None:
        for size in getattr(trace, "mesh_axis_sizes", {}).values():
            total = (total or 1) * size
        trace = trace.parent
    return total
