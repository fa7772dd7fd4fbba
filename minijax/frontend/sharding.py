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
"""
from __future__ import annotations

import functools

from jax import tree_util
from jax.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

from ..ir.shard_map_primitive import sharding_constraint_p
from ..ir.trace import bind
from .shard_map import _spec_tuple

__all__ = ["with_sharding_constraint", "constrain_jit_shardings", "sharding_params"]


def sharding_params(sharding) -> dict:
    """The `sharding_constraint` params of a `NamedSharding` or `SingleDeviceSharding`."""
    if isinstance(sharding, SingleDeviceSharding):
        (device,) = sharding.device_set
        return dict(mesh_axes=(), device_ids=(int(device.id),), spec=())
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"minijax supports shardings given as jax.sharding.NamedSharding "
                        f"(a Mesh and a PartitionSpec) or SingleDeviceSharding, got "
                        f"{sharding!r}")
    mesh = sharding.mesh
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    return dict(mesh_axes=tuple(sizes.items()),
                device_ids=tuple(int(d.id) for d in mesh.devices.flat),
                spec=_spec_tuple(sharding.spec, sizes, "sharding"))


def _constrain(x, sharding):
    return bind(sharding_constraint_p, x, **sharding_params(sharding))


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


def _apply(tree, shardings, what):
    leaves, treedef = tree_util.tree_flatten(tree)
    flat = _broadcast(shardings, tree, what)
    return tree_util.tree_unflatten(treedef, [x if s is None else _constrain(x, s)
                                              for x, s in zip(leaves, flat)])


def with_sharding_constraint(x, shardings):
    """`x` (a pytree), asked to be laid out as `shardings` (a `NamedSharding` or
    `SingleDeviceSharding`, or a pytree prefix of them) inside a jitted program, as
    the JAX function of this name."""
    return _apply(x, shardings, "with_sharding_constraint shardings")


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
                args[i] = _apply(args[i], sharding, "jit in_shardings")
        out = fun(*args, **kwargs)
        return out if out_shardings is None else _apply(out, out_shardings,
                                                        "jit out_shardings")
    return constrained
