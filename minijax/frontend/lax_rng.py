"""`lax.rng_bit_generator`, `lax.RandomAlgorithm` and `lax.rng_uniform`: XLA's own
generators (`ir/random_primitives.py` says what the primitives compute;
`backends/reference_rng.py` how, bit for bit). `minijax.random`'s 'rbg' and
'unsafe_rbg' keys draw their bits with `rng_bit_generator`."""
from __future__ import annotations

import enum
import operator
from typing import Sequence

import numpy as np

from .sharding import apply_out_sharding
from ..ir import random_primitives as R
from ..ir.trace import aval_of, bind
from ..ir.types import canonical_dtype

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]


class RandomAlgorithm(enum.IntEnum):
    """Which PRNG algorithm `rng_bit_generator` uses (JAX's members and values)."""

    RNG_DEFAULT = 0
    "The platform's default algorithm (Philox on CPU and GPU)."

    RNG_THREE_FRY = 1
    "The Threefry-2x32 PRNG algorithm."

    RNG_PHILOX = 2
    "The Philox-4x32 PRNG algorithm."

    def __str__(self):
        return self.name


def _shape(name, shape) -> tuple:
    if not isinstance(shape, Sequence):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None
    if any(d < 0 for d in shape):
        raise TypeError(f"{name}: shape dimensions must be non-negative, got {shape}")
    return shape


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """XLA's stateless bit generator: `(new_key, bits)`, with `bits` of `shape` and the
    unsigned `dtype` drawn from `key` (uint32[4]) by `algorithm`. The same key gives the
    same bits; `new_key` is the key with its counter moved past them."""
    shape = _shape("rng_bit_generator", shape)
    dtype = canonical_dtype(dtype)
    if dtype not in R.RNG_BITS_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    if algorithm not in tuple(RandomAlgorithm):
        raise TypeError(f"rng_bit_generator: algorithm must be a RandomAlgorithm, got "
                        f"{algorithm!r}")
    new_key, bits = bind(R.rng_bit_generator_p, key, shape=shape, dtype=dtype,
                         algorithm=int(algorithm))
    return new_key, apply_out_sharding(bits, out_sharding, "rng_bit_generator")


def rng_uniform(a, b, shape):
    """Values uniformly distributed in [a, b) from XLA's stateful generator: every call
    draws afresh, and the values are not reproducible (use `minijax.random`)."""
    if not isinstance(shape, Sequence):
        raise TypeError(f"rng_uniform: shape must be a sequence of integers, got {shape!r}")
    shape = _shape("rng_uniform", shape)
    a_aval, b_aval = aval_of(a), aval_of(b)
    if a_aval.dtype != b_aval.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{a_aval.dtype} and {b_aval.dtype}.")
    if a_aval.shape != () or b_aval.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes "
                         f"{a_aval.shape} and {b_aval.shape}.")
    return bind(R.rng_uniform_p, a, b, shape=shape)
