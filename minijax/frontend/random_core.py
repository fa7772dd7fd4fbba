"""Keys, `split`/`fold_in` and the basic samplers of `minijax.random` (read the public
module's docstring, `minijax/random.py`, first). `random_distributions.py` and
`random_more.py` build the other distributions on these."""
from __future__ import annotations

import functools
import inspect
import math
import operator
import warnings
from typing import Sequence

import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as jnp
from .config_flags import custom_prng, default_prng_impl, raw_key_policy
from .jit import jit
from .lax_rng import rng_bit_generator
from .sharding import apply_out_sharding
from .threefry_layout import split_words, threefry_bits
from ..ir import random_primitives as R
from ..ir import root_modes
from ..ir.root_modes import everywhere as _everywhere
from ..ir.trace import aval_of, bind, refuse_traced_dims
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.types import (KEY_DTYPES, canonical_dtype, is_key, is_float, is_inexact,
                        is_integer, jax_array_type, key_impl_name, key_size)


_IMPL = "threefry2x32"
_UINT_BY_BITS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32)}
_U32 = np.dtype(np.uint32)
_IMPL_BY_TAG = {dtype.names[0]: impl for impl, dtype in KEY_DTYPES.items()}


# -- keys ------------------------------------------------------------------------------
# Three implementations, as JAX names them. 'threefry2x32' (the default): two words,
# and every operation a Threefry hash. 'rbg': four words, two threefry keys side by
# side that split and fold in as threefry keys do; its bits come from XLA's
# RngBitGenerator. 'unsafe_rbg': the same keys and bits, but split and fold_in made of
# RngBitGenerator draws too (cheaper, and without threefry's guarantees).

def _is_key_array(x) -> bool:
    return is_key(aval_of(x).dtype)


def _impl_name(impl) -> str:
    """JAX's name of the implementation `impl` names (a name, a key dtype, or JAX's
    PRNGSpec/PRNGImpl); None is the `jax_default_prng_impl` flag's."""
    if impl is None:
        return default_prng_impl.value
    if isinstance(impl, str):
        name = impl
    elif str(impl).startswith("key<"):   # a key dtype, JAX's or minijax's
        name = _IMPL_BY_TAG.get(str(impl)[4:-1], str(impl))
    elif isinstance(impl, np.dtype) and is_key(impl):
        name = key_impl_name(impl)
    elif isinstance(getattr(impl, "name", None), str):
        name = impl.name
    else:
        raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG "
                        f"implementation.")
    if name not in KEY_DTYPES:
        raise ValueError(f'unrecognized PRNG implementation "{name}": minijax.random '
                         f'implements {", ".join(map(repr, KEY_DTYPES))}')
    return name


def _check_key_data(data, impl):
    """`data` must be raw key data of `impl`: uint32 with a last axis of its key size."""
    size = key_size(KEY_DTYPES[impl])
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        raise TypeError(f"invalid PRNG key data: expected a uint32 array whose shape ends "
                        f"with ({size},), got {data!r}")
    aval = aval_of(data)
    if aval.dtype != _U32:
        raise TypeError(f"invalid PRNG key data: expected dtype uint32, got {aval.dtype.name}")
    if aval.shape[-1:] != (size,):
        raise TypeError(f"invalid PRNG key data: expected a shape ending with ({size},) for "
                        f"{impl}, got shape {aval.shape}")


def _wrap(words, impl):
    # threefry's wrap carries no impl param, so programs that use only threefry keys
    # read as they always have.
    if impl == _IMPL:
        return bind(R.random_wrap_p, words)
    return bind(R.random_wrap_p, words, impl=impl)


_LEGACY_KEY = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               "jax_legacy_prng_key=\"allow\".")


def _check_key(name, key, allow_batched=False):
    """The typed key of `key` (typed, or raw data of the default implementation), and
    whether it was raw."""
    if _is_key_array(key):
        typed, raw = key, False
    else:
        impl = _impl_name(None)
        _check_key_data(key, impl)
        typed, raw = _wrap(key, impl), True
        policy = raw_key_policy.value
        if policy == "error":
            raise ValueError(_LEGACY_KEY)
        if policy == "warn":
            warnings.warn(_LEGACY_KEY, stacklevel=3)
        elif custom_prng.value:
            warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                          "Assuming valid threefry2x32 key for now.", FutureWarning,
                          stacklevel=3)
    if not allow_batched and aval_of(typed).ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{aval_of(typed).shape} != (). Use vmap for batching.")
    return typed, raw


def _raw_key_at_root(key) -> bool:
    """`key` is a concrete raw threefry key (a JAX array, uint32[2]) met at the root
    trace with jit on, raw keys allowed silently: the common eager call. Its sampler
    then runs the wrap inside its program (`_wrapping`) instead of dispatching
    `random_wrap` eagerly before it, one compiled call where JAX makes two. (Traced,
    the program keeps JAX's equations.) The flags that make a raw key warn, fail or
    mean another implementation (`_check_key`) send it the usual way."""
    return ((_everywhere.direct or root_modes.modes.direct)
            and type(key) is jax_array_type() and key.dtype == _U32 and key.shape == (2,)
            and raw_key_policy.value == "allow" and not custom_prng.value
            and default_prng_impl.value == _IMPL)


def _wrapping(sampler, static_argnums):
    """`sampler` (a jitted function of a typed key), taking the raw key's data."""
    def of_raw(key_data, *args):
        return sampler(bind(R.random_wrap_p, key_data), *args)
    of_raw.__name__ = of_raw.__qualname__ = sampler.__name__
    return jit(of_raw, static_argnums=static_argnums)


def _shape(name, shape) -> tuple:
    refuse_traced_dims(name, shape)
    if isinstance(shape, int):      # one axis, as JAX's canonicalize_shape takes it
        return (operator.index(shape),)
    if not isinstance(shape, Sequence):
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}")
    return tuple(operator.index(d) for d in shape)


def _seed_words(ctor, seed):
    if _is_key_array(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int):   # Python ints: their low 32 bits, as JAX with x64 off
        return np.array([0, seed % 2**32], _U32)
    aval = aval_of(seed)
    if aval.ndim:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{aval.shape} != (). Use vmap for batching")
    if not is_integer(aval.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return _words_of_seed(seed)


@jit
def _words_of_seed(seed):
    if aval_of(seed).dtype.kind == "i":   # the two's-complement bits of a signed seed
        seed = lax.bitcast_convert_type(lax.convert_element_type(seed, np.int32), _U32)
    low = lax.reshape(lax.convert_element_type(seed, _U32), (1,))
    return lax.concatenate([np.zeros(1, _U32), low], 0)


def _seed_key_words(ctor, seed, impl):
    words = _seed_words(ctor, seed)
    if impl == _IMPL:
        return words
    # rbg's seed: threefry's two words, twice.
    if isinstance(words, np.ndarray):
        return np.concatenate([words, words])
    return lax.concatenate([words, words], 0)


def _impl_or_dtype(fn_name, impl, dtype):
    if dtype is not None:
        if impl is not None:
            raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to "
                             f"jax.random.{fn_name}")
        impl = dtype
    return _impl_name(impl)


def key(seed, *, impl=None, dtype=None):
    """A typed key (shape (); dtype key<fry>, key<rbg> or key<urbg>) from an integer
    seed; `dtype` (a key dtype or an implementation's name) is the newer spelling of
    `impl`."""
    impl = _impl_or_dtype("key", impl, dtype)
    return _wrap(_seed_key_words("key", seed, impl), impl)


def PRNGKey(seed, *, impl=None):
    """A raw key: the uint32 data of `key(seed, impl=impl)` (two words, or four; under
    `jax_enable_custom_prng`, the typed key itself, as JAX's)."""
    impl = _impl_name(impl)
    words = _seed_key_words("PRNGKey", seed, impl)
    if custom_prng.value:
        return _wrap(words, impl)
    return jnp.asarray(words) if isinstance(words, np.ndarray) else words


def key_data(keys):
    """The uint32 words of `keys`: shape `keys.shape + (2,)` (threefry) or `+ (4,)`."""
    typed, _ = _check_key("key_data", keys, allow_batched=True)
    return bind(R.random_unwrap_p, typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys from their uint32 words (the inverse of `key_data`)."""
    impl = _impl_or_dtype("wrap_key_data", impl, dtype)
    _check_key_data(key_bits_array, impl)
    return _wrap(key_bits_array, impl)


def key_impl(keys) -> str:
    typed, _ = _check_key("key_impl", keys, allow_batched=True)
    return key_impl_name(aval_of(typed).dtype)


def _impl_of(typed_key) -> str:
    return key_impl_name(aval_of(typed_key).dtype)


def _key_words(typed_key):
    """The words of a single key, one scalar each."""
    words = bind(R.random_unwrap_p, typed_key)
    return [lax.index_in_dim(words, i, keepdims=False) for i in range(aval_of(words).shape[-1])]


def _threefry_halves(typed_key):
    """The threefry keys (word pairs) a key is made of: one, or two for rbg keys."""
    words = _key_words(typed_key)
    return [words[i:i + 2] for i in range(0, len(words), 2)]


def _used_up(typed_key):
    """`typed_key`, marked as used up for the key-reuse checker when it is on: drawing
    bits from a key, or splitting it, consumes it (`transforms/key_reuse.py`)."""
    return bind(R.random_consume_p, typed_key) if root_modes.modes.key_reuse else typed_key


@functools.partial(jit, static_argnums=1)
def _split(typed_key, shape):
    typed_key = _used_up(typed_key)
    impl = _impl_of(typed_key)
    if impl == "unsafe_rbg":   # every tenth row of a long RngBitGenerator draw
        count = math.prod(shape)
        _, rows = rng_bit_generator(bind(R.random_unwrap_p, typed_key), (10 * count, 4), _U32)
        words = lax.reshape(lax.slice(rows, (0, 0), (10 * count, 4), (10, 1)), (*shape, 4))
    else:   # threefry's split of each threefry half, the halves side by side
        words = jnp.concatenate([split_words(pair, shape)
                                 for pair in _threefry_halves(typed_key)], axis=-1)
    return _wrap(words, impl)


@jit
def _fold_in(typed_key, data):
    impl = _impl_of(typed_key)
    if impl == "unsafe_rbg":   # the key xor the last row of a draw from data's rbg seed
        seed = jnp.stack([np.uint32(0), data, np.uint32(0), data])
        _, rows = rng_bit_generator(seed, (10, 4), _U32)
        words = lax.bitwise_xor(bind(R.random_unwrap_p, typed_key),
                                lax.index_in_dim(rows, 9, keepdims=False))
    else:
        words = jnp.concatenate([
            jnp.stack(bind(R.threefry2x32_p, *pair, np.uint32(0), data), axis=-1)
            for pair in _threefry_halves(typed_key)], axis=-1)
    return _wrap(words, impl)


def _random_bits(typed_key, bit_width, shape):
    typed_key = _used_up(typed_key)
    if _impl_of(typed_key) != _IMPL:   # rbg and unsafe_rbg: XLA's generator
        _, bits = rng_bit_generator(bind(R.random_unwrap_p, typed_key), shape,
                                    _UINT_BY_BITS[bit_width])
        return bits
    return threefry_bits(_key_words(typed_key), bit_width, shape)


def _returned(raw, typed):
    return bind(R.random_unwrap_p, typed) if raw and not custom_prng.value else typed


def split(key, num=2):
    """`num` new keys (an int, or a shape) from `key`, along new leading axes."""
    typed, raw = _check_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return _returned(raw, _split(typed, shape))


def fold_in(key, data):
    """A new key that is a function of `key` and the 32-bit integer `data`."""
    typed, raw = _check_key("fold_in", key)
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        data = np.uint32(data)
    if aval_of(data).ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{aval_of(data).shape} != (). Use vmap for batching.")
    return _returned(raw, _fold_in(typed, lax.convert_element_type(data, _U32)))


# -- samplers ------------------------------------------------------------------------------

def _dtype(name, dtype, default, accepts, kind):
    dtype = canonical_dtype_argument(default if dtype is None else dtype, name,
                                     name_in_warning=False)
    if not accepts(dtype):
        raise ValueError(f"dtype argument to `{name}` must be a {kind} dtype, got {dtype}")
    return dtype


def _float(name, dtype):
    return _dtype(name, dtype, np.float32, is_float, "float")


def _shape_with(name, shape, *params):
    """`shape`, checked against the parameters' shapes, or their broadcast shape when
    it is None."""
    param_shapes = [aval_of(p).shape for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()
    shape = _shape(name, shape)
    _check_shape(name, shape, *param_shapes)
    return shape


def _check_shape(name, shape, *param_shapes):
    if not param_shapes:
        return
    try:
        result = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        result = "incompatible shapes " + ", ".join(map(str, (shape, *param_shapes)))
    if result != shape:
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal "
                         f"the shape argument, but got result {result} for shape argument "
                         f"{shape}.")


def _to_rank(x, rank):
    shape = aval_of(x).shape
    return x if len(shape) == rank else lax.reshape(x, (1,) * (rank - len(shape)) + shape)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default)."""
    typed, _ = _check_key("bits", key)
    dtype = _dtype("bits", dtype, np.uint32, lambda d: d.kind == "u", "unsigned int")
    return _bits(typed, _shape("bits", shape), dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _bits(typed_key, shape, dtype):
    return _random_bits(typed_key, dtype.itemsize * 8, shape)


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval)."""
    if _raw_key_at_root(key):
        return _uniform_of_raw(key, minval, maxval, _shape("uniform", shape),
                               _float("uniform", dtype))
    typed, _ = _check_key("uniform", key)
    return _uniform(typed, minval, maxval, _shape("uniform", shape), _float("uniform", dtype))


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(typed_key, minval, maxval, shape, dtype):
    minval = _to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = _to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    finfo = ml_dtypes.finfo(dtype)
    # Fewer than 8 mantissa bits (bfloat16): draw 8 bits, which the mantissa trick needs.
    rng_bits = 8 if finfo.nmant < 8 else finfo.bits
    uint = _UINT_BY_BITS[finfo.bits]
    random = lax.convert_element_type(_random_bits(typed_key, rng_bits, shape), uint)
    mantissa = lax.shift_right_logical(random, np.array(rng_bits - finfo.nmant, uint))
    one_to_two = lax.bitwise_or(mantissa, np.array(1.0, dtype).view(uint))
    floats = lax.sub(lax.bitcast_convert_type(one_to_two, dtype), np.array(1.0, dtype))
    scaled = jnp.add(jnp.multiply(floats, jnp.subtract(maxval, minval)), minval)
    return jnp.maximum(minval, lax.reshape(scaled, shape))


_uniform_of_raw = _wrapping(_uniform, (3, 4))


def normal(key, shape=(), dtype=None):
    """Standard normal values (complex dtypes: real and imaginary parts each N(0, 1/2))."""
    if _raw_key_at_root(key):
        dtype = _dtype("normal", dtype, np.float32, is_inexact, "float or complex")
        return _normal_of_raw(key, _shape("normal", shape), dtype)
    typed, _ = _check_key("normal", key)
    dtype = _dtype("normal", dtype, np.float32, is_inexact, "float or complex")
    return _normal(typed, _shape("normal", shape), dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal(typed_key, shape, dtype):
    if dtype.kind == "c":
        real = np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
        key_re, key_im = _split(typed_key, (2,))
        re = _normal_real(key_re, shape, real).astype(dtype)
        im = _normal_real(key_im, shape, real).astype(dtype)
        return (re + 1j * im) / np.array(np.sqrt(2), dtype)
    return _normal_real(typed_key, shape, dtype)


_normal_of_raw = _wrapping(_normal, (1, 2))


def _erf_inv_domain_draw(typed_key, shape, dtype):
    """The uniform draw a normal is made from: erf_inv maps (-1, 1) onto the reals;
    -1 itself is left out."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    return _uniform(typed_key, lo, np.array(1.0, dtype), shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(typed_key, shape, dtype):
    return lax.mul(np.array(np.sqrt(2), dtype),
                   lax.erf_inv(_erf_inv_domain_draw(typed_key, shape, dtype)))


def scaled_normal(key, shape, dtype, scale):
    """`scale` times `normal(key, shape, dtype)` (a real dtype), with the constants
    multiplied first, `(sqrt(2) * scale) * erf_inv(u)`, as JAX 0.12's initializers
    compute it: one rounding from `normal(...) * scale`, and the same eagerly as under
    jit."""
    typed, _ = _check_key("normal", key)
    u = _erf_inv_domain_draw(typed, _shape("normal", shape), dtype)
    return (jnp.array(np.sqrt(2), dtype) * scale) * lax.erf_inv(u)


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans, True with probability p (mode='high': 2x the bits, for tiny p)."""
    typed, _ = _check_key("bernoulli", key)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    if not is_float(aval_of(p).dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{aval_of(p).dtype}.")
    shape = _shape_with("bernoulli", shape, p)
    return _bernoulli(typed, p, shape, mode)


@functools.partial(jit, static_argnums=(2, 3))
def _bernoulli(typed_key, p, shape, mode):
    dtype = aval_of(p).dtype
    if mode == "high":
        u1, u2 = _uniform(typed_key, 0., 1., (2, *shape), dtype)
        u2 = u2 * np.array(2.0 ** -ml_dtypes.finfo(dtype).nmant, dtype)
        return jnp.less(u2, jnp.subtract(p, u1))
    return jnp.less(_uniform(typed_key, 0., 1., shape, dtype), p)


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability."""
    typed, _ = _check_key("rademacher", key)
    dtype = _dtype("rademacher", dtype, np.int32, lambda d: True, "")
    return _rademacher(typed, _shape("rademacher", shape), dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _rademacher(typed_key, shape, dtype):
    heads = _bernoulli(typed_key, np.float32(0.5), shape, "low").astype(dtype)
    return (2 * heads - 1).astype(dtype)


def _clip_to(value, dtype):
    """`value` (an integer array) clipped to what both its dtype and `dtype` hold, then
    converted to `dtype`."""
    own = np.iinfo(aval_of(value).dtype)
    target = np.iinfo(dtype)
    lo = np.array(max(own.min, target.min), aval_of(value).dtype)
    hi = np.array(min(own.max, target.max), aval_of(value).dtype)
    return jnp.clip(value, lo, hi).astype(dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval), from 2 x 32 (or more) random bits per value."""
    typed, _ = _check_key("randint", key)
    dtype = canonical_dtype_argument(np.int32 if dtype is None else dtype, "randint",
                                     name_in_warning=False)
    if not is_integer(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = _shape("randint", shape)
    sample_dtype = dtype
    if dtype.itemsize < 4:   # sample in 32 bits so that small ranges are not biased
        info = np.iinfo(dtype)
        sample_dtype = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    return _randint(typed, minval, maxval, shape, sample_dtype).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _randint(typed_key, minval, maxval, shape, dtype):
    _check_shape("randint", shape, aval_of(minval).shape, aval_of(maxval).shape)
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    minval = minval if is_integer(minval.dtype) else minval.astype(np.int32)
    maxval = maxval if is_integer(maxval.dtype) else maxval.astype(np.int32)
    # maxval past the dtype's largest value (randint(k, s, 0, 256, uint8)) includes it.
    beyond = lax.gt(maxval, _clip_to(jnp.asarray(np.iinfo(dtype).max, dtype), maxval.dtype))
    minval = _to_rank(_clip_to(minval, dtype), len(shape))
    maxval = _to_rank(_clip_to(maxval, dtype), len(shape))
    nbits = dtype.itemsize * 8
    key_hi, key_lo = _split(typed_key, (2,))
    high, low = _random_bits(key_hi, nbits, shape), _random_bits(key_lo, nbits, shape)
    uint = _UINT_BY_BITS[nbits]
    span = lax.convert_element_type(jnp.subtract(maxval, minval), uint)
    span = jnp.where(jnp.less_equal(maxval, minval), np.array(1, uint), span)
    span = jnp.where(jnp.logical_and(beyond, jnp.greater(maxval, minval)),
                     jnp.add(span, np.array(1, uint)), span)
    # (high * 2**nbits + low) % span without overflow: 2**nbits % span, squared in halves.
    multiplier = jnp.remainder(np.array(2 ** (nbits // 2), uint), span)
    multiplier = jnp.remainder(jnp.multiply(multiplier, multiplier), span)
    offset = jnp.add(jnp.multiply(jnp.remainder(high, span), multiplier),
                     jnp.remainder(low, span))
    offset = jnp.remainder(offset, span)
    return jnp.add(minval, lax.convert_element_type(offset, dtype))


# -- out_sharding ---------------------------------------------------------------------

def with_out_sharding(sampler):
    """`sampler` taking JAX's keyword `out_sharding` (jax 0.10 to 0.12 have it on every
    sampler): a `NamedSharding`, or a `PartitionSpec` under `jax.set_mesh`, where the
    result is placed; None leaves it where it is made."""
    name = sampler.__name__

    @functools.wraps(sampler)
    def sample(*args, out_sharding=None, **kwargs):
        return apply_out_sharding(sampler(*args, **kwargs), out_sharding, name)
    signature = inspect.signature(sampler)
    sample.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return sample
