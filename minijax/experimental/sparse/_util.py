"""Layout checks and batching helpers shared by the BCOO operations."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ... import lax
from ...frontend.vmap import vmap
from ...ir.trace import Tracer


class BCOOProperties(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def validate_indices(indices, shape) -> BCOOProperties:
    if not np.issubdtype(np.dtype(indices.dtype), np.integer):
        # JAX only asserts this; a TypeError names the mistake.
        raise TypeError(f"BCOO indices must have an integer dtype, got {indices.dtype}")
    shape = tuple(shape)
    if len(indices.shape) < 2:
        raise ValueError(f"BCOO indices must have at least 2 dimensions (..., nse, n_sparse); "
                         f"got indices.shape={tuple(indices.shape)}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = len(indices.shape) - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"BCOO indices.shape={tuple(indices.shape)} has more batch and sparse "
                         f"dimensions than shape={shape} has dimensions")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError("indices batch dimensions not compatible for "
                         f"indices.shape={tuple(indices.shape)}, shape={shape}")
    return BCOOProperties(n_batch, n_sparse, n_dense, nse)


def validate(data, indices, shape) -> BCOOProperties:
    props = validate_indices(indices, shape)
    n_batch, n_sparse, n_dense, nse = props
    shape = tuple(shape)
    if len(data.shape) < n_batch or any(
            s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError("data batch dimensions not compatible for "
                         f"data.shape={tuple(data.shape)}, shape={shape}")
    if tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + n_sparse:]:
        raise ValueError(f"Invalid data.shape={tuple(data.shape)} for nse={nse}, "
                         f"n_batch={n_batch}, n_dense={n_dense}")
    return props


def static_nse(value, what):
    """`value` as a Python int; a traced one is JAX's ConcretizationTypeError."""
    if isinstance(value, Tracer):
        value = value._concrete_or_raise(
            f"the {what} (it fixes the BCOO's shape, so under jit pass a concrete "
            f"value)")
    return operator.index(int(np.asarray(value))) if not isinstance(value, int) else value


def _broadcasting_vmap(fun):
    """vmap over the leading axis of every argument; an argument whose leading axis has
    size 1 (a BCOO batch dimension that broadcasts) is squeezed and left unmapped."""
    def batched(*args):
        size = max(arg.shape[0] for arg in args)
        if size > 1:
            if any(arg.shape[0] not in (1, size) for arg in args):
                raise ValueError("broadcasting_vmap: mismatched input shapes")
            axes = tuple(None if arg.shape[0] == 1 else 0 for arg in args)
            args = tuple(lax.squeeze(arg, (0,)) if ax is None else arg
                         for arg, ax in zip(args, axes))
        else:
            axes = 0
        return vmap(fun, in_axes=axes)(*args)
    return batched


def nfold_vmap(fun, n, *, broadcasted=True):
    for _ in range(n):
        fun = _broadcasting_vmap(fun) if broadcasted else vmap(fun)
    return fun


def batch_and_sparse_index(indices, shape, n_batch, n_sparse):
    """The index tuple that addresses every stored element of a dense array of `shape`:
    static grids over the batch dimensions (broadcast where `indices` has size 1 there)
    followed by the sparse coordinates."""
    ind_slices = tuple(np.zeros(s, int) if i_s == 1 else np.arange(s)
                       for s, i_s in zip(shape[:n_batch], indices.shape[:n_batch]))
    grid = tuple(np.meshgrid(*ind_slices, indexing="ij", sparse=True))
    sparse_ind = tuple(indices[grid + (slice(None), i)] for i in range(n_sparse))
    batch_slices = tuple(np.arange(s) for s in shape[:n_batch])
    batch_ind = tuple(np.meshgrid(*batch_slices, np.arange(1), indexing="ij",
                                  sparse=True))[:-1]
    return batch_ind, sparse_ind
