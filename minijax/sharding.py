"""`minijax.sharding`, the names of `jax.sharding`.

The vocabulary is JAX's own: `Mesh`, `AbstractMesh`, `AxisType`, `PartitionSpec`,
`NamedSharding`, `SingleDeviceSharding`, the mesh context (`set_mesh`, `get_mesh`,
`get_abstract_mesh`, `use_abstract_mesh`) are re-exported, so a minijax program and
a JAX program share meshes, specs and the mesh context. What acts on values is
minijax's: `reshard` (`frontend/sharding.py`), and `auto_axes` / `explicit_axes`
(`frontend/mesh_axes.py`).
"""
from jax.sharding import (AbstractDevice, AbstractMesh, AxisType, Mesh, NamedSharding,
                          PartitionSpec, Sharding, SingleDeviceSharding, get_abstract_mesh,
                          get_mesh, make_single_device_sharding, set_mesh,
                          use_abstract_mesh)

from .frontend.sharding import reshard
from .frontend.mesh_axes import auto_axes, explicit_axes

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "Mesh", "NamedSharding",
           "PartitionSpec", "Sharding", "SingleDeviceSharding", "get_abstract_mesh",
           "get_mesh", "make_single_device_sharding", "set_mesh", "use_abstract_mesh",
           "reshard", "auto_axes", "explicit_axes"]
