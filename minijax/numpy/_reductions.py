"""Reductions and scans: sum prod max min mean var std all any argmax argmin, cumsum ...

All take NumPy's `axis` (None, an int or a tuple, negative counting from the end) and
`keepdims`. Result dtypes follow JAX:

* `sum`/`prod`/`cumsum`/`cumprod` of bool or of a narrow integer type accumulate in the
  default integer (int32, or uint32 for unsigned), so `sum(bool_array)` counts;
* `mean`/`var`/`std` of integers are float32;
* half-precision floats are accumulated in float32 and rounded back once;
* results are never weakly typed, even when the input was.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import lax
from ._promotion import (as_operand, shape_of, dtype_of, is_weak, convert,
                         canonicalize_axes, canonicalize_axis, is_bool, is_integer,
                         is_inexact, is_complex, is_half_float, broadcast_to_shape)
from ._dtypes import canonicalize_dtype
from ._promotion import promote_dtypes_inexact
from ._ufuncs import _as_bool
from ..frontend.eager_jit import jitted_eagerly


def strong(fname, x):
    """`x` with its weak type dropped (reductions always give strong results)."""
    if is_weak(x):
        return lax.convert_element_type(x, dtype_of(x), weak_type=False)
    return x


def _no_out(fname, out):
    if out is not None:
        raise NotImplementedError(f"{fname}: the out argument is not supported (JAX "
                                  f"arrays are immutable)")


def _masked(fname, x, where, identity):
    """`x` with the elements that `where` leaves out replaced by the reduction's
    `identity`, so that they do not count (`where` broadcasts to x's shape)."""
    if where is None:
        return x
    mask = broadcast_to_shape(fname, _where_mask(fname, where), shape_of(x))
    return lax.select(mask, x, lax.full(shape_of(x), identity, dtype_of(x)))


def _where_mask(fname, where):
    where = as_operand(fname, where)
    if not is_bool(dtype_of(where)):
        raise ValueError(f"jnp.{fname}: where must be None or a boolean array; got "
                         f"where.dtype={dtype_of(where)!r}.")
    return where


def _mask_count(fname, shape, axes, where, dtype):
    """How many elements each reduction covers: the static count, or with `where`
    the number of True mask entries (a traced array)."""
    if where is None:
        return convert(fname, _count(shape, axes), dtype)
    mask = broadcast_to_shape(fname, _where_mask(fname, where), shape)
    return lax.reduce_sum(convert(fname, mask, dtype), axes)


def _keep_dims(x, axes, keepdims):
    return lax.expand_dims(x, axes) if keepdims and axes else x


def _accumulation_dtype(dtype):
    """What `sum` of `dtype` returns: narrow integers and bools widen to 32 bits."""
    if is_bool(dtype):
        return np.dtype(np.int32)
    if is_integer(dtype) and dtype.itemsize < 4:
        return np.dtype(np.uint32 if dtype.kind == "u" else np.int32)
    return dtype


def _compute_dtype(dtype):
    """Half floats are accumulated in float32 (as JAX does), everything else as is."""
    return np.dtype(np.float32) if is_half_float(dtype) else dtype


def _reduce(fname, reducer, a, axis, dtype, keepdims, initial, combine, widen=True,
            where=None, identity=None):
    a = as_operand(fname, a)
    ndim = len(shape_of(a))
    axes = canonicalize_axes(fname, axis, ndim)
    in_dtype = dtype_of(a)
    if dtype is not None:
        out_dtype = canonicalize_dtype(dtype, fname)
    else:
        out_dtype = _accumulation_dtype(in_dtype) if widen else in_dtype
    compute = _compute_dtype(out_dtype)
    x = _masked(fname, strong(fname, convert(fname, a, compute)), where, identity)
    out = reducer(x, axes)
    if initial is not None:
        out = combine(out, convert(fname, initial, compute))
    out = convert(fname, out, out_dtype)
    return _keep_dims(out, axes, keepdims)


@jitted_eagerly("axis", "dtype", "keepdims", "promote_integers")
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    _no_out("sum", out)
    return _reduce("sum", lax.reduce_sum, a, axis, dtype, keepdims, initial, lax.add,
                   widen=promote_integers, where=where, identity=0)


@jitted_eagerly("axis", "dtype", "keepdims", "promote_integers")
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    _no_out("prod", out)
    return _reduce("prod", lax.reduce_prod, a, axis, dtype, keepdims, initial, lax.mul,
                   widen=promote_integers, where=where, identity=1)


def _extremum(fname, reducer, combine, lowest):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(fname, out)
        a = as_operand(fname, a)
        shape = shape_of(a)
        axes = canonicalize_axes(fname, axis, len(shape))
        if initial is None and builtins.any(shape[i] == 0 for i in axes):
            raise ValueError(f"{fname}: zero-size array (shape {shape}) to a reduction "
                             f"over axes {axes}, which has no identity; pass initial=")
        if initial is None and where is not None:
            raise ValueError(f"reduction operation {fname} does not have an identity, so "
                             f"to use a where mask one has to specify 'initial'")
        return _reduce(fname, reducer, a, axis, None, keepdims, initial, combine,
                       widen=False, where=where, identity=_extreme_value(a, lowest))
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}` along `axis` (None: all axes)."
    return jitted_eagerly("axis", "keepdims")(fn)


def _extreme_value(a, lowest):
    """The value below (`lowest`) or above every other of a's dtype: a max's or a
    min's identity."""
    dtype = dtype_of(a)
    if is_bool(dtype):
        return not lowest
    if is_integer(dtype):
        info = np.iinfo(dtype)
        return info.min if lowest else info.max
    return -np.inf if lowest else np.inf


max = amax = _extremum("max", lax.reduce_max, lax.max, lowest=True)
min = amin = _extremum("min", lax.reduce_min, lax.min, lowest=False)


@jitted_eagerly("axis", "keepdims")
def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: `max - min` along `axis`."""
    _no_out("ptp", out)
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def _boolean_reduction(fname, reducer, identity):
    def fn(a, axis=None, out=None, keepdims=False, where=None):
        _no_out(fname, out)
        # JAX casts the operand to a strong bool, so the result is strong even for a
        # weak operand.
        a = convert(fname, _as_bool(fname, as_operand(fname, a)), np.bool_)
        a = _masked(fname, a, where, identity)
        axes = canonicalize_axes(fname, axis, len(shape_of(a)))
        return _keep_dims(reducer(a, axes), axes, keepdims)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`: whether {fname} element is true along `axis`."
    return jitted_eagerly("axis", "keepdims")(fn)


all = _boolean_reduction("all", lax.reduce_and, True)
any = _boolean_reduction("any", lax.reduce_or, False)


@jitted_eagerly("axis", "keepdims")
def count_nonzero(a, axis=None, keepdims=False):
    return sum(_as_bool("count_nonzero", a), axis=axis, keepdims=keepdims)


def _count(shape, axes):
    return math.prod(shape[i] for i in axes)


def _mean_dtypes(fname, a, dtype):
    a = as_operand(fname, a)
    if dtype is None:
        out_dtype = dtype_of(a) if is_inexact(dtype_of(a)) else np.dtype(np.float32)
    else:
        out_dtype = canonicalize_dtype(dtype, fname)
    return a, out_dtype, _compute_dtype(out_dtype)


@jitted_eagerly("axis", "dtype", "keepdims")
def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """`jnp.mean`: the sum divided by the count, in float32 for integer inputs."""
    _no_out("mean", out)
    a, out_dtype, compute = _mean_dtypes("mean", a, dtype)
    axes = canonicalize_axes("mean", axis, len(shape_of(a)))
    x = _masked("mean", strong("mean", convert("mean", a, compute)), where, 0)
    total = lax.reduce_sum(x, axes)
    out = lax.div(total, _mask_count("mean", shape_of(a), axes, where, compute))
    return _keep_dims(convert("mean", out, out_dtype), axes, keepdims)


@jitted_eagerly("axis", "dtype", "keepdims")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """`jnp.var`: the mean squared deviation (`|x - mean|**2` for complex `x`, a real
    result unless `dtype` is complex), divided by `count - ddof`; NaN where that
    divisor is not positive. `mean=` gives the mean instead of computing it (see
    `given_mean`)."""
    _no_out("var", out)
    if correction is not None:
        ddof = correction
    a, out_dtype, compute = var_dtypes("var", a, dtype)
    shape = shape_of(a)
    axes = canonicalize_axes("var", axis, len(shape))
    x = strong("var", convert("var", a, compute))
    if mean is not None:
        centre = given_mean("var", mean, shape, compute)
    else:
        centre = lax.div(lax.reduce_sum(_masked("var", x, where, 0), axes),
                         _mask_count("var", shape, axes, where, compute))
        if axes and shape:
            kept = tuple(i for i in range(len(shape)) if i not in axes)
            centre = lax.broadcast_in_dim(centre, shape, kept)
    deviation = lax.sub(x, centre)
    squares = (lax.real(lax.mul(deviation, lax.conj(deviation))) if is_complex(compute)
               else lax.square(deviation))
    total = lax.reduce_sum(_masked("var", squares, where, 0), axes)
    # `ddof` is an operand, as in JAX (traced in an eager call): a traced one (or a
    # mask's count) makes a divisor that is not positive NaN by `select`.
    if where is None and isinstance(ddof, (int, float, np.number)):
        divisor = _count(shape, axes) - ddof  # static: decided here
        divisor = convert("var", divisor if divisor > 0 else np.nan, dtype_of(total))
    else:
        count = _mask_count("var", shape, axes, where, dtype_of(total))
        divisor = lax.sub(count, convert("var", ddof, dtype_of(total)))
        positive = lax.gt(divisor, lax.full_like(divisor, 0))
        divisor = lax.select(positive, divisor, lax.full_like(divisor, np.nan))
    out = lax.div(total, divisor)
    return _keep_dims(convert("var", out, out_dtype), axes, keepdims)


def given_mean(fname, mean, shape, compute):
    """A `mean=` the caller computed (NumPy 2's and JAX's keyword), broadcast to the
    array's `shape` in the dtype the variance is computed in: the mean taken with
    `keepdims=True`, or anything of the array's rank, or a scalar, that broadcasts."""
    centre = strong(fname, convert(fname, as_operand(fname, mean), compute))
    given = shape_of(centre)
    if given and len(given) != len(shape):
        raise TypeError(f"{fname}: mean must have the array's {len(shape)} dimensions (as "
                        f"the mean taken with keepdims=True has) or none, got shape {given}")
    return broadcast_to_shape(fname, centre, shape)


def var_dtypes(fname, a, dtype):
    """`a` as an operand, the variance's dtype and the dtype to compute in: a complex
    `a` is computed complex and gives a real variance, unless `dtype` is complex."""
    a, out_dtype, compute = _mean_dtypes(fname, a, dtype)
    if is_complex(dtype_of(a)):
        if dtype is None:
            out_dtype = np.dtype(np.float64 if compute == np.complex128 else np.float32)
        elif not is_complex(out_dtype):
            raise ValueError(f"{fname}: a real dtype for the variance of complex values "
                             f"is not supported (as in JAX: NumPy's meaning is unclear)")
    return a, out_dtype, compute


@jitted_eagerly("axis", "dtype", "keepdims")
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """`jnp.std`: the square root of `var`."""
    v = var(a, axis, dtype, out, ddof, keepdims=False, where=where, mean=mean,
            correction=correction)
    v = lax.sqrt(v)
    axes = canonicalize_axes("std", axis, len(shape_of(as_operand("std", a))))
    return _keep_dims(v, axes, keepdims)


@jitted_eagerly("axis", "returned", "keepdims")
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """`jnp.average`: the mean, or `sum(a * w) / sum(w)`; 1-d weights apply along a
    single `axis`. With `returned`, also the sum of the weights."""
    from ._creation import full_like  # not at the top: _creation imports this module (a cycle)
    a = as_operand("average", a)
    shape = shape_of(a)
    if weights is None:
        result = mean(a, axis, keepdims=keepdims)
        axes = canonicalize_axes("average", axis, len(shape))
        return (result, full_like(result, _count(shape, axes))) if returned else result
    a, w = promote_dtypes_inexact("average", a, weights)
    w_shape = shape_of(w)
    if w_shape != shape:
        if axis is None or not isinstance(axis, int):
            raise ValueError(f"average: weights of shape {w_shape} differ from a's shape "
                             f"{shape}; pass a single axis for 1-d weights")
        axis_ = canonicalize_axis("average", axis, len(shape))
        if w_shape != (shape[axis_],):
            raise ValueError(f"average: 1-d weights must have the length {shape[axis_]} of "
                             f"axis {axis}, got shape {w_shape}")
        w = lax.broadcast_in_dim(w, shape, (axis_,))
    total_weight = sum(w, axis, keepdims=keepdims)
    result = lax.div(sum(lax.mul(a, w), axis, keepdims=keepdims), total_weight)
    return (result, total_weight) if returned else result


def _arg_extremum(fname, op):
    def fn(a, axis=None, out=None, keepdims=False):
        _no_out(fname, out)
        a = as_operand(fname, a)
        shape = shape_of(a)
        if axis is None:
            if builtins.any(n == 0 for n in shape):
                raise ValueError(f"{fname}: attempt to get {fname} of an empty sequence")
            flat = lax.reshape(a, (math.prod(shape),)) if len(shape) != 1 else a
            if not shape:
                flat = lax.reshape(a, (1,))
            out = op(flat, 0, np.int32)
            return lax.reshape(out, (1,) * len(shape)) if keepdims else out
        axis = canonicalize_axis(fname, axis, len(shape))
        if shape[axis] == 0:
            raise ValueError(f"{fname}: attempt to get {fname} of an empty sequence "
                             f"(axis {axis} of shape {shape})")
        out = op(a, axis, np.int32)
        return lax.expand_dims(out, (axis,)) if keepdims else out
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`: int32 index of the first extremum along `axis`."
    return jitted_eagerly("axis", "keepdims")(fn)


argmax = _arg_extremum("argmax", lax.argmax)
argmin = _arg_extremum("argmin", lax.argmin)


def _cumulative(fname, scan):
    def fn(a, axis=None, dtype=None, out=None):
        _no_out(fname, out)
        a = as_operand(fname, a)
        shape = shape_of(a)
        if axis is None:
            a = lax.reshape(a, (math.prod(shape),))
            axis = 0
        else:
            axis = canonicalize_axis(fname, axis, len(shape))
        # Unlike sum, a scan keeps narrow integer types; only bools become int32.
        out_dtype = (canonicalize_dtype(dtype, fname) if dtype is not None
                     else np.dtype(np.int32) if is_bool(dtype_of(a)) else dtype_of(a))
        x = strong(fname, convert(fname, a, out_dtype))
        return scan(x, axis)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}` along `axis` (None: over the flattened array)."
    return jitted_eagerly("axis", "dtype")(fn)


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)


__all__ = ["sum", "prod", "max", "amax", "min", "amin", "ptp", "all", "any",
           "count_nonzero", "mean", "var", "std", "average", "argmax", "argmin",
           "cumsum", "cumprod"]
