"""`minijax.scipy.sparse.linalg`: the Krylov solvers `cg`, `gmres` and `bicgstab`, as
`jax.scipy.sparse.linalg` has them.

`A` (and the preconditioner `M`) is a function computing A x, a square matrix, or
anything with `@`; `b` may be any pytree of arrays, x having its structure. Each
solver runs its iterations in `lax.while_loop`s and is wrapped in
`lax.custom_linear_solve`, so a derivative is another solve (implicit
differentiation), never a derivative through the iterations: with respect to `b`, and
to whatever the function `A` closes over. `cg` (A Hermitian positive definite) marks
the solve symmetric when `b` is real, so the transposed solve is `cg` itself; `gmres`
and `bicgstab` pass their solve as its own transpose (run on Aᵀ), as JAX does.

The arithmetic is JAX's step for step (scalar products at `Precision.HIGHEST`, the
same stopping tests, GMRES' two Gram-Schmidt passes and breakdown threshold), so the
iterates agree with JAX's to rounding. As in JAX, `cg` and `bicgstab` return
`info=None`; `gmres` returns 0, or -1 when the solution holds a NaN.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from jax import tree_util

from ... import numpy as jnp
from ...frontend.control_flow import while_loop
from ...frontend.implicit_solves import custom_linear_solve
from ._gmres import gmres_solve, restart_incremental, restart_batched
from ._vectors import (vdot_real_tree, vdot_tree, norm, scale as _scale, add as _add,
                       sub as _sub, identity as _identity, as_operator, shapes,
                       checked_start, one_like)

__all__ = ["cg", "gmres", "bicgstab"]

# -- cg and bicgstab ---------------------------------------------------------------------

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    stop = jnp.maximum(jnp.square(tol) * vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = jnp.result_type(*tree_util.tree_leaves(p0))
    gamma0 = vdot_real_tree(r0, z0).astype(dtype)

    def going(state):
        _, r, gamma, _, k = state
        # without a preconditioner gamma is already |r|²
        residual = gamma.real if M is _identity else vdot_real_tree(r, r)
        return (residual > stop) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / vdot_real_tree(p, Ap).astype(dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, Ap))
        z = M(r)
        gamma_next = vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1
    return while_loop(going, step, (x0, r0, gamma0, p0, 0))[0]


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    stop = jnp.maximum(jnp.square(tol) * vdot_real_tree(b, b), jnp.square(atol))

    def going(state):
        r, k = state[1], state[-1]
        # k < 0 marks a breakdown (rho, alpha or omega became 0)
        return (vdot_real_tree(r, r) > stop) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = vdot_tree(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / vdot_tree(rhat, q)
        s = _sub(r, _scale(alpha, q))
        done_at_half = vdot_real_tree(s, s) < stop
        shat = M(s)
        t = A(shat)
        omega = vdot_tree(t, s) / vdot_tree(t, t)
        half = _add(x, _scale(alpha, phat))
        x = tree_util.tree_map(partial(jnp.where, done_at_half), half,
                               _add(half, _scale(omega, shat)))
        r = tree_util.tree_map(partial(jnp.where, done_at_half), s, _sub(s, _scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k
    r0 = _sub(b, A(x0))
    one = one_like(b)
    return while_loop(going, step, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _isolve(method, A, b, x0, *, tol, atol, maxiter, M, check_symmetric):
    b, x0 = checked_start(b, x0)
    if maxiter is None:
        maxiter = 10 * sum(np.size(v) for v in tree_util.tree_leaves(b))   # scipy's
    A = as_operator(A)
    M = _identity if M is None else as_operator(M)
    if shapes(x0) != shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: "
                         f"{shapes(x0)} vs {shapes(b)}")
    solve = partial(method, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and not any(jnp.iscomplexobj(v)
                                            for v in tree_util.tree_leaves(b))
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by conjugate gradients (A Hermitian positive definite), as
    `jax.scipy.sparse.linalg.cg`; returns `(x, None)`. Stops when
    `norm(residual) <= max(tol * norm(b), atol)` or after `maxiter` steps."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by BiCGSTAB (any invertible A), as
    `jax.scipy.sparse.linalg.bicgstab`; returns `(x, None)`."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=False)


# -- gmres ----------------------------------------------------------------------------------


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b by restarted GMRES, as `jax.scipy.sparse.linalg.gmres`: Krylov
    spaces of dimension `restart`, rebuilt at most `maxiter` times; `solve_method`
    'incremental' (a QR by Givens rotations as the space grows, stopping early) or
    'batched' (one least-squares solve per restart). Returns `(x, info)`."""
    b, x0 = checked_start(b, x0)
    M = _identity if M is None else as_operator(M)
    A = as_operator(A)
    size = sum(np.size(v) for v in tree_util.tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    b_norm = norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    if solve_method == "incremental":
        one_restart = restart_incremental
    elif solve_method == "batched":
        one_restart = restart_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         f"'incremental' or 'batched'")

    def solve(A, b):
        return gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, one_restart)
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, jnp.where(jnp.isnan(norm(x)), -1, 0)

