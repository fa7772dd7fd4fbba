"""The ops of `minijax.lax`: one thin function per primitive, with `jax.lax`'s names and signatures.

Unlike `minijax.numpy`, these functions do not promote dtypes or broadcast: operands
must already agree, as in `jax.lax`. The one convenience (also `jax.lax`'s) is that a
Python scalar takes the dtype of the array it meets, weakly typed. Every function
here ends in `bind`, so it works eagerly and under every transformation.
"""
from __future__ import annotations

import builtins
import operator
from typing import Sequence

import jax
import numpy as np
from jax import tree_util

from ..ir import primitives as P
from ..ir import random_primitives as R, special_primitives as S
from ..ir.trace import bind, aval_of, Tracer, MinijaxError
from ..transforms.ad_util import window_inside
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.types import (canonical_dtype, is_float, is_inexact, is_integer, is_key,
                        dtype_of_jax, dtype_long_name)
# The contractions and their precision live in lax_dot.py; `minijax.lax` and the
# modules that use this one as `lax` read them here.
from .lax_dot import Precision, dot_general, dot  # noqa: F401
from . import int_params as ip

_PY_SCALARS = (bool, int, float, complex)


def _dtype_of(x):
    return aval_of(x).dtype


def _scalar_like(value, like):
    """A Python scalar operand of an op on `like`: a weak rank-0 value of its dtype.

    When the scalar's own weak type already has that dtype (a float meeting f32) it is
    passed as is, so tracing records an inline literal rather than a conversion."""
    dtype = _dtype_of(like)
    if aval_of(value).dtype == dtype:
        return value
    return convert_element_type(value, dtype, weak_type=True)


def _match_scalars(*args):
    arrays = [a for a in args if not isinstance(a, _PY_SCALARS)]
    if not arrays:
        return args
    return tuple(_scalar_like(a, arrays[0]) if isinstance(a, _PY_SCALARS) else a
                 for a in args)


def _unary(prim):
    def op(x):
        return bind(prim, x)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` (the `{prim.name}` primitive)."
    return op


# A Python scalar operand of a lax function has its own weak dtype, as in JAX: it is
# not converted to the other operand's dtype, so `lax.add(f16_array, 2.0)` is an error.
_PY_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int32),
                     float: np.dtype(np.float32), complex: np.dtype(np.complex64)}

# The jnp function JAX's error message suggests for each lax binary op.
_PROMOTING_NAMES = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
    "max": "maximum", "min": "minimum", "atan2": "arctan2", "nextafter": "nextafter",
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
    "ge": "greater_equal", "shift_left": "left_shift",
    "shift_right_arithmetic": "right_shift"}


def _operand_dtype(x):
    scalar_dtype = _PY_SCALAR_DTYPES.get(type(x))
    if scalar_dtype is not None:
        return scalar_dtype
    # An array's or tracer's own dtype, canonicalized, without building its aval (this
    # runs on every binary op); keys and anything unusual ask `aval_of`.
    dtype = getattr(x, "dtype", None)
    return canonical_dtype(dtype) if isinstance(dtype, np.dtype) else aval_of(x).dtype


def check_same_dtypes(name: str, *args):
    """JAX's check that a lax function's operands share one dtype (weak types aside;
    a Python scalar counts as its own weak dtype)."""
    # The usual case, operands holding the very same NumPy dtype, is settled by reading
    # `.dtype` (equal dtypes canonicalize equally), without building avals.
    # Anything else -- Python scalars, non-canonical or differing dtypes -- is decided
    # on canonical dtypes below.
    first = getattr(args[0], "dtype", None)
    if isinstance(first, np.dtype):
        for other in args[1:]:
            if getattr(other, "dtype", None) is not first:
                break
        else:
            return
    dtypes = [_operand_dtype(a) for a in args]
    if any(d != dtypes[0] for d in dtypes[1:]):
        promoting = _PROMOTING_NAMES.get(name)
        tip = "" if promoting is None else (
            f" (Tip: jnp.{promoting} is a similar function that does automatic type "
            f"promotion on inputs).")
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(map(str, dtypes))}.{tip}")


def _binary(prim):
    def op(x, y):
        # `check_same_dtypes`'s usual case, two operands of the very same NumPy dtype,
        # settled here without a call: binary ops are a good part of every trace.
        dtype = getattr(x, "dtype", None)
        if getattr(y, "dtype", None) is not dtype or not isinstance(dtype, np.dtype):
            check_same_dtypes(prim.name, x, y)
        # Past the check a Python scalar already has the other operand's dtype (its
        # own weak one), so there is nothing to convert.
        return bind(prim, x, y)
    op.__name__ = prim.name
    if prim is P.mul_p:      # JAX's `mul` alone takes `out_dtype` (in the same frame)
        def op(x, y, *, out_dtype=None):
            if out_dtype is not None:
                from .lax_extras import mul_with_out_dtype
                return mul_with_out_dtype(x, y, out_dtype)
            dtype = getattr(x, "dtype", None)
            if getattr(y, "dtype", None) is not dtype or not isinstance(dtype, np.dtype):
                check_same_dtypes(prim.name, x, y)
            return bind(prim, x, y)
        op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` of two operands of equal dtype."
    return op


def pow(x, y):
    """Elementwise `x ** y`: `x` inexact, `y` inexact of `x`'s dtype or an integer."""
    x_dtype, y_dtype = _operand_dtype(x), _operand_dtype(y)
    if not (is_inexact(x_dtype) and (is_integer(y_dtype) or y_dtype == x_dtype)):
        raise TypeError(f"the first argument to pow must have an inexact dtype (float or "
                        f"complex), and the second argument must have an inexact or integer "
                        f"dtype, and two inexact dtypes must match, but got {x_dtype} and "
                        f"{y_dtype} respectively.")
    if isinstance(x, _PY_SCALARS) and not isinstance(y, _PY_SCALARS):
        x = convert_element_type(x, x_dtype)
    # An integer exponent stays integer (pow_p takes it, as JAX's does).
    return bind(P.pow_p, *_match_scalars(x, y))


neg, sin, cos, tan = map(_unary, (P.neg_p, P.sin_p, P.cos_p, P.tan_p))
asin, acos, atan = map(_unary, (P.asin_p, P.acos_p, P.atan_p))
sinh, cosh, tanh = map(_unary, (P.sinh_p, P.cosh_p, P.tanh_p))
asinh, acosh, atanh = map(_unary, (P.asinh_p, P.acosh_p, P.atanh_p))
exp, exp2, log, log1p, expm1 = map(_unary, (P.exp_p, P.exp2_p, P.log_p, P.log1p_p, P.expm1_p))
log2 = _unary(P.log2_p)
logistic, sqrt, rsqrt, cbrt, erf = map(_unary, (P.logistic_p, P.sqrt_p, P.rsqrt_p,
                                                 P.cbrt_p, P.erf_p))
floor, ceil, abs, sign, square = map(_unary, (P.floor_p, P.ceil_p, P.abs_p, P.sign_p,
                                              P.square_p))
one_minus_square = _unary(P.one_minus_square_p)     # jax.lax's since JAX 0.11
is_finite = _unary(P.is_finite_p)
bitwise_not = _unary(P.not_p)
stop_gradient_p = P.stop_gradient_p

add, sub, mul, div, rem = map(_binary, (P.add_p, P.sub_p, P.mul_p, P.div_p, P.rem_p))
max, min, atan2 = map(_binary, (P.max_p, P.min_p, P.atan2_p))
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (P.and_p, P.or_p, P.xor_p))
eq, ne, lt, le, gt, ge = map(_binary, (P.eq_p, P.ne_p, P.lt_p, P.le_p, P.gt_p, P.ge_p))


def stop_gradient(x):
    """`x`, with no derivative flowing through it (applied to every leaf of a pytree)."""
    return tree_util.tree_map(lambda leaf: bind(P.stop_gradient_p, leaf), x)


def integer_pow(x, y: int):
    return bind(P.integer_pow_p, x, y=int(y))


def reciprocal(x):
    """1 / x, as JAX writes it: `integer_pow(x, -1)`."""
    return integer_pow(x, -1)


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return bind(P.round_p, x, rounding_method=int(rounding_method))


class KeyConversionError(MinijaxError, ValueError):
    """A key array converted to another dtype, or an array to a key dtype."""


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = canonical_dtype_argument(new_dtype, "convert_element_type")
    aval = aval_of(x)
    if str(new_dtype).startswith("key<"):      # JAX's own key dtype, as `key.dtype` gives
        new_dtype = dtype_of_jax(new_dtype)
    if (is_key(aval.dtype) or is_key(new_dtype)) and aval.dtype != new_dtype:
        # a ValueError in JAX, not the TypeError of a bad operand
        raise KeyConversionError(f"convert_element_type: cannot convert from "
                         f"{dtype_long_name(aval.dtype)} to {dtype_long_name(new_dtype)}: "
                         f"key arrays are opaque; use jax.random.key_data for a key's raw "
                         f"bits and jax.random.wrap_key_data for the reverse")
    # A conversion of an array to the type it already has is no conversion (Python
    # scalars and NumPy values still go through, to become jax.Arrays, as in JAX).
    if isinstance(x, (Tracer, jax.Array)) and aval.dtype == new_dtype and \
            aval.weak_type == weak_type:
        return x
    return bind(P.convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type)


def select_n(which, *cases):
    return bind(P.select_n_p, which, *_match_scalars(*cases))


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (jax.lax.select's argument order)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    check_same_dtypes("clamp", min, x, max)
    return bind(P.clamp_p, *_match_scalars(min, x, max))


# -- shapes --------------------------------------------------------------------------

def broadcast_in_dim(operand, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    return bind(P.broadcast_in_dim_p, operand, shape=tuple(shape),
                broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(operand, sizes: Sequence[int]):
    """Add leading axes of the given sizes."""
    ndim = aval_of(operand).ndim
    shape = tuple(sizes) + aval_of(operand).shape
    return broadcast_in_dim(operand, shape, tuple(range(len(sizes), len(sizes) + ndim)))


def reshape(operand, new_sizes: Sequence[int], dimensions=None):
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return bind(P.reshape_p, operand, new_sizes=ip.shape("reshape", "new_sizes", new_sizes),
                dimensions=None)


def transpose(operand, permutation: Sequence[int]):
    return bind(P.transpose_p, operand,
                permutation=ip.indices("transpose", "permutation", permutation))


def squeeze(array, dimensions: Sequence[int]):
    shape = aval_of(array).shape
    dimensions = ip.distinct_axes("squeeze", dimensions, len(shape))
    if any(shape[d] != 1 for d in dimensions):
        raise ValueError(f"squeeze: cannot squeeze axes {dimensions} of shape {shape}: "
                         f"their size must be one")
    return bind(P.squeeze_p, array, dimensions=dimensions)


def expand_dims(array, dimensions: Sequence[int]):
    ndim = aval_of(array).ndim + len(dimensions)
    return bind(P.expand_dims_p, array,
                dimensions=ip.distinct_axes("expand_dims", dimensions, ndim))


def rev(operand, dimensions: Sequence[int]):
    """`operand` with the order of its elements reversed along each axis in
    `dimensions` (non-negative, distinct)."""
    return bind(P.rev_p, operand, dimensions=ip.indices("rev", "dimensions", dimensions))


def concatenate(operands, dimension: int):
    return bind(P.concatenate_p, *operands,
                dimension=ip.index("concatenate", "dimension", dimension))


def pad(operand, padding_value, padding_config):
    config = tuple(ip.indices("pad", "padding_config", t) for t in padding_config)
    return bind(P.pad_p, operand, *_match_scalars(padding_value, operand)[:1],
                padding_config=config)


def slice(operand, start_indices, limit_indices, strides=None):
    return bind(P.slice_p, operand,
                start_indices=ip.indices("slice", "start_indices", start_indices),
                limit_indices=ip.indices("slice", "limit_indices", limit_indices),
                strides=None if strides is None else ip.indices("slice", "strides", strides))


def _int32_start(index: int):
    """A static start as int32, saturated (the primitive clamps it anyway)."""
    return np.int32(builtins.min(builtins.max(index, -2**31), 2**31 - 1))


def _wrap_negative_indices(fname, indices, shape, allow_negative_indices=True):
    """As jax.lax: a negative start index counts from the end of its axis, once, on
    the axes where `allow_negative_indices` (a bool, or one per axis) is true.

    The dynamic_slice / dynamic_update_slice primitives themselves only clamp (XLA's
    rule, in every backend and pass), so whatever is still out of range after this --
    an index below -size, or any negative index where negatives are not allowed --
    is clamped into the operand. A static negative index (a Python or NumPy integer)
    where negatives are not allowed is a ValueError, as in JAX."""
    if isinstance(allow_negative_indices, (bool, np.bool_)):
        allow_negative_indices = [bool(allow_negative_indices)] * len(shape)
    out = []
    for index, size, allow in zip(indices, shape, allow_negative_indices):
        if isinstance(index, (int, np.integer)):
            if index < 0 and not allow:
                raise ValueError(f"{fname}: index {index} is out of bounds for an axis "
                                 f"of size {size} with allow_negative_indices=False")
            # Wrapped once, not clamped: the primitive clamps, and checkify sees what
            # JAX's sees (x[-5] of a length-3 axis starts at -2).
            out.append(_int32_start(index + size if index < 0 else index))
            continue
        if not is_integer(_dtype_of(index)):
            raise TypeError(f"index arguments to {fname} must be integers, got "
                            f"{np.dtype(_dtype_of(index)).name}")
        index = convert_element_type(index, np.int32)
        if not allow:
            out.append(index)
        elif isinstance(index, Tracer) or np.ndim(index):
            out.append(select(lt(index, 0), add(index, np.int32(size)), index))
        else:
            value = int(index)
            out.append(_int32_start(value + size if value < 0 else value))
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    starts = _wrap_negative_indices("dynamic_slice", start_indices, aval_of(operand).shape,
                                    allow_negative_indices)
    return bind(P.dynamic_slice_p, operand, *starts,
                slice_sizes=ip.indices("dynamic_slice", "slice_sizes", slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    starts = _wrap_negative_indices("dynamic_update_slice", start_indices,
                                    aval_of(operand).shape, allow_negative_indices)
    return bind(P.dynamic_update_slice_p, operand, update, *starts)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    shape = aval_of(operand).shape
    start, limit, _ = builtins.slice(start_index, limit_index).indices(shape[axis])
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, builtins.max(start, limit), stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    size = aval_of(operand).shape[axis]
    index = index + size if index < 0 else index
    if not 0 <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _on_one_axis(ndim, axis, allow_negative_indices):
    # The other axes start at 0, so only `axis` has a say about negative indices.
    allowed = [False] * ndim
    allowed[axis] = allow_negative_indices
    return allowed


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    shape = aval_of(operand).shape
    axis = int(axis)
    starts = [np.int32(0)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=_on_one_axis(
        len(shape), axis, allow_negative_indices))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    ndim = aval_of(operand).ndim
    axis = int(axis)
    starts = [np.int32(0)] * ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=_on_one_axis(
        ndim, axis, allow_negative_indices))


# -- reductions, contractions, scans, creation -----------------------------------------

def _axes(axes, ndim):
    return tuple(sorted(int(a) % ndim for a in axes)) if ndim else tuple(axes)


def _reduction(prim):
    def op(operand, axes):
        return bind(prim, operand, axes=_axes(axes, aval_of(operand).ndim))
    op.__name__ = prim.name
    op.__doc__ = f"`{prim.name}` of `operand` over `axes`."
    return op


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = map(
    _reduction, (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p,
                 P.reduce_and_p, P.reduce_or_p))


def _arg_reduction(prim):
    def op(operand, axis: int, index_dtype):
        axis = ip.index(prim.name, "axis", axis)
        return bind(prim, operand, axes=(axis % aval_of(operand).ndim,),
                    index_dtype=canonical_dtype_argument(index_dtype, prim.name))
    op.__name__ = prim.name
    op.__doc__ = f"The index of the `{prim.name[3:]}` along `axis`, as `index_dtype`."
    return op


argmax, argmin = map(_arg_reduction, (P.argmax_p, P.argmin_p))


def iota(dtype, size: int):
    return broadcasted_iota(dtype, (ip.index("iota", "size", size),), 0)


def broadcasted_iota(dtype, shape, dimension: int):
    return bind(P.iota_p, dtype=canonical_dtype_argument(dtype, "broadcasted_iota"),
                shape=ip.shape("broadcasted_iota", "shape", shape),
                dimension=int(dimension))


def full(shape, fill_value, dtype=None):
    """As JAX's: weak when no dtype is given and `fill_value` is weak."""
    weak_type = dtype is None and aval_of(fill_value).weak_type
    dtype = (aval_of(fill_value).dtype if dtype is None
             else canonical_dtype_argument(dtype, "full"))
    # (A weak Python scalar is broadcast as it is: converted, it would come back strong
    # when run eagerly, as in `full_like`.)
    value = (fill_value if weak_type and isinstance(fill_value, _PY_SCALARS)
             else convert_element_type(fill_value, dtype, weak_type=weak_type))
    if aval_of(value).ndim:
        raise TypeError(f"full needs a scalar fill value, got shape {aval_of(value).shape}")
    try:     # checked here, as the eager program of `(2,)` would serve `(2.0,)`
        shape = ((operator.index(shape),) if isinstance(shape, (int, np.integer))
                 else tuple(map(operator.index, shape)))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like `x` (its shape and dtype unless given; weak if `x` is and no
    dtype is given) filled with `fill_value`."""
    aval = aval_of(x)
    weak_type = dtype is None and (isinstance(x, _PY_SCALARS) or aval.weak_type)
    dtype = aval.dtype if dtype is None else canonical_dtype_argument(dtype, "full_like")
    shape = aval.shape if shape is None else ip.shape("full_like", "shape", shape)
    if weak_type and isinstance(fill_value, _PY_SCALARS):
        # A Python scalar of the result's kind is itself weak of that dtype, and stays
        # weak through XLA; a converted value would come back strong when run eagerly.
        as_kind = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[dtype.kind]
        if aval_of(as_kind(fill_value)).dtype == dtype:
            return broadcast_in_dim(as_kind(fill_value), shape, ())
    value = convert_element_type(fill_value, dtype, weak_type=weak_type)
    return broadcast_in_dim(value, shape, ())


def _cumulative(prim):
    def op(operand, axis: int = 0, reverse: bool = False):
        return bind(prim, operand, axis=int(axis) % aval_of(operand).ndim,
                    reverse=bool(reverse))
    op.__name__ = prim.name
    return op


cumsum, cumprod, cummax, cummin = map(_cumulative, (P.cumsum_p, P.cumprod_p, P.cummax_p,
                                                    P.cummin_p))


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    operands = list(operand) if isinstance(operand, (tuple, list)) else [operand]
    ndim = aval_of(operands[0]).ndim
    outs = bind(P.sort_p, *operands, dimension=ip.index("sort", "dimension", dimension) % ndim,
                is_stable=bool(is_stable), num_keys=ip.index("sort", "num_keys", num_keys))
    return tuple(outs) if isinstance(operand, (tuple, list)) else outs[0]


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    return sort((keys, values), dimension, is_stable, num_keys=1)


class GatherDimensionNumbers:
    """XLA gather dimension numbers, as `jax.lax.GatherDimensionNumbers`."""

    def __init__(self, offset_dims, collapsed_slice_dims, start_index_map):
        self.offset_dims = tuple(offset_dims)
        self.collapsed_slice_dims = tuple(collapsed_slice_dims)
        self.start_index_map = tuple(start_index_map)


class ScatterDimensionNumbers:
    """XLA scatter dimension numbers, as `jax.lax.ScatterDimensionNumbers`."""

    def __init__(self, update_window_dims, inserted_window_dims,
                 scatter_dims_to_operand_dims):
        self.update_window_dims = tuple(update_window_dims)
        self.inserted_window_dims = tuple(inserted_window_dims)
        self.scatter_dims_to_operand_dims = tuple(scatter_dims_to_operand_dims)


def _mode(mode):
    mode = "clip" if mode is None else str(getattr(mode, "name", mode)).lower()
    return {"clip": "clip", "fill": "fill", "fill_or_drop": "fill",
            "promise_in_bounds": "clip"}.get(mode, mode)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """Slices of `operand` at `start_indices`. With mode 'fill', a slice out of bounds
    is `fill_value` (by default NaN, or the most negative integer, or True).

    `unique_indices` and `indices_are_sorted` (here and in the scatters) are promises
    that let XLA choose a faster kernel; the results are the same without them when
    they hold, and minijax does not record them, as `jnp.take` and program imports
    do not."""
    d = dimension_numbers
    slice_sizes = tuple(int(s) for s in slice_sizes)
    mode = _mode(mode)
    out = bind(P.gather_p, operand, start_indices, offset_dims=d.offset_dims,
               collapsed_slice_dims=d.collapsed_slice_dims,
               start_index_map=d.start_index_map, slice_sizes=slice_sizes, mode=mode)
    if fill_value is None or mode != "fill":
        return out
    in_bounds = window_inside(start_indices, aval_of(operand).shape, slice_sizes,
                              d.start_index_map)
    out_shape = aval_of(out).shape
    batch_dims = tuple(i for i in range(len(out_shape)) if i not in d.offset_dims)
    return select(broadcast_in_dim(in_bounds, out_shape, batch_dims), out,
                  full_like(out, fill_value))


def _scatter(prim):
    def op(operand, scatter_indices, updates, dimension_numbers, *,
           indices_are_sorted=False, unique_indices=False, mode=None):
        d = dimension_numbers
        return bind(prim, operand, scatter_indices, updates,
                    update_window_dims=d.update_window_dims,
                    inserted_window_dims=d.inserted_window_dims,
                    scatter_dims_to_operand_dims=d.scatter_dims_to_operand_dims,
                    mode="fill" if mode is None else _mode(mode))
    op.__name__ = prim.name
    return op


scatter = _scatter(P.scatter_p)
scatter_add = _scatter(P.scatter_add_p)
scatter_mul = _scatter(P.scatter_mul_p)
scatter_min = _scatter(P.scatter_min_p)
scatter_max = _scatter(P.scatter_max_p)


# -- special functions (ir/special_primitives.py), in jax.lax's operand orders ---------
lgamma, digamma, erfc = map(_unary, (S.lgamma_p, S.digamma_p, S.erfc_p))
bessel_i0e, bessel_i1e = map(_unary, (S.bessel_i0e_p, S.bessel_i1e_p))
zeta = _binary(S.zeta_p)
polygamma, igamma, igammac, igamma_grad_a = map(_binary, (
    S.polygamma_p, S.igamma_p, S.igammac_p, S.igamma_grad_a_p))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return bind(S.regularized_incomplete_beta_p, *_match_scalars(a, b, x))


# -- bit operations and the float functions of the random samplers (ir/random_primitives.py)
shift_left, shift_right_logical, shift_right_arithmetic, nextafter, random_gamma_grad = map(
    _binary, (R.shift_left_p, R.shift_right_logical_p, R.shift_right_arithmetic_p,
              R.nextafter_p, R.random_gamma_grad_p))
population_count, erf_inv = _unary(R.population_count_p), _unary(R.erf_inv_p)


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of `operand` as `new_dtype` (a narrower dtype adds a
    trailing axis, a wider one consumes the trailing axis)."""
    return bind(R.bitcast_convert_type_p, operand, new_dtype=canonical_dtype_argument(
        new_dtype, "bitcast_convert_type"))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Each float rounded to `exponent_bits`/`mantissa_bits` (kept in its own dtype)."""
    exponent_bits = ip.index("reduce_precision", "exponent_bits", exponent_bits)
    mantissa_bits = ip.index("reduce_precision", "mantissa_bits", mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got "
                         f"{exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    dtype = _dtype_of(operand)
    if not is_float(dtype):
        raise TypeError(f"reduce_precision does not accept dtype {np.dtype(dtype).name}. "
                        f"Accepted dtypes are subtypes of floating.")
    return bind(R.reduce_precision_p, operand, exponent_bits=exponent_bits,
                mantissa_bits=mantissa_bits)
