"""Index helpers: arrays of indices to index other arrays with.

`tril_indices`/`triu_indices`/`diag_indices` (and their `_from` forms) and `indices`
depend only on static sizes, so NumPy computes them and they enter a program as
constants (int32, as JAX's do with x64 off). `unravel_index` computes on its
(possibly traced) input with `divmod`, clamping out-of-range indices as JAX does
rather than raising. `ix_` reshapes 1-d index arrays into an open mesh. `s_` and
`index_exp` are NumPy's own index-expression builders.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..ir.dtype_args import canonical_dtype_argument
from ._creation import asarray
from ._promotion import as_operand, shape_of, dtype_of
from ._ufuncs import divmod as _divmod, greater, less, where

__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "indices", "unravel_index", "ix_", "s_",
           "index_exp"]

s_ = np.s_
index_exp = np.index_exp


def _int32_arrays(arrays):
    return tuple(asarray(np.asarray(a, np.int32)) for a in arrays)


def _static_int(fname, what, value):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a static integer, got {value!r}") from None


def tril_indices(n, k=0, m=None):
    """(rows, cols) of the elements on and below diagonal `k` of an (n, m) matrix."""
    n, k = _static_int("tril_indices", "n", n), _static_int("tril_indices", "k", k)
    m = n if m is None else _static_int("tril_indices", "m", m)
    return _int32_arrays(np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """(rows, cols) of the elements on and above diagonal `k` of an (n, m) matrix."""
    n, k = _static_int("triu_indices", "n", n), _static_int("triu_indices", "k", k)
    m = n if m is None else _static_int("triu_indices", "m", m)
    return _int32_arrays(np.triu_indices(n, k, m))


def _matrix_shape(fname, arr):
    shape = shape_of(as_operand(fname, arr))
    if len(shape) != 2:
        raise ValueError(f"{fname}: input array must be 2-D, got shape {shape}")
    return shape


def tril_indices_from(arr, k=0):
    rows, cols = _matrix_shape("tril_indices_from", arr)
    return tril_indices(rows, k, cols)


def triu_indices_from(arr, k=0):
    rows, cols = _matrix_shape("triu_indices_from", arr)
    return triu_indices(rows, k, cols)


def diag_indices(n, ndim=2):
    """`ndim` copies of arange(n): the index of the main diagonal of an n**ndim array."""
    n, ndim = _static_int("diag_indices", "n", n), _static_int("diag_indices", "ndim", ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return _int32_arrays([np.arange(n)] * ndim)


def diag_indices_from(arr):
    shape = shape_of(as_operand("diag_indices_from", arr))
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def indices(dimensions, dtype=None, sparse=False):
    """The index of each position of an array of shape `dimensions`, per axis: an
    array (len(dimensions), *dimensions), or with `sparse` a tuple of broadcastable
    arrays."""
    dimensions = tuple(_static_int("indices", "each dimension", d) for d in dimensions)
    dtype = canonical_dtype_argument(np.int32 if dtype is None else dtype, "indices")
    grid = np.indices(dimensions, dtype=dtype, sparse=sparse)
    return tuple(asarray(g) for g in grid) if sparse else asarray(grid)


def unravel_index(indices, shape):
    """The per-axis indices of the flat `indices` into an array of shape `shape`.

    As in JAX (unlike NumPy, which raises), a flat index past the end gives the last
    position and one before -1 gives the first; -1 counts from the end."""
    flat = as_operand("unravel_index", indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [None] * len(shape)
    for i in reversed(range(len(shape))):
        flat, out[i] = _divmod(flat, shape[i])
    past_end = greater(flat, 0)
    before_start = (asarray(False) if dtype_of(flat).kind == "u" else less(flat, -1))
    return tuple(where(past_end, s - 1, where(before_start, 0, i))
                 for s, i in zip(shape, out))


def ix_(*args):
    """An open mesh of 1-d index arrays: argument i becomes an array whose only
    non-unit axis is axis i, so that `x[ix_(rows, cols)]` picks a cross product."""
    args = [as_operand("ix_", a) for a in args]
    mesh = []
    for i, a in enumerate(args):
        a_shape = shape_of(a)
        if len(a_shape) != 1:
            raise ValueError(f"ix_: arguments must be 1-dimensional, got shape "
                             f"{a_shape}")
        if dtype_of(a) == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not "
                                      "implemented")
        shape = [1] * len(args)
        shape[i] = a_shape[0]
        if a_shape[0] == 0:
            # NumPy uses an integer index type for empty arrays.
            mesh.append(asarray(np.zeros(shape, np.int32)))
        else:
            mesh.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(mesh)
