"""The pass rules of the bit operations, `erf_inv` and the key primitives.

Read `jvp_rules.py` and `vmap.py` first. The bit operations and the key primitives
have integer or key outputs, so their tangent is a symbolic zero (of dtype float0, as
JAX's). `reduce_precision` rounds tangents and cotangents as it rounds values (JAX
calls it linear). `erf_inv` has its derivative; `nextafter` and `random_gamma_grad` have none in
JAX, so a non-zero tangent reaching them is an error, as there. Apart from
`reduce_precision`, no primitive here is linear, so transposition, partial evaluation, DCE and discharge take their generic
paths. Batching is elementwise except where a primitive adds or removes the trailing
axis of a key's two words (`random_wrap`, `random_unwrap`, and `bitcast_convert_type`
between widths): there the batch axis is kept off that axis.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import primitives as P
from ..ir import random_primitives as R
from ..ir.trace import aval_of
from .ad_util import Zero, const_like, mul
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules
from .jvp_rules import _defjvp, _defzero, _out, exp, square
from .vmap import (vmap_rules, Batched, broadcast_batched, moveaxis, _unary_rule,
                   _nary_rule)

# -- jvp ------------------------------------------------------------------------------

# rng_bit_generator: JAX has no jvp rule, and needs none: its key is an integer array,
# so every tangent reaching it is a symbolic zero.
for _prim in (*R.bit_primitives, R.bitcast_convert_type_p, *R.random_primitives,
              R.rng_bit_generator_p):
    _defzero(_prim)

# d/dx erfinv(x) = sqrt(pi)/2 * exp(erfinv(x)^2), multiplied in JAX's order.
_defjvp(R.erf_inv_p, lambda t, ans, x: mul(const_like(x, math.sqrt(math.pi) / 2),
                                           mul(t, exp(square(ans)))))


def _not_differentiable(prim):
    """JAX defines no derivative of `prim`: only constant operands may reach it."""
    def rule(primals, tangents, **params):
        if any(type(t) is not Zero for t in tangents):
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not "
                                      f"implemented")
        outs = _out(prim, primals, params)
        return JvpResult(outs, [Zero(aval_of(outs[0]))])
    jvp_rules[prim] = rule


# reduce_precision is applied to tangents and cotangents as they are, as JAX's rule has it.
jvp_rules[R.reduce_precision_p] = lambda primals, tangents, **params: JvpResult(
    _out(R.reduce_precision_p, primals, params),
    [tangents[0] if type(tangents[0]) is Zero
     else R.reduce_precision_p.bind(tangents[0], **params)])
transpose_rules[R.reduce_precision_p] = lambda cts, x, **params: [
    cts[0] if type(cts[0]) is Zero else R.reduce_precision_p.bind(cts[0], **params)]

_not_differentiable(R.nextafter_p)
_not_differentiable(R.random_gamma_grad_p)
_not_differentiable(R.rng_uniform_p)

# -- vmap -----------------------------------------------------------------------------

for _prim in (R.shift_left_p, R.shift_right_logical_p, R.shift_right_arithmetic_p,
              R.nextafter_p, R.random_gamma_grad_p):
    vmap_rules[_prim] = _nary_rule(_prim)
for _prim in (R.population_count_p, R.erf_inv_p, R.reduce_precision_p):
    vmap_rules[_prim] = _unary_rule(_prim)


def _off_last_axis(axis_size, x, d):
    """`x` with its batch axis `d` moved to the front if it is the last axis (the
    axis a key's words, or a wider element's parts, live on)."""
    if d == aval_of(x).ndim - 1:
        return moveaxis(x, d, 0), 0
    return x, d


def _random_wrap_rule(axis_size, values, dims, **params):
    x, d = _off_last_axis(axis_size, values[0], dims[0])
    return Batched([R.random_wrap_p.bind(x, **params)], [d])


def _random_unwrap_rule(axis_size, values, dims):
    # The words become a new last axis: the batch axis keeps its position.
    return Batched([R.random_unwrap_p.bind(values[0])], [dims[0]])


def _bitcast_rule(axis_size, values, dims, *, new_dtype):
    x, d = _off_last_axis(axis_size, values[0], dims[0])
    return Batched([R.bitcast_convert_type_p.bind(x, new_dtype=new_dtype)], [d])


def _threefry2x32_rule(axis_size, values, dims):
    operands, target = broadcast_batched(axis_size, values, dims, [True] * 4)
    return Batched(R.threefry2x32_p.bind(*operands), [target, target])


def _key_mark_rule(prim):
    return lambda axis_size, values, dims: Batched([prim.bind(values[0])], [dims[0]])


vmap_rules[R.random_wrap_p] = _random_wrap_rule
vmap_rules[R.random_unwrap_p] = _random_unwrap_rule
vmap_rules[R.bitcast_convert_type_p] = _bitcast_rule
vmap_rules[R.threefry2x32_p] = _threefry2x32_rule
vmap_rules[R.random_consume_p] = _key_mark_rule(R.random_consume_p)
vmap_rules[R.random_clone_p] = _key_mark_rule(R.random_clone_p)


def _rng_bit_generator_rule(axis_size, values, dims, *, shape, **params):
    # As JAX batches it: one draw from the FIRST key for the whole batch, the batch
    # axis leading the bits; only that key advances. (Not one draw per key.)
    keys = moveaxis(values[0], dims[0], 0)
    key_shape = aval_of(keys).shape[1:]
    first = P.reshape_p.bind(P.slice_p.bind(keys, start_indices=(0,) * (1 + len(key_shape)),
                                            limit_indices=(1, *key_shape), strides=None),
                             new_sizes=key_shape, dimensions=None)
    new_key, bits = R.rng_bit_generator_p.bind(first, shape=(axis_size, *shape), **params)
    new_keys = P.dynamic_update_slice_p.bind(
        keys, P.reshape_p.bind(new_key, new_sizes=(1, *key_shape), dimensions=None),
        *[np.int32(0)] * (1 + len(key_shape)))
    return Batched([new_keys, bits], [0, 0])


def _unbatchable(prim):
    def rule(axis_size, values, dims, **params):
        raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
    return rule


vmap_rules[R.rng_bit_generator_p] = _rng_bit_generator_rule
# a and b are scalars: JAX has no way to batch them, and says so.
vmap_rules[R.rng_uniform_p] = _unbatchable(R.rng_uniform_p)
