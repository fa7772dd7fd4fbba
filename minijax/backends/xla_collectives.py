"""XLA lowering of the collectives: one `jax.lax` collective each.

A collective only means something where its axis names are bound. `vmap` rewrites
the collectives on its own axis into array ops before anything is lowered
(`transforms/collective_rules.py`), so the collectives that reach this backend name
the axes of a mesh: they lower, inside the body JAX's `shard_map` runs, to JAX's own
collectives over those axes. Run eagerly, outside any named axis, a collective is the
user's mistake, reported as JAX reports it: a `NameError` naming the unbound axis.
"""
from __future__ import annotations

import functools

import jax
import numpy as np
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

from ..ir import collective_primitives as C
from ..ir.shard_map_primitive import shard_map_p, sharding_constraint_p
from ..ir.trace import eager_impls
from .xla import lowering_rules, lower_jaxpr
from .xla_control_flow import apply_with_bodies


def _groups(groups):
    return None if groups is None else [list(group) for group in groups]


def _reduction(lax_fn):
    return lambda x, *, axes, axis_index_groups=None: [
        lax_fn(x, axes, axis_index_groups=_groups(axis_index_groups))]


lowering_rules[C.psum_p] = _reduction(lax.psum)
lowering_rules[C.pmax_p] = _reduction(lax.pmax)
lowering_rules[C.pmin_p] = _reduction(lax.pmin)
lowering_rules[C.all_gather_p] = (
    lambda x, *, axis_name, axis, tiled, axis_size, axis_index_groups=None:
    [lax.all_gather(x, axis_name, axis=axis, tiled=tiled,
                    axis_index_groups=_groups(axis_index_groups))])
lowering_rules[C.psum_scatter_p] = (
    lambda x, *, axis_name, scatter_dimension, tiled, axis_size, axis_index_groups=None:
    [lax.psum_scatter(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled,
                      axis_index_groups=_groups(axis_index_groups))])
lowering_rules[C.ppermute_p] = (
    lambda x, *, axis_name, perm: [lax.ppermute(x, axis_name, perm)])
lowering_rules[C.all_to_all_p] = (
    lambda x, *, axis_name, split_axis, concat_axis, tiled, axis_size, axis_index_groups=None:
    [lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled,
                    axis_index_groups=_groups(axis_index_groups))])
lowering_rules[C.axis_index_p] = lambda *, axis_name: [lax.axis_index(axis_name)]


def unbound_axis_error(prim, params) -> NameError:
    names = ", ".join(repr(n) for n in C.axis_names_of(prim, params))
    return NameError(f"unbound axis name: {names}. {prim.name} can only be used inside a "
                     f"vmap(..., axis_name=...) or shard_map that binds that name")


def _eager(prim):
    def impl(*args, **params):
        raise unbound_axis_error(prim, params)
    return impl


for _prim in C.collective_primitives:
    eager_impls[_prim] = _eager(_prim)


# -- shard_map: the body goes to JAX's shard_map ----------------------------------------

def devices_of(device_ids) -> list:
    """This process's devices with these ids, in that order."""
    by_id = {device.id: device for device in jax.devices()}
    missing = [i for i in device_ids if i not in by_id]
    if missing:
        raise ValueError(f"this process has no devices with ids {missing} (it has "
                         f"{sorted(by_id)})")
    return [by_id[i] for i in device_ids]


def context_mesh():
    """The mesh `jax.set_mesh` put in context, as JAX's `AbstractMesh` (axis names,
    sizes and types; the public API gives no devices inside `jax.jit`), or None."""
    mesh = jax.sharding.get_abstract_mesh()
    return None if mesh.empty else mesh


def mesh_axes_of(mesh) -> tuple:
    """`(('x', 4), ('y', 2))`: a `Mesh`'s or `AbstractMesh`'s axis names and sizes."""
    return tuple(zip(mesh.axis_names, mesh.axis_sizes))


def mesh_of(mesh_axes, device_ids):
    """JAX's `Mesh` for a shard_map's params: its devices, by id, in mesh order. With
    `device_ids` None the program names the context mesh (`jax.set_mesh`), which must
    still be the one it was traced under."""
    if device_ids is None:
        mesh = context_mesh()
        if mesh is None or mesh_axes_of(mesh) != tuple(mesh_axes):
            raise ValueError(f"this program was traced under a context mesh with axes "
                             f"{mesh_axes} (a PartitionSpec given without a mesh), but "
                             f"the context mesh is now {mesh}: run it under "
                             f"jax.set_mesh(mesh) with that mesh")
        return mesh
    devices = np.array(devices_of(device_ids), dtype=object)
    return Mesh(devices.reshape([size for _, size in mesh_axes]),
                tuple(name for name, _ in mesh_axes))


def partition_spec(spec) -> PartitionSpec:
    return PartitionSpec(*[None if entry is None else entry[0] if len(entry) == 1
                           else entry for entry in spec])


def _shard_map(*args, jaxpr, mesh_axes, device_ids, in_specs, out_specs, auto_axes=()):
    def body(*blocks):
        return tuple(lower_jaxpr(jaxpr, (), blocks))
    # minijax's rules treat every value as varying along every axis (see the psum
    # transpose in transforms/collective_rules.py), which is JAX's check_vma=False
    per_device = jax.shard_map(body, mesh=mesh_of(mesh_axes, device_ids),
                               in_specs=tuple(map(partition_spec, in_specs)),
                               out_specs=tuple(map(partition_spec, out_specs)),
                               axis_names={name for name, _ in mesh_axes
                                           if name not in auto_axes},
                               check_vma=False)
    return list(per_device(*args))


lowering_rules[shard_map_p] = _shard_map
# An eager shard_map traces its body on every call: one compile per body text.
eager_impls[shard_map_p] = functools.partial(apply_with_bodies, shard_map_p)


def _sharding_constraint(x, *, mesh_axes, device_ids, spec, explicit_axes=()):
    if not mesh_axes:        # a mesh with no axes: its one device holds the whole array
        sharding = SingleDeviceSharding(devices_of(device_ids)[0])
    elif device_ids is None:         # the context mesh, checked by mesh_of
        mesh_of(mesh_axes, device_ids)
        sharding = partition_spec(spec)
        named = {name for names in spec if names for name in names}
        if named:
            # The context the program is lowered in may type the named axes otherwise
            # than the one it was traced in (`auto_axes`/`explicit_axes` switch them
            # while a function is traced, and minijax's types keep no layouts): its
            # types choose between JAX's move and JAX's request.
            here = jax.sharding.get_abstract_mesh()
            kinds = {dict(zip(here.axis_names, here.axis_types)).get(n) for n in named}
            if kinds == {AxisType.Explicit}:
                return [jax.sharding.reshard(x, sharding)]
            if AxisType.Explicit not in kinds:
                return [jax.lax.with_sharding_constraint(x, sharding)]
    else:
        mesh = mesh_of(mesh_axes, device_ids)
        if explicit_axes:
            mesh = Mesh(mesh.devices, mesh.axis_names, axis_types=tuple(
                AxisType.Explicit if name in explicit_axes else AxisType.Auto
                for name in mesh.axis_names))
        sharding = NamedSharding(mesh, partition_spec(spec))
    if explicit_axes:
        return [jax.sharding.reshard(x, sharding)]
    return [jax.lax.with_sharding_constraint(x, sharding)]


lowering_rules[sharding_constraint_p] = _sharding_constraint
