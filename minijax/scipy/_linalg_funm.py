"""`scipy.linalg.rsf2csf` and `funm`: from the real Schur form to the complex one, and a
function of a matrix by Parlett's recurrence on its complex Schur form.

`rsf2csf(T, Z)` removes the 2x2 blocks of a real Schur form `A = Z T Zᵀ` one at a time,
from the bottom: a block whose subdiagonal entry is not negligible holds a complex
pair, and a plane rotation built from one eigenvalue of the block makes that entry
zero. The eigenvalue is the block's own closed form, (a + d)/2 + sqrt(((a - d)/2)² + bc)
with the principal square root, so a standardized block (a = d, bc < 0) puts the
eigenvalue of positive imaginary part first on the diagonal, as LAPACK's eigenvalues
do in JAX's (which asks `eig` for them, a kernel JAX lowers on the CPU only).

`funm(A, func)` takes the complex Schur form A = Z T Zᴴ, applies `func` to the
eigenvalues on T's diagonal, and fills the rest of the upper triangular F = func(T)
one superdiagonal at a time (Golub and Van Loan, Algorithm 11.1.1): F commutes with T,
which for entry (i, j) reads

    F[i, j] (T[j, j] - T[i, i]) = T[i, :] @ F[:, j] - F[i, :] @ T[:, j]

with F[i, j] itself zero on the right, and every other term on lower superdiagonals,
so a whole superdiagonal is one vectorized step. Then F is Z F Zᴴ. The recurrence
divides by differences of eigenvalues: close ones lose accuracy, which `disp=False`
reports as SciPy's error estimate.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..numpy._promotion import dtype_of, shape_of
from ._linalg_schur import schur

__all__ = ["rsf2csf", "funm"]


@jitted_eagerly("check_finite")
def rsf2csf(T, Z, check_finite: bool = True):
    """(T, Z) of the complex Schur form, from the real Schur form T and its Z (batched
    over leading axes, broadcast between the two)."""
    del check_finite
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    for name, m in (("T", T), ("Z", Z)):
        if m.ndim < 2 or shape_of(m)[-1] != shape_of(m)[-2]:
            raise ValueError(f"Input '{name}' must be square.")
    if shape_of(T)[-1] != shape_of(Z)[-1]:
        raise ValueError(f"Input array shapes must match: Z: {shape_of(Z)} vs. "
                         f"T: {shape_of(T)}")
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


def _complex(*arrays):
    dtype = np.result_type(*map(dtype_of, arrays), np.complex64)
    return [a.astype(dtype) for a in arrays]


def _rsf2csf_2d(t, z):
    t, z = _complex(t, z)
    n = shape_of(t)[0]
    if n == 1:
        return t, z
    eps = np.finfo(dtype_of(t)).eps
    index = jnp.arange(n)

    def rotate(m, t, z):
        a, b, c, d = t[m - 1, m - 1], t[m - 1, m], t[m, m - 1], t[m, m]
        half = (a - d) / 2
        shift = half + jnp.sqrt(half * half + b * c)     # an eigenvalue less d
        r = jnp.sqrt(jnp.abs(shift) ** 2 + jnp.abs(c) ** 2).astype(dtype_of(t))
        cos, sin = shift / r, c / r
        # rows m-1, m from column m-1 on: G @ rows, G = [[cos*, sin], [-sin, cos]]
        top, bottom = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        from_block = index >= m - 1
        rows = jnp.stack([jnp.where(from_block, jnp.conj(cos) * top + sin * bottom, top),
                          jnp.where(from_block, -sin * top + cos * bottom, bottom)])
        t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
        # columns m-1, m down to row m, and all of Z's: @ Gᴴ
        left, right = (lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)[:, k] for k in (0, 1))
        to_block = index <= m
        cols = jnp.stack([jnp.where(to_block, cos * left + jnp.conj(sin) * right, left),
                          jnp.where(to_block, -jnp.conj(sin) * left + jnp.conj(cos) * right, right)],
                         1)
        t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
        zl, zr = (lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)[:, k] for k in (0, 1))
        zcols = jnp.stack([cos * zl + jnp.conj(sin) * zr,
                           -jnp.conj(sin) * zl + jnp.conj(cos) * zr], 1)
        return t, lax.dynamic_update_slice_in_dim(z, zcols, m - 1, axis=1)

    def step(k, tz):
        t, z = tz
        m = n - k          # from the bottom row up
        pair = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(pair, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z
    return lax.fori_loop(1, n, step, (t, z))


def funm(A, func, disp: bool = True):
    """func(A) for a function `func` of a scalar, applied to A's eigenvalues and
    extended by Parlett's recurrence; complex. With `disp=False`, (F, error
    estimate)."""
    A = jnp.asarray(A)
    if A.ndim != 2 or shape_of(A)[0] != shape_of(A)[1]:
        raise ValueError("expected square array_like input")
    T, Z = rsf2csf(*schur(A))
    n = shape_of(T)[0]
    F = jnp.diag(func(jnp.diagonal(T))).astype(dtype_of(T))
    index = jnp.arange(n)

    def superdiagonal(p, F):
        # entries (i, i + p) for every row at once; rows past n - p are left alone
        col = jnp.minimum(index + p, n - 1)
        t_cols, f_cols = jnp.take(T, col, axis=1).T, jnp.take(F, col, axis=1).T
        s = jnp.sum(T * f_cols, axis=1) - jnp.sum(F * t_cols, axis=1)
        den = T[col, col] - jnp.diagonal(T)
        value = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        keep = index + p < n
        return F.at[index, col].set(jnp.where(keep, value, F[index, col]))
    F = lax.fori_loop(1, n, superdiagonal, F)
    highest = lax.Precision.HIGHEST
    F = jnp.matmul(jnp.matmul(Z, F, precision=highest), jnp.conj(Z.T), precision=highest)
    if disp:
        return F
    eps = np.finfo(dtype_of(F)).eps
    eigenvalues = jnp.diagonal(T)
    gaps = jnp.where(index[:, None] < index[None, :],
                     jnp.abs(eigenvalues[None, :] - eigenvalues[:, None]), np.inf)
    smallest = jnp.minimum(jnp.abs(T[0, 0]), jnp.min(gaps))
    smallest = jnp.where(smallest == 0, eps, smallest)
    estimate = jnp.minimum(1, jnp.maximum(
        eps, eps / smallest * jnp.linalg.norm(jnp.triu(T, 1), 1)))
    return F, jnp.where(jnp.any(jnp.isinf(F)), np.inf, estimate)
