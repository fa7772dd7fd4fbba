"""Window primitives: convolution and windowed reductions (pooling).

Both slide a window over the spatial axes of an array. The window is described by the
same few params everywhere, one entry per spatial axis:

    window_strides   how far the window moves between outputs
    padding          ((low, high), ...) added to the operand before sliding (may be <0)
    lhs_dilation     (conv) / base_dilation (reduce_window): spread the operand out,
                     putting d - 1 holes between neighbours ("transposed convolution")
    rhs_dilation     (conv) / window_dilation: spread the window out ("atrous")

    conv_general_dilated[window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count, batch_group_count,
                         precision, preferred_element_type]  lhs, rhs
        out[n, o, p] = sum_{i, k} lhs_dilated_padded[n, g(o)*I + i, p*stride + k*rdil]
                                  * rhs[o, i, k]
        in the canonical layout (batch, feature, spatial...). `dimension_numbers` is
        three tuples of ints, `(lhs_spec, rhs_spec, out_spec)`: each lists which axis of
        that array is (batch, feature, spatial 0, spatial 1, ...) -- for the kernel,
        (out feature, in feature, spatial...). `feature_group_count` G splits the lhs
        features and the kernel's out features into G groups convolved separately
        (depthwise convolution when G = features); `batch_group_count` B does the same
        with the lhs batch (it appears in the rhs transpose of a grouped conv).
        `precision` is None, a `lax.Precision` name or a pair of them.

    reduce_window_{sum,max,min}[window_dimensions, window_strides, padding,
                                base_dilation, window_dilation]  operand
        out[p] = reduce_{k} operand_dilated_padded[p*stride + k*wdil] over the window
        `k < window_dimensions`, where padding and the holes of base dilation hold the
        reduction's identity (0, -inf, +inf; the dtype's extremes for integers).

Shape helpers shared with `minijax.lax` (string padding, dilated sizes) live here too.
"""
from __future__ import annotations

import numpy as np

from .types import ShapedArray, is_bool
from .registry import Primitive, type_rules, _array

__all__ = ["conv_general_dilated_p", "reduce_window_sum_p", "reduce_window_max_p",
           "reduce_window_min_p", "reduce_window_primitives", "window_identity", "dilate_dim",
           "padtype_to_pads", "PRECISION_NAMES"]

PRECISION_NAMES = ("DEFAULT", "HIGH", "HIGHEST")


def dilate_dim(size: int, dilation: int) -> int:
    """The size of an axis of `size` elements with `dilation - 1` holes between them."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _strided_count(size: int, window: int, stride: int) -> int:
    """How many windows of `window` fit in `size` elements, `stride` apart."""
    return 0 if size < window else (size - window) // stride + 1


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME' / 'SAME_LOWER' / 'VALID' as explicit (low, high) pads per axis (as
    `jax.lax.padtype_to_pads`): SAME keeps ceil(size / stride) outputs, with the odd
    element of padding at the end (SAME) or the start (SAME_LOWER)."""
    mode = str(getattr(padding, "name", padding)).upper()
    if mode == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME' or "
                           f"'SAME_LOWER', got {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if mode == "SAME" else (large, small))
    return tuple(pads)


def _check_window_params(name, n, **sequences):
    for what, seq in sequences.items():
        if len(seq) != n:
            raise TypeError(f"{name}: {what} {tuple(seq)} must have {n} entries, one per "
                            f"spatial axis")
    for what in ("window_strides", "lhs_dilation", "rhs_dilation", "base_dilation",
                 "window_dilation"):
        if what in sequences and any(int(s) < 1 for s in sequences[what]):
            raise ValueError(f"{name}: {what} must be positive, got "
                             f"{tuple(sequences[what])}")


def _windowed_sizes(name, sizes, windows, strides, padding, base_dilation, window_dilation):
    """Output sizes of sliding (dilated) `windows` over (dilated, padded) `sizes`."""
    out = []
    for size, window, stride, (lo, hi), bd, wd in zip(sizes, windows, strides, padding,
                                                        base_dilation, window_dilation):
        padded = dilate_dim(size, bd) + lo + hi
        if padded < 0:
            raise ValueError(f"{name}: padding {tuple(padding)} removes more than the "
                             f"whole axis of size {size}")
        out.append(_strided_count(padded, dilate_dim(window, wd), stride))
    return out


# -- convolution --------------------------------------------------------------------------

conv_general_dilated_p = Primitive("conv_general_dilated")


def _check_spec(name, spec, ndim):
    if sorted(spec) != list(range(ndim)):
        raise TypeError(f"conv_general_dilated: {name} spec {tuple(spec)} must be a "
                        f"permutation of the {ndim} axes")


def _conv_rule(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count=1, batch_group_count=1,
               precision=None, preferred_element_type=None):
    name = "conv_general_dilated"
    _array(name, lhs, "lhs")
    _array(name, rhs, "rhs")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"{name} lhs and rhs must have the same number of dimensions, "
                         f"but got {lhs.shape} and {rhs.shape}.")
    if lhs.ndim < 2:
        raise ValueError(f"{name} operands need a batch and a feature axis, got "
                         f"{lhs} and {rhs}")
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    if is_bool(lhs.dtype):
        raise TypeError(f"{name} does not accept dtype bool")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    for what, spec in (("lhs", lhs_spec), ("rhs", rhs_spec), ("out", out_spec)):
        _check_spec(what, spec, lhs.ndim)
    n = lhs.ndim - 2
    _check_window_params(name, n, window_strides=window_strides, padding=padding,
                         lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)
    groups, batch_groups = feature_group_count, batch_group_count
    if groups < 1 or batch_groups < 1:
        raise ValueError(f"{name} feature_group_count and batch_group_count must be "
                         f"positive integers, got {groups} and {batch_groups}.")
    if groups > 1 and batch_groups > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may "
                         f"be > 1, got batch_group_count={batch_groups} and "
                         f"feature_group_count={groups}")
    batch, features = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    out_features, in_features = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if features % groups or features // groups != in_features:
        raise ValueError(f"{name} lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {features} // {groups} != {in_features}.")
    if out_features % groups or out_features % batch_groups:
        raise ValueError(f"{name} rhs output feature dimension size {out_features} must "
                         f"be a multiple of feature_group_count ({groups}) and "
                         f"batch_group_count ({batch_groups}).")
    if batch % batch_groups:
        raise ValueError(f"{name} batch_group_count must divide lhs batch dimension "
                         f"size, but {batch_groups} does not divide {batch}.")
    spatial = _windowed_sizes(
        name, [lhs.shape[a] for a in lhs_spec[2:]], [rhs.shape[a] for a in rhs_spec[2:]],
        window_strides, padding, lhs_dilation, rhs_dilation)
    canonical = [batch // batch_groups, out_features] + spatial
    shape = [0] * lhs.ndim
    for size, axis in zip(canonical, out_spec):
        shape[axis] = size
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return [ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)]


type_rules[conv_general_dilated_p] = _conv_rule


# -- windowed reductions -----------------------------------------------------------------

def _reduce_window(name, accepts):
    prim = Primitive(name)

    def rule(operand, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        _array(name, operand)
        if not accepts(operand.dtype):
            raise TypeError(f"{name} does not accept dtype {operand.dtype.name}")
        _check_window_params(name, operand.ndim, window_dimensions=window_dimensions,
                             window_strides=window_strides, padding=padding,
                             base_dilation=base_dilation, window_dilation=window_dilation)
        if any(w < 1 for w in window_dimensions):
            raise ValueError(f"{name}: window_dimensions must be positive, got "
                             f"{tuple(window_dimensions)}")
        shape = _windowed_sizes(name, operand.shape, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation)
        return [operand.update(shape=shape)]
    type_rules[prim] = rule
    return prim


reduce_window_sum_p = _reduce_window("reduce_window_sum", lambda d: not is_bool(d))
reduce_window_max_p = _reduce_window("reduce_window_max", lambda d: True)
reduce_window_min_p = _reduce_window("reduce_window_min", lambda d: True)
reduce_window_primitives = (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p)


def window_identity(prim, dtype) -> np.ndarray:
    """The value padding and base-dilation holes hold for the reduction `prim`."""
    dtype = np.dtype(dtype)
    if prim is reduce_window_sum_p:
        return np.zeros((), dtype)
    high = prim is reduce_window_min_p
    if np.issubdtype(dtype, np.bool_):
        return np.array(high, dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.array(info.max if high else info.min, dtype)
    return np.array(np.inf if high else -np.inf, dtype)
