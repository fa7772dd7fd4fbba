"""`minijax.lax.linalg`: the decomposition primitives with `jax.lax.linalg`'s names.

Like the rest of `minijax.lax` these do not promote: operands must already be real
floating-point arrays of rank >= 2 (leading axes are batch axes). `cholesky` and
`eigh` symmetrise their input by default, as JAX's do -- here as ordinary equations
`(x + xᵀ) / 2` in front of the primitive, so the derivative passes see that only
the symmetric part of the input matters.
"""
from __future__ import annotations

import numpy as np

from ..ir import linalg_primitives as L
from ..ir.trace import bind, aval_of
from ..ir.types import is_complex, is_float
from . import lax_ops as lax

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "eigh",
           "svd", "qr"]


def _matrix_transpose(x):
    nd = aval_of(x).ndim
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def symmetrize(x, name="symmetrize"):
    """(x + xᵀ) / 2 of a (batch of) square matrices."""
    aval = aval_of(x)
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name}: operand must be a square matrix (or a batch of them) of "
                        f"rank at least 2, got {aval}")
    if is_complex(aval.dtype):      # (x + xᴴ) / 2 and the rules would need a conj
        raise TypeError(f"{name}: operand must have a real floating-point dtype, got "
                        f"{aval} (minijax's linalg does not take complex matrices)")
    # a Python 2 (weak), as JAX's (x + xᵀ) / 2: a weakly typed x stays weak
    return lax.div(lax.add(x, _matrix_transpose(x)), 2.0)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower-triangular L with x = L Lᵀ (NaNs if x is not positive definite)."""
    if symmetrize_input:
        x = symmetrize(x, "cholesky")
    return bind(L.cholesky_p, x)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve op(a) x = b (left_side) or x op(a) = b, op(a) = a or aᵀ, reading only
    the `lower` (or upper) triangle of `a`."""
    return bind(L.triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                unit_diagonal=bool(unit_diagonal))


def lu(x):
    """LU with partial pivoting: (lu, pivots, permutation) with
    x[..., permutation, :] = L @ U, L unit lower (below lu's diagonal), U upper."""
    return list(bind(L.lu_p, x))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The row permutation that the row swaps `i <-> pivots[i]` (in order) produce."""
    pivots_aval = aval_of(pivots)
    batch, k = pivots_aval.shape[:-1], pivots_aval.shape[-1]
    permutation = lax.broadcast_in_dim(lax.iota(np.int32, permutation_size),
                                       batch + (permutation_size,), (len(batch),))
    positions = lax.broadcasted_iota(np.int32, batch + (permutation_size,), len(batch))
    for i in range(k):
        j = lax.broadcast_in_dim(lax.slice_in_dim(pivots, i, i + 1, axis=len(batch)),
                                 batch + (permutation_size,),
                                 tuple(range(len(batch) + 1)))
        at_i = lax.broadcast_in_dim(lax.slice_in_dim(permutation, i, i + 1, axis=len(batch)),
                                    batch + (permutation_size,), tuple(range(len(batch) + 1)))
        at_j = _take_last(permutation, j)
        permutation = lax.select(lax.eq(positions, np.int32(i)), at_j,
                                 lax.select(lax.eq(positions, j), at_i, permutation))
    return permutation


def _take_last(x, index):
    """x[..., index] where index is constant along the last axis (one-hot sum)."""
    aval = aval_of(x)
    positions = lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 1)
    picked = lax.reduce_sum(lax.select(lax.eq(positions, index), x,
                                       lax.full(aval.shape, 0, aval.dtype)), (aval.ndim - 1,))
    return lax.broadcast_in_dim(picked, aval.shape, tuple(range(aval.ndim - 1)))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True):
    """Eigenvectors v (columns) and eigenvalues w (ascending) of symmetric x."""
    if symmetrize_input:
        x = symmetrize(x, "eigh")
    v, w = bind(L.eigh_p, x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) with x = u diag(s) vh, s descending; only s if not compute_uv.

    `subset_by_index=(start, end)` asks for singular values start..end-1 only. JAX
    computes such a subset on the TPU alone; on the CPU and GPU, the backends minijax
    lowers to, it accepts only the whole range (0, min(m, n)), with JAX's errors
    otherwise. `algorithm` (JAX's choice of LAPACK driver) must stay unset."""
    if algorithm is not None:
        raise NotImplementedError("lax.linalg.svd: minijax runs JAX's default SVD "
                                  "algorithm; algorithm must be left unset")
    check_svd_subset(aval_of(x).shape, full_matrices, subset_by_index)
    outs = bind(L.svd_p, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def check_svd_subset(shape, full_matrices, subset_by_index):
    """JAX's checks of `subset_by_index` (its shape rule's, then its CPU/GPU lowering's)."""
    if subset_by_index is None:
        return
    try:
        hash(subset_by_index)
    except TypeError:
        # JAX's params (and jnp's static arguments) must hash; a list fails there
        raise TypeError(f"svd: subset_by_index must be a tuple (start, end), got "
                        f"{subset_by_index!r}") from None
    rank = min(shape[-2:]) if len(shape) >= 2 else None
    if tuple(subset_by_index) == (0, rank):
        return
    if full_matrices:
        raise ValueError("full_matrices and subset_by_index cannot both be set")
    raise NotImplementedError("subset_by_index not implemented for CPU and GPU")


def qr(x, *, full_matrices: bool = True):
    """(q, r) with x = q r, q orthonormal columns, r upper triangular."""
    q, r = bind(L.qr_p, x, full_matrices=bool(full_matrices))
    return q, r


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """[w, vl (if left), vr (if right)]: the complex eigenvalues and unit eigenvectors
    (columns; vl^H x = w vl^H, x vr = vr w) of a general real matrix, as
    `jax.lax.linalg.eig`. JAX computes it on the CPU only. `implementation` and
    `use_magma` choose JAX's GPU code; minijax takes JAX's default for both."""
    if implementation is not None or use_magma:
        raise NotImplementedError("lax.linalg.eig: minijax runs JAX's default eig "
                                  "(LAPACK on the CPU); implementation and use_magma "
                                  "must be left unset")
    aval = aval_of(x)
    if aval.ndim < 2:
        raise TypeError(f"Input 0 to eig must have rank at least 2, but got shape={aval.shape}")
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {aval.shape}.")
    if is_complex(aval.dtype):
        raise NotImplementedError("lax.linalg.eig: minijax's linear algebra takes real "
                                  "matrices only; JAX's also takes complex ones")
    if not is_float(aval.dtype):
        raise TypeError(f"eig does not accept dtype {aval.dtype} at position 0. Accepted "
                        f"dtypes at position 0 are subtypes of floating, complexfloating.")
    return list(bind(L.eig_p, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                     compute_right_eigenvectors=bool(compute_right_eigenvectors),
                     enable_eigvec_derivs=bool(enable_eigvec_derivs)))
