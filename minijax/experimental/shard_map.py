"""`minijax.experimental.shard_map`: the older home of `shard_map`, which JAX keeps,
deprecated since JAX 0.8.0 (importing it warns, as JAX's does), for programs written
before `jax.shard_map`. Its `check_rep` is today's `check_vma`."""
from __future__ import annotations

import warnings

from ..frontend.shard_map import shard_map as _shard_map

__all__ = ["shard_map"]

warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
              "instead.", DeprecationWarning, stacklevel=2)


def shard_map(f, mesh, in_specs, out_specs, check_rep: bool = True):
    """`minijax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
    check_vma=check_rep)`, with the older positional signature."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)
