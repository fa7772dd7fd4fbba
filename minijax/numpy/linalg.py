"""`minijax.numpy.linalg`: NumPy's linear algebra with JAX's semantics.

Everything here is built from the decomposition primitives of `minijax.lax.linalg`
(cholesky, triangular_solve, lu, eigh, svd, qr) plus ordinary array operations, so
derivatives come from those primitives' rules (but `pinv`'s: a custom_jvp, as JAX's):

* `solve` factors `a` once with `lu` and does two triangular solves on the permuted
  right-hand side; `inv` solves against the identity.
* `slogdet`/`det` read the determinant off the LU diagonal and the pivot parity
  (2x2 and 3x3 determinants use the closed formulas, as JAX does).
* `pinv`, `lstsq`, `matrix_rank` and the spectral norms use the thin `svd`.

Leading axes are batch axes throughout. Inputs are promoted to floating point first
(integers to float32), as `jax.numpy.linalg` does. The functions that JAX jits
(`solve`, `inv`, `det`, `slogdet`, `norm`, `lstsq`, the decompositions, ...) run an
eager call as one cached program (`jitted_eagerly`), not an operation at a time.
The decompositions themselves, their result types and the shared argument checks are
in `_decompositions.py`; this module re-exports them.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import lax
from ..frontend import linalg_ops as lax_linalg
from . import _reductions as R
from . import _ufuncs as U
from ._classify import isnan
from ._complex import conjugate, real
from ..ir.types import is_complex
from ._promotion import (as_operand, shape_of, dtype_of,
                         broadcast_shapes, canonicalize_axis)
from ._creation import eye, zeros
from ._ufuncs import where
from ._shape import (broadcast_to, expand_dims, squeeze, moveaxis, matrix_transpose,
                     diagonal as _diagonal_axes)
from ._linalg import matmul, tensordot, outer as _outer
from ._dtypes import finfo
from ._take import take_along_axis
from ._shape import ravel, reshape, stack
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ._pinv_tangent import pseudo_inverse_tangent

__all__ = ["cholesky", "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "qr", "inv", "solve", "det",
           "slogdet", "pinv", "matrix_power", "lstsq", "matrix_rank", "norm", "vector_norm",
           "matrix_norm", "trace", "diagonal", "cross", "outer", "matrix_transpose",
           "matmul", "tensordot", "multi_dot", "vecdot", "cond", "tensorinv", "tensorsolve",
           "EigResult", "EighResult", "SVDResult", "QRResult", "SlogdetResult"]


from ._decompositions import (EigResult, EighResult, SVDResult, QRResult, SlogdetResult,
                              _inexact, _check_matrix, cholesky, eig, eigvals, eigh, eigvalsh,
                              svd, svdvals, qr)


# -- solves, inverses, determinants -------------------------------------------------------------

def _permute_rows(b, permutation):
    """b[..., permutation, :] for a batch of row permutations."""
    index = broadcast_to(expand_dims(permutation, -1), shape_of(permutation) + shape_of(b)[-1:])
    return take_along_axis(b, index, axis=-2)


def _lu_solve_packed(lu, permutation, b, trans=0):
    """Solve a x = b (trans=0) or aᵀ x = b (trans=1) given a's packed LU factors:
    a[permutation] = L U, L unit lower, U upper."""
    if trans == 0:
        y = lax_linalg.triangular_solve(lu, _permute_rows(b, permutation), left_side=True,
                                        lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)
    # aᵀ = Uᵀ Lᵀ P, so x = Pᵀ L⁻ᵀ U⁻ᵀ b
    y = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True)
    y = lax_linalg.triangular_solve(lu, y, left_side=True, lower=True, transpose_a=True,
                                    unit_diagonal=True)
    inverse = lax.sort((permutation, lax.broadcasted_iota(
        np.int32, shape_of(permutation), len(shape_of(permutation)) - 1)),
        dimension=-1, num_keys=1)[1]
    return _permute_rows(y, inverse)


@jitted_eagerly()
def solve(a, b):
    """x with a @ x = b: b of shape (n,) (a vector) or (..., n, k); batch axes broadcast."""
    a, b = _inexact("solve", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) < 2:
        raise ValueError(f"solve: a must have rank at least 2, got shape {a_shape}")
    if (len(b_shape) > 1 and len(a_shape) == len(b_shape) + 1
            and a_shape[-1] == b_shape[-1] and a_shape[-1] != b_shape[-2]):
        raise ValueError(f"solve: invalid shapes {a_shape} and {b_shape}: a batch of vectors "
                         f"must be written solve(a, b[..., None])[..., 0]")
    _check_matrix("solve", a, square=True)
    vector = len(b_shape) == 1
    if vector:
        b = expand_dims(b, -1)
    n = a_shape[-1]
    if shape_of(b)[-2] != n:
        raise ValueError(f"solve: a has shape {a_shape} but b has shape {b_shape}: b needs "
                         f"{n} rows")
    batch = broadcast_shapes("solve", a_shape[:-2], shape_of(b)[:-2])
    a = broadcast_to(a, batch + a_shape[-2:])
    b = broadcast_to(b, batch + shape_of(b)[-2:])
    lu, _, permutation = lax_linalg.lu(a)
    x = _lu_solve_packed(lu, permutation, b)
    return squeeze(x, -1) if vector else x


@jitted_eagerly()
def inv(a):
    a, = _inexact("inv", a)
    _check_matrix("inv", a, square=True)
    n = shape_of(a)[-1]
    return solve(a, broadcast_to(eye(n, dtype=dtype_of(a)), shape_of(a)))


def _lu_diagonal_parity(a):
    lu, pivots, _ = lax_linalg.lu(a)
    diag = _diagonal_axes(lu, 0, -2, -1)
    steps = lax.broadcasted_iota(np.int32, shape_of(pivots), len(shape_of(pivots)) - 1)
    swaps = R.count_nonzero(U.not_equal(pivots, steps), axis=-1)
    return diag, swaps


def _slogdet_lu(a):
    diag, swaps = _lu_diagonal_parity(a)
    dtype = dtype_of(a)
    is_zero = R.any(U.equal(diag, 0), axis=-1)
    parity = U.add(swaps, R.count_nonzero(U.less(diag, 0), axis=-1))
    odd = U.equal(U.remainder(parity, 2), 1)
    sign = where(is_zero, np.zeros((), dtype),
                 where(odd, np.asarray(-1, dtype), np.asarray(1, dtype)))
    logdet = where(is_zero, np.asarray(-np.inf, dtype), R.sum(U.log(U.abs(diag)), axis=-1))
    return sign, logdet


@jitted_eagerly("method")
def slogdet(a, *, method=None):
    """(sign, log|det a|), from LU (method None or 'lu') or QR (method='qr')."""
    a, = _inexact("slogdet", a)
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"slogdet: the argument must have shape [..., n, n], got {shape}")
    if method is None or method == "lu":
        if shape[-1] <= 2:
            d = det(a)
            return SlogdetResult(U.sign(d), U.log(U.abs(d)))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        q, r = lax_linalg.qr(a, full_matrices=False)
        diag = _diagonal_axes(r, 0, -2, -1)
        q_sign, _ = _slogdet_lu(q)
        return SlogdetResult(U.multiply(q_sign, R.prod(U.sign(diag), axis=-1)),
                             R.sum(U.log(U.abs(diag)), axis=-1))
    raise ValueError(f"slogdet: unknown method {method!r}; use 'lu' (None) or 'qr'")


@jitted_eagerly()
def det(a):
    """The determinant: closed formulas for 1x1, 2x2 and 3x3, else from LU."""
    a, = _inexact("det", a)
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"det: the argument must have shape [..., n, n], got {shape}")
    n = shape[-1]

    def e(i, j):
        return a[..., i, j]
    if n == 1:
        return e(0, 0)
    if n == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    if n == 3:
        return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0)
                + e(0, 2) * e(1, 0) * e(2, 1) - e(0, 2) * e(1, 1) * e(2, 0)
                - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))
    sign, logdet = _slogdet_lu(a)
    return U.multiply(sign, U.exp(logdet))


# -- pseudo-inverse, least squares, rank, powers ---------------------------------------------------

@jitted_eagerly("hermitian")
def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse from the thin SVD, dropping singular values
    below rtol * s_max (default rtol: 10 * max(m, n) * eps). Differentiated by its own
    rule (`_pinv_jvp`), not through the SVD, as in JAX."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    a, = _inexact("pinv", a)
    _check_matrix("pinv", a)
    m, n = shape_of(a)[-2:]
    if m == 0 or n == 0:
        return zeros(shape_of(a)[:-2] + (n, m), dtype_of(a))
    if rtol is None:
        rtol = np.asarray(10.0 * builtins.max(m, n) * finfo(dtype_of(a)).eps, dtype_of(a))
    return _pinv(a, as_operand("pinv", rtol), hermitian)


def _pinv_from_svd(a, rtol, hermitian):
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = U.multiply(expand_dims(rtol, -1), s[..., 0:1])
    s = where(U.greater(s, cutoff), s, np.asarray(np.inf, dtype_of(a)))
    return matmul(matrix_transpose(vh), U.divide(matrix_transpose(u), expand_dims(s, -1)))


# JAX makes rtol a nondiff argument; here it stays an operand whose tangent the rule
# ignores (the same derivatives), because a traced nondiff argument -- rtol inside
# pinv's eager program -- would be captured by the staged rule and escape.
_pinv = custom_jvp(_pinv_from_svd, nondiff_argnums=(2,))


@_pinv.defjvp
def _pinv_jvp(hermitian, primals, tangents):
    (a, rtol), (a_dot, _) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    return p, pseudo_inverse_tangent(a, a_dot, p, hermitian)


@jitted_eagerly("n")
def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; n < 0 inverts first, n = 0 is I."""
    a = as_operand("matrix_power", a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise TypeError(f"matrix_power: {len(shape)}-dimensional array given; the array "
                        f"must be at least two-dimensional")
    if shape[-1] != shape[-2]:
        raise TypeError(f"matrix_power: the last 2 dimensions must be square, got {shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}") from None
    if n == 0:
        return broadcast_to(eye(shape[-1], dtype=dtype_of(a)), shape)
    if n < 0:
        a, n = inv(a), -n
    result, square = None, None
    while n > 0:
        square = a if square is None else matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


@jitted_eagerly("hermitian")
def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """The number of singular values above rtol * s_max (default rtol: max(m, n) *
    eps), or above `tol` itself.

    `rtol` is relative, as JAX documents it and NumPy computes it; JAX 0.10 compares
    with `rtol` itself (the divergence `matrix_rank_rtol_taken_as_absolute`). `tol`,
    which JAX calls an alias of `rtol`, is the absolute threshold JAX and NumPy's
    `tol` both compare with."""
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: only one of tol or rtol may be specified")
    M, = _inexact("matrix_rank", M)
    if len(shape_of(M)) < 2:
        return R.any(U.not_equal(M, 0)).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if tol is not None:
        threshold = as_operand("matrix_rank", tol)
    else:
        if rtol is None:
            rtol = np.asarray(builtins.max(shape_of(M)[-2:]) * finfo(dtype_of(s)).eps,
                              dtype_of(s))
        threshold = U.multiply(R.max(s, axis=-1), as_operand("matrix_rank", rtol))
    return R.sum(U.greater(s, expand_dims(threshold, -1)), axis=-1)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least squares: (x, residuals, rank, s) minimising |a x - b|, through the SVD."""
    if numpy_resid:     # reads the rank's value: op by op, as JAX's
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jitted_lstsq(a, b, rcond)


# `rcond` is static here (JAX traces it): the body reads it with NumPy.
@jitted_eagerly("rcond")
def _jitted_lstsq(a, b, rcond=None):
    return _lstsq(a, b, rcond, numpy_resid=False)


def _lstsq(a, b, rcond, *, numpy_resid):
    a, b = _inexact("lstsq", a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if a_shape[0] != b_shape[0]:
        raise ValueError(f"lstsq: leading dimensions of a {a_shape} and b {b_shape} must match")
    if len(a_shape) != 2:
        raise TypeError(f"lstsq: {len(a_shape)}-dimensional array given; a must be "
                        f"two-dimensional")
    if len(b_shape) not in (1, 2):
        raise TypeError(f"lstsq: {len(b_shape)}-dimensional array given; b must be one- or "
                        f"two-dimensional")
    vector = len(b_shape) == 1
    if vector:
        b = expand_dims(b, -1)
    m, n = a_shape
    dtype = dtype_of(a)
    eps = finfo(dtype).eps
    rcond = np.asarray(eps * builtins.max(m, n) if rcond is None else rcond, dtype)
    rcond = where(U.less(rcond, 0), np.asarray(eps, dtype), rcond)
    u, s, vt = svd(a, full_matrices=False)
    mask = U.logical_and(U.greater(s, 0), U.greater_equal(s, U.multiply(rcond, s[0])))
    rank = R.sum(mask)
    safe_s = where(mask, s, np.ones((), dtype))
    s_inv = expand_dims(where(mask, U.divide(np.ones((), dtype), safe_s), np.zeros((), dtype)), 1)
    x = matmul(matrix_transpose(vt), U.multiply(s_inv, matmul(matrix_transpose(u), b)))
    # NumPy returns no residuals for rank-deficient or wide systems (that needs the
    # rank's value, so numpy_resid=True only works outside jit, as in JAX)
    if numpy_resid and (m <= n or int(rank) < n):
        residuals = zeros((0,), dtype)
    else:
        residuals = U.square(norm(U.subtract(b, matmul(a, x)), axis=0))
    if vector:
        x = squeeze(x, -1)
    return x, residuals, rank, s


# -- norms ----------------------------------------------------------------------------------------

def _abs_squared(x):
    """|x|² elementwise: x·x for a real x, Re(x·conj x) for a complex one (whose x·x
    would be complex, and not the squared modulus a 2-norm sums)."""
    if is_complex(dtype_of(x)):
        return real(U.multiply(x, conjugate(x)))
    return U.multiply(x, x)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """sum(|x|^ord)^(1/ord) over `axis` (all axes by default); ord in {inf, -inf, 0} are
    max |x|, min |x| and the count of non-zeros."""
    x, = _inexact("vector_norm", x)
    if ord is None or ord == 2:
        return U.sqrt(R.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: invalid order {ord!r} for a vector norm")
    if ord == np.inf:
        return R.max(U.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return R.min(U.abs(x), axis=axis, keepdims=keepdims)
    real_dtype = finfo(dtype_of(x)).dtype      # float32 for complex64 too
    if ord == 0:
        return R.sum(U.not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=real_dtype)
    if ord == 1:
        return R.sum(U.abs(x), axis=axis, keepdims=keepdims)
    p = np.asarray(ord, real_dtype)
    total = R.sum(U.power(U.abs(x), p), axis=axis, keepdims=keepdims)
    return U.power(total, np.asarray(1.0 / p, real_dtype))


def _matrix_norm_axes(x, ord, row_axis, col_axis, keepdims):
    if ord is None or ord in ("f", "fro"):
        return U.sqrt(R.sum(_abs_squared(x), axis=(row_axis, col_axis), keepdims=keepdims))
    if ord in (1, -1):                 # max/min column sum
        summed = R.sum(U.abs(x), axis=row_axis, keepdims=keepdims)
        other = col_axis - 1 if not keepdims and col_axis > row_axis else col_axis
        if ord == 1:
            return R.max(summed, axis=other, keepdims=keepdims, initial=0)
        return R.min(summed, axis=other, keepdims=keepdims)
    if ord in (np.inf, -np.inf):       # max/min row sum
        summed = R.sum(U.abs(x), axis=col_axis, keepdims=keepdims)
        other = row_axis - 1 if not keepdims and row_axis > col_axis else row_axis
        if ord == np.inf:
            return R.max(summed, axis=other, keepdims=keepdims, initial=0)
        return R.min(summed, axis=other, keepdims=keepdims)
    if ord in ("nuc", 2, -2):          # from the singular values
        s = svd(moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)
        if ord == 2:
            y = R.max(s, axis=-1, initial=0)
        elif ord == -2:
            y = R.min(s, axis=-1)
        else:
            y = R.sum(s, axis=-1)
        return expand_dims(y, (row_axis, col_axis)) if keepdims else y
    raise ValueError(f"norm: invalid order {ord!r} for a matrix norm")


@jitted_eagerly("ord", "axis", "keepdims")
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """A vector norm over one axis or a matrix norm over two (see `vector_norm` and
    `matrix_norm`); with axis=None and ord=None, the 2-norm of all elements."""
    x, = _inexact("norm", x)
    ndim = len(shape_of(x))
    if axis is None:
        if ord is None:
            return U.sqrt(R.sum(_abs_squared(x), keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis("norm", a, ndim) for a in axis)
    else:
        axis = (canonicalize_axis("norm", axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm_axes(x, ord, axis[0], axis[1], keepdims)
    raise ValueError(f"norm: improper number of axes {axis}: pass one axis for a vector norm "
                     f"or two for a matrix norm")


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    x, = _inexact("matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# -- small helpers of the array API -----------------------------------------------------------------

def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of the `offset` diagonal of each matrix (the last two axes)."""
    x = as_operand("trace", x)
    return R.sum(_diagonal_axes(x, offset, -2, -1), axis=-1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0):
    return _diagonal_axes(as_operand("diagonal", x), offset, -2, -1)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis` (both operands of size 3 there)."""
    x1, x2 = as_operand("cross", x1), as_operand("cross", x2, 1)
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise ValueError(f"cross: both operands must have size 3 along axis {axis}, got "
                         f"shapes {shape_of(x1)} and {shape_of(x2)}")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    batch = broadcast_shapes("cross", shape_of(a)[:-1], shape_of(b)[:-1])
    a, b = broadcast_to(a, batch + (3,)), broadcast_to(b, batch + (3,))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, axis)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays."""
    x1, x2 = as_operand("outer", x1), as_operand("outer", x2, 1)
    if len(shape_of(x1)) != 1 or len(shape_of(x2)) != 1:
        raise ValueError(f"outer: inputs must be one-dimensional, got shapes {shape_of(x1)} "
                         f"and {shape_of(x2)}")
    return _outer(x1, x2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The dot product of vectors along `axis` (other axes broadcast), sum(conj(x1) x2):
    complex x1 is conjugated, as by `jnp.vecdot` (the array API's definition)."""
    x1, x2 = as_operand("vecdot", x1), as_operand("vecdot", x2, 1)
    if shape_of(x1)[axis] != shape_of(x2)[axis]:
        raise ValueError(f"vecdot: axis {axis} has sizes {shape_of(x1)[axis]} and "
                         f"{shape_of(x2)[axis]} in shapes {shape_of(x1)} and {shape_of(x2)}")
    try:    # the other axes broadcast (a ValueError, as JAX's vecdot, not multiply's type)
        np.broadcast_shapes(shape_of(x1), shape_of(x2))
    except ValueError:
        raise ValueError(f"vecdot: shapes {shape_of(x1)} and {shape_of(x2)} do not "
                         f"broadcast together") from None
    product = U.multiply(conjugate(x1) if is_complex(dtype_of(x1)) else x1, x2)
    return R.sum(product, axis=axis, dtype=preferred_element_type)


@jitted_eagerly("p")
def cond(x, p=None):
    """The condition number in norm p: s_max / s_min for p in (None, 2), its inverse for
    -2, else norm(x, p) * norm(inv(x), p); inf where that is NaN but x is not."""
    x, = _inexact("cond", x)
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"cond: the input must be at least 2-d, got shape {shape}")
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"cond: the input must not be empty, got shape {shape}")
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return U.divide(s[..., 0], s[..., -1])
    if p == -2:
        s = svd(x, compute_uv=False)
        ratio = U.divide(s[..., -1], s[..., 0])
    else:
        if shape[-1] != shape[-2]:
            raise ValueError(f"cond: for p={p!r} the matrix must be square, got shape {shape}")
        ratio = U.multiply(norm(x, ord=p, axis=(-2, -1)), norm(inv(x), ord=p, axis=(-2, -1)))
    nan_free = U.logical_not(R.any(isnan(x), axis=(-2, -1)))
    return where(U.logical_and(isnan(ratio), nan_free), np.asarray(np.inf, dtype_of(ratio)),
                 ratio)


def tensorinv(a, ind: int = 2):
    """The inverse of `a` seen as a matrix from its first `ind` axes to the rest."""
    a = as_operand("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    rows_shape, cols_shape = shape_of(a)[:ind], shape_of(a)[ind:]
    rows, cols = math.prod(rows_shape), math.prod(cols_shape)
    if rows != cols:
        raise ValueError(f"tensorinv: the first {ind} axes of shape {shape_of(a)} have "
                         f"{rows} elements but the rest have {cols}; they must be equal")
    return reshape(inv(reshape(a, (rows, cols))), cols_shape + rows_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b: a solve on `a` flattened to a square matrix."""
    a, b = as_operand("tensorsolve", a), as_operand("tensorsolve", b, 1)
    if axes is not None:
        a = moveaxis(a, axes, (len(shape_of(a)) - 1,) * len(axes))
    b_shape = shape_of(b)
    out_shape = shape_of(a)[len(b_shape):]
    if shape_of(a)[:len(b_shape)] != b_shape:
        raise ValueError(f"tensorsolve: the first axes of a {shape_of(a)} must match b's "
                         f"shape {b_shape}")
    if math.prod(out_shape) != math.prod(b_shape):
        raise ValueError(f"tensorsolve: a's trailing axes {out_shape} must have as many "
                         f"elements as b {b_shape}")
    x = solve(reshape(a, (math.prod(b_shape), math.prod(out_shape))), ravel(b))
    return reshape(x, out_shape)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (first may be 1-d, last may be 1-d), left to right."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least 2 arrays, got {len(arrays)}")
    result = arrays[0]
    for a in arrays[1:]:
        result = matmul(result, a)
    return result
