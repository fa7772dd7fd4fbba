"""Restarted GMRES, the iterations behind `minijax.scipy.sparse.linalg.gmres`.

Each restart builds an orthonormal basis V of the Krylov space of M A from the current
residual (Arnoldi, with two passes of classical Gram-Schmidt), the Hessenberg matrix H
of M A in that basis, and moves x by V y where y minimises |β e₁ - H y|. 'incremental'
keeps H triangular with Givens rotations as it grows, which gives the residual of
each step for free and stops as soon as it is small; 'batched' builds all of H and
solves the least-squares problem once, through its normal equations. Vectors may be
pytrees: V holds one basis array per leaf, with the basis index as the last axis.
The steps are JAX's, so the iterates agree with JAX's to rounding.
"""
from __future__ import annotations

import operator

from jax import tree_util

from ... import numpy as jnp
from ...frontend import lax_ops as _lax_ops
from ...frontend.control_flow import while_loop, fori_loop
from ...frontend.lax_dot import Precision
from ...numpy._promotion import result_type_and_weak
from .. import linalg as _scipy_linalg
from ._vectors import dot, norm, add, sub

__all__ = ["gmres_solve", "restart_incremental", "restart_batched"]


def _safe_normalize(x, thresh=None):
    """x / |x| and |x|; both zero when |x| is at most `thresh` (by default the
    dtype's epsilon), so a basis vector that vanished stays zero."""
    size = norm(x)
    dtype, weak = result_type_and_weak(*tree_util.tree_leaves(x))
    if thresh is None:
        thresh = jnp.finfo(size.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype).real
    use = size > thresh
    divisor = _lax_ops.convert_element_type(size, dtype, weak)
    unit = tree_util.tree_map(lambda y: jnp.where(use, y / divisor, 0.0), x)
    return unit, jnp.where(use, size, 0.0)


def _overlaps(V, v):
    """Vᴴ v: the overlap of v with every basis vector (summed over the leaves)."""
    parts = tree_util.tree_map(
        lambda X, y: jnp.einsum("...n,...->n", X.conj(), y, precision=Precision.HIGHEST),
        V, v)
    return tree_util.tree_reduce(operator.add, parts)


def _orthogonalize(V, x, xnorm, passes=2):
    """x made orthogonal to V's columns by up to `passes` passes of classical
    Gram-Schmidt (a second one only if the first lost more than half of |x|, in
    JAX's test); returns it with the overlaps removed."""
    first = tree_util.tree_leaves(V)[0]
    r = jnp.zeros(first.shape[-1], dtype=first.dtype)
    threshold = xnorm / jnp.sqrt(2.0)

    def one_pass(carry):
        k, q, r, q_threshold = carry
        h = _overlaps(V, q)
        q = sub(q, tree_util.tree_map(lambda X: dot(X, h), V))
        r = add(r, h)

        def renorm(carry):
            k, _, q, _ = carry
            _, qnorm = _safe_normalize(q)
            return k, False, q, qnorm / jnp.sqrt(2.0)
        _, _, q, q_threshold = while_loop(
            lambda c: jnp.logical_and(c[1], c[0] < passes - 1), renorm,
            (k, True, q, q_threshold))
        return k + 1, q, r, q_threshold

    def again(carry):
        k, _, r, q_threshold = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < passes - 1, rnorm < q_threshold)
    carry = one_pass((0, x, r, threshold))
    _, q, r, _ = while_loop(again, one_pass, carry)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """Basis vector k+1 (the normalised part of M A V[:, k] outside V) into V and its
    overlaps into row k of H; `breakdown` when it vanished (an invariant subspace)."""
    dtype, _ = result_type_and_weak(*tree_util.tree_leaves(V))
    eps = jnp.finfo(dtype).eps
    v = M(A(tree_util.tree_map(lambda X: X[..., k], V)))
    _, v_norm = _safe_normalize(v)
    v, h = _orthogonalize(V, v, v_norm)
    unit, v_norm_after = _safe_normalize(v, thresh=eps * v_norm)
    V = tree_util.tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(v_norm_after.astype(dtype))
    return V, H.at[k, :].set(h), v_norm_after == 0.0


def _rotate(H, i, cs, sn):
    x, y = H[i], H[i + 1]
    H = H.at[i].set(cs.conj() * x - sn.conj() * y)
    return H.at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    b_zero = abs(b) == 0
    a_smaller = abs(a) < abs(b)
    t = -jnp.where(a_smaller, a, b) / jnp.where(a_smaller, b, a)
    r = _lax_ops.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_smaller, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_smaller, r, r * t))
    return cs, sn


def _basis(unit_residual, restart):
    return tree_util.tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _finish(A, b, x0, V, y, M):
    x = add(x0, tree_util.tree_map(lambda X: dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(sub(b, A(x))))
    return x, unit_residual, residual_norm


def restart_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart, H kept triangular by Givens rotations, stopping once the residual
    the rotations give is at most `ptol`."""
    V = _basis(unit_residual, restart)
    dtype = jnp.result_type(*tree_util.tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H[k, :])
        factors = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.stack(factors))
        R = R.at[k, :].set(_rotate(row, k, *factors))
        beta = _rotate(beta, k, *givens[k, :])
        return k + 1, abs(beta[k + 1]), V, R, beta, givens
    _, _, V, R, beta, _ = while_loop(
        lambda c: jnp.logical_and(c[0] < restart, c[1] > ptol), step,
        (0, residual_norm, V, R, beta, givens))
    y = _scipy_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish(A, b, x0, V, y, M)


def restart_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart: the whole Arnoldi process (until it breaks down), then the
    least-squares problem by its normal equations."""
    V = _basis(unit_residual, restart)
    dtype, weak = result_type_and_weak(*tree_util.tree_leaves(b))
    H = _lax_ops.convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1
    V, H, _, _ = while_loop(
        lambda c: jnp.logical_and(c[3] < restart, jnp.logical_not(c[2])), step,
        (V, H, False, 0))
    beta = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    a = H.T
    y = _scipy_linalg.solve(dot(a.T.conj(), a), dot(a.T.conj(), beta), assume_a="pos")
    return _finish(A, b, x0, V, y, M)


def gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, one_restart):
    """Restarts from x0 until |M(b - A x)| is at most `atol` or `maxiter` restarts:
    the `solve` that `gmres` hands to `custom_linear_solve` (`atol` between restarts,
    `ptol` within one)."""
    unit_residual, residual_norm = _safe_normalize(M(sub(b, A(x0))))

    def step(carry):
        x, k, unit_residual, residual_norm = carry
        x, unit_residual, residual_norm = one_restart(A, b, x, unit_residual, residual_norm,
                                                      ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm
    return while_loop(lambda c: jnp.logical_and(c[1] < maxiter, c[3] > atol), step,
                      (x0, 0, unit_residual, residual_norm))[0]

