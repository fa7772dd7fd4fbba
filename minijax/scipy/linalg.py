"""`minijax.scipy.linalg`: SciPy's linear-algebra API with JAX's semantics.

SciPy's conventions differ from NumPy's in small ways that matter: `cholesky`
returns the *upper* factor by default and reads only that triangle (no
symmetrisation), `qr`'s default mode is 'full', `eigh` returns `(w, v)`, `lu`
returns an explicit permutation matrix `p` with `a = p @ l @ u`. Everything is
built on the primitives of `minijax.lax.linalg` and on `minijax.numpy.linalg`; the
special-matrix constructors (`toeplitz`, `pascal`, ...) are in `_special_matrices.py`.

`solve(..., assume_a='pos')` differentiates like JAX's: the Cholesky factors are
computed from `stop_gradient(a)`, and the derivative with respect to `a` comes from
differentiating `a x = b` itself (ẋ = −a⁻¹ ȧ x), for every entry of `a` -- not only
the triangle the factorisation read.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..frontend import linalg_ops as lax_linalg
from .. import numpy as jnp
from ..numpy import linalg as np_linalg
from ..numpy._promotion import promote_dtypes_inexact, promote_dtypes, shape_of, dtype_of
from ..numpy._creation import tril, triu  # noqa: F401  (re-exported, as in JAX)
from ..frontend.eager_jit import jitted_eagerly
from ._special_matrices import (toeplitz, hankel, circulant, companion,  # noqa: F401
                                convolution_matrix, dft, hadamard, helmert, hilbert,
                                invhilbert, leslie, pascal, invpascal, fiedler,
                                fiedler_companion)
from ._linalg_tridiagonal import eigh_tridiagonal, qr_multiply  # noqa: F401
from ._linalg_schur import hessenberg, schur, sqrtm, solve_sylvester  # noqa: F401
from ._linalg_funm import rsf2csf, funm  # noqa: F401

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "lu", "lu_factor", "lu_solve", "eigh", "svd", "qr", "expm", "block_diag", "tril",
           "triu", "toeplitz", "hankel", "circulant", "companion", "convolution_matrix", "dft",
           "hadamard", "helmert", "hilbert", "invhilbert", "leslie", "pascal", "invpascal",
           "fiedler", "fiedler_companion", "polar", "expm_frechet", "eigh_tridiagonal", "qr_multiply",
           "hessenberg", "schur", "sqrtm", "solve_sylvester", "rsf2csf", "funm"]


def _inexact(fname, *arrays):
    return promote_dtypes_inexact(fname, *[jnp.asarray(a) for a in arrays])


def _square(fname, a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{fname}: expected a (batch of) square matrices [..., n, n], got "
                         f"shape {shape}")


# -- Cholesky ---------------------------------------------------------------------------------

def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor (upper by default), read from that triangle of `a` only."""
    a, = _inexact("cholesky", a)
    _square("cholesky", a)
    if lower:
        return lax_linalg.cholesky(a, symmetrize_input=False)
    return jnp.matrix_transpose(lax_linalg.cholesky(jnp.matrix_transpose(a),
                                                    symmetrize_input=False))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower) for `cho_solve`; c's other triangle is zero."""
    return cholesky(a, lower=lower), lower


def _vector_rhs(fname, c, b):
    """Whether b is a (batch of) vector(s) for the matrices c; checks b's length."""
    vector = len(shape_of(b)) == 1
    n = shape_of(c)[-1]
    rows = shape_of(b)[0] if vector else (shape_of(b)[-2] if len(shape_of(b)) >= 2 else None)
    if rows != n:
        raise ValueError(f"{fname}: b of shape {shape_of(b)} does not match the {n}x{n} "
                         f"matrix (b must be (n,) or (..., n, k))")
    return vector


def _broadcast_batch(fname, a, b):
    batch = jnp.broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2])
    return (jnp.broadcast_to(a, batch + shape_of(a)[-2:]),
            jnp.broadcast_to(b, batch + shape_of(b)[-2:]))


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b, given (c, lower) = cho_factor(a): two triangular solves."""
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    _square("cho_solve", c)
    vector = _vector_rhs("cho_solve", c, b)
    if vector:
        b = jnp.expand_dims(b, -1)
    c, b = _broadcast_batch("cho_solve", c, b)
    # a = L Lᵀ = Uᵀ U: solve with the factor as stored, then with its transpose
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return jnp.squeeze(x, -1) if vector else x


# -- triangular and general solves --------------------------------------------------------------

def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """x with op(a) x = b for triangular a; trans 0/'N': a, 1/'T' and 2/'C': aᵀ."""
    if trans in (0, "N"):
        transpose_a = False
    elif trans in (1, "T", 2, "C"):
        transpose_a = True
    else:
        raise ValueError(f"solve_triangular: invalid trans value {trans!r}; use 0, 1, 2, "
                         f"'N', 'T' or 'C'")
    a, b = _inexact("solve_triangular", a, b)
    _square("solve_triangular", a)
    vector = len(shape_of(a)) == len(shape_of(b)) + 1
    if vector:
        b = jnp.expand_dims(b, -1)
    if shape_of(b)[-2] != shape_of(a)[-1]:
        raise ValueError(f"solve_triangular: a of shape {shape_of(a)} and b of shape "
                         f"{shape_of(b)} do not match")
    a, b = _broadcast_batch("solve_triangular", a, b)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                    transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    return jnp.squeeze(x, -1) if vector else x


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """x with a x = b. assume_a: 'gen', 'sym', 'her' (LU) or 'pos' (Cholesky)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: expected assume_a to be one of 'gen', 'sym', 'her', "
                         f"'pos', got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    a, b = _inexact("solve", a, b)
    _square("solve", a)
    factors = cho_factor(lax.stop_gradient(a), lower=lower)
    x = cho_solve(factors, b)
    # x's derivative in b is exact already; add a term whose value is zero and whose
    # derivative in a is the solve of -ȧ x (differentiating a x = b).
    vector = len(shape_of(x)) == len(shape_of(a)) - 1
    x_col = jnp.expand_dims(x, -1) if vector else x
    a_x = jnp.matmul(a, lax.stop_gradient(x_col))
    residual = lax.stop_gradient(a_x) - a_x
    correction = cho_solve(factors, jnp.squeeze(residual, -1) if vector else residual)
    return x + correction


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    return np_linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    return np_linalg.det(a)


# -- LU -----------------------------------------------------------------------------------------

@jitted_eagerly("permute_l", "overwrite_a", "check_finite")
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u (or (p @ l, u) with permute_l): p a permutation
    matrix, l unit lower [m, k], u upper [k, n], k = min(m, n)."""
    a, = _inexact("lu", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"lu: expected a matrix (rank >= 2), got shape {shape_of(a)}")
    packed, _, permutation = lax_linalg.lu(a)
    dtype = dtype_of(a)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    p = jnp.swapaxes(jnp.asarray(jnp.expand_dims(permutation, -1) == jnp.arange(m),
                                 dtype=dtype), -1, -2)
    l_factor = jnp.tril(packed[..., :, :k], -1) + jnp.eye(m, k, dtype=dtype)
    u_factor = jnp.triu(packed[..., :k, :])
    if permute_l:
        return jnp.matmul(p, l_factor), u_factor
    return p, l_factor, u_factor


@jitted_eagerly("overwrite_a", "check_finite")
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): the packed factors and LAPACK's pivots (row i swapped with piv[i])."""
    a, = _inexact("lu_factor", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"lu_factor: expected a matrix (rank >= 2), got shape {shape_of(a)}")
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


@jitted_eagerly("trans", "overwrite_b", "check_finite")
def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """x with a x = b (trans=0) or aᵀ x = b (trans=1, 2), given lu_factor(a)."""
    # The (lu, piv) pair is no operand `jitted_eagerly` passes on (such a call runs
    # this body directly); its arrays are, so unpacked they run as one program.
    packed, pivots = lu_and_piv
    return _lu_solve(packed, pivots, b, trans)


@jitted_eagerly("trans")
def _lu_solve(packed, pivots, b, trans):
    packed, b = _inexact("lu_solve", packed, b)
    _square("lu_solve", packed)
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: invalid trans value {trans!r}; use 0, 1 or 2")
    m = shape_of(packed)[-1]
    permutation = lax_linalg.lu_pivots_to_permutation(jnp.asarray(pivots), m)
    vector = _vector_rhs("lu_solve", packed, b)
    if vector:
        b = jnp.expand_dims(b, -1)
    packed, b = _broadcast_batch("lu_solve", packed, b)
    permutation = jnp.broadcast_to(permutation, shape_of(packed)[:-1])
    x = np_linalg._lu_solve_packed(packed, permutation, b, trans=0 if trans == 0 else 1)
    return jnp.squeeze(x, -1) if vector else x


# -- eigen, singular values, QR ---------------------------------------------------------------

def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,
         check_finite: bool = True):
    """(w, v) of a symmetric matrix (or w with eigvals_only). Only the standard
    problem (b=None, type=1, all eigenvalues) is supported, as in JAX."""
    if b is not None or type != 1 or eigvals is not None:
        raise ValueError("eigh: only the standard eigenproblem (b=None, type=1, "
                         "eigvals=None) is supported")
    a, = _inexact("eigh", a)
    _square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    return np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """(q, r) for mode 'full' (complete q) or 'economic'; (r,) for mode 'r'."""
    if pivoting:
        raise ValueError("qr: pivoting=True is not supported")
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"qr: unsupported mode {mode!r}; use 'full', 'economic' or 'r'")
    a, = _inexact("qr", a)
    if len(shape_of(a)) < 2:
        raise TypeError(f"qr: expected a matrix (rank >= 2), got shape {shape_of(a)}")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


# -- matrix exponential ---------------------------------------------------------------------------

# Padé coefficients b_0..b_m of degree m (Higham 2005), and for each precision the
# 1-norm bounds below which each degree is accurate to working precision.
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
_DEGREES_AND_BOUNDS = {
    np.dtype(np.float32): ((3, 5, 7), (4.258730016922831e-001, 1.880152677804762e+000),
                           3.925724783138660),
    np.dtype(np.float64): ((3, 5, 7, 9, 13), (1.495585217958292e-002, 2.539398330063230e-001,
                                              9.504178996162932e-001, 2.097847961257068e+000),
                           5.371920351148152),
}


def _pade(degree):
    """(U, V) with the odd and even parts of the degree-m Padé numerator:
    p(A) = U + V and q(A) = V - U."""
    b = _PADE[degree]

    def terms(a):
        n = shape_of(a)[-1]
        ident = jnp.eye(n, dtype=dtype_of(a))
        a2 = a @ a
        if degree == 13:
            a4 = a2 @ a2
            a6 = a4 @ a2
            u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                     + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
            v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 \
                + b[2] * a2 + b[0] * ident
            return u, v
        powers = [ident, a2]
        while len(powers) <= degree // 2:
            powers.append(powers[-1] @ a2)
        odd = sum(b[2 * i + 1] * p for i, p in enumerate(powers))
        even = sum(b[2 * i] * p for i, p in enumerate(powers))
        return a @ odd, even
    return terms


# JAX jits expm: an eager call is one cached program here too, not one per operation
# of the switch, solve and squaring loop
@jitted_eagerly("upper_triangular", "max_squarings")
def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """exp(A) by scaling and squaring with a Padé approximant (Higham 2005): scale A
    by 2^-s so its 1-norm is small, pick the lowest Padé degree accurate there, solve
    q(A) R = p(A), square R s times. NaNs if more than max_squarings are needed."""
    A, = _inexact("expm", A)
    _square("expm", A)
    if len(shape_of(A)) > 2:
        from ..frontend.vmap import vmap
        return vmap(lambda m: expm(m, upper_triangular=upper_triangular,
                                   max_squarings=max_squarings))(A)
    dtype = dtype_of(A)
    if dtype not in _DEGREES_AND_BOUNDS:
        raise TypeError(f"expm: dtype {dtype} is not supported (float32 or float64)")
    degrees, bounds, max_norm = _DEGREES_AND_BOUNDS[dtype]
    norm1 = np_linalg.norm(A, 1)
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / max_norm)))
    scaled = A / (2 ** n_squarings).astype(dtype)
    degree_index = jnp.sum(jnp.asarray(bounds, dtype) <= norm1).astype(np.int32)
    u, v = lax.switch(degree_index, [_pade(d) for d in degrees], scaled)
    p, q = u + v, v - u
    r = solve_triangular(q, p) if upper_triangular else np_linalg.solve(q, p)

    def square_step(carry, i):
        return lax.cond(i < n_squarings, lambda x: x @ x, lambda x: x, carry), None
    r, _ = lax.scan(square_step, r, jnp.arange(max_squarings, dtype=dtype))
    return jnp.where(n_squarings > max_squarings, jnp.full_like(r, np.nan), r)


# -- block_diag -------------------------------------------------------------------------------------

@jitted_eagerly()
def block_diag(*arrs):
    """The arrays (scalars, vectors as rows, matrices) along the diagonal of a zero matrix."""
    if not arrs:
        return jnp.zeros((1, 0))
    arrs = promote_dtypes("block_diag", *[jnp.asarray(a) for a in arrs])
    for i, a in enumerate(arrs):
        if len(shape_of(a)) > 2:
            raise ValueError(f"block_diag: arguments must have at most 2 dimensions, got "
                             f"shape {shape_of(a)} at argument {i}")
    arrs = [jnp.atleast_2d(a) for a in arrs]
    total_cols = sum(shape_of(a)[1] for a in arrs)
    rows, col = [], 0
    for a in arrs:
        cols = shape_of(a)[1]
        rows.append(jnp.pad(a, ((0, 0), (col, total_cols - col - cols))))
        col += cols
    return jnp.concatenate(rows, axis=0)


# -- polar decomposition and the Fréchet derivative of expm --------------------------------------

@jitted_eagerly("side", "method")
def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (side 'right'; p is n x n) or a = p u ('left'; p is m x m),
    u with orthonormal columns (rows if n > m) and p positive semidefinite.

    minijax computes both factors from the SVD a = U S Vh (u = U Vh, p = V S Vh or
    U S Uh) for either method: JAX's 'qdwh' iteration is not written here, and the
    factors agree with it up to rounding where they are unique (a of full rank).
    'qdwh' keeps JAX's shape restrictions; `eps` and `max_iterations` tune only it."""
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    m, n = a.shape[-2:]
    if method == "qdwh":
        if not ((m >= n and side == "right") or (m < n and side == "left")):
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n "
                                      "where side='right' and m >= n side='left', got "
                                      f"{a.shape[-2:]} with side={side!r}")
    elif method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    u, s, vh = np_linalg.svd(a, full_matrices=False)
    s = s.astype(u.dtype)[..., None, :]
    if side == "right":
        posdef = (jnp.conj(jnp.matrix_transpose(vh)) * s) @ vh
    else:
        posdef = (u * s) @ jnp.conj(jnp.matrix_transpose(u))
    return u @ vh, posdef


@jitted_eagerly("method", "compute_expm")
def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """The Fréchet derivative of expm at A in the direction E -- expm's jvp -- and,
    with compute_expm, expm(A) first: (expm(A), L(A, E))."""
    A, E = jnp.asarray(A), jnp.asarray(E)
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
    if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                         f"E.shape={E.shape}")
    from ..frontend.autodiff import jvp   # noqa: PLC0415  (a transform over expm)
    value, derivative = jvp(lambda x: expm(x, upper_triangular=False, max_squarings=16),
                            (A,), (E,))
    return (value, derivative) if compute_expm else derivative
