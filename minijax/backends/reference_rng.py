"""NumPy rules of XLA's generators: `rng_bit_generator` and `rng_uniform`.

Read `reference_random.py` first. `rng_bit_generator` reproduces, bit for bit, what
XLA computes for its RngBitGenerator op (its expansion in terms of plain integer
arithmetic, the same on every backend that expands it: CPU and GPU):

* The state is two u64 words (the u32[4] key read as two little-endian u64s): a key
  and a counter.
* THREE_FRY: the bits are Threefry-2x32 under the key, of counter + i for each i.
  For 32 bits (and narrower, which are 32 bits truncated) each hash gives two
  values: the shape is halved along its first even axis (else its longest, rounded
  up) and the two output words are interleaved along that axis. For 64 bits each
  hash gives one value, its two words as the low and high halves. The new counter is
  the old one plus the number of hashes.
* PHILOX (RNG_DEFAULT on CPU and GPU): Philox-4x32 with 10 rounds under the key, of
  a 128-bit counter whose low word is the state's counter and high word the state's
  key (XLA reverses the two-word state), plus i; each block gives four 32-bit values
  (or two 64-bit ones, from word pairs), laid out in order. The new state is the key
  and the low word of the advanced counter.

`rng_uniform` is XLA's stateful generator, whose values no one can reproduce: here it
draws from NumPy's generator, uniformly in [a, b), with the same contract.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import random_primitives as R
from .reference_rules import reference_rules, _rule

_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
_LOW32, _32 = np.uint64(0xFFFFFFFF), np.uint64(32)


def _halves(u64):
    """The low and high uint32 words of uint64s."""
    return (u64 & _LOW32).astype(np.uint32), (u64 >> _32).astype(np.uint32)


def _join(low, high):
    return low.astype(np.uint64) | (high.astype(np.uint64) << _32)


def _threefry(key, counter, shape, wide):
    n = math.prod(shape)
    if wide:
        hashed = _threefry_counters(key, counter, n)
        return _join(*hashed).reshape(shape), counter + np.uint64(n)
    if not shape:
        first, _ = _threefry_counters(key, counter, 1)
        return first.reshape(()), counter + np.uint64(1)
    axis = next((i for i, d in enumerate(shape) if d % 2 == 0),
                max(range(len(shape)), key=lambda i: (shape[i], -i)))
    half = list(shape)
    half[axis] = -(-shape[axis] // 2)
    first, second = (w.reshape(half) for w in _threefry_counters(key, counter, math.prod(half)))
    paired = list(shape)
    paired[axis] = 2 * half[axis]
    bits = np.stack([first, second], axis=axis + 1).reshape(paired)
    return bits[tuple(slice(0, d) for d in shape)], counter + np.uint64(math.prod(half))


def _threefry_counters(key, counter, n):
    k1, k2 = _halves(key)
    counters = counter + np.arange(n, dtype=np.uint64)
    return tuple(np.asarray(w, np.uint32)
                 for w in R.threefry2x32_rounds(k1, k2, *_halves(counters), np.uint32))


def _philox4x32(words, key):
    x0, x1, x2, x3 = words
    k0, k1 = key
    for _ in range(10):
        p0 = x0.astype(np.uint64) * _PHILOX_M[0]
        p1 = x2.astype(np.uint64) * _PHILOX_M[1]
        (l0, h0), (l1, h1) = _halves(p0), _halves(p1)
        x0, x1, x2, x3 = h1 ^ x1 ^ k0, l1, h0 ^ x3 ^ k1, l0
        k0, k1 = k0 + _PHILOX_W[0], k1 + _PHILOX_W[1]
    return x0, x1, x2, x3


def _philox(key, counter, shape, wide):
    n = math.prod(shape)
    blocks = -(-(2 * n if wide else n) // 4)
    low = counter + np.arange(blocks, dtype=np.uint64)
    high = np.where(low < counter, key + np.uint64(1), key)   # the carry out of the low word
    words = _philox4x32((*_halves(low), *_halves(high)), _halves(key))
    if wide:
        values = np.stack([_join(words[0], words[1]), _join(words[2], words[3])], axis=1)
    else:
        values = np.stack(words, axis=1)
    return values.reshape(-1)[:n].reshape(shape), counter + np.uint64(blocks)


def _rng_bit_generator(key, *, shape, dtype, algorithm):
    key = np.asarray(key)
    state = np.ascontiguousarray(key).view(np.uint64) if key.dtype == np.uint32 else key
    dtype = np.dtype(dtype)
    generate = _threefry if algorithm == 1 else _philox   # RNG_DEFAULT: Philox
    with np.errstate(over="ignore"):   # the counters and the hashes wrap around
        bits, counter = generate(state[0], state[1], tuple(shape), dtype.itemsize == 8)
    new_state = np.array([state[0], counter], np.uint64)
    new_key = new_state.view(np.uint32) if key.dtype == np.uint32 else new_state
    return [new_key, bits.astype(dtype)]


reference_rules[R.rng_bit_generator_p] = _rng_bit_generator

_stateful = np.random.default_rng()


@_rule(R.rng_uniform_p)
def _rng_uniform(a, b, *, shape):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu":
        if int(b) <= int(a):   # undefined in XLA; here every value is a
            return np.full(shape, a, a.dtype)
        return _stateful.integers(int(a), int(b), size=shape).astype(a.dtype)
    values = (a.astype(np.float64) + (b.astype(np.float64) - a.astype(np.float64))
              * _stateful.random(size=shape)).astype(a.dtype)
    return np.where(values < b, values, a).astype(a.dtype)   # rounding may reach b

