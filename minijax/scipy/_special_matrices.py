"""The special-matrix constructors of `minijax.scipy.linalg` (SciPy's and JAX's):
`toeplitz`, `hankel`, `circulant`, `companion`, `convolution_matrix`, `dft`,
`hadamard`, `helmert`, `hilbert`, `invhilbert`, `leslie`, `pascal`, `invpascal`,
`fiedler`, `fiedler_companion`.

Those built from vectors take batches (leading axes), as JAX's do. The structured
ones (Toeplitz, Hankel, circulant) are one gather of a vector with a static index
matrix. `pascal`, `invpascal` and `invhilbert` have integer entries, which are
computed exactly here and then converted (JAX computes them through `lgamma`, so its
entries are off by a few units in the last place); the other constructors compute
as JAX's do. Each is compiled whole for an eager call, as JAX's jitted ones are (the
vector ones JAX runs op by op; minijax would compile a program per operation).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..ir.dtype_args import canonical_dtype_argument
from ..numpy._promotion import as_operand, promote_args_inexact, promote_dtypes

__all__ = ["toeplitz", "hankel", "circulant", "companion", "convolution_matrix", "dft",
           "hadamard", "helmert", "hilbert", "invhilbert", "leslie", "pascal", "invpascal",
           "fiedler", "fiedler_companion"]


def _operand(fname, x):
    return jnp.asarray(as_operand(fname, x))


def _common_batch(a, b):
    batch = jnp.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    return (jnp.broadcast_to(a, batch + a.shape[-1:]), jnp.broadcast_to(b, batch + b.shape[-1:]))


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (default conj(c));
    r[0] is ignored. Batched over leading axes."""
    c = _operand("toeplitz", c)
    return _toeplitz(c, jnp.conjugate(c) if r is None else _operand("toeplitz", r))


@jitted_eagerly()
def _toeplitz(c, r):
    c, r = _common_batch(*promote_dtypes("toeplitz", jnp.atleast_1d(c), jnp.atleast_1d(r)))
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return jnp.empty(c.shape[:-1] + (m, n), c.dtype)
    # entry (i, j) is c[i - j] below the diagonal, r[j - i] above it
    line = jnp.concatenate([jnp.flip(c, -1), r[..., 1:]], axis=-1)
    return line[..., (m - 1) + np.arange(n)[None, :] - np.arange(m)[:, None]]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (default zeros); r[0] is
    ignored. Batched over leading axes."""
    c = _operand("hankel", c)
    r = jnp.zeros_like(c) if r is None else _operand("hankel", r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return _hankel(c, r)


@jitted_eagerly()
def _hankel(c, r):
    c, r = _common_batch(*promote_dtypes("hankel", c, r))
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return jnp.empty(c.shape[:-1] + (m, n), c.dtype)
    # entry (i, j) is the (i + j)-th of c followed by r[1:]
    line = jnp.concatenate([c, r[..., 1:]], axis=-1)
    return line[..., np.arange(m)[:, None] + np.arange(n)[None, :]]


@jitted_eagerly()
def circulant(c):
    """The circulant matrix whose first column is c: column j is c rolled by j."""
    c = jnp.atleast_1d(_operand("circulant", c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


@jitted_eagerly()
def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest first)."""
    a, = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; "
                         f"got shape {a.shape}.")
    first_row = -a[..., 1:] / a[..., :1]
    m = a.shape[-1] - 1
    out = jnp.broadcast_to(jnp.eye(m, m, k=-1, dtype=first_row.dtype), a.shape[:-1] + (m, m))
    return out.at[..., 0, :].set(first_row)


@jitted_eagerly("n", "mode")
def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix A with A @ v == convolve(a, v, mode) for every v of length n."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = _operand("convolution_matrix", a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pads = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    column, row = jnp.pad(a, pads), jnp.pad(jnp.flip(a, -1), pads)
    total = m + n - 1
    # the rows of the full matrix that `mode` keeps: [first, total - last)
    if mode == "same":
        first = (min(n, m) - 1) // 2
        last = min(n, m) - 1 - first
    elif mode == "valid":
        first = last = min(n, m) - 1
    else:
        first = last = 0
    return toeplitz(column[..., first:total - last], row[..., total - n - first:total - first])


@jitted_eagerly("n", "scale", "dtype")
def dft(n: int, scale: str | None = None, *, dtype=None):
    """The n-point discrete Fourier transform matrix, scaled by 1, 1/sqrt(n) or 1/n."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = np.complex64
    else:
        dtype = canonical_dtype_argument(dtype, "dft")
        if not jnp.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    k = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
    if scale == "sqrtn":
        return omegas / jnp.sqrt(n)
    return omegas / n if scale == "n" else omegas


@jitted_eagerly("n", "dtype")
def hadamard(n: int, dtype=int):
    """The n x n Hadamard matrix (Sylvester's construction); n a power of 2."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


@jitted_eagerly("n", "full")
def helmert(n: int, full: bool = False):
    """The Helmert matrix: orthonormal rows orthogonal to the ones vector (and that
    vector normalised first, with full=True)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = (i + 1).astype(np.float32)
    norm = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / norm, jnp.where(j == i + 1, -k / norm, jnp.zeros_like(norm)))
    if full:
        h = jnp.concatenate([jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=h.dtype), h], axis=0)
    return h


@jitted_eagerly("n")
def hilbert(n: int):
    """The Hilbert matrix 1 / (i + j + 1)."""
    a = lax.broadcasted_iota(np.float32, (n, 1), 0)
    return 1 / (a + a.T + 1)


def _exact_float(entries):
    return jnp.asarray(np.array(entries, dtype=np.float64).astype(np.float32))


@jitted_eagerly("n")
def invhilbert(n: int):
    """The inverse of `hilbert(n)`: integers, computed exactly (float32 overflows
    from n = 15 on, as in JAX)."""
    c = math.comb
    return _exact_float([[(-1) ** (i + j) * (i + j + 1) * c(n + i, n - j - 1)
                          * c(n + j, n - i - 1) * c(i + j, i) ** 2 for j in range(n)]
                         for i in range(n)])


@jitted_eagerly()
def leslie(f, s):
    """The Leslie matrix: fecundities f on the first row, survival rates s below the
    diagonal."""
    f, s = (jnp.atleast_1d(_operand("leslie", x)) for x in (f, s))
    if f.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; "
                         f"got shape {f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{f.shape} and s shape {s.shape}.")
    f, s = _common_batch(*promote_dtypes("leslie", f, s))
    n = f.shape[-1]
    below = jnp.zeros(s.shape[:-1] + (n, n), s.dtype).at[..., np.arange(1, n),
                                                          np.arange(n - 1)].set(s)
    return below.at[..., 0, :].set(f)


_PASCAL_KINDS = ["symmetric", "lower", "upper"]


@jitted_eagerly("n", "kind")
def pascal(n: int, kind: str | None = None):
    """The Pascal matrix: binomial coefficients, lower or upper triangular or their
    symmetric product."""
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:   # (JAX's message, its typo included)
        raise ValueError(f"Expected kind to be on of: {_PASCAL_KINDS}; got {kind}")
    lower = np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)
    if kind == "symmetric":
        lower = lower @ lower.T
    return _exact_float(lower.T if kind == "upper" else lower)


@jitted_eagerly("n", "kind")
def invpascal(n: int, kind: str | None = None):
    """The inverse of `pascal(n, kind)`."""
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"Expected kind to be one of: {_PASCAL_KINDS}; got {kind}")
    inverse = np.array([[(-1) ** (i - j) * math.comb(i, j) for j in range(n)]
                        for i in range(n)], dtype=object)
    if kind == "symmetric":
        inverse = inverse.T @ inverse
    return _exact_float(inverse.T if kind == "upper" else inverse)


@jitted_eagerly()
def fiedler(a):
    """The symmetric Fiedler matrix |a_i - a_j|."""
    a = jnp.atleast_1d(_operand("fiedler", a))
    return jnp.abs(a[..., None] - a[..., None, :])


@jitted_eagerly()
def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients a
    (highest first): the same eigenvalues as `companion(a)`."""
    a, = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    n = a.shape[-1] - 1
    if n == 0:
        return jnp.empty(a.shape[:-1] + (0, 0), a.dtype)
    a = a / a[..., :1]
    if n == 1:
        return -a[..., 1:, None]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even = i % 2 == 0
    # each entry is one of: -a[1] (corner), 1, -a[k] for a static k, or 0
    coefficient = np.where(even & (j == i + 1), np.minimum(i + 2, n),
                           np.where(even & (j == i - 1) & (i >= 2), np.minimum(i + 1, n), 0))
    coefficient = np.where((i == 0) & (j == 0), 1, coefficient)
    ones = ((i == 1) & (j == 0)) | (even & (j == i + 2)) | (~even & (j == i - 2) & (i >= 3))
    ones = ones & ~((i == 0) & (j == 0))
    values = -a[..., coefficient]
    return jnp.where(coefficient > 0, values,
                     jnp.where(ones, jnp.ones((), a.dtype), jnp.zeros((), a.dtype)))
