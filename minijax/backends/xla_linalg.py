"""XLA lowering of the linear-algebra primitives: one `jax.lax.linalg` call each.

Read `xla.py` first. `jax.lax.linalg` takes batch dimensions natively, and its
conventions (the sign of an eigenvector, the phase of a singular vector) are the
ones JAX users see, so lowering to it gives JAX's results bit for bit. The input
symmetrisation that `jax.lax.linalg.cholesky`/`eigh` can do is switched off here:
minijax's wrappers symmetrise in the IR, where the derivative passes see it.
"""
from __future__ import annotations

import functools

from jax.lax import linalg as lax_linalg

from ..ir import linalg_primitives as L
from ..ir import linalg_kernels as K
from .eager_dispatch import apply_primitive
from .xla import lowering_rules
from ..ir.trace import eager_impls


def _cholesky(a):
    return [lax_linalg.cholesky(a, symmetrize_input=False)]


def _triangular_solve(a, b, **params):
    return [lax_linalg.triangular_solve(a, b, **params)]


def _lu(a):
    return list(lax_linalg.lu(a))


def _eigh(a, *, lower=True, sort_eigenvalues=True):
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False,
                           sort_eigenvalues=sort_eigenvalues)
    return [v, w]


def _svd(a, *, full_matrices=True, compute_uv=True):
    if not compute_uv:
        return [lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False)]
    u, s, vt = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True)
    return [s, u, vt]


def _qr(a, *, full_matrices=True):
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return [q, r]


def _eig(a, **params):
    # JAX lowers it on the CPU only (LAPACK's geev): elsewhere JAX's own error
    return list(lax_linalg.eig(a, **params))


def _tridiagonal(a, *, lower=True):
    return list(lax_linalg.tridiagonal(a, lower=lower))


def _tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    return [lax_linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular)]


def _householder_product(a, taus):
    return [lax_linalg.householder_product(a, taus)]


def _hessenberg(a):
    # CPU only in JAX (LAPACK's gehrd): elsewhere JAX's own error
    return list(lax_linalg.hessenberg(a))


def _schur(a, *, compute_schur_vectors=True):
    # CPU only in JAX (LAPACK's gees), as hessenberg
    return list(lax_linalg.schur(a, compute_schur_vectors=compute_schur_vectors))


def _ormqr(a, taus, c, *, left=True, transpose=False):
    return [lax_linalg.ormqr(a, taus, c, left=left, transpose=transpose)]


_RULES = {L.cholesky_p: _cholesky, L.triangular_solve_p: _triangular_solve, L.lu_p: _lu,
          L.eigh_p: _eigh, L.svd_p: _svd, L.qr_p: _qr, L.eig_p: _eig,
          K.tridiagonal_p: _tridiagonal, K.tridiagonal_solve_p: _tridiagonal_solve,
          K.householder_product_p: _householder_product, K.hessenberg_p: _hessenberg,
          K.schur_p: _schur, K.ormqr_p: _ormqr}
for _prim, _rule in _RULES.items():
    lowering_rules[_prim] = _rule
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
