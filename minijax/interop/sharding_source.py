"""The source text of a mesh, a sharding and a partition spec, as a program that
`source.py` writes spells them: devices by id, so the text names the same devices
wherever it runs on the same machine."""
from __future__ import annotations


def sharding_source(p) -> str:
    """A `sharding_constraint` equation's sharding (its params `p`) as source."""
    if not p["mesh_axes"]:       # one device (see frontend/sharding.py)
        return (f"jax.sharding.SingleDeviceSharding({{d.id: d for d in jax.devices()}}"
                f"[{p['device_ids'][0]}])")
    if p["device_ids"] is None:     # the context mesh: a bare spec, as the user wrote it
        return spec_source(p["spec"])
    return (f"jax.sharding.NamedSharding("
            f"{mesh_source(p['mesh_axes'], p['device_ids'], p.get('explicit_axes', ()))}, "
            f"{spec_source(p['spec'])})")


def mesh_source(mesh_axes, device_ids, explicit_axes=()) -> str:
    """A `jax.sharding.Mesh` of the devices with these ids, in this shape."""
    if device_ids is None:          # shard_map on the context mesh (jax.set_mesh)
        return "None"
    names = tuple(name for name, _ in mesh_axes)
    shape = tuple(size for _, size in mesh_axes)
    types = "" if not explicit_axes else ", axis_types=%s" % _axis_types_source(
        names, explicit_axes)
    return (f"jax.sharding.Mesh(np.array([{{d.id: d for d in jax.devices()}}[i] for i in "
            f"{device_ids!r}]).reshape({shape!r}), {names!r}{types})")


def _axis_types_source(names, explicit_axes) -> str:
    types = ", ".join("jax.sharding.AxisType.Explicit" if name in explicit_axes
                      else "jax.sharding.AxisType.Auto" for name in names)
    return f"({types},)"


def spec_source(spec) -> str:
    """A `PartitionSpec` from minijax's spec (one tuple of axis names per dimension)."""
    entries = [repr(None if e is None else e[0] if len(e) == 1 else e) for e in spec]
    return f"jax.sharding.PartitionSpec({', '.join(entries)})"
