"""`minijax.experimental.multihost_utils`: moving values between the processes of a
multi-process program, as `jax.experimental.multihost_utils` does.

minijax runs in one process (`jax.process_count() == 1`), where each of these has
JAX's one-process meaning: gathering stacks (or concatenates) the one process's
values as NumPy arrays, broadcasting hands them back as NumPy arrays, a barrier has
no one to wait for, and a host-local array is already the global one, laid out on
the mesh by `pspecs`.
"""
from __future__ import annotations

import zlib

import jax
import numpy as np
from jax import tree_util

from ..frontend.devices import device_put
from ..frontend.shard_map import broadcast_specs
from ..ir.trace import Tracer

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices",
           "assert_equal", "host_local_array_to_global_array",
           "global_array_to_host_local_array"]


def process_allgather(in_tree, tiled: bool = False):
    """Each leaf gathered from every process, as NumPy: stacked on a new leading axis
    (or, `tiled`, concatenated along the first; a scalar is always stacked)."""
    def gather(leaf):
        value = np.asarray(leaf)
        return value if tiled else value[None]
    return tree_util.tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
    """Each leaf as the source process has it (here, this one), as NumPy."""
    del is_source
    return tree_util.tree_map(np.asarray, in_tree)


def assert_equal(in_tree, fail_message: str = ""):
    """Raises AssertionError if the processes hold different values of `in_tree`."""
    gathered = process_allgather(in_tree, tiled=True)
    mine = tree_util.tree_map(lambda leaf: np.atleast_1d(np.asarray(leaf)), in_tree)
    same = tree_util.tree_map(lambda a, b: bool(np.all(np.equal(a, b))), mine, gathered)
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str):
    """A barrier of every process, named (the processes must agree on the name)."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ('{name}')")


def _check_pspec(pspec):
    if pspec is None:
        raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                         "jax.sharding.PartitionSpec() if you wanted to replicate your "
                         "input.")


def _relaid(inputs, global_mesh, pspecs, caller):
    leaves, tree = tree_util.tree_flatten(inputs)
    specs = broadcast_specs(pspecs, inputs, "pspecs", caller)
    out = []
    for leaf, spec in zip(leaves, specs):
        _check_pspec(spec)
        # Traced, the value is the same array in one process (JAX's rule is the
        # identity); concrete, it is laid out over the mesh.
        out.append(leaf if isinstance(leaf, Tracer) else
                   device_put(leaf, jax.sharding.NamedSharding(global_mesh, spec)))
    return tree_util.tree_unflatten(tree, out)


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """This process's arrays as the global arrays of `global_mesh`, laid out by
    `pspecs` (a PartitionSpec, or a pytree prefix of them)."""
    return _relaid(local_inputs, global_mesh, pspecs, "host_local_array_to_global_array")


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """The part of each global array this process holds: here, all of it."""
    return _relaid(global_inputs, global_mesh, pspecs, "global_array_to_host_local_array")
