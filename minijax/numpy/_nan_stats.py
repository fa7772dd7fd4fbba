"""NaN-aware statistics: `nanvar`/`nanstd`, `nanquantile`/`nanpercentile`/`nanmedian`,
`nanargmax`/`nanargmin`, `nancumsum`/`nancumprod`; and `quantile`/`percentile`/
`median`, which share the quantiles' one implementation (a NaN makes the result NaN).

Each treats a NaN as a missing value. The reductions count only the present values
(a slice with nothing left, or with `count - ddof <= 0`, gives NaN, as in JAX); the
arg-reductions give -1 for an all-NaN slice; the scans carry the running value past
a NaN. Quantiles sort each slice (NaNs sort last), so the present values are the
first `count` of it, and interpolate at a position computed from that count: the
count may differ per slice, so the two neighbours are gathered with
`take_along_axis` rather than sliced statically.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import (as_operand, shape_of, dtype_of, like, canonicalize_axes,
                         convert, is_inexact, promote_dtypes_inexact)
from ._reductions import _mean_dtypes, strong
from ..frontend.config_flags import dtype_promotion
from . import _reductions as R
from . import _ufuncs as U
from ._classify import isnan
from ._extras import nanmean
from ._shape import reshape, transpose
from ._take import take_along_axis
from ..ir.types import is_complex

__all__ = ["quantile", "percentile", "median", "nanvar", "nanstd", "nanquantile", "nanpercentile", "nanmedian", "nanargmax",
           "nanargmin", "nancumsum", "nancumprod"]


@jitted_eagerly("axis", "dtype", "keepdims")
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None):
    """The variance of the non-NaN elements, divided by `count - ddof` (NaN where that
    is not positive). Complex inputs give a real variance. `mean=` gives the mean of
    the non-NaN elements instead of computing it (as `var`'s)."""
    R._no_out("nanvar", out)
    a, out_dtype, compute = R.var_dtypes("nanvar", a, dtype)
    x = strong("nanvar", convert("nanvar", a, compute))
    missing = isnan(x)
    if where is not None:  # what the mask leaves out counts as missing
        missing = U.logical_or(missing, U.logical_not(where))
        x = U.where(missing, like(x, np.nan), x)
    centre = (nanmean(x, axis, keepdims=True) if mean is None
              else R.given_mean("nanvar", mean, shape_of(x), compute))
    centred = U.where(missing, like(x, 0), U.subtract(x, centre))
    squares = (lax.real(lax.mul(centred, lax.conj(centred))) if is_complex(compute)
               else lax.square(centred))
    total = R.sum(squares, axis, keepdims=keepdims)
    count = U.subtract(R.sum(U.logical_not(missing), axis, keepdims=keepdims), ddof)
    empty = lax.le(count, like(count, 0))
    divisor = convert("nanvar", U.where(empty, like(count, 1), count), dtype_of(total))
    result = U.where(empty, like(total, np.nan), lax.div(total, divisor))
    return convert("nanvar", result, out_dtype)


@jitted_eagerly("axis", "dtype", "keepdims")
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None):
    """The square root of `nanvar`."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _as_last_axis(fname, a, axis):
    """`a` with the reduced axes flattened into one last axis, and the reduced axes."""
    dims = shape_of(a)
    axes = canonicalize_axes(fname, axis, len(dims))
    rest = [i for i in range(len(dims)) if i not in axes]
    a = reshape(transpose(a, rest + list(axes)), [dims[i] for i in rest] + [-1])
    return a, axes


def _quantile(fname, a, q, axis, out, overwrite_input, method, keepdims, squash_nans,
              weights=None):
    """Quantiles at probabilities `q` (a scalar or 1-d array, possibly traced); the
    result's leading axis is q's. With `squash_nans` only the non-NaN elements count;
    without, a NaN anywhere in a slice makes that slice's quantiles NaN. `weights`
    (method 'inverted_cdf' only, as in NumPy and JAX) weigh each element."""
    if out is not None or overwrite_input:
        raise ValueError(f"{fname} does not support overwrite_input=True or out= "
                         f"(JAX's arrays are immutable)")
    if method not in _METHODS:
        raise ValueError(f"{fname}: method must be one of {_METHODS}, got {method!r}")
    a = as_operand(fname, a)
    q = as_operand(fname, q)
    if is_complex(dtype_of(a)) or is_complex(dtype_of(q)):
        raise ValueError(f"{fname} does not support complex input")
    if dtype_promotion.value == "strict":
        # JAX makes each inexact on its own, then computes with q in a's dtype; the
        # joint promotion below would refuse an int `a` with a float `q`.
        (a,), (q,) = promote_dtypes_inexact(fname, a), promote_dtypes_inexact(fname, q)
        q = convert(fname, q, dtype_of(a))
    else:
        a, q = promote_dtypes_inexact(fname, a, q)
    q = strong(fname, q)
    if len(shape_of(q)) > 1:
        raise ValueError(f"{fname}: q must be a scalar or 1-d, got shape {shape_of(q)}")
    in_shape = shape_of(a)
    if weights is not None:
        weights = _weights_like(fname, a, as_operand(fname, weights), axis, method)
    elif method == "inverted_cdf":
        weights = lax.full_like(a, 1)
    flat, axes = _as_last_axis(fname, a, axis)
    if weights is None:
        ordered = lax.sort(flat, dimension=len(shape_of(flat)) - 1)
    else:
        flat_weights = _as_last_axis(fname, weights, axis)[0]
        if not squash_nans:     # a slice with a NaN is all NaN (its weights stay put)
            flat = U.where(R.any(isnan(flat), axis=-1, keepdims=True), like(flat, np.nan), flat)
        ordered, ordered_weights = lax.sort((flat, flat_weights),
                                            dimension=len(shape_of(flat)) - 1, num_keys=1)
    present = U.logical_not(isnan(ordered))
    if squash_nans:     # NaNs sort last: the present values are the first `count`
        count = R.sum(present, axis=-1, keepdims=True, dtype=dtype_of(q))
    else:
        count = lax.full(shape_of(ordered)[:-1] + (1,), shape_of(ordered)[-1], dtype_of(q))
    batch = shape_of(count)  # the kept axes, then 1
    q_dims = shape_of(q)
    q_b = lax.broadcast_in_dim(q, q_dims + batch, tuple(range(len(q_dims))))
    count_b = lax.broadcast_in_dim(count, q_dims + batch,
                                   tuple(range(len(q_dims), len(q_dims) + len(batch))))
    last = lax.sub(count_b, like(count_b, 1))
    pos = lax.mul(q_b, last)
    low, high = lax.floor(pos), lax.ceil(pos)
    high_weight = lax.sub(pos, low)
    zero = like(low, 0)
    low_i = convert(fname, lax.max(zero, lax.min(low, last)), np.int32)
    high_i = convert(fname, lax.max(zero, lax.min(high, last)), np.int32)
    table = lax.broadcast_in_dim(ordered, q_dims + shape_of(ordered),
                                 tuple(range(len(q_dims), len(q_dims) + len(batch))))
    if method == "inverted_cdf":
        result = _inverted_cdf(ordered, ordered_weights, present, q_b, last, table,
                               squash_nans)
        return _quantile_result(result, dtype_of(a), in_shape, axes, q_dims, keepdims)
    low_value = take_along_axis(table, low_i, axis=-1)
    high_value = take_along_axis(table, high_i, axis=-1)
    if method == "linear":
        result = lax.add(lax.mul(low_value, lax.sub(like(high_weight, 1), high_weight)),
                         lax.mul(high_value, high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "midpoint":
        result = lax.mul(lax.add(low_value, high_value), like(low_value, 0.5))
    else:
        result = lax.select(lax.le(high_weight, like(high_weight, 0.5)), low_value,
                            high_value)
    if not squash_nans:
        any_nan = lax.broadcast_in_dim(R.any(U.logical_not(present), axis=-1, keepdims=True),
                                       shape_of(result),
                                       tuple(range(len(q_dims), len(q_dims) + len(batch))))
        result = U.where(any_nan, like(result, np.nan), result)
    return _quantile_result(result, dtype_of(a), in_shape, axes, q_dims, keepdims)


def _quantile_result(result, dtype, in_shape, axes, q_dims, keepdims):
    """The quantiles (q's axes, the kept axes, 1) in `dtype`, the reduced axes dropped
    or, with `keepdims`, of size 1."""
    result = lax.reshape(convert("quantile", result, dtype), shape_of(result)[:-1])
    if keepdims:
        kept = [1 if i in axes else n for i, n in enumerate(in_shape)]
        result = lax.reshape(result, q_dims + tuple(kept))
    return result


def _weights_like(fname, a, weights, axis, method):
    """`weights` checked as JAX checks them and broadcast to `a`'s shape."""
    if is_complex(dtype_of(weights)):
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  f"'inverted_cdf' supports weights.")
    weights = convert(fname, promote_dtypes_inexact(fname, a, weights)[1], dtype_of(a))
    if shape_of(weights) == shape_of(a):
        return weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    axes = canonicalize_axes(fname, axis, len(shape_of(a)))
    if isinstance(axis, (tuple, list)):     # in the order given, as JAX reads them
        axes = tuple(a_ % len(shape_of(a)) for a_ in axis)
    reduced = tuple(shape_of(a)[i] for i in axes)
    if shape_of(weights) != reduced:
        raise ValueError(f"Weights shape {shape_of(weights)} must match reduction axes "
                         f"{reduced}")
    return lax.broadcast_in_dim(weights, shape_of(a), axes)


def _inverted_cdf(ordered, weights, present, q_b, last, table, squash_nans):
    """NumPy's 'inverted_cdf': the first sorted element whose cumulative weight reaches
    q times the total. Negative or NaN weights make the slice's quantile NaN, as NaN
    data does (all of it, for the nan- functions)."""
    zero = like(weights, 0)
    bad = U.logical_or(lax.lt(weights, zero), isnan(weights))
    clean = U.where(U.logical_or(bad, U.logical_not(present)), zero, weights)
    cumulative = R.cumsum(clean, axis=-1)
    total = lax.slice_in_dim(cumulative, shape_of(cumulative)[-1] - 1, None, axis=-1)
    target = lax.mul(q_b, _lead(total, q_b))
    below = U.less(_lead(cumulative, q_b), target)
    index = R.sum(below, axis=-1, keepdims=True, dtype=np.int32)
    limit = convert("quantile", last, np.int32)
    index = lax.max(like(index, 0), lax.min(index, limit))
    result = take_along_axis(table, index, axis=-1)
    any_bad = R.any(bad, axis=-1, keepdims=True)
    missing = (U.logical_not(R.any(present, axis=-1, keepdims=True)) if squash_nans
               else R.any(U.logical_not(present), axis=-1, keepdims=True))
    nan_out = _lead(U.logical_or(any_bad, missing), q_b)
    return U.where(nan_out, like(result, np.nan), result)


def _lead(x, like_q):
    """`x` (the kept axes, n) broadcast under q's leading axes."""
    lead = len(shape_of(like_q)) - len(shape_of(x))
    return lax.broadcast_in_dim(x, shape_of(like_q)[:lead] + shape_of(x),
                                tuple(range(lead, lead + len(shape_of(x)))))


@jitted_eagerly("axis", "overwrite_input", "keepdims", "method")
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """Quantiles at probabilities `q` (a scalar or 1-d array, possibly traced); a NaN
    anywhere in a slice gives NaN, as in JAX."""
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims,
                     squash_nans=False, weights=weights)


@jitted_eagerly("axis", "overwrite_input", "keepdims", "method")
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """`quantile` at `q / 100`."""
    return _percentile("percentile", a, q, axis, out, overwrite_input, method, keepdims,
                       squash_nans=False, weights=weights)


@jitted_eagerly("axis", "overwrite_input", "keepdims")
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


@jitted_eagerly("axis", "overwrite_input", "keepdims", "method")
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """Quantiles of the non-NaN elements at probabilities `q`."""
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims,
                     squash_nans=True, weights=weights)


@jitted_eagerly("axis", "overwrite_input", "keepdims", "method")
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """`nanquantile` at `q / 100`."""
    return _percentile("nanpercentile", a, q, axis, out, overwrite_input, method, keepdims,
                       squash_nans=True, weights=weights)


def _percentile(name, a, q, *rest, squash_nans: bool, weights=None):
    q, = promote_dtypes_inexact(name, as_operand(name, q))     # as JAX: before `/ 100`
    return _quantile(name, a, U.true_divide(q, 100.0), *rest,
                     squash_nans=squash_nans, weights=weights)


@jitted_eagerly("axis", "overwrite_input", "keepdims")
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the non-NaN elements."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def _nan_arg_extremum(fname, arg_extremum, fill):
    def fn(a, axis=None, out=None, keepdims=False):
        a = as_operand(fname, a)
        if not is_inexact(dtype_of(a)):
            return arg_extremum(a, axis, out, keepdims)
        missing = isnan(a)
        index = arg_extremum(U.where(missing, like(a, fill), a), axis, out, keepdims)
        return U.where(R.all(missing, axis=axis, keepdims=keepdims), like(index, -1), index)
    fn.__name__ = fname
    fn.__doc__ = (f"`jnp.{fname}`: `{arg_extremum.__name__}` ignoring NaNs; -1 where a "
                  f"slice is all NaN.")
    # JAX jits its body (static axis and keepdims): an eager call is one program.
    return jitted_eagerly("axis", "keepdims")(fn)


nanargmax = _nan_arg_extremum("nanargmax", R.argmax, -np.inf)
nanargmin = _nan_arg_extremum("nanargmin", R.argmin, np.inf)


def _nan_cumulative(fname, scan, identity):
    def fn(a, axis=None, dtype=None, out=None):
        a = as_operand(fname, a)
        if is_inexact(dtype_of(a)):
            a = U.where(isnan(a), like(a, identity), a)
        return scan(a, axis, dtype, out)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`: `{scan.__name__}` with NaNs counted as {identity}."
    return jitted_eagerly("axis", "dtype")(fn)


nancumsum = _nan_cumulative("nancumsum", R.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", R.cumprod, 1)
