"""Primitives for pseudo-random numbers: bit operations, `erf_inv`, and keys.

Read `primitives.py` first (the `Primitive` class and the rule tables). This module
declares the primitives `minijax.random` is built from, with their type rules; their
other rules live in `backends/xla_random.py`, `backends/reference_random.py` and
`transforms/random_rules.py`.

Bit operations (also useful on their own; `minijax.lax` exposes them under JAX's names):

* `shift_left x n`, `shift_right_logical x n`, `shift_right_arithmetic x n` -- integer
  shifts. As in XLA, a shift by the bit width or more (or by a negative amount) gives
  0, or the sign fill for the arithmetic right shift.
* `population_count x` -- the number of set bits of each element.
* `bitcast_convert_type[new_dtype] x` -- reinterpret the bits. Between equal widths
  the shape is kept; to a narrower dtype a trailing axis of the width ratio is added,
  and to a wider one it is removed (as `jax.lax.bitcast_convert_type`). The samplers
  use it for the mantissa trick: 23 random bits or'ed into the bits of 1.0 make a
  float in [1, 2).
* `reduce_precision[exponent_bits, mantissa_bits] x` -- each float rounded (to
  nearest, ties to even) to a format with that many exponent and mantissa bits and
  stored back in its own dtype: out-of-range magnitudes become infinities or zeros,
  NaN stays NaN (`jax.lax.reduce_precision`; a float bit operation, kept here).
* `nextafter x y`, `erf_inv x` -- the float functions the samplers need, and
  `random_gamma_grad a x`: the derivative of a Gamma(a) sample x with respect to a,
  at fixed CDF value (the implicit reparametrization gradient of `random.gamma`).

Keys. A key array has a *key dtype*, `key<fry>` (threefry2x32, JAX's default), or
`key<rbg>` / `key<urbg>` (JAX's 'rbg' and 'unsafe_rbg'): an aval
`ShapedArray(shape, KEY_DTYPE)` whose every element is one key. Behind the dtype is a
NumPy structured dtype with one field of two uint32s (four for rbg keys), so shape operations (reshape, broadcast, slicing, gather, concatenate,
select_n, scan stacking, vmap's moving of axes) work on key arrays exactly as on any
array, in every pass and in the NumPy evaluator, while arithmetic refuses them. Three
primitives cross between keys and their bits:

* `random_wrap x` -- `u32[..., 2]` -> `key<fry>[...]`; with the param `impl='rbg'`
  (or 'unsafe_rbg'), `u32[..., 4]` -> `key<rbg>[...]` (absent, it is threefry2x32);
* `random_unwrap k` -- `key<fry>[...]` -> `u32[..., 2]` (or 4 words);
* `threefry2x32 k1 k2 x1 x2` -- the Threefry-2x32 block cipher (20 rounds), on four
  `u32` arrays of one shape (a rank-0 operand stands for a splat), giving two. It is
  the one hash every threefry key operation and sampler reduces to.

rbg keys draw their bits from XLA's generator, `rng_bit_generator` (end of this
module).

Two identity primitives on key arrays exist only for the key-reuse checker
(`jax_debug_key_reuse`, `transforms/key_reuse.py`), and are bound only while it is on,
so programs traced without it hold neither:

* `random_consume k` -- `k` itself, marked as used up: the samplers and `split` bind
  it on the key they hash (JAX's `random_bits` and `random_split` consume their key);
* `random_clone k` -- `k` itself as a fresh, unused key (`random.clone`).

Why `threefry2x32` is a primitive rather than its ~120 shift/xor/add equations: the
hash has no derivative and batches elementwise, so one equation is all any pass needs
to know, and a program that draws random numbers stays readable. Its two
implementations (XLA and NumPy) are minijax's own, written from the published
algorithm, and agree with `jax.random` bit for bit.
"""
from __future__ import annotations

import numpy as np

from .types import (ShapedArray, KEY_DTYPES, bfloat16, is_key, key_size, is_float, is_integer, is_bool,
                    is_complex)
from .registry import Primitive, type_rules, _array, _fail
from .elementwise import _unary, _nary, _binary_shape

__all__ = ["shift_left_p", "shift_right_logical_p", "shift_right_arithmetic_p",
           "population_count_p", "bitcast_convert_type_p", "nextafter_p", "erf_inv_p",
           "random_gamma_grad_p", "reduce_precision_p",
           "random_wrap_p", "random_unwrap_p", "threefry2x32_p", "random_consume_p",
           "random_clone_p", "random_primitives", "rng_bit_generator_p", "rng_uniform_p",
           "RNG_BITS_DTYPES"]

# -- bit operations -------------------------------------------------------------------

shift_left_p = _nary("shift_left", is_integer)
shift_right_logical_p = _nary("shift_right_logical", is_integer)
shift_right_arithmetic_p = _nary("shift_right_arithmetic", is_integer)
population_count_p = _unary("population_count", is_integer)
nextafter_p = _nary("nextafter", is_float)
erf_inv_p = _unary("erf_inv", is_float)
reduce_precision_p = _unary("reduce_precision", is_float)   # params: exponent/mantissa_bits
random_gamma_grad_p = _nary("random_gamma_grad", is_float)

bitcast_convert_type_p = Primitive("bitcast_convert_type")


def bitcast_shape(shape, old_dtype, new_dtype) -> tuple:
    """The shape of `shape`-shaped `old_dtype` bits read as `new_dtype`."""
    old_size, new_size = np.dtype(old_dtype).itemsize, np.dtype(new_dtype).itemsize
    if old_size == new_size:
        return tuple(shape)
    if old_size > new_size:
        return (*shape, old_size // new_size)
    ratio = new_size // old_size
    if not shape or shape[-1] != ratio:
        _fail("bitcast_convert_type", f"converting {np.dtype(old_dtype).name} to the wider "
              f"{np.dtype(new_dtype).name} needs a last axis of size {ratio}, got shape "
              f"{tuple(shape)}")
    return tuple(shape[:-1])


def _bitcast_rule(x, *, new_dtype):
    _array("bitcast_convert_type", x)
    new_dtype = np.dtype(new_dtype)
    if is_key(x.dtype) or is_key(new_dtype):
        _fail("bitcast_convert_type", "cannot reinterpret keys; use random.key_data")
    if (is_bool(x.dtype) or is_complex(x.dtype) or is_bool(new_dtype)
            or is_complex(new_dtype)) and x.dtype != new_dtype:
        _fail("bitcast_convert_type", f"does not convert bool or complex values, got "
              f"{x.dtype.name} to {new_dtype.name}")
    return [ShapedArray(bitcast_shape(x.shape, x.dtype, new_dtype), new_dtype)]


type_rules[bitcast_convert_type_p] = _bitcast_rule

# -- keys ---------------------------------------------------------------------------

random_wrap_p = Primitive("random_wrap")
random_unwrap_p = Primitive("random_unwrap")
threefry2x32_p = Primitive("threefry2x32", multiple_results=True)
random_consume_p = Primitive("random_consume")
random_clone_p = Primitive("random_clone")


def _random_wrap_rule(x, *, impl="threefry2x32"):
    _array("random_wrap", x)
    if impl not in KEY_DTYPES:
        _fail("random_wrap", f"impl must be one of {sorted(KEY_DTYPES)}, got {impl!r}")
    size = key_size(KEY_DTYPES[impl])
    if x.dtype != np.uint32 or not x.shape or x.shape[-1] != size:
        _fail("random_wrap", f"key data must be uint32 with a last axis of size {size} "
              f"({impl}), got {x}")
    return [ShapedArray(x.shape[:-1], KEY_DTYPES[impl])]


def _random_unwrap_rule(keys):
    _array("random_unwrap", keys)
    if not is_key(keys.dtype):
        _fail("random_unwrap", f"expects a key array, got {keys}")
    return [ShapedArray((*keys.shape, key_size(keys.dtype)), np.uint32)]


def _threefry2x32_rule(*operands):
    if len(operands) != 4:
        _fail("threefry2x32", f"takes 4 operands (k1, k2, x1, x2), got {len(operands)}")
    for aval in operands:
        _array("threefry2x32", aval)
        if aval.dtype != np.uint32:
            _fail("threefry2x32", f"operands must be uint32, got {aval}")
    return [ShapedArray(_binary_shape("threefry2x32", operands), np.uint32)] * 2


type_rules[random_wrap_p] = _random_wrap_rule
type_rules[random_unwrap_p] = _random_unwrap_rule
type_rules[threefry2x32_p] = _threefry2x32_rule


def _key_identity_rule(name):
    def rule(keys):
        _array(name, keys)
        if not is_key(keys.dtype):
            _fail(name, f"expects a key array, got {keys}")
        return [keys]
    return rule


type_rules[random_consume_p] = _key_identity_rule("random_consume")
type_rules[random_clone_p] = _key_identity_rule("random_clone")

# -- XLA's bit generators ----------------------------------------------------------------
# `rng_bit_generator[shape, dtype, algorithm] key` -> (new key, bits): XLA's
# RngBitGenerator. The key is the generator's state, u32[4] (or u64[2], XLA's own
# form): a 64-bit key and a 64-bit counter. `algorithm` is `lax.RandomAlgorithm` as an
# int: 0 the platform's default, 1 THREE_FRY, 2 PHILOX. The bits are a pure function
# of the key; the new key is the old one with its counter advanced past them.
# `rng_uniform[shape] a b` -> values in [a, b) from XLA's stateful generator: each run
# draws afresh, so no two runs, and no two backends, agree on its values.

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)
rng_uniform_p = Primitive("rng_uniform")
RNG_BITS_DTYPES = tuple(np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64))
# What XLA's stateful uniform generator draws (it aborts the process on anything else).
RNG_UNIFORM_DTYPES = (np.dtype(bfloat16), *(np.dtype(d) for d in (
    "float16", "float32", "float64", "int32", "uint32", "int64", "uint64")))


def _rng_bit_generator_rule(key, *, shape, dtype, algorithm):
    _array("rng_bit_generator", key)
    if not ((key.dtype == np.uint32 and key.shape == (4,))
            or (key.dtype == np.uint64 and key.shape == (2,))):
        _fail("rng_bit_generator", f"the key must be uint32[4] (or uint64[2]), got {key}")
    if np.dtype(dtype) not in RNG_BITS_DTYPES:
        _fail("rng_bit_generator", f"unsupported dtype {np.dtype(dtype).name}: the bits are "
              f"uint8, uint16, uint32 or uint64")
    if algorithm not in (0, 1, 2):
        _fail("rng_bit_generator", f"algorithm must be 0 (RNG_DEFAULT), 1 (RNG_THREE_FRY) "
              f"or 2 (RNG_PHILOX), got {algorithm!r}")
    return [key, ShapedArray(tuple(shape), np.dtype(dtype))]


def _rng_uniform_rule(a, b, *, shape):
    _array("rng_uniform", a)
    _array("rng_uniform", b)
    if a.dtype != b.dtype:
        _fail("rng_uniform", f"a and b must have one dtype, got {a.dtype.name} and "
              f"{b.dtype.name}")
    if a.shape or b.shape:
        _fail("rng_uniform", f"a and b must be scalars, got shapes {a.shape} and {b.shape}")
    if a.dtype not in RNG_UNIFORM_DTYPES:
        _fail("rng_uniform", f"draws {', '.join(d.name for d in RNG_UNIFORM_DTYPES)}, got "
              f"{a.dtype.name}")
    return [ShapedArray(tuple(shape), a.dtype, a.weak_type and b.weak_type)]


type_rules[rng_bit_generator_p] = _rng_bit_generator_rule
type_rules[rng_uniform_p] = _rng_uniform_rule

random_primitives = (random_wrap_p, random_unwrap_p, threefry2x32_p, random_consume_p,
                     random_clone_p)
bit_primitives = (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p,
                  population_count_p)


# -- the cipher, once for both backends ----------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA   # Threefry's key-schedule constant


def threefry2x32_rounds(k1, k2, x1, x2, uint32):
    """Threefry-2x32 with 20 rounds on uint32 arrays that support `+ ^ << >> |` with
    wrap-around (NumPy arrays, or jax.Arrays inside the XLA lowering); `uint32` makes a
    constant of the arrays' kind. Returns the two output words.

    The key schedule is (k1, k2, k1 ^ k2 ^ PARITY); every four rounds one schedule
    entry is injected into each word, plus the injection count into the second."""
    def rotate_left(v, r):
        return (v << uint32(r)) | (v >> uint32(32 - r))

    schedule = (k1, k2, k1 ^ k2 ^ uint32(_PARITY))
    x1, x2 = x1 + schedule[0], x2 + schedule[1]
    for injection in range(1, 6):
        for r in _ROTATIONS[(injection - 1) % 2]:
            x1 = x1 + x2
            x2 = rotate_left(x2, r) ^ x1
        x1 = x1 + schedule[injection % 3]
        x2 = x2 + schedule[(injection + 1) % 3] + uint32(injection)
    return x1, x2
