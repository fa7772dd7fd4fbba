"""Processes, hosts and the arrays they hold: `jax.host_id`, `jax.process_indices`,
`jax.live_arrays`, `jax.make_array_from_callback`, ...

minijax computes on JAX's runtime, and its concrete arrays are JAX's `jax.Array`s, so
the answers about this process (its index, the processes of the run, the arrays it
holds) are the runtime's own: these functions ask JAX, as `devices.py` does for the
devices. In a single-process run that is index 0 of 1. The `host_*` names are the
old ones; JAX warns that they were renamed, and the warning is JAX's.
"""
from __future__ import annotations

import jax
from jax import tree_util

from ..ir.trace import Tracer


def host_id(backend=None) -> int:
    """`process_index` under its old name."""
    return jax.host_id(backend)


def host_count(backend=None) -> int:
    """`process_count` under its old name."""
    return jax.host_count(backend)


def host_ids(backend=None) -> list:
    """`process_indices` under its old name."""
    return jax.host_ids(backend)


def process_indices(backend=None) -> list:
    """The indices of the run's processes: `[0]` when alone."""
    return jax.process_indices(backend)


def print_environment_info(return_string: bool = False):
    """The versions minijax runs with (minijax's, then JAX's report: jax, jaxlib,
    numpy, Python, the devices), printed, or returned when `return_string`."""
    from .. import __version__
    text = f"minijax: {__version__}\n" + jax.print_environment_info(return_string=True)
    if return_string:
        return text
    print(text)
    return None


def live_arrays(platform=None) -> list:
    """The arrays alive in this process (minijax's concrete values are among them)."""
    return jax.live_arrays(platform)


def _refuse_traced(fname, values):
    for leaf in tree_util.tree_leaves(values):
        if isinstance(leaf, Tracer):
            raise TypeError(f"{fname} builds a concrete array from concrete data, but got "
                            f"the traced value {leaf!r}; call it outside transformations")


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of `shape` laid out by `sharding`, each device's piece being
    `data_callback(index)` for the index (a tuple of slices) of that piece."""
    def piece(index):
        data = data_callback(index)
        _refuse_traced("make_array_from_callback", data)
        return data
    return jax.make_array_from_callback(shape, sharding, piece, dtype)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An array of `shape` laid out by `sharding` from its pieces, one array on each
    device of the sharding."""
    _refuse_traced("make_array_from_single_device_arrays", arrays)
    return jax.make_array_from_single_device_arrays(shape, sharding, arrays, dtype=dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """An array laid out by `sharding` from the data this process holds of it (all of
    it, in a single-process run)."""
    _refuse_traced("make_array_from_process_local_data", local_data)
    return jax.make_array_from_process_local_data(sharding, local_data, global_shape)


def copy_to_host_async(x):
    """Start copying each array in the pytree `x` to the host; returns `x`. Leaves
    without such a copy (tracers, NumPy arrays, Python values) are left alone."""
    for leaf in tree_util.tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if copy is not None and not isinstance(leaf, Tracer):
            copy()
    return x
