"""The reference evaluator's rules for the linear-algebra primitives, in NumPy.

Read `reference.py` first. These rules say what each decomposition *is*, through
`numpy.linalg` (never JAX), one matrix at a time over the batch axes. Two have no
`numpy.linalg` counterpart and are spelled out: a triangular solve is `solve` on
the triangle the primitive reads (with ones on the diagonal for `unit_diagonal`),
and LU is textbook Gaussian elimination with partial pivoting, which picks the same
pivots as LAPACK's `getrf` (the first row with the largest magnitude).

Eigenvector signs and singular-vector phases are not unique; NumPy's may differ from
XLA's, so the tests compare reference results through quantities that do not
depend on them (reconstructions, projectors).
"""
from __future__ import annotations

import numpy as np

from ..ir import linalg_primitives as L
from ..ir import linalg_kernels as K
from .reference import reference_rules


def _per_matrix(fn, *operands):
    """Apply `fn` (matrices -> list of arrays) to every matrix of a batch; stack."""
    batch = operands[0].shape[:-2]
    flat = [x.reshape((-1,) + x.shape[len(batch):]) for x in operands]
    if flat[0].shape[0] == 0:   # an empty batch: one zero matrix gives the result shapes
        shapes = fn(*[np.zeros(f.shape[1:], f.dtype) for f in flat])
        return [np.zeros(batch + np.shape(r), np.asarray(r).dtype) for r in shapes]
    results = [fn(*mats) for mats in zip(*flat)]
    return [np.stack([np.asarray(r[i]) for r in results]).reshape(
                batch + np.shape(results[0][i])) for i in range(len(results[0]))]


def _cholesky(a):
    def one(m):
        try:
            return [np.linalg.cholesky(m.astype(np.float64 if m.dtype.kind == "f"
                                                else np.complex128)).astype(m.dtype)]
        except np.linalg.LinAlgError:       # not positive definite: XLA gives NaNs
            return [np.full_like(m, np.nan)]
    return _per_matrix(one, a)


def _triangle(a, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t), dtype=t.dtype)
    return t


def _triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                      conjugate_a=False, unit_diagonal=False):
    def one(a, b):
        op = _triangle(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                       lower, unit_diagonal)
        op = op.T if transpose_a else op
        op = op.conj() if conjugate_a else op
        if left_side:                          # op(a) @ x = b
            x = np.linalg.solve(op, b)
        else:                                  # x @ op(a) = b  <=>  op(a)^T x^T = b^T
            x = np.linalg.solve(op.T, b.T).T
        return [x.astype(b.dtype)]
    return _per_matrix(one, a, b)


def lu_factor_numpy(a):
    """Packed LU of one matrix with partial pivoting: (lu, pivots, permutation),
    where row i was swapped with row pivots[i] at step i, and a[permutation] = l @ u."""
    m, n = a.shape
    lu = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    pivots = np.zeros(min(m, n), np.int32)
    permutation = np.arange(m, dtype=np.int32)
    for k in range(min(m, n)):
        p = k + int(np.argmax(np.abs(lu[k:, k])))
        pivots[k] = p
        if p != k:
            lu[[k, p]] = lu[[p, k]]
            permutation[[k, p]] = permutation[[p, k]]
        if lu[k, k] != 0:
            lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return [lu.astype(a.dtype), pivots, permutation]


def _lu(a):
    return _per_matrix(lu_factor_numpy, a)


def _eigh(a, *, lower=True, sort_eigenvalues=True):
    def one(m):
        # NumPy sorts ascending; without sort_eigenvalues any order is correct.
        w, v = np.linalg.eigh(m, UPLO="L" if lower else "U")
        return [v.astype(m.dtype), w.astype(np.finfo(m.dtype).dtype)]
    return _per_matrix(one, a)


def _svd(a, *, full_matrices=True, compute_uv=True):
    def one(m):
        if not compute_uv:
            return [np.linalg.svd(m, compute_uv=False).astype(np.finfo(m.dtype).dtype)]
        u, s, vt = np.linalg.svd(m, full_matrices=full_matrices)
        return [s.astype(np.finfo(m.dtype).dtype), u.astype(m.dtype), vt.astype(m.dtype)]
    return _per_matrix(one, a)


def _qr(a, *, full_matrices=True):
    def one(m):
        q, r = np.linalg.qr(m, mode="complete" if full_matrices else "reduced")
        return [q.astype(m.dtype), r.astype(m.dtype)]
    return _per_matrix(one, a)


def _eig(a, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
         enable_eigvec_derivs=False):
    complex_dtype = np.result_type(a.dtype, np.complex64)

    def one(m):
        # numpy's eig is LAPACK's geev, right eigenvectors of unit 2-norm. The left ones
        # (vl^H a = w vl^H) are the rows of vr's inverse, conjugated, scaled to unit
        # 2-norm with the largest component real, as geev scales them; a real
        # eigenvector's sign is geev's own choice (the tests compare up to it).
        w, vr = np.linalg.eig(m)
        vl = np.linalg.inv(vr).conj().T
        vl = vl / np.linalg.norm(vl, axis=0)
        largest = vl[np.argmax(np.abs(vl), axis=0), np.arange(vl.shape[1])]
        vl = vl * (np.abs(largest) / np.where(largest == 0, 1, largest))
        return ([w.astype(complex_dtype)]
                + [vl.astype(complex_dtype)] * bool(compute_left_eigenvectors)
                + [vr.astype(complex_dtype)] * bool(compute_right_eigenvectors))
    return _per_matrix(one, a)


reference_rules[L.cholesky_p] = _cholesky
reference_rules[L.triangular_solve_p] = _triangular_solve
reference_rules[L.lu_p] = _lu
reference_rules[L.eigh_p] = _eigh
reference_rules[L.svd_p] = _svd
reference_rules[L.qr_p] = _qr
reference_rules[L.eig_p] = _eig


# -- the LAPACK kernels (ir/linalg_kernels.py) -------------------------------------------------
# Their outputs are LAPACK's packed forms, which only LAPACK itself defines; SciPy's
# wrappers of the same routines (SciPy comes with JAX) give them. Loaded on first use.

def _lapack(name, dtype):
    from scipy.linalg import lapack
    prefix = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
    return getattr(lapack, prefix[np.dtype(dtype).name] + name)


def _tridiagonal(a, *, lower=True):
    def one(m):
        packed, d, e, taus, _ = _lapack("sytrd", m.dtype)(m, lower=int(lower))
        return [packed, d, e, taus]
    return _per_matrix(one, a)


def _tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    def one(dl, d, du, b):
        t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
        return [np.linalg.solve(t, b).astype(b.dtype)]
    return _per_vectors(one, dl, d, du, b)


def _per_vectors(fn, dl, d, du, b):
    """`_per_matrix` for operands that are a batch of vectors (the diagonals) and b."""
    return _per_matrix(lambda dl, d, du, b: fn(dl[:, 0], d[:, 0], du[:, 0], b),
                       dl[..., None], d[..., None], du[..., None], b)


def _householder_product(a, taus):
    def one(m, t):
        return [_lapack("orgqr", m.dtype)(m, t[0])[0]]
    return _per_matrix(one, a, taus[..., None, :])


def _hessenberg(a):
    def one(m):
        packed, taus, _ = _lapack("gehrd", m.dtype)(m)
        return [packed, taus]
    return _per_matrix(one, a)


def _schur(a, *, compute_schur_vectors=True):
    def one(m):
        # gees returns (t, sdim, wr, wi, z, ...) for real matrices, (t, sdim, w, z, ...)
        # for complex ones
        out = _lapack("gees", m.dtype)(lambda *_: None, m, compute_v=int(compute_schur_vectors))
        t, z = out[0], out[3 if np.iscomplexobj(m) else 4]
        return [t, z] if compute_schur_vectors else [t]
    return _per_matrix(one, a)


def _ormqr(a, taus, c, *, left=True, transpose=False):
    def one(m, t, c):
        lwork = max(1, c.shape[0] * c.shape[1]) * 4
        out = _lapack("ormqr", m.dtype)("L" if left else "R", "T" if transpose else "N",
                                        m, t[0], c, lwork)
        return [out[0]]
    return _per_matrix(one, a, taus[..., None, :], c)


reference_rules[K.tridiagonal_p] = _tridiagonal
reference_rules[K.tridiagonal_solve_p] = _tridiagonal_solve
reference_rules[K.householder_product_p] = _householder_product
reference_rules[K.hessenberg_p] = _hessenberg
reference_rules[K.schur_p] = _schur
reference_rules[K.ormqr_p] = _ormqr
