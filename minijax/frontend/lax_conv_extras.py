"""More of `jax.lax`'s convolution API: patches, unshared (local) convolution and the
shape helpers.

* `conv_general_dilated_patches` -- a grouped convolution with an identity kernel (one
  output feature per input feature and window position), as JAX builds it, so the
  patches come out in JAX's order (`c` then the kernel spec's spatial letters).
* `conv_general_dilated_local` -- those patches contracted with a kernel that has one
  slice per output position (a `dot_general` batched over the output's spatial axes).
* `conv_shape_tuple`, `conv_general_shape_tuple`, `conv_transpose_shape_tuple`,
  `conv_general_permutations`, `reduce_window_shape_tuple` -- plain shape arithmetic on
  Python ints, with JAX's formulas (`conv_transpose_shape_tuple` takes the padding of
  `conv_transpose`).

Both array functions are compositions of minijax primitives, so jvp, transpose and
vmap come from their parts.
"""
from __future__ import annotations

import math
import operator
from typing import Sequence, Union

import numpy as np

from ..ir import window_primitives as W
from ..ir.trace import aval_of
from . import lax_ops as lax_
from .eager_jit import jitted_eagerly
from .lax_dot import Precision, canonicalize_precision, dot_general
from .windows import (ConvDimensionNumbers, conv_dimension_numbers, conv_general_dilated,
                      _spec_permutations, _conv_transpose_padding)

__all__ = ["ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_patches",
           "conv_general_dilated_local", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "conv_general_permutations",
           "reduce_window_shape_tuple"]

# What `dimension_numbers=` accepts, as JAX spells the type.
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers,
                                           None]


def _as_array(x):
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return x
    return np.asarray(x)


def _moveaxis(x, source, destination):
    ndim = aval_of(x).ndim
    source = [s % ndim for s in source]
    destination = [d % ndim for d in destination]
    perm = [i for i in range(ndim) if i not in source]
    for dst, src in sorted(zip(destination, source)):
        perm.insert(dst, src)
    return x if perm == list(range(ndim)) else lax_.transpose(x, perm)


# One primitive's worth of work in JAX: an eager call is one compiled program here
# too (when the static arguments are hashable).
_STATIC = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "dimension_numbers",
           "precision")


@jitted_eagerly("filter_shape", "preferred_element_type", *_STATIC)
def conv_general_dilated_patches(lhs, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches `conv_general_dilated` would multiply, flattened into the output's
    feature axis (size `prod(filter_shape) * channels`)."""
    lhs = _as_array(lhs)
    aval = aval_of(lhs)
    filter_shape = tuple(operator.index(d) for d in filter_shape)
    dnums = conv_dimension_numbers(aval.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dnums
    spatial_size = math.prod(filter_shape)
    n_channels = aval.shape[lhs_spec[1]]
    dtype = aval.dtype
    eye = lax_.convert_element_type(
        lax_.eq(lax_.broadcasted_iota(np.int32, (spatial_size, spatial_size), 0),
                lax_.broadcasted_iota(np.int32, (spatial_size, spatial_size), 1)), dtype)
    rhs = lax_.broadcast_in_dim(eye, (n_channels, spatial_size, spatial_size), (1, 2))
    rhs = lax_.reshape(rhs, (n_channels * spatial_size, 1, *filter_shape))
    rhs = _moveaxis(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=n_channels, preferred_element_type=preferred_element_type)


@jitted_eagerly("filter_shape", *_STATIC)
def conv_general_dilated_local(lhs, rhs, window_strides: Sequence[int], padding,
                               filter_shape: Sequence[int], lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """Unshared convolution: the kernel's spatial axes are the output positions and its
    `I` axis holds (channel, window position) pairs, in the patches' order."""
    lhs = _as_array(lhs)
    c_precision = canonicalize_precision(precision)
    if c_precision is not None and not isinstance(c_precision, tuple):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: "
                         f"{precision}")
    # The canonical pair holds names; the public call below takes the enum, as JAX's.
    lhs_precision = None if c_precision is None else Precision[c_precision[0]]
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        precision=lhs_precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(
        aval_of(lhs).shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    dn = (([out_spec[1]], [rhs_spec[1]]), (lhs_b, rhs_b))
    out = dot_general(patches, rhs, dn, precision=precision)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


def conv_general_permutations(dimension_numbers):
    """Axis numbers of (batch, feature, spatial...) in each of the three spec strings."""
    return _spec_permutations(dimension_numbers)


def _stride_dim(d, window, stride):
    return max(0, (d - window) // stride + 1)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution whose operands are in NC.../OI... order."""
    if isinstance(pads, str):
        pads = W.padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]="
                         f"{lhs_shape[2:]}")
    space = tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    if batch_group_count > 1:
        if lhs_shape[0] % batch_group_count:
            raise ValueError(f"conv_shape_tuple: lhs batch {lhs_shape[0]} is not a "
                             f"multiple of batch_group_count={batch_group_count}")
        batch = lhs_shape[0] // batch_group_count
    else:
        batch = lhs_shape[0]
    return tuple(int(d) for d in (batch, rhs_shape[0]) + space)


def _in_spec_order(lhs_shape, rhs_shape, dimension_numbers):
    perms = conv_general_permutations(dimension_numbers)
    return perms, [lhs_shape[i] for i in perms[0]], [rhs_shape[i] for i in perms[1]]


def _to_out_order(out_trans, out_perm):
    return tuple(out_trans[i] for i in np.argsort(out_perm))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of `conv_general_dilated` for spec-string dimension numbers."""
    (_, _, out_perm), lhs_t, rhs_t = _in_spec_order(lhs_shape, rhs_shape,
                                                    dimension_numbers)
    return _to_out_order(conv_shape_tuple(lhs_t, rhs_t, window_strides, padding),
                         out_perm)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of `conv_transpose` for spec-string dimension numbers."""
    (_, _, out_perm), lhs_t, rhs_t = _in_spec_order(lhs_shape, rhs_shape,
                                                    dimension_numbers)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    pads = [sum(p) for p in padding]
    space = [(i - 1) * s - k + 2 + p
             for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, pads)]
    return _to_out_order((lhs_t[0], rhs_t[0], *space), out_perm)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of `reduce_window` with explicit `(low, high)` padding."""
    if base_dilation is not None:
        operand_shape = [W.dilate_dim(d, b) for d, b in zip(operand_shape, base_dilation)]
    if window_dilation is not None:
        window_dimensions = [W.dilate_dim(d, w)
                             for d, w in zip(window_dimensions, window_dilation)]
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(operand_shape, padding))
    return tuple(map(_stride_dim, padded, window_dimensions, window_strides))
