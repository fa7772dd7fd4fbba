"""The two counter layouts of a threefry key's `split` and `random_bits`, as JAX's
`jax_threefry_partitionable` flag picks them (`docs/random.md`, "Counter layouts").
`random_core.py` calls `split_words` and `threefry_bits` on a key's two words; both
read the flag as they trace, so a trace holds one layout (the flag empties the trace
caches when it changes)."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from .config_flags import threefry_partitionable
from ..ir import random_primitives as R
from ..ir.trace import bind

_U32 = np.dtype(np.uint32)
# The most words one hash of a counter stream gives with the flag off (the largest
# uint32 count); a bigger draw is made of such blocks, each under its own key.
STREAM_BLOCK = 2**32 - 1
_UINT_BY_BITS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32)}


def _hash_counters(pair, shape):
    """threefry2x32 under the key `pair` (two words) of each element's index (a 64-bit
    counter in two words, the high one 0 for fewer than 2**32 elements): two u32 arrays
    of `shape`. The `jax_threefry_partitionable` layout: element i depends on i alone,
    so any slice of a draw can be computed where it is placed."""
    size = math.prod(shape)
    if size >= 2**32:
        raise ValueError(f"cannot draw {size} random values at once (at most 2**32 - 1)")
    low = lax.iota(_U32, size) if shape else np.uint32(0)
    if len(shape) > 1:
        low = lax.reshape(low, shape)
    return bind(R.threefry2x32_p, *pair, np.uint32(0), low)


def _hash_stream(pair, count):
    """`count` u32 words from the key `pair` as JAX lays them out with
    `jax_threefry_partitionable` off: the counters 0..count-1 (and a 0 after them
    when count is odd) cut in two halves, the first half hashed as the cipher's
    first word and the second as its second, and the two outputs concatenated. Each
    word thus depends on the whole draw's size."""
    if count > 2**32 - 1:
        raise ValueError(f"cannot draw {count} random words at once with "
                         f"jax_threefry_partitionable off (at most 2**32 - 1)")
    half = (count + 1) // 2
    counters = lax.iota(_U32, count)
    if count % 2:
        counters = lax.concatenate([counters, np.zeros(1, _U32)], 0)
    first, second = (lax.slice(counters, (start,), (start + half,))
                     for start in (0, half))
    words = lax.concatenate(bind(R.threefry2x32_p, *pair, first, second), 0)
    return words if count % 2 == 0 else lax.slice(words, (0,), (count,))


def _hash_blocks(pair, count):
    """`count` words with the flag off, as JAX draws them: up to `STREAM_BLOCK - 1`
    one stream; more, `nblocks + 1` keys split from `pair`, full blocks of
    `STREAM_BLOCK` words under the first `nblocks` and the rest under the last."""
    nblocks, rest = divmod(count, STREAM_BLOCK)
    if not nblocks:
        return _hash_stream(pair, count)
    keys = split_words(pair, (nblocks + 1,))
    words = [_hash_stream((keys[i, 0], keys[i, 1]), STREAM_BLOCK) for i in range(nblocks)]
    return lax.concatenate(words + [_hash_stream((keys[-1, 0], keys[-1, 1]), rest)], 0)


def split_words(pair, shape):
    """The two words of each of the keys `split` makes from the threefry key `pair`:
    u32 of `shape + (2,)`."""
    if threefry_partitionable.value:
        return jnp.stack(_hash_counters(pair, shape), axis=-1)
    return lax.reshape(_hash_stream(pair, 2 * math.prod(shape)), (*shape, 2))


def threefry_bits(pair, bit_width, shape):
    """`bit_width`-bit random values of `shape` from the threefry key `pair`."""
    uint = _UINT_BY_BITS[bit_width]
    if threefry_partitionable.value:
        bits = lax.bitwise_xor(*_hash_counters(pair, shape))
        return bits if bit_width == 32 else lax.convert_element_type(bits, uint)
    size = math.prod(shape)
    per_word = 32 // bit_width
    count = -(-size * bit_width // 32)
    words = _hash_blocks(pair, count)
    if per_word > 1:    # each word's narrow values, its low bits first (a little-endian view)
        shifts = lax.mul(lax.iota(_U32, per_word), np.array(bit_width, _U32))
        words = lax.shift_right_logical(
            lax.broadcast_in_dim(words, (count, per_word), (0,)),
            lax.broadcast_in_dim(shifts, (count, per_word), (1,)))
        words = lax.slice(lax.reshape(words, (count * per_word,)), (0,), (size,))
    return lax.reshape(lax.convert_element_type(words, uint), shape)
