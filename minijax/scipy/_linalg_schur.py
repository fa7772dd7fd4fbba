"""`scipy.linalg.hessenberg`, `schur`, `sqrtm` and `solve_sylvester`, on the kernels
of `lax.linalg`, as JAX's.

JAX computes both with LAPACK on the CPU only (`gehrd`, `gees`); elsewhere a program
holding them fails with JAX's own error when it is compiled. Neither has a derivative
(JAX has none either).
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend import linalg_kernels as kernels
from ..frontend.eager_jit import jitted_eagerly
from ..numpy._promotion import shape_of, dtype_of, promote_dtypes_inexact

__all__ = ["hessenberg", "schur", "sqrtm", "solve_sylvester"]


@jitted_eagerly("calc_q", "check_finite", "overwrite_a")
def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """h upper Hessenberg with a = q h qᵀ; (h, q) with `calc_q`."""
    del overwrite_a, check_finite
    a = jnp.asarray(a)
    n = shape_of(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = kernels.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    # the reflectors act on rows 1.. (gehrd's Q fixes the first basis vector)
    q = kernels.householder_product(packed[..., 1:, :-1], taus)
    batch = tuple(shape_of(packed)[:-2])
    dtype = dtype_of(packed)
    q = jnp.block([[jnp.ones(batch + (1, 1), dtype), jnp.zeros(batch + (1, n - 1), dtype)],
                   [jnp.zeros(batch + (n - 1, 1), dtype), q]])
    return h, q


def schur(a, output: str = "real"):
    """(t, z) with a = z t zᴴ: t quasi upper triangular for output='real' (2x2 blocks
    for complex eigenvalue pairs), upper triangular and complex for 'complex'."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    return _schur(jnp.asarray(a), output)


@jitted_eagerly("output")
def _schur(a, output):
    if output == "complex":
        a = a.astype(np.result_type(dtype_of(a), np.complex64))
    return kernels.schur(a)


def sqrtm(A, blocksize: int = 1):
    """The principal square root of A, complex, from its complex Schur form A = Z T Zᴴ:
    the upper triangular root of T column by column (Björck & Hammarling 1983), as
    JAX computes it."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(jnp.asarray(A))


def _sqrtm_triu(t):
    diag = jnp.sqrt(jnp.diagonal(t))
    n = shape_of(diag)[0]

    def i_loop(l, data):
        j, u = data
        i = j - 1 - l
        s = lax.fori_loop(i + 1, j, lambda k, val: val + u[i, k] * u[k, j],
                          jnp.zeros((), dtype_of(t)))
        value = jnp.where(t[i, j] == s, 0.0, (t[i, j] - s) / (diag[i] + diag[j]))
        return j, u.at[i, j].set(value)

    def j_loop(j, u):
        return lax.fori_loop(0, j, i_loop, (j, u))[1]

    return lax.fori_loop(0, n, j_loop, jnp.diag(diag))


@jitted_eagerly()
def _sqrtm(a):
    if len(shape_of(a)) != 2 or shape_of(a)[0] != shape_of(a)[1]:
        raise ValueError(f"sqrtm: expected a square matrix, got shape {shape_of(a)}")
    t, z = schur(a, output="complex")
    root = _sqrtm_triu(t)
    return jnp.matmul(jnp.matmul(z, root, precision=lax.Precision.HIGHEST), jnp.conj(z.T),
                      precision=lax.Precision.HIGHEST)


@jitted_eagerly("method")
def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with A X + X B = C (Bartels-Stewart on the complex Schur forms of A and Bᴴ,
    JAX's algorithm); NaNs where some eigenvalues of A and B sum to under `tol`."""
    A, B, C = promote_dtypes_inexact("solve_sylvester", jnp.asarray(A), jnp.asarray(B),
                                     jnp.asarray(C))
    m, n = shape_of(C)[-2:]
    if tuple(shape_of(A)[-2:]) != (m, m) or tuple(shape_of(B)[-2:]) != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: "
                         f"{tuple(shape_of(A))}\nB: {tuple(shape_of(B))}\nC: "
                         f"{tuple(shape_of(C))}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    if method == "eigen":
        raise NotImplementedError("solve_sylvester: method='eigen' needs a solve with "
                                  "complex eigenvector matrices, which minijax's linear "
                                  "algebra does not take; use method='schur'")
    return jnp.vectorize(lambda a, b, c: _solve_sylvester_2d(a, b, c, tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)


def _solve_sylvester_2d(a, b, c, tol):
    r, u = _schur(a, "complex")
    s, v = _schur(jnp.conj(b.T), "complex")
    f = jnp.conj(u.T) @ c.astype(dtype_of(r)) @ v
    y = _sylvester_triangular(r, jnp.conj(s.T), f)
    x = u @ y @ jnp.conj(v.T)
    if not np.issubdtype(dtype_of(c), np.complexfloating):
        x = jnp.real(x)
    sums = jnp.linalg.eigvals(a)[:, None] + jnp.linalg.eigvals(b)[None, :]
    return jnp.where(jnp.any(jnp.abs(sums) < tol), jnp.zeros_like(x) * np.nan, x)


def _sylvester_triangular(r, s, f):
    """Y with R Y + Y Sᵀ = F for upper triangular R and S: entry by entry from the
    bottom-right corner, each from those below it and to its right (a scan)."""
    m, n = shape_of(f)
    rows, cols = jnp.arange(m), jnp.arange(n)

    def step(y_flat, idx):
        i, j = idx // n, idx % n
        y = y_flat.reshape((m, n))
        row_term = jnp.sum(jnp.where(rows > i, r[i, :] * y[:, j], 0.0))
        col_term = jnp.sum(jnp.where(cols > j, y[i, :] * s[:, j], 0.0))
        value = (f[i, j] - (row_term + col_term)) / (r[i, i] + s[j, j])
        return y_flat.at[i * n + j].set(value), None

    y_flat, _ = lax.scan(step, jnp.zeros((m * n,), dtype_of(f)), jnp.arange(m * n - 1, -1, -1))
    return y_flat.reshape((m, n))
