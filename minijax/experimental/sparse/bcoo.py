"""The BCOO array and its layout operations: conversion to and from dense arrays,
transposition, sorting and summing duplicate indices. The contractions, reductions and
products live in `_bcoo_ops.py`; `__init__.py` says why all of them are compositions
of minijax's primitives rather than primitives of their own."""
from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...frontend.jit import jit
from ...ir.trace import Tracer
from ...tree_util import register_pytree_node_class
from ._util import (batch_and_sparse_index, nfold_vmap, static_nse, validate,
                    validate_indices)


@register_pytree_node_class
class BCOO:
    """A batched-coordinate sparse array, as `jax.experimental.sparse.BCOO`.

    `data` has shape `batch + (nse,) + dense` and `indices` shape
    `batch + (nse, n_sparse)`; element `i` of a batch stores `data[..., i, ...]` at the
    sparse coordinates `indices[..., i, :]`. Duplicate coordinates add up, and
    coordinates out of bounds (the padding `fromdense(nse=...)` writes) are ignored.
    """
    __hash__ = None
    __array_priority__ = 2000

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        data, indices = args
        self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
        self.shape = tuple(operator.index(s) for s in shape)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        validate(self.data, self.indices, self.shape)

    nse = property(lambda self: self.indices.shape[-2])
    dtype = property(lambda self: self.data.dtype)
    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: self.data.ndim - 1 - self.n_batch)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    T = property(lambda self: self.transpose())

    def __len__(self):
        return self.shape[0]

    def _flags(self):
        return dict(shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def __repr__(self):
        extra = f", nse={self.nse}"
        if self.n_batch:
            extra += f", n_batch={self.n_batch}"
        if self.n_dense:
            extra += f", n_dense={self.n_dense}"
        text = f"BCOO({self.dtype}{list(self.shape)}{extra})"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def tree_flatten(self):
        return (self.data, self.indices), self._flags()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        # Leaves may be placeholders (None, object()) when JAX or minijax rebuild the
        # tree, so unflattening skips the layout checks, as JAX's does.
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        obj.__dict__.update(aux_data)
        return obj

    def block_until_ready(self):
        self.data.block_until_ready()
        self.indices.block_until_ready()
        return self

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        batch, sparse = shape[:n_batch], shape[n_batch:n_batch + n_sparse]
        data = jnp.zeros((*batch, nse, *shape[n_batch + n_sparse:]), dtype)
        indices = jnp.full((*batch, nse, n_sparse), jnp.array(sparse), index_dtype)
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, "
                             f"n_batch={n_batch}")
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype,
                              n_batch=n_batch, n_dense=n_dense)
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(jnp.eye(N, M, k, dtype=dtype), n_batch=n_batch,
                                 n_dense=n_dense, index_dtype=index_dtype)
        if n_batch == 0:
            data = jnp.ones(diag_size, dtype=dtype)
            idx = jnp.arange(diag_size, dtype=index_dtype)
            indices = jnp.column_stack([idx - min(k, 0), idx + max(k, 0)])
        else:
            data = jnp.ones(N, dtype=dtype)
            indices = jnp.arange(N, dtype=index_dtype) + k
            if k < 0:
                data = data.at[:abs(k)].set(0)
                indices = indices.at[:abs(k)].set(M)
            elif k > 0:
                data = data.at[M - abs(k):].set(0)
                # JAX's own code sets this one position, not the slice after it.
                indices = indices.at[M - abs(k)].set(M)
            data, indices = data[:, None], indices[:, None, None]
        return cls((data, indices), shape=(N, M), indices_sorted=True, unique_indices=True)

    def todense(self):
        return bcoo_todense(self)

    def transpose(self, axes=None):
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        out = bcoo_transpose(self, permutation=perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch:self.n_batch + self.n_sparse]]
        out.indices_sorted = (self.indices_sorted
                              and tuple(sparse_perm) == tuple(range(self.n_sparse)))
        return out

    def astype(self, dtype):
        return BCOO((self.data.astype(dtype), self.indices), **self._flags())

    def sort_indices(self):
        return bcoo_sort_indices(self)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def __neg__(self):
        return BCOO((-self.data, self.indices), **self._flags())

    def __pos__(self):
        return self

    def sum(self, axis=None, dtype=None):
        from ._bcoo_ops import sparse_sum
        return sparse_sum(self, axis, dtype)

    def __matmul__(self, other):
        from ._bcoo_ops import sparse_matmul
        return sparse_matmul(self, other)

    def __rmatmul__(self, other):
        from ._bcoo_ops import sparse_matmul
        return sparse_matmul(other, self)

    def __mul__(self, other):
        from ._bcoo_ops import sparse_mul
        return sparse_mul(self, other)

    __rmul__ = __mul__


def bcoo_todense(mat):
    """The dense array `mat` stands for: its data added at its indices."""
    return _todense(mat.data, mat.indices, mat.shape)


# The array work of each operation is one jitted function, so that an eager call runs
# one program (as JAX's primitive does) rather than one per step; under a transform
# the nested jit is traced through like any other.
@partial(jit, static_argnames=("shape",))
def _todense(data, indices, shape):
    n_batch, n_sparse, _, _ = validate(data, indices, shape)
    batch_ind, sparse_ind = batch_and_sparse_index(indices, shape, n_batch, n_sparse)
    if not sparse_ind:
        data = data.sum(n_batch, keepdims=bool(batch_ind), dtype=data.dtype)
    return jnp.zeros(shape, data.dtype).at[batch_ind + sparse_ind].add(data)


def extract(indices, arr):
    """`arr`'s values at `indices` (assumed unique), in BCOO data layout; indices out of
    bounds read 0."""
    n_batch, n_sparse, _, nse = validate_indices(indices, arr.shape)
    batch_ind, sparse_ind = batch_and_sparse_index(indices, arr.shape, n_batch, n_sparse)
    if not sparse_ind + batch_ind:
        result = arr[None]
    else:
        result = arr.at[batch_ind + sparse_ind].get(mode="fill", fill_value=0)
    if n_sparse == 0 and nse != 1:
        shape = list(result.shape)
        shape[n_batch] = nse
        result = jnp.broadcast_to(result, tuple(shape))
    return result


@partial(jit, static_argnames=("n_batch", "n_dense"))
def _count_stored(mat, n_batch, n_dense):
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any(tuple(-(i + 1) for i in range(n_dense)))
    return mask.sum(tuple(range(n_batch, mask.ndim))).max(initial=0)


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=jnp.int32):
    """`mat` as a BCOO array with `nse` stored elements per batch (by default the most
    nonzeros any batch has, which needs a concrete `mat`). Unused slots hold data 0 at
    the out-of-bounds index `shape[n_batch:n_batch + n_sparse]`."""
    mat = jnp.asarray(mat)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    n_sparse = mat.ndim - n_dense - n_batch
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"bcoo_fromdense: n_batch={n_batch} and n_dense={n_dense} do not fit "
                         f"an array of {mat.ndim} dimensions")
    nse = static_nse(_count_stored(mat, n_batch, n_dense) if nse is None else nse,
                     "nse argument of bcoo_fromdense")
    data, indices = _fromdense(mat, nse, n_batch, n_dense, np.dtype(index_dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _fromdense(mat, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_dense - n_batch
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any([-(i + 1) for i in range(n_dense)])
    if n_sparse == 0:
        indices = jnp.zeros(mask.shape[:n_batch] + (nse, 0), index_dtype)
    else:
        def nonzero(a):
            return jnp.stack(jnp.nonzero(a, size=nse, fill_value=a.shape[:n_sparse]), -1)
        indices = nfold_vmap(nonzero, n_batch, broadcasted=False)(mask).astype(index_dtype)
    data = extract(indices, mat)
    true_nse = mask.sum(list(range(n_batch, mask.ndim)))[..., None]
    true_nonzeros = lax.broadcasted_iota(true_nse.dtype, (1,) * n_batch + (nse,),
                                         n_batch) < true_nse
    true_nonzeros = true_nonzeros[(n_batch + 1) * (slice(None),) + n_dense * (None,)]
    data = jnp.where(true_nonzeros, data, 0)
    return data, indices


def _validate_permutation(data, indices, permutation, shape):
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    if tuple(sorted(permutation)) != tuple(range(len(shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {permutation} for shape {shape}.")
    n_batch, n_sparse, n_dense, _ = validate(data, indices, shape)
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch:n_batch + n_sparse]]
    dense_perm = [p - n_sparse - n_batch for p in permutation[n_batch + n_sparse:]]
    if n_batch and tuple(sorted(batch_perm)) != tuple(range(n_batch)):
        raise NotImplementedError("transpose permutation cannot permute batch axes with "
                                  f"non-batch axes; got permutation {permutation}, "
                                  f"with n_batch={n_batch}.")
    if n_dense and tuple(sorted(dense_perm)) != tuple(range(n_dense)):
        raise NotImplementedError("transpose permutation cannot permute dense axes with "
                                  f"non-dense axes; got permutation {permutation}, "
                                  f"with n_dense={n_dense}.")
    return list(batch_perm), sparse_perm, dense_perm


def bcoo_transpose(mat, *, permutation):
    """`mat` with its axes permuted; batch axes stay among batch axes and dense among
    dense, as in JAX."""
    permutation = tuple(int(p) for p in permutation) if isinstance(
        permutation, (tuple, list, np.ndarray)) else permutation
    batch_perm, sparse_perm, dense_perm = _validate_permutation(
        mat.data, mat.indices, permutation, mat.shape)
    data, indices = mat.data, mat.indices
    if permutation != tuple(range(mat.ndim)):
        n_batch = len(batch_perm)
        indices = indices[..., np.array(sparse_perm, int)].transpose(
            *batch_perm, n_batch, n_batch + 1)
        data = data.transpose(*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
    return BCOO((data, indices), shape=tuple(mat.shape[p] for p in permutation),
                unique_indices=mat.unique_indices)


def _sort_unbatched(indices):
    nse, n = indices.shape
    *cols, perm = lax.sort((*(indices[:, i] for i in range(n)),
                            lax.iota(indices.dtype, nse)), num_keys=n)
    return jnp.column_stack(cols), perm


@partial(jit, static_argnums=(2,))
def _sort_all(data, indices, n_batch):
    indices, perm = nfold_vmap(_sort_unbatched, n_batch, broadcasted=False)(indices)
    return nfold_vmap(lambda d, p: d[p], n_batch)(data, perm), indices


def bcoo_sort_indices(mat):
    """`mat` with each batch's indices in lexicographic order (duplicates kept)."""
    props = validate(mat.data, mat.indices, mat.shape)
    data, indices = mat.data, mat.indices
    if props.n_sparse:
        data, indices = _sort_all(data, indices, props.n_batch)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def _unique_unbatched(indices, sparse_shape):
    """Sorted unique rows of `indices` (out-of-bounds rows become the fill row, which
    sorts last), padded with the fill row to nse rows; where each input row went; and
    how many distinct in-bounds rows there are."""
    nse, n = indices.shape
    fill = jnp.array(sparse_shape, indices.dtype)[None, :]
    indices = jnp.where((indices >= fill).any(-1, keepdims=True), fill, indices)
    rows, perm = _sort_unbatched(indices)
    starts = jnp.concatenate([jnp.ones(min(nse, 1), bool),
                              (rows[1:] != rows[:-1]).any(-1)])
    slot = jnp.cumsum(starts, dtype=np.int32) - 1
    unique = jnp.broadcast_to(fill, (nse, n)).at[slot].set(rows)
    inverse = jnp.zeros(nse, np.int32).at[perm].set(slot)
    count = starts.sum(dtype=np.int32) - (indices == fill).any().astype(np.int32)
    return unique, inverse, count


def _adjust_nse(indices, nse, sparse_shape):
    have = indices.shape[-2]
    if nse <= have:
        return indices[..., :nse, :]
    fill = jnp.broadcast_to(jnp.array(sparse_shape, indices.dtype),
                            (*indices.shape[:-2], nse - have, indices.shape[-1]))
    return jnp.concatenate([indices, fill], axis=indices.ndim - 2)


@partial(jit, static_argnums=(1, 2))
def _unique_all(indices, sparse_shape, n_batch):
    unique = nfold_vmap(lambda i: _unique_unbatched(i, sparse_shape), n_batch,
                        broadcasted=False)
    indices_out, mapping, counts = unique(indices)
    return indices_out, mapping, counts.max()


@partial(jit, static_argnums=(3, 4, 5))
def _sum_into(data, mapping, indices_out, nse, sparse_shape, n_batch):
    batch = tuple(map(max, mapping.shape[:n_batch], data.shape[:n_batch]))
    out = jnp.zeros((*batch, nse, *data.shape[n_batch + 1:]), data.dtype)
    scatter = nfold_vmap(lambda o, m, d: o.at[m].add(d, mode="drop"), n_batch)
    return scatter(out, mapping, data), _adjust_nse(indices_out, nse, sparse_shape)


def bcoo_sum_duplicates(mat, nse=None):
    """`mat` with the data of equal indices added, indices sorted and unique. Without
    `nse` the output size is the most distinct indices any batch has (concrete `mat`
    only); a larger `nse` pads, a smaller one drops data."""
    n_batch, n_sparse, _, _ = validate(mat.data, mat.indices, mat.shape)
    sparse_shape = mat.shape[n_batch:n_batch + n_sparse]
    data, indices = mat.data, mat.indices
    batch = tuple(map(max, indices.shape[:n_batch], data.shape[:n_batch]))
    if n_sparse == 0:
        nse = 1 if nse is None else static_nse(nse, "nse argument of bcoo_sum_duplicates")
        data = data.sum(n_batch, keepdims=True, dtype=data.dtype)
        indices_out = _adjust_nse(indices[..., :1, :], nse, sparse_shape)
        data = jnp.broadcast_to(data, batch + data.shape[n_batch:])
        pad = [(0, 0)] * data.ndim
        pad[n_batch] = (0, max(nse - 1, 0))
        data_out = jnp.pad(data, pad)[(slice(None),) * n_batch + (slice(nse),)]
    else:
        indices_out, mapping, most = _unique_all(indices, sparse_shape, n_batch)
        nse = static_nse(most if nse is None else nse, "nse argument of bcoo_sum_duplicates")
        data_out, indices_out = _sum_into(data, mapping, indices_out, nse, sparse_shape,
                                          n_batch)
    return BCOO((data_out, indices_out), shape=mat.shape, indices_sorted=True,
                unique_indices=True)


def bcoo_eliminate_zeros(mat, nse=None):
    """`mat` without its explicitly stored zeros (their indices are sent out of bounds),
    duplicates summed."""
    n_batch, n_sparse, _, _ = validate(mat.data, mat.indices, mat.shape)
    data, indices = mat.data, mat.indices
    mask = (data == 0).all(tuple(range(n_batch + 1, data.ndim)))
    contract = tuple(i for i, s in enumerate(indices.shape[:n_batch]) if s == 1)
    mask = mask.all(contract, keepdims=True)
    fill = jnp.array(mat.shape[n_batch:n_batch + n_sparse], indices.dtype)
    indices = jnp.where(mask[..., None], fill, indices)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=mat.shape), nse=nse)
