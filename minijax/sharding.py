"""`minijax.sharding`, the names of `jax.sharding`.

The vocabulary is JAX's own: `Mesh`, `AbstractMesh`, `AxisType`, `PartitionSpec`,
`NamedSharding`, `SingleDeviceSharding`, the mesh context (`set_mesh`, `get_mesh`,
`get_abstract_mesh`, `use_abstract_mesh`) are re-exported, so a minijax program and
a JAX program share meshes, specs and the mesh context. What acts on values is
minijax's: `reshard` (`frontend/sharding.py`). JAX's `auto_axes` and `explicit_axes`,
which re-trace a function with JAX, are not here.
"""
from jax.sharding import (AbstractDevice, AbstractMesh, AxisType, Mesh, NamedSharding,
                          PartitionSpec, Sharding, SingleDeviceSharding, get_abstract_mesh,
                          get_mesh, make_single_device_sharding, set_mesh,
                          use_abstract_mesh)

from .frontend.sharding import reshard

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "Mesh", "NamedSharding",
           "PartitionSpec", "Sharding", "SingleDeviceSharding", "get_abstract_mesh",
           "get_mesh", "make_single_device_sharding", "set_mesh", "use_abstract_mesh",
           "reshard"]
