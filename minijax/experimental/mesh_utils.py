"""`minijax.experimental.mesh_utils`: arrays of devices in a mesh's shape, as
`jax.experimental.mesh_utils` makes them for `jax.sharding.Mesh`.

On CPU the devices keep `jax.devices()`'s order and on GPU they are sorted by id, as
JAX arranges them. (JAX lays a TPU mesh along the chips' physical torus; minijax,
which runs on CPU and GPU, keeps the devices' order there too.) `create_hybrid_device_mesh`
builds one such mesh per slice (or per process) and tiles them in the slow network's
shape.
"""
from __future__ import annotations

import collections
import math
import operator
from collections.abc import Sequence

import jax
import numpy as np

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _axis_sizes(mesh_shape):
    try:
        return tuple(operator.index(size) for size in mesh_shape)
    except TypeError:
        raise ValueError(f"`mesh_shape` passed to `create_device_mesh` should be a sequence "
                         f"of ints. Got {mesh_shape}") from None


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """`devices` (default `jax.devices()`) as an object array of shape `mesh_shape`,
    whose sizes must multiply to the number of devices. `contiguous_submeshes` and
    `allow_split_physical_axes` only change a TPU mesh's layout in JAX."""
    del contiguous_submeshes, allow_split_physical_axes
    devices = list(jax.devices() if devices is None else devices)
    shape = _axis_sizes(mesh_shape)
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda device: device.id)
    return np.asarray(devices, dtype=object).reshape(shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh for two networks: the devices of each granule (slice, or process when
    `process_is_granule`) form a `mesh_shape` mesh, and the granules are laid out in
    `dcn_mesh_shape`; the result's shape is the two shapes multiplied axis by axis."""
    devices = list(jax.devices() if devices is None else devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         f"`process_is_granule` option.")
    by_granule = collections.defaultdict(list)
    for device in devices:
        by_granule[getattr(device, attr)].append(device)
    keys = sorted(by_granule) if should_sort_granules_by_key else list(by_granule)
    if math.prod(dcn_mesh_shape) != len(keys):
        raise ValueError(f"Number of slices {len(keys)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    meshes = [create_device_mesh(mesh_shape, by_granule[key],
                                 allow_split_physical_axes=allow_split_physical_axes)
              for key in keys]
    layout = np.arange(len(keys)).reshape(dcn_mesh_shape)
    blocks = np.empty(layout.shape, dtype=object)
    for index, k in np.ndenumerate(layout):
        blocks[index] = meshes[k]
    return np.block(blocks.tolist())
