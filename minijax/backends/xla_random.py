"""XLA lowering of the bit operations, `erf_inv` and the key primitives.

Read `xla.py` first (the `lowering_rules` table), then `ir/random_primitives.py`
(what each primitive means). The bit operations, `erf_inv` and `random_gamma_grad`
map one to one onto `jax.lax`. Keys are jax.Arrays of JAX's `key<fry>` dtype at run time: `random_wrap` /
`random_unwrap` convert with `jax.random.wrap_key_data` / `key_data` (data only), and
`threefry2x32` is minijax's own cipher (`threefry2x32_rounds`) written in `jax.lax`
arithmetic. `rng_bit_generator` and `rng_uniform` are XLA's own generators, reached
through `jax.lax`'s functions of those names; no other JAX random function computes a
result.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from ..ir import random_primitives as R
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .xla import lowering_rules, _register_single, _binary_rule

_BINARY = {R.shift_left_p: lax.shift_left, R.shift_right_logical_p: lax.shift_right_logical,
           R.shift_right_arithmetic_p: lax.shift_right_arithmetic,
           R.nextafter_p: lax.nextafter, R.random_gamma_grad_p: lax.random_gamma_grad}
for _prim, _fn in _BINARY.items():
    _register_single(_prim, _binary_rule(_fn))
_register_single(R.population_count_p, lax.population_count)
_register_single(R.erf_inv_p, lax.erf_inv)
_register_single(R.reduce_precision_p, lambda x, *, exponent_bits, mantissa_bits:
                 lax.reduce_precision(x, exponent_bits, mantissa_bits))
_register_single(R.bitcast_convert_type_p, lambda x, *, new_dtype:
                 lax.bitcast_convert_type(x, new_dtype))

_register_single(R.random_wrap_p, lambda words, impl="threefry2x32": jax.random.wrap_key_data(
    words, impl=impl))
_register_single(R.random_unwrap_p, jax.random.key_data)
# The key-reuse checker's marks compute nothing.
_register_single(R.random_consume_p, lambda keys: keys)
_register_single(R.random_clone_p, lambda keys: keys)


def _threefry2x32(k1, k2, x1, x2):
    return list(R.threefry2x32_rounds(k1, k2, x1, x2, jnp.uint32))


lowering_rules[R.threefry2x32_p] = _threefry2x32


def _rng_bit_generator(key, *, shape, dtype, algorithm):
    return list(lax.rng_bit_generator(key, shape, dtype, lax.RandomAlgorithm(algorithm)))


lowering_rules[R.rng_bit_generator_p] = _rng_bit_generator
_register_single(R.rng_uniform_p, lambda a, b, *, shape: lax.rng_uniform(a, b, shape))

for _prim in (*_BINARY, R.population_count_p, R.erf_inv_p, R.reduce_precision_p,
              R.bitcast_convert_type_p,
              *R.random_primitives, R.rng_bit_generator_p, R.rng_uniform_p):
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
