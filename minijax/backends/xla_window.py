"""XLA lowering of the window primitives: one `jax.lax` call each.

Read `xla.py` first. `conv_general_dilated` becomes `jax.lax.conv_general_dilated`
with its dimension numbers rebuilt as a `ConvDimensionNumbers` and its precision
names as `lax.Precision` members; the windowed reductions become
`jax.lax.reduce_window` with the reduction's identity as the initial value (which is
what XLA pads with), so each is a single XLA `reduce-window`.
"""
from __future__ import annotations

import functools

from jax import lax

from ..ir import window_primitives as W
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .xla import lowering_rules, precision_enum


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count=1, batch_group_count=1, precision=None,
          preferred_element_type=None):
    dnums = lax.ConvDimensionNumbers(*(tuple(spec) for spec in dimension_numbers))
    return lax.conv_general_dilated(
        lhs, rhs, tuple(window_strides), tuple(tuple(p) for p in padding),
        tuple(lhs_dilation), tuple(rhs_dilation), dnums,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision_enum(precision), preferred_element_type=preferred_element_type)


_COMBINE = {W.reduce_window_sum_p: lax.add, W.reduce_window_max_p: lax.max,
            W.reduce_window_min_p: lax.min}


def _reduce_window(prim):
    combine = _COMBINE[prim]

    def rule(operand, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        init = W.window_identity(prim, operand.dtype)
        return lax.reduce_window(operand, init, combine, tuple(window_dimensions),
                                 tuple(window_strides), tuple(tuple(p) for p in padding),
                                 tuple(base_dilation), tuple(window_dilation))
    return rule


lowering_rules[W.conv_general_dilated_p] = lambda *args, **params: [_conv(*args, **params)]
for _prim in W.reduce_window_primitives:
    lowering_rules[_prim] = functools.partial(
        lambda rule, *args, **params: [rule(*args, **params)], _reduce_window(_prim))

for _prim in (W.conv_general_dilated_p, *W.reduce_window_primitives):
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
