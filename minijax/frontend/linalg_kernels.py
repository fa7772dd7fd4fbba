"""The rest of `jax.lax.linalg`: `tridiagonal`, `tridiagonal_solve`,
`householder_product`, `hessenberg`, `schur`, `ormqr` (LAPACK kernels, primitives of
`ir/linalg_kernels.py` lowered to JAX's functions), and `symmetric_product` and
`cholesky_update`, which JAX itself computes on the CPU by composing `lax` operations
and minijax composes the same way (an eager call runs as one compiled program, as
JAX's one primitive does).

The checks here raise JAX's exception types with JAX's messages. As elsewhere in
minijax's linear algebra, matrices are real (a complex one is a NotImplementedError),
except for `schur`, which has no derivative rules to conjugate and takes complex ones.
"""
from __future__ import annotations

import numpy as np

from ..ir import linalg_kernels as K
from ..ir.trace import bind, aval_of
from ..ir.types import is_complex, is_float
from . import lax_ops as lax
from .linalg_ops import _matrix_transpose
from .eager_jit import jitted_eagerly

__all__ = ["tridiagonal", "tridiagonal_solve", "householder_product", "hessenberg", "schur",
           "ormqr", "symmetric_product", "cholesky_update"]


def _check(name, x, position=0, rank=2, complex_ok=False):
    """JAX's operand checks: rank at least `rank`, real floating point (or complex)."""
    aval = aval_of(x)
    if aval.ndim < rank:
        raise TypeError(f"Input {position} to {name} must have rank at least {rank}, but "
                        f"got shape={aval.shape}")
    if is_complex(aval.dtype) and not complex_ok:
        raise NotImplementedError(f"lax.linalg.{name}: minijax's linear algebra takes real "
                                  "matrices only; JAX's also takes complex ones")
    if not (is_float(aval.dtype) or is_complex(aval.dtype)):
        raise TypeError(f"{name} does not accept dtype {aval.dtype} at position {position}. "
                        f"Accepted dtypes at position {position} are subtypes of floating, "
                        "complexfloating.")
    return aval


def _as_array(x):
    return x if hasattr(x, "aval") or isinstance(x, np.ndarray) else np.asarray(x)


def tridiagonal(a, *, lower: bool = True):
    """(a', d, e, taus): Qᵀ a Q = T tridiagonal with diagonal d and off-diagonal e, Q's
    Householder reflectors packed in a' (below T's, or above if not `lower`) and taus."""
    a = _as_array(a)
    aval = _check("tridiagonal", a)
    if aval.shape[-1] != aval.shape[-2] or aval.shape[-1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{aval.shape[-2:]}.")
    return list(bind(K.tridiagonal_p, a, lower=bool(lower)))


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """x with T x = b, T tridiagonal: T[i, i-1] = dl[i], T[i, i] = d[i], T[i, i+1] =
    du[i] (dl[0] and du[-1] are not read)."""
    dl, d, du, b = map(_as_array, (dl, d, du, b))
    shapes = [aval_of(v).shape for v in (dl, d, du)]
    for i, v in enumerate((dl, d, du)):
        _check("tridiagonal_solve", v, i, rank=1)
    b_aval = _check("tridiagonal_solve", b, 3)
    if shapes[0] != shapes[1] or shapes[0] != shapes[2]:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the "
                        "same shape.")
    if shapes[0] != b_aval.shape[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of "
                        "b equal the dimensions of the diagonal arguments.")
    if len({aval_of(v).dtype for v in (dl, d, du, b)}) != 1:
        raise TypeError("tridiagonal_solve requires that all arguments have the same dtype, "
                        f"got {[str(aval_of(v).dtype) for v in (dl, d, du, b)]}")
    return bind(K.tridiagonal_solve_p, dl, d, du, b, perturb_singular=bool(perturb_singular))


def householder_product(a, taus):
    """The Q of the Householder reflectors I - taus[i] v_i v_iᵀ packed below a's
    diagonal (LAPACK's orgqr): Q's first n columns."""
    a, taus = _as_array(a), _as_array(taus)
    aval = _check("householder_product", a)
    _check("householder_product", taus, 1, rank=1)
    m, n = aval.shape[-2:]
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {aval.shape[-2:]}")
    if aval_of(taus).shape[-1] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return bind(K.householder_product_p, a, taus)


def hessenberg(a):
    """(a', taus): Qᵀ a Q = H upper Hessenberg, H in a' on and above the first
    subdiagonal, Q's reflectors below it. JAX computes it on the CPU only."""
    a = _as_array(a)
    aval = _check("hessenberg", a)
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {aval.shape[-2:]}")
    return list(bind(K.hessenberg_p, a))


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """(t, z) with x = z t zᵀ, t quasi upper triangular (the real Schur form; 2x2 blocks
    for complex pairs) and z orthogonal; (t,) without `compute_schur_vectors`. JAX
    computes it on the CPU only."""
    x = _as_array(x)
    aval = _check("schur", x, complex_ok=True)
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape "
                         f"{aval.shape[-2:]}.")
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    # JAX's lowering ignores select_callable: LAPACK only reads it when sorting
    del select_callable
    return list(bind(K.schur_p, x, compute_schur_vectors=bool(compute_schur_vectors)))


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c (left) or c Q, with Qᵀ for `transpose`; Q the product of the Householder
    reflectors in a and taus (as from a QR factorisation), never formed."""
    a, taus, c = map(_as_array, (a, taus, c))
    a_aval = _check("ormqr", a)
    _check("ormqr", taus, 1, rank=1)
    c_aval = _check("ormqr", c, 2)
    m = a_aval.shape[-2]
    if left and c_aval.shape[-2] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a_aval.shape[-2:]} and c "
                         f"shape {c_aval.shape[-2:]}.")
    if not left and c_aval.shape[-1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape "
                         f"{a_aval.shape[-2:]} and c shape {c_aval.shape[-2:]}.")
    return bind(K.ormqr_p, a, taus, c, left=bool(left), transpose=bool(transpose))


def _tril(x, k=0):
    aval = aval_of(x)
    rows = lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 2)
    cols = lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 1)
    return lax.select(lax.ge(lax.add(rows, np.int32(k)), cols), x,
                      lax.full_like(x, 0))


@jitted_eagerly("alpha", "beta", "symmetrize_output")
def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """alpha a aᵀ + beta c, computed as JAX does on the CPU (a product at full
    precision); `symmetrize_output` mirrors the lower triangle onto the upper."""
    a, c = _as_array(a_matrix), _as_array(c_matrix)
    a_aval = _check("symmetric_product", a)
    c_aval = _check("symmetric_product", c, 1)
    if a_aval.shape[-2] != c_aval.shape[-1] or c_aval.shape[-2] != c_aval.shape[-1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and "
                         f"a square matrix of shape (n, n). Got shapes {a_aval.shape[-2:]} "
                         f"and {c_aval.shape[-2:]}.")
    nd = a_aval.ndim
    batch = tuple(range(nd - 2))
    product = lax.dot_general(a, _matrix_transpose(a), (((nd - 1,), (nd - 2,)), (batch, batch)),
                              precision=lax.Precision.HIGHEST)
    result = lax.add(lax.mul(alpha, product), lax.mul(beta, c))
    if symmetrize_output:
        result = lax.add(_tril(result), _matrix_transpose(_tril(result, -1)))
    return result


@jitted_eagerly()
def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of rᵀ r + w wᵀ, from r's: one Givens rotation per row
    zeroes w against r's diagonal (JAX's algorithm, as it runs on the CPU)."""
    r, z = _as_array(r_matrix), _as_array(w_vector)
    r_aval = _check("cholesky_update", r)
    _check("cholesky_update", z, 1, rank=1)
    if r_aval.ndim != 2 or aval_of(z).ndim != 1 or r_aval.shape[0] != r_aval.shape[1] or \
            aval_of(z).shape[0] != r_aval.shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and "
                         f"a vector of the same size as input. Got shapes {r_aval.shape} and "
                         f"{aval_of(z).shape} instead")
    n = r_aval.shape[0]
    rows = [lax.index_in_dim(r, k, keepdims=False) for k in range(n)]
    for k in range(n):
        x, y = (lax.index_in_dim(rows[k], k, keepdims=False),
                lax.index_in_dim(z, k, keepdims=False))
        # LAPACK's drotg, scaled by the larger entry; y == 0 is the identity rotation
        big = lax.max(lax.abs(x), lax.abs(y))
        safe = lax.select(lax.eq(y, lax.full_like(y, 0)), lax.full_like(big, 1), big)
        xs, ys = lax.div(x, safe), lax.div(y, safe)
        rh = lax.div(lax.full_like(xs, 1), lax.sqrt(lax.add(lax.mul(xs, xs), lax.mul(ys, ys))))
        zero_y = lax.eq(y, lax.full_like(y, 0))
        c = lax.select(zero_y, lax.full_like(x, 1), lax.mul(xs, rh))
        s = lax.select(zero_y, lax.full_like(x, 0), lax.neg(lax.mul(ys, rh)))
        rows[k], z = (lax.sub(lax.mul(c, rows[k]), lax.mul(s, z)),
                      lax.add(lax.mul(c, z), lax.mul(s, rows[k])))
    return lax.concatenate([lax.expand_dims(row, (0,)) for row in rows], 0)
