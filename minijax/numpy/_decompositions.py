"""The decompositions of `minijax.numpy.linalg` (cholesky, eigh, svd, qr), their
NamedTuple results, and the argument checks every `linalg` function shares.

Each decomposition promotes its argument to floating point, checks it is a (batch of)
matrix with JAX's exception type (ValueError for a non-square `cholesky`/`eigh`, as JAX
0.12; TypeError for a vector given to `svd`/`qr`), and binds one primitive of
`minijax.lax.linalg`; an eager call runs as one cached program (`jitted_eagerly`), as
JAX jits these functions. `linalg.py` builds the solves, norms and pseudo-inverses on
them and re-exports everything here.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import lax
from ..frontend import linalg_ops as lax_linalg
from ..frontend.eager_jit import jitted_eagerly
from . import _ufuncs as U
from ._promotion import as_operand, shape_of, promote_dtypes_inexact
from ._shape import expand_dims, matrix_transpose
from ._take import take_along_axis


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _inexact(fname, *arrays):
    arrays = [as_operand(fname, a) for a in arrays]
    return promote_dtypes_inexact(fname, *arrays)


def _check_matrix(fname, a, square=False, error=ValueError):
    shape = shape_of(a)
    if len(shape) < 2:
        raise error(f"{fname}: the argument must have rank at least 2 (shape [..., m, n]), "
                    f"got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise error(f"{fname}: the argument must be a square matrix (shape [..., n, n]), "
                    f"got shape {shape}")


# -- decompositions ---------------------------------------------------------------------------

@jitted_eagerly("upper", "symmetrize_input")
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The lower (or, with upper=True, upper) Cholesky factor of a positive definite
    matrix; NaNs where `a` is not positive definite."""
    a, = _inexact("cholesky", a)
    # ValueError for a non-square argument, as JAX 0.12 (0.10 and 0.11 raise a
    # TypeError from adding it to its transpose)
    _check_matrix("cholesky", a, square=True)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return matrix_transpose(factor) if upper else factor


def _lower_from_uplo(fname, UPLO):
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"{fname}: UPLO must be one of None, 'L', or 'U', got {UPLO!r}")


@jitted_eagerly("UPLO", "symmetrize_input")
def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix."""
    lower = _lower_from_uplo("eigh", UPLO)
    a, = _inexact("eigh", a)
    _check_matrix("eigh", a, square=True)    # ValueError, as cholesky's
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@jitted_eagerly()
def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit 2-norm) of a general matrix,
    complex whatever `a`'s type, as `jnp.linalg.eig`; on the CPU only, as JAX's."""
    a, = _inexact("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jitted_eagerly()
def eigvals(a):
    """The eigenvalues of a general matrix (complex), as `jnp.linalg.eigvals`."""
    a, = _inexact("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


@jitted_eagerly("UPLO", "symmetrize_input")
def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


@jitted_eagerly("full_matrices", "compute_uv", "hermitian", "subset_by_index")
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """`u, s, vh` with a = u @ diag(s) @ vh and s descending (or only s).

    `subset_by_index` is JAX's: on the CPU and GPU only the whole range is accepted
    (see `lax.linalg.svd`); with `hermitian=True` it goes to the eigendecomposition,
    which accepts the whole range (0, n) alone, as JAX's `eigh` there."""
    try:
        hash(subset_by_index)
    except TypeError:
        # a static argument of JAX's jitted svd: hashing it fails first, a ValueError
        raise ValueError(f"svd: subset_by_index is a static argument and must be "
                         f"hashable, a tuple (start, end); got {subset_by_index!r}") from None
    a, = _inexact("svd", a)
    _check_matrix("svd", a, error=TypeError)
    if hermitian:
        if subset_by_index is not None and tuple(subset_by_index) != (0, shape_of(a)[-1]):
            raise NotImplementedError("subset_by_index not supported on CPU and GPU")
        return _hermitian_svd(a, compute_uv)
    if compute_uv:
        return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                         subset_by_index=subset_by_index))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def _hermitian_svd(a, compute_uv):
    """For symmetric a = V diag(w) Vᵀ: s = |w| sorted descending, u = V (reordered),
    vh = (u · sign(w))ᵀ."""
    v, w = lax_linalg.eigh(a)
    s = U.abs(w)
    batch_axis = len(shape_of(s)) - 1
    order = lax.broadcasted_iota(np.int32, shape_of(s), batch_axis)
    s_sorted, order, signs = lax.sort((U.negative(s), order, U.sign(w)), dimension=-1,
                                      num_keys=1)
    s_sorted = U.negative(s_sorted)
    if not compute_uv:
        return s_sorted
    u = take_along_axis(v, expand_dims(order, -2), axis=-1)
    vh = matrix_transpose(U.multiply(u, expand_dims(signs, -2)))
    return SVDResult(u, s_sorted, vh)


def svdvals(x, /):
    return svd(x, compute_uv=False)


@jitted_eagerly("mode")
def qr(a, mode: str = "reduced"):
    """`Q, R` with a = Q @ R ('reduced': k = min(m, n) columns of Q, 'complete': m),
    or only R for mode='r'."""
    a, = _inexact("qr", a)
    _check_matrix("qr", a, error=TypeError)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"qr: unsupported mode {mode!r}; use 'reduced', 'complete' or 'r'")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)
