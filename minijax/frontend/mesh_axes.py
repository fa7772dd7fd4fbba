"""`jax.sharding.auto_axes` and `explicit_axes`: run a function with some axes of the
context mesh switched to the `Auto` or the `Explicit` type.

JAX keeps an array's layout along `Explicit` axes in its type; `auto_axes` lets a
function leave those layouts to the partitioner (its result is then moved to the
`out_sharding` the caller names), and `explicit_axes` the reverse (its arguments are
first moved to `in_sharding`). minijax's types carry no layouts (docs/named_axes.md),
so what remains here is what the two do to the mesh context and to the values'
placement: the function runs under `jax.sharding.use_abstract_mesh` of the mesh with
those axes' types changed -- so a `reshard` or a bare `PartitionSpec` inside it sees
them as JAX's would -- and the arguments (`explicit_axes`) or results (`auto_axes`)
are `reshard`ed. Where JAX derives a layout from a type (the arguments entering
`auto_axes`, the results leaving `explicit_axes`) minijax leaves it to XLA: the values
are the same.
"""
from __future__ import annotations

import functools

from jax.sharding import AxisType, NamedSharding, use_abstract_mesh

from ..backends.xla_collectives import context_mesh
from ..ir.trace import current_trace, stages_a_program
from .jit import jit
from .sharding import reshard

__all__ = ["auto_axes", "explicit_axes"]


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` with the mesh `axes` (default: all) of type `Auto` while it runs; its
    result is `reshard`ed to `out_sharding` (given here or to the call)."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def call(*args, **kwargs):
        target = _required(kwargs, "out_sharding", out_sharding)
        switched = _switched(axes, AxisType.Auto, "auto_axes", target)
        if switched is None:       # no mesh at all, or every axis already Auto
            return f(*args, **kwargs)

        def switched_call(*args):
            with use_abstract_mesh(switched):
                out = f(*args, **kwargs)
            return reshard(out, target)
        if not stages_a_program(current_trace()):
            # Op by op, JAX would see arrays typed on the Explicit mesh under the
            # switched one: a program of the call sees only its own values.
            return jit(switched_call)(*args)
        return switched_call(*args)
    return call


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` with the mesh `axes` (default: all) of type `Explicit` while it runs, its
    arguments first `reshard`ed to `in_sharding` (given here or to the call)."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def call(*args, **kwargs):
        placement = _required(kwargs, "in_sharding", in_sharding)
        if context_mesh() is None:
            raise ValueError("explicit_axes needs the context mesh, and none is set: "
                             "enter one with `jax.set_mesh(mesh)`")
        switched = _switched(axes, AxisType.Explicit, "explicit_axes", None, always=True)
        with use_abstract_mesh(switched):
            return f(*reshard(args, placement), **kwargs)
    return call


def _required(kwargs, name, given):
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: {name!r}")
    return kwargs.pop(name)


def _switched(axes, kind, what, sharding, always=False):
    """The context mesh (or `sharding`'s, with none in context) with `axes` of type
    `kind`; None where there is no mesh, or (unless `always`) nothing changes."""
    mesh = context_mesh()
    named = sharding.mesh.abstract_mesh if isinstance(sharding, NamedSharding) else None
    if mesh is not None and named is not None and not named.empty and named != mesh:
        raise ValueError(f"{what}: the context mesh {mesh} must match the mesh of "
                         f"{sharding} (enter it with `jax.set_mesh`)")
    mesh = mesh if mesh is not None else named
    if mesh is None or mesh.empty:
        return None
    names = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
    unknown = [n for n in names if n not in mesh.axis_names]
    if unknown:
        raise ValueError(f"{what}: {unknown} are not axes of the mesh {mesh.axis_names}")
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    if any(types[n] == AxisType.Manual for n in names):
        # JAX's type for this refusal: a Manual axis belongs to a shard_map's body
        raise NotImplementedError(f"{what}: the axes {names} include a Manual one "
                                  f"(inside shard_map), whose type cannot change")
    if not always and all(types[n] == kind for n in names):
        return None
    return mesh.update_axis_types({n: kind for n in names})
