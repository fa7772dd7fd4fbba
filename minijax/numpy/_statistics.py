"""Counting and second moments: `bincount`, `digitize`, `histogram_bin_edges`,
`histogram`/`histogram2d`/`histogramdd`, `ravel_multi_index`, `cov`, `corrcoef`.

Counting is a scatter-add: each value's bin index is found with `searchsorted`
against the (static-length) bin edges, and its weight is added at that index, so
the counts have a static shape and flow under jit, grad (through the weights) and
vmap. A value equal to the last edge counts in the last bin (the bins are half-open
except the last), as in NumPy. `bincount` needs the number of bins to be static:
`length=` under jit, or it is read from the concrete input. `histogramdd` flattens
the per-dimension bin indices (with an underflow and an overflow bin on each side)
into one index with `ravel_multi_index`, counts with `bincount`, and cuts the
outside bins off. `cov` is NumPy's formula with its frequency and analytic weights.
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.trace import Tracer
from ..ir.types import is_complex, is_integer
from ._creation import asarray, linspace, ones_like, zeros
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, shape_of, dtype_of, convert, promote_dtypes_inexact,
                         result_type, static_int, to_inexact)
from . import _reductions as R
from . import _ufuncs as U
from ._calculus import diff
from ._linalg import dot
from ._shape import atleast_2d, concatenate, diagonal, reshape, transpose, flip, stack
from ._complex import conjugate, imag, real
from ._dtypes import finfo
from ._sorting import searchsorted

__all__ = ["bincount", "digitize", "histogram_bin_edges", "histogram", "histogram2d",
           "histogramdd", "ravel_multi_index", "cov", "corrcoef"]


def bincount(x, weights=None, minlength=0, *, length=None):
    """The number (or summed weights) of each non-negative integer in 1-d `x`;
    `length` bins (static), by default max(x) + 1 (at least `minlength`)."""
    x = as_operand("bincount", x)
    if not is_integer(dtype_of(x)):
        raise TypeError(f"bincount: x argument must have an integer type, got "
                        f"{dtype_of(x)}")
    if len(shape_of(x)) != 1:
        raise ValueError(f"bincount: only 1-d x is supported, got shape {shape_of(x)}")
    minlength = static_int("bincount", minlength, "minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if length is None:
        if isinstance(x, Tracer):
            x._concrete_or_raise("bincount (pass a static length= under jit)")
        values = np.asarray(x)
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = static_int("bincount", length, "length")
    if weights is None:
        weights = lax.broadcast_in_dim(asarray(np.int32(1)), shape_of(x), ())
    else:
        weights = as_operand("bincount", weights)
        if shape_of(weights) != shape_of(x):
            raise ValueError(f"bincount: weights shape {shape_of(weights)} differs from "
                             f"x's {shape_of(x)}")
    index = U.clip(x, 0, None)
    return zeros((length,), dtype_of(weights)).at[index].add(weights, mode="drop")


@jitted_eagerly("right", "method")
def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each x falls in: i with bins[i-1] <= x < bins[i] for
    increasing bins (`right`: bins[i-1] < x <= bins[i]); decreasing bins work too."""
    x, bins = as_operand("digitize", x), as_operand("digitize", bins, 1)
    if len(shape_of(bins)) != 1:
        raise ValueError(f"digitize: bins must be a 1-d array, got shape {shape_of(bins)}")
    n = shape_of(bins)[0]
    if n == 0:
        return zeros(shape_of(x), np.int32)
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side=side)
    decreasing = U.subtract(n, searchsorted(flip(bins), x, side=side))
    return U.where(U.greater_equal(bins[-1], bins[0]), increasing, decreasing)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of `bins` equal bins over `range` (default: a's min to max), or
    `bins` itself when it is an array of edges."""
    a = as_operand("histogram_bin_edges", a)
    if not isinstance(bins, int) and not isinstance(bins, (str, bytes)):
        edges = as_operand("histogram_bin_edges", bins)
        if len(shape_of(edges)) == 1:       # in a's inexact dtype, as JAX gives them
            return convert("histogram_bin_edges", edges, to_inexact(dtype_of(a), False)[0])
    if isinstance(bins, str):
        raise NotImplementedError("histogram_bin_edges: string values for bins are not "
                                  "supported (as in JAX)")
    count = static_int("histogram_bin_edges", bins, "bins")
    a, = promote_dtypes_inexact("histogram_bin_edges", a)
    dtype = dtype_of(a)
    if range is None:
        bounds = stack([R.min(a), R.max(a)])
    else:
        bounds = convert("histogram_bin_edges", asarray(range), dtype)
        if shape_of(bounds) != (2,):
            raise ValueError(f"histogram_bin_edges: range must be a pair, got {range!r}")
    # A zero-width range is widened by 1/2 on each side, as NumPy does.
    empty = U.equal(R.ptp(bounds), 0)
    bounds = U.where(empty, U.add(bounds, asarray(np.array([-0.5, 0.5], dtype))), bounds)
    return linspace(bounds[0], bounds[1], count + 1, dtype=dtype)


def _promote_with_weights(name, a, weights, weighed_shape):
    """`a` (and `weights`, whose shape must be `weighed_shape(a)`) made inexact of
    one dtype, as JAX's histograms take them: the edges, and weighted counts, have
    that dtype."""
    a = as_operand(name, a)
    if weights is None:
        return promote_dtypes_inexact(name, a)[0], None
    weights = as_operand(name, weights)
    if shape_of(weights) != weighed_shape(a):
        raise ValueError(f"{name}: weights should have shape {weighed_shape(a)}, "
                         f"got {shape_of(weights)}")
    return tuple(promote_dtypes_inexact(name, a, weights))


def _bin_indices(values, edges):
    """1 + the bin of each value (0 below, len(edges) above; the last edge inside)."""
    index = searchsorted(edges, values, side="right")
    return U.where(U.equal(values, edges[-1]), U.subtract(index, 1), index)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, edges) of a's values (flattened); `density` divides by the total and
    the bin widths."""
    a, weights = _promote_with_weights("histogram", a, weights, shape_of)
    edges = histogram_bin_edges(a, bins, range, weights)
    flat = reshape(a, (-1,))
    w = ones_like(flat) if weights is None else reshape(weights, (-1,))
    index = _bin_indices(flat, edges)
    n = shape_of(edges)[0]
    counts = zeros((n + 1,), dtype_of(w)).at[index].add(w, mode="drop")
    counts = lax.slice(counts, (1,), (n,))
    if density:
        counts = U.true_divide(U.true_divide(counts, diff(edges)), R.sum(counts))
    return counts, edges


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat index of each tuple of indices into an array of shape `dims`; `mode`
    'clip' or 'wrap' treats out-of-range indices ('raise' needs concrete indices).
    As JAX's, in `dtype`, or by default the indices' own integer type promoted with a
    weak int (int8 indices give int8), refused if it cannot hold every flat index."""
    dims = tuple(static_int("ravel_multi_index", d, "dims") for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    indices = [as_operand("ravel_multi_index", i) for i in multi_index]
    dtype = (result_type(int, *indices) if dtype is None
             else canonical_dtype_argument(dtype, "ravel_multi_index"))
    if not is_integer(dtype):
        raise ValueError(f"ravel_multi_index: dtype={dtype!r} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"ravel_multi_index: dtype={dtype!r} not large enough to hold "
                         f"the flattened index for dims={dims}; pass a wider dtype")
    for i in indices:
        if not is_integer(dtype_of(i)):
            raise TypeError("ravel_multi_index: only int indices permitted")
    if mode == "raise":
        for i, d in zip(indices, dims):
            if isinstance(i, Tracer):
                i._concrete_or_raise("ravel_multi_index with mode='raise' (use 'clip' or "
                                     "'wrap' under jit)")
            values = np.asarray(i)
            if values.size and (values.min() < 0 or values.max() >= d):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "clip":
        indices = [U.clip(i, 0, d - 1) for i, d in zip(indices, dims)]
    elif mode == "wrap":
        indices = [U.remainder(i, d) for i, d in zip(indices, dims)]
    else:
        raise ValueError(f"ravel_multi_index: invalid mode={mode!r}; expected 'raise', "
                         f"'clip' or 'wrap'")
    order_of = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    flat, stride = asarray(0, dtype), 1
    for axis in order_of:
        term = U.multiply(convert("ravel_multi_index", indices[axis], dtype), stride)
        flat = U.add(flat, term)
        stride *= dims[axis]
    return flat


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, [edges per dimension]) of the N points in `sample` (N, D)."""
    sample = as_operand("histogramdd", sample)
    if len(shape_of(sample)) != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got {shape_of(sample)}")
    sample, weights = _promote_with_weights("histogramdd", sample, weights,
                                            lambda x: shape_of(x)[:1])
    n_dims = shape_of(sample)[1]
    if isinstance(bins, (list, tuple)) and len(bins) != n_dims:
        raise ValueError(f"histogramdd: {len(bins)} bins for {n_dims} dimensions")
    if range is not None and len(range) != n_dims:
        raise ValueError(f"histogramdd: {len(range)} ranges for {n_dims} dimensions")
    edges, indices, sizes = [], [], []
    for axis in builtins_range(n_dims):
        column = sample[:, axis]
        bins_i = bins[axis] if isinstance(bins, (list, tuple)) else bins
        edges_i = histogram_bin_edges(column, bins_i, None if range is None else range[axis],
                                      weights)
        edges.append(edges_i)
        indices.append(_bin_indices(column, edges_i))
        sizes.append(shape_of(edges_i)[0] + 1)
    flat = ravel_multi_index(indices, sizes, mode="clip")
    counts = bincount(flat, weights, length=math.prod(sizes))
    counts = reshape(counts, sizes)
    counts = lax.slice(counts, (1,) * n_dims, tuple(s - 1 for s in sizes))
    if density:
        counts = convert("histogramdd", counts, dtype_of(sample))
        counts = U.true_divide(counts, R.sum(counts))
        for axis, edges_i in enumerate(edges):
            shape = [1] * n_dims
            shape[axis] = sizes[axis] - 2
            counts = U.true_divide(counts, reshape(diff(edges_i), shape))
    return counts, edges


builtins_range = range  # the `range` parameters above shadow the builtin


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges) of the points (x[i], y[i])."""
    x, y = as_operand("histogram2d", x), as_operand("histogram2d", y, 1)
    try:
        n_bins = len(bins)
    except TypeError:
        n_bins = 1
    if n_bins not in (1, 2):
        bins = [bins, bins]  # one array of edges for both dimensions
    sample = transpose(stack([x, y]))   # one dtype (histogramdd makes it inexact)
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


def _variables_as_rows(name, a, rowvar):
    """cov's `m` or `y` as a 2-d array with one variable per row."""
    a = as_operand("cov", a)
    if len(shape_of(a)) > 2:
        raise ValueError(f"cov: {name} has more than 2 dimensions: shape {shape_of(a)}")
    a = atleast_2d(a)
    if not rowvar and shape_of(a)[0] != 1:
        a = transpose(a)
    return a


def _inexact_dtype_argument(fname, dtype):
    # A class that is no inexact scalar type (`object`, `dict`) is this ValueError
    # before it is looked at as a dtype, as in JAX.
    wanted = dtype if isinstance(dtype, type) else canonical_dtype_argument(dtype, fname)
    if not np.issubdtype(wanted, np.inexact):
        raise ValueError(f"{fname}: dtype must be a subclass of float or complex; "
                         f"got dtype={dtype!r}")
    return wanted


@jitted_eagerly("rowvar", "bias", "ddof", "dtype")
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """The covariance matrix of the variables in m's rows (columns if not `rowvar`),
    with y's as more variables; `fweights` repeat observations, `aweights` weigh them.
    `dtype` (inexact): the variables and the weights are converted to it first, as
    JAX does (the `aweights` of the correction term are not, so they may widen it)."""
    if ddof is not None and not isinstance(ddof, int):
        raise ValueError(f"cov: ddof must be an integer, got {ddof!r}")
    x = _variables_as_rows("m", m, rowvar)
    if y is not None:
        y = _variables_as_rows("y", y, rowvar)
        x = concatenate(list(promote_dtypes_inexact("cov", x, y)), axis=0)
    x, = promote_dtypes_inexact("cov", x)
    if dtype is not None:
        dtype = canonical_dtype_argument(_inexact_dtype_argument("cov", dtype), "cov")
        x = convert("cov", x, dtype)
    if shape_of(x)[0] == 0:
        return zeros((0, 0), dtype_of(x))
    ddof = (0 if bias else 1) if ddof is None else ddof
    n_obs = shape_of(x)[1]
    w = None
    if fweights is not None:
        fweights = as_operand("cov", fweights)
        if len(shape_of(fweights)) > 1 or shape_of(fweights)[0] != n_obs:
            raise RuntimeError("cov: fweights must be 1-d with one entry per observation")
        if not is_integer(dtype_of(fweights)):
            raise TypeError("cov: fweights must be integer")
        w = fweights
    if aweights is not None:
        aweights = as_operand("cov", aweights)
        if len(shape_of(aweights)) > 1 or shape_of(aweights)[0] != n_obs:
            raise RuntimeError("cov: aweights must be 1-d with one entry per observation")
        w = aweights if w is None else U.multiply(w, aweights)
    if w is not None and dtype is not None:
        w = convert("cov", w, dtype)
    if w is None:
        avg = R.mean(x, axis=1)
        w_sum = asarray(np.asarray(n_obs, finfo(dtype_of(avg)).dtype))
        factor = U.subtract(w_sum, ddof)
    else:
        w_sum = R.sum(w)
        avg = U.true_divide(R.sum(U.multiply(x, w), axis=1), w_sum)
        if ddof == 0:
            factor = w_sum
        elif aweights is None:
            factor = U.subtract(w_sum, ddof)
        else:
            factor = U.subtract(w_sum, U.true_divide(
                U.multiply(ddof, R.sum(U.multiply(w, aweights))), w_sum))
    centred = U.subtract(x, avg[:, None])
    weighted = centred if w is None else U.multiply(centred, w)
    product = dot(weighted, conjugate(transpose(centred)))
    factor_dtype = finfo(dtype_of(product)).dtype
    if dtype is not None and aweights is not None and ddof != 0:
        # JAX's correction term multiplies by the `aweights` given, not converted to
        # `dtype`, so a wider aweights widens the result (float16 and float32 aweights
        # make a float32 cov)
        factor_dtype = result_type(factor_dtype, dtype_of(aweights))
    return _squeeze(U.true_divide(product, convert("cov", factor, factor_dtype)))


def _squeeze(c):
    """JAX squeezes cov's result: one variable gives a scalar."""
    return reshape(c, ()) if shape_of(c) == (1, 1) else c


@jitted_eagerly("rowvar", "dtype")
def corrcoef(x, y=None, rowvar=True, dtype=None):
    """The correlation coefficients: cov normalised by the standard deviations, clipped
    to [-1, 1] (the real and imaginary parts, for complex input); `dtype` as `cov`'s."""
    if dtype is not None:
        _inexact_dtype_argument("corrcoef", dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return U.true_divide(c, c)
    std = U.sqrt(real(diagonal(c)))
    c = U.true_divide(U.true_divide(c, std[:, None]), std[None, :])
    if is_complex(dtype_of(c)):
        return lax.complex(U.clip(real(c), -1, 1), U.clip(imag(c), -1, 1))
    return U.clip(c, -1, 1)
