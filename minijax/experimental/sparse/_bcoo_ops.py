"""BCOO contractions, reductions and elementwise products, and the `@`, `*` and
`sum` of the BCOO class (which JAX derives from `sparsify`)."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...frontend.jit import jit
from ...frontend.tracing import eval_shape
from .bcoo import BCOO, extract
from ._util import nfold_vmap, validate


def _index_tuple(dims):
    return tuple(int(d) for d in (dims if isinstance(dims, (tuple, list, np.ndarray))
                                  else (dims,)))


def _remaining(original, *removed_lists):
    removed = set().union(*removed_lists)
    return [i for i in original if i not in removed]


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`lax.dot_general` with one sparse operand: the sparse operand's stored elements
    meet the dense operand's matching rows (a gather), and their products are added
    into the dense result (a scatter-add). The result is dense."""
    del precision, out_sharding
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        raise NotImplementedError(
            "bcoo_dot_general: minijax contracts a sparse array with a dense one only; "
            "convert one operand with .todense()")
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb)))
    if isinstance(lhs, BCOO):
        return _dot_general(lhs.data, lhs.indices, jnp.asarray(rhs), lhs.shape, dn,
                            preferred_element_type)
    if isinstance(rhs, BCOO):
        reversed_dn = tuple(d[::-1] for d in dn)
        result = _dot_general(rhs.data, rhs.indices, jnp.asarray(lhs), rhs.shape, reversed_dn,
                              preferred_element_type)
        n_contract, n_batch = len(dn[0][0]), len(dn[1][0])
        n_swap = len(rhs.shape) - n_contract
        perm = (*range(n_batch), *range(n_swap, result.ndim), *range(n_batch, n_swap))
        return lax.transpose(result, perm)
    return lax.dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type)


# One jitted function per operation: an eager call is then one program, as JAX's
# primitive is, instead of one per step.
@partial(jit, static_argnums=(3, 4, 5))
def _dot_general(lhs_data, lhs_indices, rhs, shape, dn, preferred_element_type):
    out = eval_shape(
        lambda a, b: lax.dot_general(a, b, dn, preferred_element_type=preferred_element_type),
        _struct(shape, lhs_data.dtype), _struct(rhs.shape, rhs.dtype))
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dn
    n_batch, n_sparse, _, _ = validate(lhs_data, lhs_indices, shape)
    if lhs_batch and max(lhs_batch) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lhs_batch}, n_batch={n_batch}")
    if any(d >= n_batch + n_sparse for d in lhs_contracting):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")

    pairs = list(zip(lhs_contracting, rhs_contracting))
    lhs_contracting_b = [l for l, _ in pairs if l < n_batch]
    rhs_contracting_b = [r for l, r in pairs if l < n_batch]
    lhs_contracting_s = [l - n_batch for l, _ in pairs if l >= n_batch]
    rhs_contracting_s = [r for l, r in pairs if l >= n_batch]

    # Contracted and dot-batch axes of the batch go first, in the dense operand's order.
    if lhs_batch or lhs_contracting_b:
        batch_perm = [*lhs_batch, *_remaining(range(n_batch), lhs_batch, lhs_contracting_b),
                      *lhs_contracting_b]
        lhs_data = lhs_data.transpose([*batch_perm, *range(n_batch, lhs_data.ndim)])
        lhs_indices = lhs_indices.transpose([*batch_perm, *range(n_batch, lhs_indices.ndim)])
    if lhs_contracting_s:
        sparse_perm = np.array([*lhs_contracting_s,
                                *_remaining(range(n_sparse), lhs_contracting_s)], int)
        lhs_indices = lhs_indices[..., sparse_perm]
    rhs_perm = [*rhs_batch, *rhs_contracting_b, *rhs_contracting_s,
                *_remaining(range(rhs.ndim), rhs_batch, rhs_contracting_b, rhs_contracting_s)]
    rhs = rhs.transpose(rhs_perm)
    n_right = len(lhs_contracting_s)

    def result(out_array, lhs_data, lhs_indices, rhs):
        idx = tuple(lhs_indices[..., i] for i in range(n_sparse))
        idx_right, idx_out = idx[:n_right], idx[n_right:]
        if idx_right and lhs_indices.ndim > 2:
            idx_batch = jnp.meshgrid(*(jnp.arange(n) for n in lhs_indices.shape[:-1]),
                                     indexing="ij")[:lhs_indices.ndim - 2]
            idx_right = (*idx_batch, *idx_right)
        batch_dims = list(range(len(lhs_contracting_b) + bool(lhs_contracting_s)))
        prod = lax.dot_general(lhs_data, rhs.at[idx_right].get(mode="fill", fill_value=0),
                               (([], []), (batch_dims, batch_dims)),
                               preferred_element_type=preferred_element_type)
        if idx_out:
            return out_array.at[idx_out].add(prod)
        return prod.sum(tuple(range(prod.ndim - out_array.ndim)), dtype=out_array.dtype)

    n_mapped = n_batch - len(lhs_contracting_b)
    rhs = lax.expand_dims(rhs, tuple(range(len(rhs_batch), n_mapped)))
    out_array = jnp.zeros(out.shape, out.dtype)
    return nfold_vmap(result, n_mapped)(out_array, lhs_data, lhs_indices, rhs)


def _struct(shape, dtype):
    from jax import ShapeDtypeStruct
    return ShapeDtypeStruct(tuple(shape), dtype)


def bcoo_reduce_sum(mat, *, axes):
    """The sum of `mat` over `axes`, as a BCOO array: summed sparse axes drop out of the
    indices (duplicates then add up implicitly), summed batch axes fold into nse."""
    shape = mat.shape
    axes = [int(a) for a in axes]
    if not all(0 <= a < len(shape) for a in axes):
        raise ValueError(f"bcoo_reduce_sum: axes {tuple(axes)} out of range for an array "
                         f"of {len(shape)} dimensions")
    validate(mat.data, mat.indices, shape)
    data, indices = _reduce_sum(mat.data, mat.indices, shape, tuple(sorted(set(axes))))
    return BCOO((data, indices), shape=tuple(shape[i] for i in range(len(shape))
                                             if i not in axes))


@partial(jit, static_argnums=(2, 3))
def _reduce_sum(data, indices, shape, axes):
    n_batch, n_sparse, _, nse = validate(data, indices, shape)
    dense_axes = tuple(ax - n_sparse + 1 for ax in axes if ax >= n_batch + n_sparse)
    data = data.sum(dense_axes)
    if n_sparse:
        # Data stored at out-of-bounds indices must not reach the sum.
        fill = jnp.expand_dims(jnp.array(shape[n_batch:n_batch + n_sparse], indices.dtype),
                               tuple(range(indices.ndim - 1)))
        mask = jnp.all(indices < fill, -1)
        if data.ndim > mask.ndim:
            mask = lax.expand_dims(mask, tuple(range(mask.ndim, data.ndim)))
        data = jnp.where(mask, data, 0)
    sparse_idx = [i for i in range(n_sparse) if i + n_batch not in axes]
    if not sparse_idx:
        indices = jnp.zeros(indices.shape[:n_batch + 1] + (0,), indices.dtype)
    else:
        indices = indices[..., np.array(sparse_idx)]
    batch_axes = {ax for ax in axes if ax < n_batch}
    for ax in batch_axes:
        if data.shape[ax] == 1:
            if indices.shape[ax] == 1:
                data = data * shape[ax]
            else:
                data = jnp.broadcast_to(data, data.shape[:ax] + (shape[ax],)
                                        + data.shape[ax + 1:])
        elif indices.shape[ax] == 1:
            data = data.sum(ax)
    new_batch_dims = tuple(sorted(set(range(n_batch)) - batch_axes))
    new_batch_shape = tuple(data.shape[i] for i in new_batch_dims)
    new_nse = nse * math.prod([data.shape[i] for i in batch_axes])
    order = (*new_batch_dims, *sorted(batch_axes))
    data = lax.reshape(data, (*new_batch_shape, new_nse, *data.shape[n_batch + 1:]),
                       (*order, *range(n_batch, data.ndim)))
    indices = lax.reshape(indices, (*new_batch_shape, new_nse, *indices.shape[n_batch + 1:]),
                          (*order, *range(n_batch, indices.ndim)))
    return data, indices


def bcoo_multiply_dense(sp_mat, v):
    """The data of `sp_mat * v` (same indices as `sp_mat`): each stored element times
    `v`'s entry at its index. `v` must broadcast to `sp_mat.shape`."""
    shape = sp_mat.shape
    data, indices = sp_mat.data, sp_mat.indices
    v = jnp.asarray(v)
    if v.ndim == 0:
        return lax.mul(data, v)
    if shape == v.shape:
        return lax.mul(data, extract(indices, v))
    if jnp.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases "
            f"where the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={v.shape}")
    v = lax.expand_dims(v, tuple(range(len(shape) - v.ndim)))
    props = validate(data, indices, shape)

    def mul(data, indices, v):
        ind = tuple(indices[:, i] for i in range(indices.shape[1]))
        ind = tuple(i if s != 1 else 0 for i, s in zip(ind, v.shape))
        return data * v[ind]
    return nfold_vmap(mul, props.n_batch)(data, indices, v)


def bcoo_multiply_sparse(lhs, rhs):
    """The elementwise product of two BCOO arrays: every pair of stored elements whose
    indices agree (on the axes neither operand broadcasts) makes one output element, so
    the output stores lhs.nse * rhs.nse elements."""
    lp = validate(lhs.data, lhs.indices, lhs.shape)
    rp = validate(rhs.data, rhs.indices, rhs.shape)
    if len(lhs.shape) != len(rhs.shape):
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs.shape}, {rhs.shape}")
    if lp.n_dense != rp.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: arrays with differing numbers of "
                                  f"dense dimensions: {lp}, {rp}")
    if lp.n_batch != rp.n_batch:
        raise NotImplementedError(
            "bcoo_multiply_sparse: minijax multiplies BCOO arrays with equal n_batch only; "
            f"got n_batch={lp.n_batch} and n_batch={rp.n_batch}")
    n_batch = lp.n_batch
    lhs_shape, rhs_shape = lhs.shape[n_batch:], rhs.shape[n_batch:]
    dims = np.array([i for i, (s1, s2) in enumerate(zip(lhs_shape[:lp.n_sparse],
                                                        rhs_shape[:rp.n_sparse]))
                     if s1 != 1 and s2 != 1], int)
    nse = lp.nse * rp.nse

    def mul(lhs_data, lhs_indices, rhs_data, rhs_indices):
        mask = jnp.all(lhs_indices[:, None, dims] == rhs_indices[None, :, dims], -1)
        i_lhs, i_rhs = jnp.nonzero(mask, size=nse, fill_value=(lp.nse, rp.nse))
        data = (lhs_data.at[i_lhs].get(mode="fill", fill_value=0)
                * rhs_data.at[i_rhs].get(mode="fill", fill_value=0))
        indices = jnp.maximum(
            lhs_indices.at[i_lhs].get(mode="fill", fill_value=max(lhs_shape, default=0)),
            rhs_indices.at[i_rhs].get(mode="fill", fill_value=max(rhs_shape, default=0)))
        return data, indices
    data, indices = nfold_vmap(mul, n_batch)(lhs.data, lhs.indices, rhs.data, rhs.indices)
    return BCOO((data, indices), shape=jnp.broadcast_shapes(lhs.shape, rhs.shape))


def _sum_dtype(dtype):
    # jnp.sum's accumulation type: small integers and bools widen to the default int.
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or (np.issubdtype(dtype, np.signedinteger) and dtype.itemsize < 4):
        return np.dtype(np.int32)
    if np.issubdtype(dtype, np.unsignedinteger) and dtype.itemsize < 4:
        return np.dtype(np.uint32)
    return dtype


def sparse_sum(mat, axis=None, dtype=None):
    """`BCOO.sum`: a BCOO array, or a dense scalar when every axis is summed."""
    dtype = _sum_dtype(mat.dtype) if dtype is None else np.dtype(dtype)
    if dtype != mat.dtype:
        mat = mat.astype(dtype)
    if axis is None:
        axes = tuple(range(mat.ndim))
    else:
        axes = tuple(int(a) % max(mat.ndim, 1) if -mat.ndim <= int(a) < mat.ndim else int(a)
                     for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    out = bcoo_reduce_sum(mat, axes=axes)
    return out.data.sum() if out.shape == () else out


def sparse_matmul(a, b):
    """`@` with one BCOO operand of one or two dimensions, as `jnp.matmul` does it."""
    a_nd = a.ndim if isinstance(a, BCOO) else jnp.ndim(a)
    b_nd = b.ndim if isinstance(b, BCOO) else jnp.ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise ValueError("matmul: a scalar operand is not allowed; use * instead")
    if a_nd > 2 or b_nd > 2:
        raise NotImplementedError("BCOO @: minijax multiplies operands of one or two "
                                  f"dimensions only; got {a_nd} and {b_nd}")
    dn = (((a_nd - 1,), (0,)), ((), ()))
    return bcoo_dot_general(a, b, dimension_numbers=dn)


def sparse_mul(mat, other):
    """`BCOO * x`: by a dense array or scalar keeps `mat`'s indices; by a BCOO array
    it is `bcoo_multiply_sparse`."""
    if isinstance(other, BCOO):
        return bcoo_multiply_sparse(mat, other)
    other = jnp.asarray(other)
    dtype = jnp.result_type(mat.dtype, other)
    if dtype != mat.dtype:
        mat = mat.astype(dtype)
    data = bcoo_multiply_dense(mat, other.astype(dtype))
    return BCOO((data, mat.indices), shape=mat.shape, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


__all__ = ["bcoo_dot_general", "bcoo_reduce_sum", "bcoo_multiply_dense",
           "bcoo_multiply_sparse"]
