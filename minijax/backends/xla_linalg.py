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


_RULES = {L.cholesky_p: _cholesky, L.triangular_solve_p: _triangular_solve, L.lu_p: _lu,
          L.eigh_p: _eigh, L.svd_p: _svd, L.qr_p: _qr, L.eig_p: _eig}
for _prim, _rule in _RULES.items():
    lowering_rules[_prim] = _rule
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
