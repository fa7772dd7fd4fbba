"""`random.binomial` and `random.multinomial`, with `jax.random`'s algorithms, so the
same key gives the same counts; and the key helpers `clone` and `key_dtype`.

Binomial(n, p) is drawn for q = min(p, 1 - p) (the count is mirrored, n - k, when p
was above 1/2) by one of two loops, chosen per element:

* inversion, when n q <= 10: add up geometric waiting times ceil(log u / log(1 - q))
  until they pass n; the number of waits, less one, is the count;
* BTRS (Hormann's transformed rejection with squeeze) otherwise: propose
  k = floor((2a / us + b) u + c) from two uniforms and accept it by a quick squeeze
  test or by comparing log v with a bound built from Stirling's series (`_stirling_tail`).

Both loops run on every element (`while_loop` until all are done) with the same key, and
`select` keeps each element's own answer. Invalid parameters (p < 0, NaN, n < 0) give
NaN, n = inf gives inf. Multinomial draws each category's count as a binomial of what
is left over, with ratio p_i / (p_i + ... + p_last), in a `scan` over categories.
"""
from __future__ import annotations

import functools

import jax
import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as jnp
from .jit import jit
from ..ir import random_primitives as R, root_modes
from ..ir.trace import aval_of, bind
from .control_flow import scan, while_loop
from .random_core import (_check_key, _float, _impl_name, _shape, _check_shape,
                          _split, _uniform)

_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_tail(k):
    """log k! less Stirling's approximation of it: a table for k <= 9, the series
    beyond."""
    dtype = aval_of(k).dtype
    table = jnp.array(_STIRLING_TAIL, dtype=dtype)
    small = k <= 9
    k = lax.clamp(np.array(0.0, dtype), k, np.array(9.0, dtype))
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(small, table[jnp.asarray(jnp.floor(k), dtype="int32")], series)


def _by_inversion(key, count, prob, shape, dtype, max_iters):
    log_1m_prob = jnp.log1p(-prob)

    def body(carry):
        i, n_geom, geom_sum, key = carry
        subkey, key = _split(key, (2,))
        n_geom = lax.select(geom_sum <= count, n_geom + 1, n_geom)
        u = _uniform(subkey, 0., 1., shape, aval_of(prob).dtype)
        geom_sum = geom_sum + jnp.ceil(jnp.log(u) / log_1m_prob)
        return i + 1, n_geom, geom_sum, key

    def cond(carry):
        i, _, geom_sum, _ = carry
        return (geom_sum <= count).any() & (i < max_iters)
    zeros = jnp.zeros(shape, aval_of(prob).dtype)
    counted = while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (counted - 1).astype(dtype)


def _by_btrs(key, count, prob, shape, dtype, max_iters):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)
    prob_dtype = aval_of(prob).dtype

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = _split(key, (3,))
        u = _uniform(key_u, 0., 1., shape, prob_dtype) - 0.5
        v = _uniform(key_v, 0., 1., shape, prob_dtype)
        us = 0.5 - jnp.abs(u)
        squeezed = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        out_of_range = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = squeezed | (~out_of_range & (v <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)
    start = (0, jnp.full(shape, -1, prob_dtype), jnp.full(shape, False, bool), key)
    return while_loop(cond, body, start)[1].astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _binomial(key, count, prob, shape, dtype):
    prob = jnp.asarray(prob)
    if not jnp.issubdtype(prob.dtype, jnp.inexact):
        prob = prob.astype(np.float32)
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    below_half = prob < 0.5
    q = lax.select(below_half, prob, 1.0 - prob)
    bad_count = jnp.isnan(count) | (count < 0.0)
    infinite = jnp.isinf(count)
    q_nan, q_negative = jnp.isnan(q), q < 0.0
    q = lax.select(q_nan | q_negative, jnp.full_like(q, 0.01), q)
    inversion = bad_count | (count * q <= 10.0)
    count = jnp.floor(count)
    max_iters = dtype.type(ml_dtypes.finfo(dtype).max)
    samples = lax.select(
        inversion,
        _by_inversion(key, lax.select(inversion, count, jnp.full_like(count, 0.0)), q,
                      shape, dtype, max_iters),
        _by_btrs(key, lax.select(inversion, jnp.full_like(count, 1e4), count),
                 lax.select(inversion, jnp.full_like(q, 0.5), q), shape, dtype, max_iters))
    invalid = q_negative | q_nan | bad_count
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(infinite & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(below_half | bad_count | q_nan | infinite, samples,
                      count.astype(dtype) - samples)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts, as floats of `dtype` (float32 by default), of shape
    `shape` (the broadcast shape of n and p when None)."""
    typed, _ = _check_key("binomial", key)
    dtype = _float("binomial", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(n), np.shape(p)))
    else:
        shape = _shape("binomial", shape)
        _check_shape("binomial", shape, np.shape(n), np.shape(p))
    return _binomial(typed, n, p, shape, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of `n` trials over the outcomes of probabilities `p` (last axis), of
    shape `p.shape` (or `shape + p.shape[-1:]`), as floats of `dtype`. `shape` is the
    batch shape, as JAX 0.12 reads it and JAX's docstring says (0.10/0.11 took it as
    the whole result shape): `n` and `p.shape[:-1]` must broadcast to it."""
    typed, _ = _check_key("multinomial", key)
    dtype = _float("multinomial", dtype)
    n, p = jnp.asarray(n), jnp.asarray(p)
    common = jnp.result_type(n, p, np.float32)
    n, p = n.astype(common), p.astype(common)
    if shape is None:
        shape = p.shape[:-1]
    else:
        shape = _shape("multinomial", shape)
        _check_shape("multinomial", shape, n.shape, p.shape[:-1])
    n, p = jnp.broadcast_to(n, shape), jnp.broadcast_to(p, (*shape, p.shape[-1]))

    def draw(left, ratio_and_key):
        ratio, category_key = ratio_and_key
        count = binomial(category_key, left, ratio.clip(0, 1), dtype=aval_of(left).dtype)
        return left - count, count
    p = jnp.moveaxis(p, -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = _split(typed, (ratios.shape[0],))
    _, counts = scan(draw, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


def clone(key):
    """`key` as a fresh key: under `jax_debug_key_reuse` the copy may be used though
    `key` is (or will be) used too; otherwise `key` itself, as JAX's is outside that
    checker."""
    typed, raw = _check_key("clone", key, allow_batched=True)
    if raw or not root_modes.modes.key_reuse:
        return key
    return bind(R.random_clone_p, typed)


def key_dtype(impl_spec=None):
    """The dtype of typed keys of `impl_spec` (`key<fry>`, `key<rbg>`, `key<urbg>`;
    None: the default implementation's), as `jax.random.key_dtype`."""
    return jax.random.key_dtype(_impl_name(impl_spec))
