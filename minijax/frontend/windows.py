"""`minijax.lax` convolutions and windowed reductions, with `jax.lax`'s signatures.

Each function turns JAX's flexible arguments into the plain params of one primitive
(`ir/window_primitives.py` says what they mean): dimension-number strings such as
`('NHWC', 'HWIO', 'NHWC')` become three tuples of axis numbers, padding strings
become explicit `(low, high)` pairs, and `None` dilations become ones.

    conv_general_dilated   the primitive itself
    conv                   no dilation, NCHW/OIHW layout
    conv_with_general_padding   explicit padding and dilations, NCHW/OIHW layout
    conv_transpose         a fractionally strided conv (lhs dilation = strides)
    reduce_window          sum / max / min pooling, with JAX's (init, computation) form
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import NamedTuple, Sequence

import jax
import numpy as np
import jax.lax as jax_lax
from jax.lax import Precision  # the enum users pass; minijax stores its member names

from ..ir import primitives as P, window_primitives as W
from ..ir.trace import bind, aval_of, Tracer
from ..ir.dtype_args import canonical_dtype_argument
from ..transforms.ad_util import reverse_axes
from . import int_params as ip, lax_ops as lax_
from .lax_dot import canonicalize_precision

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated",
           "conv", "conv_with_general_padding", "conv_transpose", "padtype_to_pads",
           "reduce_window", "Precision"]

padtype_to_pads = W.padtype_to_pads


class ConvDimensionNumbers(NamedTuple):
    """Which axis of lhs, rhs and output is (batch/out feature, feature/in feature,
    spatial...): each spec is a tuple of axis numbers, as `jax.lax`'s."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _spec_permutations(dimension_numbers):
    """('NCHW', 'OIHW', 'NCHW')-style strings -> axis numbers. Spatial axes are
    ordered as they appear in the rhs spec (JAX's rule), so window_strides[0] belongs
    to the first spatial letter of the kernel spec."""
    lhs, rhs, out = dimension_numbers
    for i, (spec, pair) in enumerate(zip(dimension_numbers, ("NC", "OI", "NC"))):
        if not spec.count(pair[0]) == spec.count(pair[1]) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the "
                            f"characters '{pair[0]}' and '{pair[1]}' exactly once, got "
                            f"{spec}.")
        if len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
        raise TypeError(f"convolution dimension_numbers elements must each have the same "
                        f"set of spatial characters, got {dimension_numbers}.")
    spatial_order = [c for c in rhs if c not in "OI"]

    def permutation(spec, pair):
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(
            spec.index(c) for c in spatial_order)
    return permutation(lhs, "NC"), permutation(rhs, "OI"), permutation(out, "NC")


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three spec strings, or already numbers) as a
    `ConvDimensionNumbers` of axis numbers."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if all(isinstance(spec, str) for spec in dimension_numbers):
        for i, spec in enumerate(dimension_numbers):
            if len(spec) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal "
                                f"to the ndim of lhs and rhs, got {len(spec)} for lhs and "
                                f"rhs shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*_spec_permutations(dimension_numbers))
    if all(isinstance(spec, (tuple, list)) for spec in dimension_numbers):
        # A ConvDimensionNumbers (minijax's or JAX's) or plain tuples of axis numbers.
        return ConvDimensionNumbers(*(tuple(operator.index(a) for a in spec)
                                      for spec in dimension_numbers))
    raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                    f"{tuple(map(type, dimension_numbers))}.")


def _ints(what, values, n):
    values = ip.indices(None, what, values)
    if len(values) != n:
        raise TypeError(f"{what} {values} must have {n} entries, one per spatial axis")
    return values


def _explicit_padding(fname, padding, n):
    try:
        pairs = tuple((lo, hi) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError(f"padding argument to {fname} should be a string or a sequence "
                         f"of (low, high) pairs, got {padding}") from e
    # A float in a well-formed pair is JAX's TypeError, as for its other int parameters.
    pads = tuple(ip.indices(fname, "padding", pair) for pair in pairs)
    if len(pads) != n:
        raise TypeError(f"Wrong number of explicit pads for {fname}: expected {n}, got "
                        f"{len(pads)}.")
    return pads


def _check_preferred_element_type(input_dtype, preferred):
    """JAX's conditions on a convolution's `preferred_element_type`: the same kind as
    the operands (or float for integers), the same signedness, and no narrower."""
    kinds = (np.integer, np.floating, np.complexfloating)
    int_to_float = (jax.dtypes.issubdtype(input_dtype, np.integer)
                    and jax.dtypes.issubdtype(preferred, np.floating))
    if not int_to_float:
        if any(jax.dtypes.issubdtype(input_dtype, k)
               and not jax.dtypes.issubdtype(preferred, k) for k in kinds):
            raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                            "compatible combinations of (input_type, preferred_element_type) "
                            "are (integral, integral), (integral, floating), (floating, "
                            "floating), (complex, complex.")
        if (jax.dtypes.issubdtype(input_dtype, np.signedinteger)
                and not jax.dtypes.issubdtype(preferred, np.signedinteger)):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        "type.")


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding,
                         lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision=None, preferred_element_type=None):
    """General n-d convolution with strides, padding, dilations and groups."""
    lhs_aval, rhs_aval = aval_of(lhs), aval_of(rhs)
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    n = lhs_aval.ndim - 2
    window_strides = _ints("window_strides", window_strides, n)
    lhs_dilation = (1,) * n if lhs_dilation is None else _ints("lhs_dilation",
                                                               lhs_dilation, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation",
                                                               rhs_dilation, n)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed "
                             "convolution using this op. Please either exactly specify "
                             "the required padding or use conv_transpose.")
        kernel = [W.dilate_dim(rhs_aval.shape[a], d) for a, d in zip(dnums.rhs_spec[2:],
                                                                      rhs_dilation)]
        padding = W.padtype_to_pads([lhs_aval.shape[a] for a in dnums.lhs_spec[2:]],
                                    kernel, window_strides, padding)
    else:
        padding = _explicit_padding("conv_general_dilated", padding, n)
    pref = None if preferred_element_type is None else canonical_dtype_argument(
        preferred_element_type, "conv_general_dilated")
    if pref is not None:
        _check_preferred_element_type(lhs_aval.dtype, pref)
    return bind(W.conv_general_dilated_p, lhs, rhs, window_strides=window_strides,
                padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                dimension_numbers=tuple(tuple(s) for s in dnums),
                feature_group_count=operator.index(feature_group_count),
                batch_group_count=operator.index(batch_group_count),
                precision=canonicalize_precision(precision),
                preferred_element_type=pref)


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None,
         preferred_element_type=None):
    """Convolution in the NCHW / OIHW layout, without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides: Sequence[int], padding,
                              lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """Convolution in the NCHW / OIHW layout with padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(kernel: int, stride: int, padding):
    """(low, high) padding of the dilated input for a transposed conv whose forward
    conv had `padding` ('SAME', 'VALID' or a forward (low, high) pair)."""
    if padding == "SAME":
        total = kernel + stride - 2
        low = kernel - 1 if stride > kernel - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + builtins.max(kernel - stride, 0)
        low = kernel - 1
    else:
        low, total = kernel - padding[0] - 1, 2 * kernel - padding[0] - padding[1] - 2
    return low, total - low


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides: Sequence[int], padding, rhs_dilation=None,
                   dimension_numbers=None, transpose_kernel: bool = False,
                   precision=None, preferred_element_type=None,
                   use_consistent_padding: bool = False):
    """A transposed ("fractionally strided") convolution: the input is dilated by
    `strides` and convolved with stride 1. Defaults to TensorFlow's NHWC / HWIO layout.
    `transpose_kernel` flips the kernel's spatial axes and swaps its I and O axes,
    giving the gradient of a forward conv with the same kernel (Keras's convention)."""
    lhs_aval, rhs_aval = aval_of(lhs), aval_of(rhs)
    ndim = lhs_aval.ndim
    if ndim != rhs_aval.ndim or ndim < 2:
        raise ValueError(f"conv_transpose needs lhs and rhs of equal rank >= 2, got "
                         f"{lhs_aval} and {rhs_aval}")
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    n = ndim - 2
    strides = _ints("strides", strides, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation",
                                                               rhs_dilation, n)
    kernel = [rhs_aval.shape[a] for a in dnums.rhs_spec[2:]]
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_axis = [padding] * n if isinstance(padding, str) else [
            tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(W.dilate_dim(k, d), s, p)
                     for k, d, s, p in zip(kernel, rhs_dilation, strides, per_axis))
    else:
        pads = padding
    if transpose_kernel:
        rhs = reverse_axes(rhs, dnums.rhs_spec[2:])
        perm = list(range(ndim))
        perm[dnums.rhs_spec[0]], perm[dnums.rhs_spec[1]] = dnums.rhs_spec[1], dnums.rhs_spec[0]
        rhs = bind(P.transpose_p, rhs, permutation=tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, strides, rhs_dilation, dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# -- windowed reductions --------------------------------------------------------------------

def _window_reduction(computation):
    """The window primitive for `computation` (lax.add / max / min, minijax's or
    JAX's), or None."""
    for prim, fns in ((W.reduce_window_sum_p, (lax_.add, jax_lax.add)),
                      (W.reduce_window_max_p, (lax_.max, jax_lax.max)),
                      (W.reduce_window_min_p, (lax_.min, jax_lax.min))):
        if builtins.any(computation is fn for fn in fns):
            return prim
    return None


def reduce_window(operand, init_value, computation, window_dimensions: Sequence[int],
                  window_strides: Sequence[int], padding, base_dilation=None,
                  window_dilation=None):
    """Reduce every window of `operand` with `computation` (lax.add, lax.max or
    lax.min), starting from `init_value`; padding and base-dilation holes take no
    part (XLA's ReduceWindow)."""
    prim = _window_reduction(computation)
    if prim is None:
        raise TypeError(f"reduce_window: minijax supports the computations lax.add, "
                        f"lax.max and lax.min, got {computation!r}")
    if isinstance(operand, (tuple, list)):
        raise TypeError("reduce_window: minijax reduces one operand at a time, got a "
                        f"{type(operand).__name__} of operands")
    aval = aval_of(operand)
    n = aval.ndim
    window_dimensions = _ints("window_dimensions", window_dimensions, n)
    window_strides = _ints("window_strides", window_strides, n)
    base_dilation = (1,) * n if base_dilation is None else _ints("base_dilation",
                                                                 base_dilation, n)
    window_dilation = (1,) * n if window_dilation is None else _ints(
        "window_dilation", window_dilation, n)
    if isinstance(padding, str):
        padding = W.padtype_to_pads(aval.shape, [W.dilate_dim(w, d) for w, d in zip(
            window_dimensions, window_dilation)], window_strides, padding)
    else:
        padding = _explicit_padding("reduce_window", padding, n)
    out = bind(prim, operand, window_dimensions=window_dimensions,
               window_strides=window_strides, padding=padding, base_dilation=base_dilation,
               window_dilation=window_dilation)
    if not isinstance(init_value, Tracer) and np.ndim(init_value) == 0 and \
            np.asarray(init_value) == W.window_identity(prim, aval.dtype):
        return out      # (JAX too checks the init's dtype only when it is not this)
    init = _as_init(init_value, aval)
    # XLA starts every window at `init_value` and skips padding and holes (JAX
    # 0.10 on CPU: a padded window of ones with init 1.5 sums to 2.5), so a
    # non-identity init is combined once with the reduction of the real elements.
    combine = {W.reduce_window_sum_p: lax_.add, W.reduce_window_max_p: lax_.max,
               W.reduce_window_min_p: lax_.min}[prim]
    return combine(out, init)


def _as_init(init_value, aval):
    if isinstance(init_value, (bool, int, float, complex)):
        return lax_.convert_element_type(init_value, aval.dtype, weak_type=aval.weak_type)
    init_aval = aval_of(init_value)
    if init_aval.ndim != 0:
        raise TypeError(f"reduce_window: init_value must be a scalar, got {init_aval}")
    if init_aval.dtype != aval.dtype:
        raise TypeError(f"reduce_window got inconsistent dtypes for operands and "
                        f"init_values: got operand dtype {aval.dtype.name} and init_value "
                        f"dtype {init_aval.dtype.name}")
    return init_value
