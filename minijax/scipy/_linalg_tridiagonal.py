"""`scipy.linalg.eigh_tridiagonal` and `qr_multiply`, as JAX has them.

`eigh_tridiagonal` is JAX's algorithm, written again with minijax's `lax`: the
eigenvalues of a symmetric tridiagonal matrix by bisection, all at once, each step
counting the eigenvalues below the midpoints with a Sturm sequence (its pivots
clamped away from zero as LAPACK's `stebz` does). The Gershgorin bounds, the pivot
floor, the tolerance and the iteration limit are JAX's, so the bisection visits the
same midpoints and the eigenvalues come out as JAX's.

The eigenvectors are JAX's too: inverse iteration from the same random vectors (a
PRNG key, 42 by default), solving with the `tridiagonal_solve` kernel.

`qr_multiply(a, c)` is c @ Q (or Q @ c) with the Q of a's reduced QR, and that R.
JAX applies LAPACK's Householder reflectors (`geqrf`, `ormqr`) without forming Q;
minijax forms Q with its `qr` primitive, the same reflectors accumulated, so values
agree up to rounding and the result is differentiable through `qr`'s rule.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from .. import random
from ..frontend import linalg_kernels as kernels
from ..frontend import linalg_ops as lax_linalg
from ..frontend.eager_jit import jitted_eagerly
from ..numpy._promotion import promote_dtypes_inexact, shape_of, dtype_of

__all__ = ["eigh_tridiagonal", "qr_multiply"]

_SUPPORTED = (np.float32, np.float64, np.complex64, np.complex128)


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """How many eigenvalues lie below each entry of x: the negative pivots of the LDLᵀ
    factorisation of T - x I, pivots at most `pivmin` counted and pushed to -pivmin."""
    n = shape_of(alpha)[0]
    q = alpha[0] - x
    count = jnp.where(q < 0, 1, 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, carry):
        q, count = carry
        q = alpha[i] - beta_sq[i - 1] / q - x
        low = q <= pivmin
        return jnp.where(low, jnp.minimum(q, -pivmin), q), jnp.where(low, count + 1, count)

    _, count = lax.fori_loop(1, n, step, (q, count))
    return count


@jitted_eagerly("eigvals_only", "select", "select_range")
def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal `d` and
    off-diagonal `e`; select='i' keeps those of indices select_range[0]..[1]."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if dtype_of(alpha) != dtype_of(beta):
        raise TypeError("diagonal and off-diagonal values must have same dtype, "
                        f"got {dtype_of(alpha)} and {dtype_of(beta)}")
    if dtype_of(alpha) not in _SUPPORTED:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {dtype_of(alpha)} and "
                        f"{dtype_of(beta)}")
    n = shape_of(alpha)[0]
    if n <= 1:
        if eigvals_only:
            return jnp.real(alpha)
        return jnp.real(alpha), jnp.eye(n, dtype=dtype_of(alpha))
    if np.issubdtype(dtype_of(alpha), np.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs = jnp.abs(beta)
        beta_sq = jnp.square(beta)

    # Gershgorin discs bound the spectrum
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max = jnp.max(alpha + row_sums)
    est_min = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))

    finfo = np.finfo(dtype_of(alpha))
    one = np.ones([], dtype=dtype_of(alpha))
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    # one halving per mantissa bit reaches eps * |T| from the Gershgorin interval
    max_it = finfo.nmant + 1

    if select == "a":
        targets = np.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = np.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented "
                                  "(its output size depends on the values, as in JAX)")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

    fudge = 2.1   # JAX's widening of the Gershgorin interval
    slack = np.array(n, dtype_of(alpha)) * fudge * finfo.eps * t_norm
    shape = targets.shape
    lower = jnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, shape)
    upper = jnp.broadcast_to(est_max + slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)
    pivmin = jnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

    def cond(state):
        i, lower, _, upper = state
        return jnp.logical_and(i < max_it, abs_tol < jnp.max(upper - lower))

    def body(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= targets, mid, lower)
        upper = jnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = lax.while_loop(cond, body, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    if key is None:
        key = random.key(42)
    return mid, _eigenvectors(alpha, jnp.asarray(e), mid, key).T


def _eigenvectors(alpha, beta, eigvals, key):
    """Inverse iteration from random unit vectors, all eigenvectors at once (JAX's):
    at most 5 steps (LAPACK's stein), stopping once no norm grows by 10%; vectors of
    eigenvalues closer than sqrt(eps) |T| are orthonormalised together after each step."""
    n, k = shape_of(alpha)[0], shape_of(eigvals)[0]
    dl = jnp.pad(jnp.conj(beta), (1, 0))
    du = jnp.pad(beta, (0, 1))
    eps = np.finfo(dtype_of(eigvals)).eps
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < np.sqrt(eps) * t_norm
    left_close = jnp.pad(close, (1, 0), constant_values=False)
    right_close = jnp.pad(close, (0, 1), constant_values=False)
    max_clusters = k // 2 + 1
    starts = jnp.nonzero(~left_close & right_close, size=max_clusters)[0]
    ends = jnp.nonzero(left_close & ~right_close, size=max_clusters)[0] + 1
    num_clusters = jnp.sum(~left_close & right_close)
    arange_k = jnp.arange(k)
    solve_dtype = np.result_type(dtype_of(alpha), dtype_of(beta))
    v = random.normal(key, (k, n), dtype=np.finfo(solve_dtype).dtype).astype(solve_dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def orthogonalize_cluster(i, ev):
        start, end = starts[i], ends[i]
        block = lax.dynamic_slice(jnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n))
        mask = (arange_k < end - start).astype(dtype_of(ev))
        q, _ = jnp.linalg.qr((block * mask[:, None]).T)
        update = lax.dynamic_update_slice(jnp.zeros((2 * k, n), dtype_of(ev)),
                                          q.T * mask[:, None], (start, 0))[:k, :]
        inside = (arange_k >= start) & (arange_k < end)
        return jnp.where(inside[:, None], update, ev)

    shifted = alpha[None, :] - eigvals[:, None]
    dl_k = jnp.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
    du_k = jnp.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)

    def step(state):
        i, v, norm, _ = state
        v_new = kernels.tridiagonal_solve(dl_k, shifted.astype(solve_dtype), du_k,
                                          v[:, :, None].astype(solve_dtype),
                                          perturb_singular=True)[..., 0]
        norm_new = jnp.linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / norm_new.astype(dtype_of(v_new))
        v_new = lax.fori_loop(0, num_clusters, orthogonalize_cluster, v_new)
        return i + 1, v_new, norm_new[:, 0], norm

    def growing(state):
        i, _, norm, old = state
        return jnp.logical_and(i < 5, jnp.any(norm >= 1.1 * old))

    init = (0, v, jnp.ones(k, dtype_of(eigvals)), jnp.zeros(k, dtype_of(eigvals)))
    return lax.while_loop(growing, step, init)[1]


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """(c @ Q, R) for mode='right', (Q @ c, R) for mode='left', Q and R of a's reduced
    QR (with `conjugate`, Qᴴ takes Q's place)."""
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact("qr_multiply", jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True needs LAPACK's geqp3, "
                                  "which minijax does not lower; use pivoting=False")
    if len(shape_of(a)) < 2:
        raise ValueError(f"qr_multiply: a must be a matrix, got shape {shape_of(a)}")
    onedim = len(shape_of(c)) == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    if mode == "left" and shape_of(c)[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has "
                         f"shape {tuple(shape_of(a))} so Q has {k} columns, but c has "
                         f"{shape_of(c)[-2]} rows (expected {k}).")
    if mode == "right" and shape_of(c)[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has "
                         f"shape {tuple(shape_of(a))} so Q has {m} rows, but c has "
                         f"{shape_of(c)[-1]} columns (expected {m}).")
    batch = np.broadcast_shapes(tuple(shape_of(a)[:-2]), tuple(shape_of(c)[:-2]))
    a = jnp.broadcast_to(a, batch + tuple(shape_of(a)[-2:]))
    c = jnp.broadcast_to(c, batch + tuple(shape_of(c)[-2:]))
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    cq = jnp.matmul(q, c) if mode == "left" else jnp.matmul(c, q)
    if onedim:
        cq = cq.ravel()
    return cq, r
