"""`jnp.pad`: every mode of JAX's, built from slices, flips, broadcasts and concatenates.

The padding is done one axis at a time; each axis grows by a piece before and a piece
after, made from the array as padded so far (so corners see the padding of earlier
axes, as in NumPy):

* 'constant': `lax.pad` with one value, or a value per axis and side;
* 'edge': the first/last slice, broadcast to the width;
* 'wrap': the axis repeated whole as often as the widths need, plus a remainder;
* 'reflect' / 'symmetric': the mirror image (without / with the edge element),
  repeated for widths longer than the axis, each copy mirrored from the piece before
  it; `reflect_type='odd'` reflects the values through the edge value (2*edge - x);
* 'linear_ramp': from `end_values` to the edge, as `linspace` without its endpoint;
* 'maximum' / 'minimum' / 'mean' / 'median': the statistic of the first/last
  `stat_length` elements (default: all), rounded for integer arrays;
* 'empty': zeros (JAX's `empty` is `zeros`);
* a callable `mode(vector, (before, after), axis, kwargs)`: the array padded with
  zeros, then the function applied to every 1-d slice along each axis in turn,
  returning the slice with its padding filled in.

As in JAX, the modes' widths and parameters are static; only `constant_values` may be
traced. An eager call is one compiled program, as JAX's `jnp.pad` is a `jax.jit`.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..ir.trace import Tracer
from ._promotion import as_operand, as_array, shape_of, dtype_of, convert, is_weak
from ._creation import asarray, linspace, zeros
from ._functional import apply_along_axis
from ._nan_stats import median
from ._reductions import max as array_max, mean, min as array_min
from ._shape import broadcast_to, flip
from ._ufuncs import multiply, round as array_round, subtract
from ..ir.types import is_integer

__all__ = ["pad"]

# The keyword arguments each named mode takes.
_MODE_KWARGS = {
    "constant": ("constant_values",), "edge": (), "wrap": (), "empty": (),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",),
    "minimum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}
_STATISTICS = {"maximum": array_max, "minimum": array_min, "mean": mean, "median": median}


def pad(array, pad_width, mode="constant", **kwargs):
    """`jnp.pad`: `array` padded by `pad_width` (a width, a (before, after) pair, or one
    pair per axis) in any of NumPy's modes, or with a callable `mode`."""
    array = as_operand("pad", array)
    ndim = len(shape_of(array))
    widths = _pairs(pad_width, ndim, "pad_width")
    if not builtins.all(_is_int(w) for pair in widths for w in pair):
        raise TypeError("`pad_width` must be of integral type.")
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if callable(mode):
        return _pad_with_function(array, widths, mode, kwargs)
    if mode not in _MODE_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unexpected = set(kwargs) - set(_MODE_KWARGS[mode])
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = tuple(tuple(int(n) for n in pair)
                            for pair in _pairs(stat_length, ndim, "stat_length"))
    end_values = tuple(tuple(_static_scalar(v) for v in pair)
                       for pair in _pairs(kwargs.get("end_values", 0), ndim, "end_values"))
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    return _pad(array, widths, mode, kwargs.get("constant_values", 0), stat_length,
                end_values, reflect_type)


@jitted_eagerly("pad_width", "mode", "stat_length", "end_values", "reflect_type")
def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
    array = as_operand("pad", array)
    if not shape_of(array):
        return as_array(array)  # nothing to pad around a scalar, as in JAX
    if builtins.any(w < 0 for pair in pad_width for w in pair):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, constant_values)
    for axis, (before, after) in enumerate(pad_width):
        if shape_of(array)[axis] == 0 and mode != "empty":
            if before or after:
                raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
            continue
        if mode == "wrap":
            array = _wrap(array, axis, before, after)
        elif mode in ("reflect", "symmetric"):
            n = shape_of(array)[axis]
            array = _mirror(array, axis, n, before, True, mode, reflect_type)
            array = _mirror(array, axis, n, after, False, mode, reflect_type)
        else:
            pieces = _side_pieces(array, axis, before, after, mode, end_values,
                                  None if stat_length is None else stat_length[axis])
            array = lax.concatenate([pieces[0], array, pieces[1]], axis)
    return as_array(array)


# -- arguments -------------------------------------------------------------------------

def _is_int(w):
    return isinstance(w, (int, np.integer)) and not isinstance(w, (bool, np.bool_))


def _static_scalar(v):
    return v.item() if isinstance(v, np.generic) else v


def _pairs(values, ndim, name):
    """`values` as one (before, after) pair per axis, from any of the forms NumPy takes:
    a scalar, (v,), (before, after), ((before, after),) or one pair per axis."""
    if isinstance(values, Tracer):
        values = values._concrete_or_raise(f"the {name} argument of jnp.pad")
    try:
        table = np.asarray(values)
    except ValueError:  # ragged nesting
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from None
    if table.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if table.shape == (ndim, 2):
        pairs = table.tolist()
    elif table.shape in ((1, 2), (2,)):
        pairs = [table.reshape(2).tolist()] * ndim
    elif table.shape in ((1,), ()):
        pairs = [[table.reshape(()).item()] * 2] * ndim
    else:
        raise ValueError(f"jnp.pad: {name} with nd={ndim} has unsupported shape "
                         f"{table.shape}. Valid shapes are ({ndim}, 2), (1, 2), (2,), "
                         f"(1,), or ().")
    return tuple(tuple(pair) for pair in pairs)


# -- the modes ---------------------------------------------------------------------------

def _like_array(array, value):
    """`value` in `array`'s dtype, weakly typed exactly when `array` is (as JAX
    converts the pieces it pads with)."""
    value = convert("pad", value, dtype_of(array), weak=is_weak(array))
    if is_weak(array) and not is_weak(value):  # convert keeps a strong value strong
        value = lax.convert_element_type(value, dtype_of(array), weak_type=True)
    return value


def _pad_constant(array, pad_width, constant_values):
    ndim = len(shape_of(array))
    values = _like_array(array, asarray(constant_values))
    shape = shape_of(values)
    if len(shape) == 0 or shape == (1,):
        value = lax.reshape(values, ())
        return lax.pad(array, value, [(lo, hi, 0) for lo, hi in pad_width])
    if len(shape) == 1 and shape[-1] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {shape}. If the "
                         f"shape is 1D or 2D, the last dimension must be of size 1 or 2.")
    values = broadcast_to(values, (ndim, 2))
    for axis, (before, after) in enumerate(pad_width):
        for side, width in ((0, before), (1, after)):
            if width:
                config = [(0, 0, 0)] * ndim
                config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                value = lax.reshape(lax.slice(values, (axis, side), (axis + 1, side + 1)),
                                    ())
                array = lax.pad(array, value, config)
    return array


def _wrap(array, axis, before, after):
    n = shape_of(array)[axis]
    whole_before, rest_before = divmod(before, n)
    whole_after, rest_after = divmod(after, n)
    pieces = []
    if rest_before:
        pieces.append(lax.slice_in_dim(array, n - rest_before, n, 1, axis))
    pieces += [array] * (whole_before + whole_after + 1)
    if rest_after:
        pieces.append(lax.slice_in_dim(array, 0, rest_after, 1, axis))
    return lax.concatenate(pieces, axis) if len(pieces) > 1 else array


def _mirror(array, axis, n, width, before, mode, reflect_type):
    """`array` grown by `width` mirrored elements on one side of `axis` (of size `n`
    before any padding). A width larger than the axis is filled by successive mirror
    images of the grown array, at most `n` (or `n - 1`) elements each."""
    # 'reflect' leaves the edge element out of its image (except of a single element)
    offset = 1 if (mode == "reflect" and n > 1) else 0
    edge = (lax.slice_in_dim(array, 0, 1, 1, axis) if before
            else lax.slice_in_dim(array, shape_of(array)[axis] - 1, None, 1, axis))
    while width > 0:
        step = builtins.min(width, n - offset)
        width -= step
        size = shape_of(array)[axis]
        if before:
            start, stop = offset, offset + step
        else:
            start = size - step - offset
            stop = size if (mode == "symmetric" or n == 1) else size - 1
        image = flip(lax.slice_in_dim(array, start, stop, 1, axis), axis)
        if reflect_type == "odd":
            image = subtract(multiply(2, edge), image)
            if n > 1:  # the next image reflects through this one's far end
                edge = (lax.slice_in_dim(image, 0, 1, 1, axis) if before else
                        lax.slice_in_dim(image, shape_of(image)[axis] - 1, None, 1, axis))
        array = lax.concatenate([image, array] if before else [array, image], axis)
    return array


def _side_pieces(array, axis, before, after, mode, end_values, stat_length):
    """The before and after pieces of 'edge', 'empty', 'linear_ramp' and the
    statistic modes along `axis`."""
    dims = shape_of(array)
    n = dims[axis]

    def widened(piece, width):  # a size-1 slice along `axis`, repeated `width` times
        shape = dims[:axis] + (width,) + dims[axis + 1:]
        return lax.broadcast_in_dim(lax.slice_in_dim(piece, 0, 1, 1, axis), shape,
                                    tuple(range(len(dims))))

    first = lax.slice_in_dim(array, 0, 1, 1, axis)
    last = lax.slice_in_dim(array, n - 1, n, 1, axis)
    if mode == "edge":
        return widened(first, before), widened(last, after)
    if mode == "empty":
        return tuple(_like_array(array, zeros(dims[:axis] + (w,) + dims[axis + 1:],
                                              dtype_of(array))) for w in (before, after))
    if mode == "linear_ramp":
        ramps = []
        for edge, end, width in ((first, end_values[axis][0], before),
                                 (last, end_values[axis][1], after)):
            ramps.append(linspace(end, lax.squeeze(edge, (axis,)), width, endpoint=False,
                                  dtype=dtype_of(array), axis=axis))
        return _like_array(array, ramps[0]), _like_array(array, flip(ramps[1], axis))
    statistic = _STATISTICS[mode]
    if stat_length is None:
        stats = [statistic(array, axis=axis, keepdims=True)] * 2
    else:
        if 0 in stat_length:
            raise ValueError("stat_length of 0 yields no value for padding")
        count_before, count_after = (builtins.min(c, n) for c in stat_length)
        stats = [statistic(lax.slice_in_dim(array, 0, count_before, 1, axis), axis=axis,
                           keepdims=True),
                 statistic(lax.slice_in_dim(array, n - count_after, n, 1, axis),
                           axis=axis, keepdims=True)]
    if is_integer(dtype_of(array)):
        stats = [array_round(s) for s in stats]
    stats = [_like_array(array, s) for s in stats]
    return widened(stats[0], before), widened(stats[1], after)


def _pad_with_function(array, pad_width, function, kwargs):
    """A callable mode: zeros around `array`, then `function(vector, (before, after),
    axis, kwargs)` on each 1-d slice along each axis; it returns the filled vector."""
    padded = _pad_constant(array, pad_width, 0)
    for axis in range(len(shape_of(padded))):
        padded = apply_along_axis(function, axis, padded, pad_width[axis], axis, kwargs)
    return padded
