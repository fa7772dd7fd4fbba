"""Making arrays: `asarray`/`array`, `zeros`/`ones`/`full`/`empty` and their `*_like`,
`arange`, `linspace`, `eye`/`identity`, `tri`/`tril`/`triu`, `meshgrid`.

Constant data (a Python scalar, a list, a NumPy array) becomes a concrete `jax.Array`
right away -- a transfer (`jax.device_put`), which compiles no program. When a
program is being staged (`jit`, `make_jaxpr`; also under a `grad` or `vmap` inside
one, whose trace passes the constant on), the array is then handed to the trace
as JAX's `jnp.asarray` does there: its conversion is bound, so the result is a
tracer, and the staging trace folds the conversion into a constant (or an inline
literal when rank-0) rather than recording an equation. Python control flow on it,
or a shape computed from it, then fails as in JAX.

Filled arrays are one `broadcast_in_dim` of a scalar, and `arange`/`eye`/`tri` are
built from `iota`, so programs stay as lean as JAX's and no large constants appear.
"""
from __future__ import annotations

import builtins
import math

import jax
import numpy as np

from .. import lax
from ..frontend.config_flags import host_transfers_guarded
from ..frontend.eager_jit import jitted_eagerly
from ..ir import root_modes
from ..backends.jax_features import LINSPACE_SCALES_STOP_FIRST
from ..ir.elementwise import convert_element_type_p
from ..ir.trace import Tracer, bind, current_trace, refuse_traced_dims, stages_a_program
from ..ir.types import canonical_dtype, is_float, is_integer
from ._dtypes import canonicalize_dtype, _ScalarType
from ._promotion import (PY_SCALARS, as_operand, shape_of, convert, result_type,
                         result_type_and_weak, to_inexact, broadcast_to_shape,
                         canonicalize_axis, static_int, is_integer, is_inexact,
                         is_half_float, is_weak, like)
from ._promotion import as_array, broadcast_shapes
from ._shape import broadcast_to, concatenate, expand_dims, reshape, stack
from ._ufuncs import add, divide, floor, log10, multiply, power, sign, subtract, where


def _shape_arg(fname, shape) -> tuple:
    refuse_traced_dims(fname, shape)
    if isinstance(shape, (list, tuple)):
        dims = tuple(static_int(fname, d, "shape") for d in shape)
    else:
        dims = (static_int(fname, shape, "shape"),)
    if any(d < 0 for d in dims):    # TypeError: JAX's (its broadcast_in_dim's shape rule)
        raise TypeError(f"{fname}: negative dimensions are not allowed, got shape {dims}")
    return dims


def _dtype_arg(dtype, fname=None, default=np.float32):
    return canonicalize_dtype(default if dtype is None else dtype, fname)


# -- constants ----------------------------------------------------------------------------

def concrete_array(value, dtype=None):
    """A NumPy-convertible constant as a strongly typed concrete jax.Array. NumPy casts
    it to its canonical dtype (x64 is off) and it is transferred as it is."""
    value = np.asarray(value)
    dtype = canonical_dtype(value.dtype if dtype is None else dtype)
    return _transfer(value if value.dtype == dtype else value.astype(dtype))


def _weak_scalar_array(value):
    """A Python scalar as a weakly typed rank-0 jax.Array: JAX's transfer keeps its weak
    type, and raises JAX's OverflowError for an int out of int32's range."""
    return _transfer(value)


def _transfer(value):
    """Host data on the device. JAX's `jnp.asarray` transfers implicitly, which a
    transfer guard tells from an explicit `device_put` ('disallow' refuses only the
    implicit one): so while a guard is set, at the root, the value goes in as a
    jitted identity's argument, a transfer JAX guards as implicit. Otherwise
    `device_put`, which compiles nothing."""
    if root_modes.modes.at_root and host_transfers_guarded():
        with root_modes.applied_to_jax():
            return _implicit_transfer(value)
    return jax.device_put(value)


_implicit_transfer = jax.jit(lambda value: value)


def _contains_traced(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return builtins.any(_contains_traced(o) for o in obj)
    return isinstance(obj, Tracer) or hasattr(obj, "aval")


def array(object, dtype=None, copy: bool = True, order=None, ndmin: int = 0):
    """`jnp.array`: Python scalars stay weakly typed; lists become arrays (stacked when
    they hold traced values); `dtype` converts; x64 is off (f64 data becomes f32).
    A concrete jax.Array is copied (`copy=True`, the default), as in JAX."""
    return _array(object, dtype, order, ndmin, "array", copy)


def asarray(a, dtype=None, order=None, copy=None):
    """`jnp.asarray`: as `array`, returning `a` itself when no conversion is needed
    (unless `copy=True`)."""
    return _array(a, dtype, order, 0, "asarray", copy)


def _array(object, dtype, order, ndmin: int, fname: str, copy=None):
    # The dtype asked for is checked (and a 64-bit one truncated, with the warning)
    # once, under the name of the function called; below it is already canonical.
    dtype = None if dtype is None else _dtype_arg(dtype, fname)
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"array: order={order!r} is not supported")
    if isinstance(object, _ScalarType):
        raise TypeError(f"array: expected data, got the dtype {object!r}")
    host_data = False
    if isinstance(object, (list, tuple)) and _contains_traced(object):
        out = _stack_nested(object, dtype)
    elif isinstance(object, Tracer) or hasattr(object, "aval"):
        if dtype is None:
            out = object
        elif str(dtype).startswith("key<") or str(object.dtype).startswith("key<"):
            # A key converts only to its own dtype (a no-op); lax says why otherwise.
            out = lax.convert_element_type(object, dtype)
        else:
            out = convert("array", object, _dtype_arg(dtype, "array"))
        if copy and out is object and not isinstance(object, Tracer) \
                and not stages_a_program(current_trace()):
            # A copy asked of a concrete array is a new buffer, as JAX's (so donating
            # the copy leaves the original alive). A traced value is immutable, so its
            # copy is itself (JAX stages a `copy` equation, which computes nothing),
            # and so is a constant a staged program reads (its outputs are new buffers).
            out = jax.device_put(object, may_alias=False)
    elif isinstance(object, PY_SCALARS) and dtype is None:
        out, host_data = _weak_scalar_array(object), True
    else:
        host_data = True
        value = np.asarray(object)
        if dtype is not None and is_integer(dtype) \
                and not isinstance(object, (np.ndarray, np.generic)):
            # NumPy refuses a Python int its integer dtype cannot hold, and so does
            # JAX (which converts with it); NumPy arrays and scalars are cast.
            np.asarray(object, dtype=dtype)
        if value.dtype.kind not in "biufc" and not is_float(value.dtype) \
                and not is_integer(value.dtype):
            if object is None or (isinstance(object, (list, tuple)) and builtins.any(
                    leaf is None for leaf in _flat_items(object))):
                raise ValueError(f"None is not a valid value for jnp.{fname}")  # JAX's
            raise TypeError(f"array: cannot make an array from {type(object).__name__} "
                            f"with NumPy dtype {value.dtype}")
        out = concrete_array(value, None if dtype is None else _dtype_arg(dtype, "array"))
    ndim = len(shape_of(out))
    if ndmin > ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - ndim)))
    if host_data and stages_a_program(current_trace()):
        # Under jit JAX's jnp.array of host data is a tracer (its conversion is staged,
        # and folds into the constant): Python control flow or a shape computed from it
        # fails as in JAX ("Thinking in JAX": `x.reshape(jnp.array(x.shape).prod())`).
        out = bind(convert_element_type_p, out, new_dtype=np.dtype(out.dtype),
                   weak_type=is_weak(out))
    return out


def _flat_items(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flat_items(item)
        else:
            yield item


def _stack_nested(items, dtype):
    leaves = [_stack_nested(i, None) if isinstance(i, (list, tuple)) else as_operand("array", i)
              for i in items]
    out = stack(leaves) if leaves else concrete_array(np.zeros((0,), np.float32))
    return out if dtype is None else convert("array", out, _dtype_arg(dtype, "array"))


def copy(a):
    """`jnp.copy`: a new array of `a`'s values (a new buffer for a concrete array)."""
    return asarray(a, copy=True)


def astype(x, dtype, /, *, copy: bool = False):
    """`jnp.astype`: `x` converted to `dtype` (a strongly typed result)."""
    return as_array(convert("astype", as_operand("astype", x), _dtype_arg(dtype, "astype")))


# -- filled arrays ------------------------------------------------------------------------

def _filled(fname, shape, fill_value, dtype, weak):
    """`shape` filled with `fill_value` (rank-0, or broadcastable to `shape`)."""
    fill_value = as_operand(fname, fill_value)
    fill_value = convert(fname, fill_value, dtype, weak)
    if shape_of(fill_value) == ():
        return lax.broadcast_in_dim(fill_value, shape, ())
    return broadcast_to_shape(fname, fill_value, shape)


def _forgot_shape_tuple(fname, shape, dtype):
    """`zeros(2, 3)` for `zeros((2, 3))`: JAX's error says so."""
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally "
                        f"write `jax.numpy.{fname}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{fname}(({shape}, {dtype}))`, i.e. with a single tuple "
                        f"argument for the shape?")


def zeros(shape, dtype=None):
    _forgot_shape_tuple("zeros", shape, dtype)
    return _filled("zeros", _shape_arg("zeros", shape), 0, _dtype_arg(dtype, "zeros"), False)


def ones(shape, dtype=None):
    _forgot_shape_tuple("ones", shape, dtype)
    return _filled("ones", _shape_arg("ones", shape), 1, _dtype_arg(dtype, "ones"), False)


def empty(shape, dtype=None):
    """`jnp.empty`: XLA has no uninitialised memory, so this is `zeros` (as in JAX)."""
    _forgot_shape_tuple("empty", shape, dtype)
    return _filled("empty", _shape_arg("empty", shape), 0, _dtype_arg(dtype, "empty"), False)


def full(shape, fill_value, dtype=None):
    """`jnp.full`; without `dtype` the fill value's dtype and weak type are kept."""
    shape = _shape_arg("full", shape)
    fill_value = as_operand("full", fill_value)
    if dtype is None:
        fill_dtype, weak = result_type_and_weak(fill_value)
        return _filled("full", shape, fill_value, fill_dtype, weak)
    return _filled("full", shape, fill_value, _dtype_arg(dtype, "full"), False)


def _like(fname, a, fill_value, dtype, shape):
    a = as_operand(fname, a)
    a_shape = shape_of(a) if shape is None else _shape_arg(fname, shape)
    if dtype is None:
        a_dtype, weak = result_type_and_weak(a)
        return _filled(fname, a_shape, fill_value, a_dtype, weak)
    return _filled(fname, a_shape, fill_value, _dtype_arg(dtype, fname), False)


def zeros_like(a, dtype=None, shape=None):
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return _like("empty_like", a, 0, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    return _like("full_like", a, fill_value, dtype, shape)


# -- ranges -------------------------------------------------------------------------------

def _static_scalar(fname, value, what):
    if isinstance(value, Tracer):
        value = value._concrete_or_raise(f"{fname}: argument {what!r}")
    if np.ndim(value) != 0:
        raise ValueError(f"{fname}: {what} must be a scalar, got shape {np.shape(value)}")
    if isinstance(value, PY_SCALARS):
        return value
    value = np.asarray(value)[()]
    return value.item()


def arange(start, stop=None, step=None, dtype=None):
    """`jnp.arange` with static bounds: an `iota`, scaled and shifted as needed.

    Without `dtype` the result is int32 when all bounds are ints, else float32."""
    start = _static_scalar("arange", start, "start")
    stop = None if stop is None else _static_scalar("arange", stop, "stop")
    step = None if step is None else _static_scalar("arange", step, "step")
    if builtins.any(isinstance(v, complex) for v in (start, stop, step)):
        raise ValueError("arange: complex start/stop/step are not supported")
    bounds = [v for v in (start, stop, step) if v is not None]
    dtype = result_type(*bounds) if dtype is None else _dtype_arg(dtype, "arange")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        if step == 0:
            raise ValueError("arange: step must not be zero")
        # Half-precision floats are computed in f32 so the steps do not drift.
        working = np.dtype(np.float32) if is_half_float(dtype) else dtype
        size = builtins.max(0, math.ceil((stop - start) / step))
        out = lax.iota(working, size)
        out = lax.add(lax.mul(out, _const(step, working)), _const(start, working))
        return convert("arange", out, dtype)
    size = builtins.max(0, math.ceil(stop - start))
    out = lax.iota(dtype, size)
    return out if start == 0 else lax.add(out, _const(start, dtype))


def _const(value, dtype):
    """A Python number as a NumPy scalar of `dtype` (an inline literal when traced)."""
    wide = np.float64 if isinstance(value, float) else None
    return np.array(value, dtype=wide).astype(dtype)[()]


@jitted_eagerly("num", "endpoint", "retstep", "dtype", "axis")
def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """`jnp.linspace`: `num` points from `start` to `stop` (arrays allowed, which adds
    their broadcast shape around `axis`)."""
    num = static_int("linspace", num, "num")
    if num < 0:
        raise ValueError(f"linspace: number of samples {num} must be non-negative")
    start, stop = as_operand("linspace", start), as_operand("linspace", stop, 1)
    if dtype is None:
        dtype = to_inexact(*result_type_and_weak(start, stop))[0]
    else:
        dtype = _dtype_arg(dtype, "linspace")
    compute = dtype if is_inexact(dtype) else np.dtype(np.float32)
    start, stop = convert("linspace", start, compute), convert("linspace", stop, compute)
    bounds = list(broadcast_shapes("linspace", shape_of(start), shape_of(stop)))
    start = broadcast_to_shape("linspace", start, bounds)
    stop = broadcast_to_shape("linspace", stop, bounds)
    axis = canonicalize_axis("linspace", axis, len(bounds) + 1)
    with_axis = bounds[:axis] + [1] + bounds[axis:]
    div = num - 1 if endpoint else num
    if num > 1:
        iota_shape = [1] * len(with_axis)
        iota_shape[axis] = div
        # The position as a fraction `t = i / div` in the real dtype, as JAX's does.
        real = np.zeros((), compute).real.dtype     # float32 for complex64
        i = reshape(lax.iota(real, div), iota_shape)
        t = lax.convert_element_type(lax.div(i, _const(div, real)), compute)
        if LINSPACE_SCALES_STOP_FIRST:
            stop_part = multiply(lax.div(reshape(stop, with_axis), _const(div, compute)),
                                 lax.convert_element_type(i, compute))
        else:
            stop_part = multiply(reshape(stop, with_axis), t)
        out = add(multiply(reshape(start, with_axis), subtract(1.0, t)), stop_part)
        if endpoint:
            out = concatenate([out, expand_dims(stop, axis)], axis)
        delta = lax.div(subtract(stop, start), _const(div, compute))
    elif num == 1:
        out = reshape(start, with_axis)
        delta = full((), np.nan if endpoint else 0.0, compute)
        if not endpoint:
            delta = subtract(stop, start)
    else:
        out = zeros(bounds[:axis] + [0] + bounds[axis:], compute)
        delta = full((), np.nan, compute)
    if is_integer(dtype):
        out = floor(out)
    out = convert("linspace", out, dtype)
    return (out, delta) if retstep else out


def _spacing_dtypes(fname, start, stop, dtype):
    """(result dtype, the float dtype the points are computed in)."""
    dtype = (to_inexact(*result_type_and_weak(start, stop))[0] if dtype is None
             else _dtype_arg(dtype, fname))
    return dtype, (dtype if is_inexact(dtype) else np.dtype(np.float32))


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """`base ** linspace(start, stop, num)`."""
    num, axis = static_int("logspace", num, "num"), static_int("logspace", axis, "axis")
    start, stop = as_operand("logspace", start), as_operand("logspace", stop, 1)
    dtype, compute = _spacing_dtypes("logspace", start, stop, dtype)
    start, stop = convert("logspace", start, compute), convert("logspace", stop, compute)
    exponents = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return convert("logspace", power(base, exponents), dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """`num` points from `start` to `stop` with a constant ratio: a logspace of the
    magnitudes' base-10 logarithms, with the sign of `start`."""
    num, axis = static_int("geomspace", num, "num"), static_int("geomspace", axis, "axis")
    start, stop = as_operand("geomspace", start), as_operand("geomspace", stop, 1)
    dtype, compute = _spacing_dtypes("geomspace", start, stop, dtype)
    start, stop = convert("geomspace", start, compute), convert("geomspace", stop, compute)
    sign_of_start = sign(start)
    out = multiply(sign_of_start, logspace(log10(divide(start, sign_of_start)),
                                           log10(divide(stop, sign_of_start)), num,
                                           endpoint=endpoint, base=10.0, dtype=compute))
    ndim = len(shape_of(out))
    axis = canonicalize_axis("geomspace", axis, ndim)
    if axis != 0:
        out = lax.transpose(out, (*range(1, axis + 1), 0, *range(axis + 1, ndim)))
    return convert("geomspace", out, dtype)


def _index_mask(fname, n, m, k, compare):
    refuse_traced_dims(fname, (n,) if m is None else (n, m))
    n = static_int(fname, n, "N")
    m = n if m is None else static_int(fname, m, "M")
    if isinstance(k, Tracer) and k.concrete_value() is None:
        # a traced diagonal offset only moves the comparison, as in JAX's eye/tri
        k = convert(fname, as_operand(fname, k), np.int32)
    else:
        k = static_int(fname, k, "k")
    rows = lax.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax.broadcasted_iota(np.int32, (n, m), 1)
    if isinstance(k, Tracer):
        rows = lax.add(rows, lax.broadcast_in_dim(k, (n, m), ()))
    elif k:
        rows = lax.add(rows, np.int32(k))
    return compare(rows, cols)


def eye(N, M=None, k=0, dtype=None):
    """`jnp.eye`: ones on the `k`-th diagonal, from two `iota`s and a comparison."""
    dtype = _dtype_arg(dtype, "eye")      # refused before anything runs
    return convert("eye", _index_mask("eye", N, M, k, lax.eq), dtype)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """`jnp.tri`: ones at and below the `k`-th diagonal."""
    dtype = _dtype_arg(dtype, "tri")      # refused before anything runs
    return convert("tri", _index_mask("tri", N, M, k, lax.ge), dtype)


def _triangle(fname, m, k, lower):
    m = as_operand(fname, m)
    shape = shape_of(m)
    if len(shape) < 2:
        raise ValueError(f"{fname}: input must be at least 2-d, got shape {shape}")
    n_rows, n_cols = shape[-2:]
    mask = _index_mask(fname, n_rows, n_cols, k if lower else k - 1, lax.ge)
    if not lower:
        mask = lax.bitwise_not(mask)
    return where(mask, m, like(m, 0))   # (a Python 0 would make a boolean m int)


@jitted_eagerly("k")
def tril(m, k: int = 0):
    return _triangle("tril", m, k, True)


@jitted_eagerly("k")
def triu(m, k: int = 0):
    return _triangle("triu", m, k, False)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """`jnp.meshgrid` of 1-d arrays, 'xy' (Cartesian) or 'ij' (matrix) indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = [as_operand("meshgrid", x) for x in xi]
    for i, x in enumerate(xi):
        if len(shape_of(x)) != 1:
            raise ValueError(f"meshgrid: argument {i} must be 1-d, got shape {shape_of(x)}")
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = shape_of(x)[0]
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(reshape(x, shape))
    if not sparse:
        sizes = [shape_of(x)[0] for x in xi]
        if indexing == "xy" and ndim > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        out = [broadcast_to(x, sizes) for x in out]
    return out


__all__ = ["array", "asarray", "copy", "astype", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "arange", "linspace", "logspace",
           "geomspace", "eye",
           "identity", "tri", "tril", "triu", "meshgrid"]
