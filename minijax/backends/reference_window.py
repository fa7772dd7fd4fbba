"""The reference evaluator's rules for the window primitives, in NumPy.

Read `reference.py` first, and `ir/window_primitives.py` for what the params mean.
Both rules spell the definition out literally: the operand is dilated (holes between
its elements) and padded (or cropped, for negative padding) into a plain array, and
then, for each position `k` inside the window, the strided slice of that array that
position `k` of every window sees is taken. A window reduction combines those slices;
a convolution multiplies each one by the kernel's entry `k` and sums.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..ir import window_primitives as W
from .reference import reference_rules
from .reference_rules import _float_type


def _dilate_and_pad(x, axes, dilation, padding, fill):
    """`x` with `dilation[j] - 1` holes between neighbours along `axes[j]` and
    `padding[j]` added at its ends, holes and padding holding `fill`."""
    for axis, d, (lo, hi) in zip(axes, dilation, padding):
        n = x.shape[axis]
        if d > 1 and n > 1:
            shape = list(x.shape)
            shape[axis] = W.dilate_dim(n, d)
            spread = np.full(shape, fill, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, d)
            spread[tuple(index)] = x
            x = spread
        # Negative padding crops; positive padding adds `fill`.
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=fill)
    return x


def _window_slices(x, axes, window, strides, window_dilation, out_sizes):
    """For each position `k` of the window (row-major), `k` and the slice of `x`
    holding element `k` of every window along `axes`."""
    for k in itertools.product(*(range(w) for w in window)):
        index = [slice(None)] * x.ndim
        for axis, kk, s, wd, n in zip(axes, k, strides, window_dilation, out_sizes):
            start = kk * wd
            index[axis] = slice(start, start + (n - 1) * s + 1 if n else start, s)
        yield k, x[tuple(index)]


def _window_counts(sizes, window, strides, window_dilation):
    """How many (dilated) windows fit along each axis of an already padded array."""
    counts = []
    for size, w, s, d in zip(sizes, window, strides, window_dilation):
        extent = W.dilate_dim(w, d)
        counts.append(0 if size < extent else (size - extent) // s + 1)
    return counts


def _wide_dtype(dtype):
    """The dtype a reference result is accumulated in before its one rounding."""
    if np.issubdtype(dtype, np.complexfloating):
        return np.dtype(np.complex128)
    if np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_):
        return np.dtype(np.int64) if np.issubdtype(dtype, np.signedinteger) or \
            np.issubdtype(dtype, np.bool_) else np.dtype(np.uint64)
    return np.dtype(np.float64)


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count=1, batch_group_count=1, precision=None,
          preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    wide = _wide_dtype(lhs.dtype)
    x = np.transpose(lhs, lhs_spec).astype(wide)          # (batch, feature, spatial...)
    kernel = np.transpose(rhs, rhs_spec).astype(wide)     # (out, in, spatial...)
    spatial = tuple(range(2, x.ndim))
    x = _dilate_and_pad(x, spatial, lhs_dilation, padding, 0)
    out_shape = _window_counts(x.shape[2:], kernel.shape[2:], window_strides, rhs_dilation)
    groups, batch_groups = feature_group_count, batch_group_count
    batch, in_features = x.shape[0] // batch_groups, kernel.shape[1]
    out_features = kernel.shape[0]
    # Group-major splits: lhs batch -> (batch groups, batch), lhs features -> (groups,
    # in features), kernel out features -> (batch groups, groups, per group).
    kernel = kernel.reshape((batch_groups, groups, out_features // (groups * batch_groups),
                             in_features) + kernel.shape[2:])
    out = np.zeros((batch, batch_groups, groups, out_features // (groups * batch_groups))
                   + tuple(out_shape), wide)
    for k, piece in _window_slices(x, spatial, kernel.shape[4:], window_strides,
                                   rhs_dilation, out_shape):
        piece = piece.reshape((batch_groups, batch, groups, in_features) + piece.shape[2:])
        tap = kernel[(Ellipsis,) + k]                       # (bg, g, out per group, in)
        out += np.einsum("bngi...,bgoi->nbgo...", piece, tap)
    out = out.reshape((batch, out_features) + tuple(out_shape))
    return [np.transpose(out, np.argsort(out_spec)).astype(out_dtype)]


# maximum / minimum propagate NaN, as XLA's max and min do.
_COMBINE = {W.reduce_window_sum_p: np.add, W.reduce_window_max_p: np.maximum,
            W.reduce_window_min_p: np.minimum}


def _reduce_window(prim):
    combine = _COMBINE[prim]

    def rule(operand, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        dtype = operand.dtype
        # Sums accumulate wide and round once; max/min are exact in any dtype NumPy
        # can order (half floats are lifted to f32, exactly).
        work = _wide_dtype(dtype) if prim is W.reduce_window_sum_p else _float_type(dtype)
        identity = W.window_identity(prim, dtype).astype(work)
        axes = tuple(range(operand.ndim))
        x = _dilate_and_pad(operand.astype(work), axes, base_dilation, padding, identity)
        out_shape = _window_counts(x.shape, window_dimensions, window_strides,
                                   window_dilation)
        out = np.full(out_shape, identity, work)
        with np.errstate(all="ignore"):
            for _, piece in _window_slices(x, axes, window_dimensions, window_strides,
                                           window_dilation, out_shape):
                out = combine(out, piece)
        return [np.asarray(out).astype(dtype)]
    return rule


reference_rules[W.conv_general_dilated_p] = _conv
for _prim in W.reduce_window_primitives:
    reference_rules[_prim] = _reduce_window(_prim)
