"""`lax.linalg.qdwh`: the polar decomposition x = u h by the QR-based dynamically
weighted Halley iteration (Nakatsukasa, Bai & Gygi 2010), JAX's algorithm written
with minijax's functions.

The weights of each step depend only on a lower bound l for the smallest singular
value, which starts at eps and follows a fixed recurrence, so they are computed in
Python before tracing, as JAX does: steps with a large weight c use a QR of
[√c u; I], later ones a Cholesky factor of c uᴴu + I, and once the weights reach
Halley's (3, 1, 3) a `while_loop` repeats that step until u moves less than
(10 eps / 2)^(1/3). A Newton-Schulz step refines u; h = (uᴴx + xᴴu) / 2.
`dynamic_shape=(m, n)` treats x as an m x n matrix padded with zeros.
"""
from __future__ import annotations

import functools

import numpy as np

from ..frontend import linalg_ops as lax_linalg
from ..frontend.control_flow import fori_loop, while_loop
from ..frontend.lax_extras import dynamic_index_in_dim
from ..frontend.lax_ops import (broadcasted_iota, dynamic_slice_in_dim,
                                dynamic_update_slice_in_dim, rsqrt)
from ..frontend.eager_jit import jitted_eagerly

__all__ = ["qdwh"]

_CHOLESKY_CUTOFF = 100


def _mask(x, dims, alternative=0):
    from .. import numpy as jnp
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            inside = broadcasted_iota(np.int32, x.shape, i) < d
            mask = inside if mask is None else (mask & inside)
    return x if mask is None else jnp.where(mask, x, alternative)


def _use_qr(u, m, n, params):
    from .. import numpy as jnp
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    rows, cols = u.shape
    eye = jnp.eye(cols, dtype=u.dtype)
    padded = jnp.pad(sqrt_c * u, ((0, cols), (0, 0)))
    y = dynamic_update_slice_in_dim(padded, eye, m, 0)
    q, _ = lax_linalg.qr(y, full_matrices=False)
    q1 = _mask(q[:rows, :cols], (m, n))
    q2 = jnp.conj(_mask(dynamic_slice_in_dim(q, m, cols, axis=0), (n, n)).T)
    return e * u + a_minus_e_by_sqrt_c * (q1 @ q2)


def _use_cholesky(u, m, n, params):
    from .. import numpy as jnp
    a_minus_e, c, e = params
    cols = u.shape[1]
    eye = jnp.eye(cols, dtype=u.dtype)
    # the identity in the padded corner keeps x positive definite
    x = _mask(c * (jnp.conj(u.T) @ u) + eye, (n, n), eye)
    y = lax_linalg.cholesky(x, symmetrize_input=False)
    z = jnp.conj(lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True,
                                             conjugate_a=True))
    z = jnp.conj(lax_linalg.triangular_solve(y, z, left_side=True, lower=True,
                                             transpose_a=True, conjugate_a=True).T)
    return e * u + a_minus_e * z


def _weights(eps, max_iterations):
    """The (QR, Cholesky) step parameters, from l = eps up to l within 10 eps / 2 of 1."""
    def qr_params(a, b, c):
        e = b / c
        return ((a - e) / c ** 0.5, c ** 0.5, e)

    def chol_params(a, b, c):
        e = b / c
        return (a - e, c, e)

    qr_coefs, chol_coefs = [], []
    l, k, tol_l = eps, 0, 10.0 * eps / 2.0
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        (qr_coefs if c > _CHOLESKY_CUTOFF else chol_coefs).append(
            (qr_params if c > _CHOLESKY_CUTOFF else chol_params)(a, b, c))
    return qr_coefs, chol_coefs, chol_params(3, 1, 3)


def _qdwh(x, m, n, max_iterations, eps):
    from .. import numpy as jnp
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    one_norm = jnp.linalg.norm(x, ord=1)
    inf_norm = jnp.linalg.norm(x, ord=np.inf)
    alpha_inverse = jnp.where(one_norm == 0, 1, rsqrt(one_norm) * rsqrt(inf_norm))
    u = x * alpha_inverse.astype(x.dtype)
    tol_norm = np.cbrt(10.0 * eps / 2.0)
    qr_coefs, chol_coefs, halley = _weights(eps, max_iterations)

    def iteration(k, state, update_fn, coefs, test_convergence):
        u_prev, _ = state
        params = halley if coefs is None else dynamic_index_in_dim(coefs, k,
                                                                       keepdims=False)
        u = update_fn(u_prev, m, n, params)
        if not test_convergence:
            return u, True
        return u, jnp.linalg.norm(u - u_prev) > tol_norm

    def iterate(u, coefs, **kwargs):
        if not coefs:
            return u, True
        coefs = jnp.array(coefs).astype(x.dtype)
        body = functools.partial(iteration, coefs=coefs, **kwargs)
        return fori_loop(0, len(coefs), body, (u, True))

    u, _ = iterate(u, coefs=qr_coefs, update_fn=_use_qr, test_convergence=False)
    u, not_converged = iterate(u, coefs=chol_coefs, update_fn=_use_cholesky,
                               test_convergence=True)

    def cond(state):
        k, _, not_converged = state
        return jnp.logical_and(not_converged, k < max_iterations)

    def body(state):
        k, u, not_converged = state
        u, not_converged = iteration(k, (u, not_converged), coefs=None,
                                     update_fn=_use_cholesky, test_convergence=True)
        return k + 1, u, not_converged

    start = len(qr_coefs) + len(chol_coefs)
    num_iters, u, not_converged = while_loop(cond, body, (start, u, not_converged))
    u = 1.5 * u - 0.5 * u @ (jnp.conj(u.T) @ u)
    h = jnp.conj(u.T) @ x
    h = (h + jnp.conj(h.T)) / 2
    return u, h, num_iters, jnp.logical_not(not_converged)


@jitted_eagerly("is_hermitian", "max_iterations", "eps")
def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """(u, h, num_iters, is_converged): x = u h with u's columns orthonormal and h
    Hermitian positive semidefinite, for a full-rank M x N x (M >= N).
    `is_hermitian` is unused (as in JAX)."""
    from .. import numpy as jnp
    x = jnp.asarray(x)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    if x.ndim != 2:
        raise ValueError(f"qdwh: expected a matrix, got shape {x.shape}")
    rows, cols = x.shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if np.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("lax.linalg.qdwh: minijax's linear algebra takes real "
                                  "matrices only; JAX's also takes complex ones")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = rows, cols
    return _qdwh(x, m, n, max_iterations, eps)
