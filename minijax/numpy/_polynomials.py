"""Polynomials as 1-d coefficient arrays, highest degree first (NumPy's old `poly1d`
convention, as in JAX): `poly`, `polyadd`, `polysub`, `polymul`, `polydiv`,
`polyder`, `polyint`, `polyfit`, `roots` (`polyval` lives in _calculus.py).

Products are convolutions of the coefficient arrays; division is the schoolbook
long division, unrolled over the (static) degree difference; `polyfit` solves the
least-squares problem on the Vandermonde matrix with its columns scaled to unit
norm (which improves its conditioning), as NumPy does.
"""
from __future__ import annotations

import numpy as np

from ..ir.trace import Tracer
from ._creation import asarray, eye, ones, zeros
from ._convolve import convolve
from ._dtypes import finfo
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, shape_of, dtype_of, convert, promote_dtypes,
                         promote_dtypes_inexact, static_int)
from . import _reductions as R
from . import _ufuncs as U
from ._assorted import vander
from ._linalg import matmul
from ._shape import atleast_1d, concatenate, roll, stack, trace, transpose
from .. import lax
from . import linalg

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyfit", "roots"]


def _coefficients(fname, *ps):
    ps = [as_operand(fname, p) for p in ps]
    for p in ps:
        if len(shape_of(p)) != 1:
            raise ValueError(f"{fname}: coefficient arrays must be 1-d, got shape "
                             f"{shape_of(p)}")
    return ps


@jitted_eagerly()
def polyadd(a1, a2):
    """The sum of two polynomials (the shorter is aligned to the end)."""
    a1, a2 = promote_dtypes("polyadd", *_coefficients("polyadd", a1, a2))
    if shape_of(a2)[0] > shape_of(a1)[0]:
        a1, a2 = a2, a1
    return asarray(a1).at[shape_of(a1)[0] - shape_of(a2)[0]:].add(a2)


@jitted_eagerly()
def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = promote_dtypes("polysub", *_coefficients("polysub", a1, a2))
    return polyadd(a1, U.negative(a2))


def _trim_leading_zeros(fname, p):
    if isinstance(p, Tracer):
        p._concrete_or_raise(f"{fname} with trim_leading_zeros=True")
    nonzero = np.flatnonzero(np.asarray(p))
    return p[int(nonzero[0]):] if nonzero.size else p[:1]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials: the convolution of their coefficients."""
    a1, a2 = promote_dtypes_inexact("polymul", *_coefficients("polymul", a1, a2))
    if trim_leading_zeros:
        a1, a2 = (_trim_leading_zeros("polymul", p) for p in (a1, a2))
    if not shape_of(a1)[0]:
        a1 = zeros((1,), dtype_of(a1))
    if not shape_of(a2)[0]:
        a2 = zeros((1,), dtype_of(a2))
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of the polynomial division u / v."""
    u, v = promote_dtypes_inexact("polydiv", *_coefficients("polydiv", u, v))
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = U.true_divide(1.0, v[0])
    quotient = zeros((max(m - n + 1, 1),), dtype_of(u))
    remainder = asarray(u)
    for k in range(m - n + 1):
        d = U.multiply(scale, remainder[k])
        quotient = quotient.at[k].set(d)
        remainder = remainder.at[k:k + n + 1].add(U.negative(U.multiply(d, v)))
    if trim_leading_zeros:
        # Leading entries that are zero up to rounding are trimmed.
        tolerance = float(np.sqrt(finfo(dtype_of(remainder)).eps))
        if isinstance(remainder, Tracer):
            remainder._concrete_or_raise("polydiv with trim_leading_zeros=True")
        big = np.flatnonzero(np.abs(np.asarray(remainder)) >= tolerance)
        remainder = remainder[int(big[0]):] if big.size else remainder[:0]
    return quotient, remainder


@jitted_eagerly("m")
def polyder(p, m=1):
    """The m-th derivative of the polynomial."""
    p, = promote_dtypes_inexact("polyder", *_coefficients("polyder", p))
    m = static_int("polyder", m, "m")
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive")
    if m == 0:
        return p
    n = shape_of(p)[0]
    # coefficient of x**j times j (j - 1) ... (j - m + 1), for j from n - 1 down to m.
    factor = np.prod(np.arange(m, n)[None, :] - np.arange(m)[:, None], axis=0)[::-1]
    return U.multiply(p[:n - m], asarray(factor.astype(dtype_of(p))))


@jitted_eagerly("m")
def polyint(p, m=1, k=None):
    """The m-th antiderivative, with integration constants `k` (scalar or length m)."""
    m = static_int("polyint", m, "m")
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    p, = _coefficients("polyint", p)
    p, k = promote_dtypes_inexact("polyint", p, 0 if k is None else k)
    k = atleast_1d(k)
    if shape_of(k)[0] == 1:
        k = U.multiply(ones((m,), dtype_of(k)), k[0])
    if shape_of(k) != (m,):
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or m")
    if m == 0:
        return p
    n = shape_of(p)[0]
    grid = np.arange(n + m)[None, :] - np.arange(m)[:, None]
    divisor = np.prod(np.maximum(1, grid), axis=0)[::-1]
    return U.true_divide(concatenate([p, convert("polyint", k, dtype_of(p))]),
                         asarray(divisor.astype(dtype_of(p))))


def _characteristic_polynomial(a):
    """The coefficients of det(t I - a), highest power first, by the Faddeev-LeVerrier
    recurrence: M_k = a M_(k-1) + c_(k-1) I, c_k = -trace(a M_k) / k. It is exact in
    exact arithmetic and needs only matmuls, where JAX's poly goes through eigvals;
    in floating point the two agree to rounding for the small, well-scaled matrices
    poly is used on (both lose accuracy as the size grows)."""
    n, dtype = shape_of(a)[0], dtype_of(a)
    identity = eye(n, dtype=dtype)
    coefficients = [ones((), dtype)]
    m = zeros((n, n), dtype)
    for k in range(1, n + 1):
        m = U.add(matmul(a, m), U.multiply(coefficients[-1], identity))
        coefficients.append(U.true_divide(U.negative(trace(matmul(a, m))), k))
    return stack(coefficients)


@jitted_eagerly()
def poly(seq_of_zeros):
    """The monic polynomial with the given roots (a 1-d array), or the characteristic
    polynomial of a square matrix; a matrix's is complex, as JAX's (from eigvals) is."""
    seq = atleast_1d(as_operand("poly", seq_of_zeros))
    shape = shape_of(seq)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0]:
        matrix, = promote_dtypes_inexact("poly", seq)
        complex_dtype = np.result_type(dtype_of(matrix), np.complex64)
        return convert("poly", _characteristic_polynomial(matrix), complex_dtype)
    if len(shape) != 1:
        raise ValueError("poly: input must be 1d or non-empty square 2d array")
    seq, = promote_dtypes_inexact("poly", seq)
    out = ones((1,), dtype_of(seq))
    for k in range(shape[0]):
        root = U.negative(seq[k:k + 1])
        out = convolve(out, concatenate([ones((1,), dtype_of(seq)), root]), mode="full")
    return out


@jitted_eagerly("deg", "rcond", "full", "cov")
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through the points (x, y) (y may
    hold several data sets as columns); with `full`, also the residuals, rank,
    singular values and rcond; with `cov`, also the coefficients' covariance."""
    x, y = as_operand("polyfit", x), as_operand("polyfit", y, 1)
    deg = static_int("polyfit", deg, "deg")
    order = deg + 1
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if not shape_of(x)[0]:
        raise TypeError("polyfit: expected non-empty vector for x")
    if len(shape_of(y)) not in (1, 2):
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    x, y = promote_dtypes_inexact("polyfit", x, y)
    if rcond is None:
        rcond = shape_of(x)[0] * float(finfo(dtype_of(x)).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = as_operand("polyfit", w)
        if len(shape_of(w)) != 1:
            raise TypeError("polyfit: expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("polyfit: expected w and y to have the same length")
        lhs = U.multiply(lhs, w[:, None])
        rhs = U.multiply(rhs, w[:, None] if len(shape_of(rhs)) == 2 else w)
    scale = U.sqrt(R.sum(U.multiply(lhs, lhs), axis=0))
    lhs = U.true_divide(lhs, scale[None, :])
    c, residuals, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = U.true_divide(c, scale[:, None] if len(shape_of(c)) == 2 else scale)
    if full:
        return c, residuals, rank, s, asarray(float(rcond))
    if not cov:
        return c
    base = linalg.inv(matmul(transpose(lhs), lhs))
    base = U.true_divide(base, U.multiply(scale[:, None], scale[None, :]))
    if cov == "unscaled":
        factor = 1.0
    else:
        if shape_of(x)[0] <= order:
            raise ValueError("polyfit: the number of data points must exceed order to "
                             "scale the covariance matrix")
        factor = U.true_divide(residuals, shape_of(x)[0] - order)
    if len(shape_of(y)) == 1:
        return c, U.multiply(base, factor)
    return c, U.multiply(base[:, :, None], factor)


def roots(p, *, strip_zeros: bool = True):
    """The (complex) roots of the polynomial with coefficients `p`, highest degree
    first, as `jnp.roots`: the eigenvalues of its companion matrix (so on the CPU
    only, as JAX's). `strip_zeros=True` drops leading zero coefficients, which needs
    concrete values (JAX's error under jit); with False, each leading zero gives a NaN
    root instead, and the function traces."""
    p, = promote_dtypes_inexact("roots", as_operand("roots", p))
    p = atleast_1d(p)
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = shape_of(p)[0]
    if n < 2:
        return zeros((0,), np.result_type(dtype_of(p), np.complex64))
    if strip_zeros:
        if isinstance(p, Tracer):
            p._concrete_or_raise(
                "The error occurred in the jnp.roots() function. To use this within a "
                "JIT-compiled context, pass strip_zeros=False, but be aware that leading "
                "zeros will result in some returned roots being set to NaN. jnp.roots")
        nonzero = np.flatnonzero(np.asarray(p))
        return _roots_no_zeros(p[int(nonzero[0]) if nonzero.size else n:])
    is_zero = U.equal(p, 0)
    leading = U.where(R.all(is_zero), n, R.argmin(is_zero))
    return _roots_with_zeros(p, leading)


@jitted_eagerly()
def _roots_no_zeros(p):
    """The eigenvalues of the companion matrix: first row -p[1:] / p[0], ones below
    the diagonal."""
    n = shape_of(p)[0]
    if n < 2:
        return zeros((0,), np.result_type(dtype_of(p), np.complex64))
    companion = eye(n - 1, k=-1, dtype=dtype_of(p)).at[0, :].set(
        U.true_divide(U.negative(p[1:]), p[0]))
    return linalg.eigvals(companion)


@jitted_eagerly()
def _roots_with_zeros(p, leading):
    """JAX's: the leading zeros rolled to the end (so they give zero roots), the zero
    roots sorted last, and as many of them as there were leading zeros set to NaN."""
    n = shape_of(p)[0]
    p = U.where(leading == n, 1.0, p)                 # all zero: keep LAPACK away from it
    found = _roots_no_zeros(roll(p, U.negative(leading)))
    found = lax.sort_key_val(U.equal(found, 0), found)[1]
    k = shape_of(found)[0]
    return U.where(lax.iota(np.int32, k) < k - leading, found, complex(np.nan, np.nan))