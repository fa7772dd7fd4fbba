"""More of `jax.random`'s distributions, each a few operations on the basic samplers.

Read `random_core.py` and `random_distributions.py` first. As there, each function does
what `jax.random`'s does, in the same order, so the values agree bit for bit; the
docstrings say what is computed.
"""
from __future__ import annotations

import functools
import operator

import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as jnp
from .jit import jit
from ..ir.types import is_integer
from .random_core import (_check_key, _shape, _float, _dtype, _shape_with, _split, _uniform,
                     _normal_real)
from .random_distributions import _exponential, _gamma


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy values: tan(pi * (u - 1/2))."""
    typed, _ = _check_key("cauchy", key)
    return _cauchy(typed, _shape("cauchy", shape), _float("cauchy", dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(typed_key, shape, dtype):
    u = _uniform(typed_key, ml_dtypes.finfo(dtype).eps, 1.0, shape, dtype)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * z) for standard normal z."""
    typed, _ = _check_key("lognormal", key)
    shape = _shape_with("lognormal", shape, sigma)
    return _lognormal(typed, sigma, shape, _float("lognormal", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _lognormal(typed_key, sigma, shape, dtype):
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_normal_real(typed_key, shape, dtype) * sigma)


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) values on [1, inf): exp(e / b) for Exponential(1) e."""
    typed, _ = _check_key("pareto", key)
    shape = _shape_with("pareto", shape, b)
    return _pareto(typed, b, shape, _float("pareto", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(typed_key, b, shape, dtype):
    b = lax.convert_element_type(b, dtype)
    return lax.exp(_exponential(typed_key, shape, dtype) / b)


def t(key, df, shape=None, dtype=None):
    """Student's t(df) values: z * sqrt((df / 2) / g) for z normal, g ~ Gamma(df / 2)."""
    typed, _ = _check_key("t", key)
    shape = _shape_with("t", shape, df)
    return _t(typed, df, shape, _float("t", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _t(typed_key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split(typed_key, (2,))
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    g = _gamma(key_g, jnp.broadcast_to(half_df, shape), shape, dtype, False)
    return n * jnp.sqrt(half_df / g)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) values: 2 * Gamma(df / 2), drawn in log space."""
    typed, _ = _check_key("chisquare", key)
    shape = _shape_with("chisquare", shape, df)
    return _chisquare(typed, df, shape, _float("chisquare", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _chisquare(typed_key, df, shape, dtype):
    two = np.array(2, dtype)
    half_df = lax.div(lax.convert_element_type(df, dtype), two)
    log_g = _gamma(typed_key, jnp.broadcast_to(half_df, shape), shape, dtype, True)
    return lax.mul(jnp.exp(log_g), two)


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) values: scale * sqrt(-2 log u)."""
    typed, _ = _check_key("rayleigh", key)
    shape = _shape_with("rayleigh", shape, scale)
    return _rayleigh(typed, scale, shape, _float("rayleigh", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(typed_key, scale, shape, dtype):
    u = _uniform(typed_key, 0., 1., shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype))))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull values: scale * (-log(1 - u)) ** (1 / concentration)."""
    typed, _ = _check_key("weibull_min", key)
    return _weibull_min(typed, scale, concentration, _shape("weibull_min", shape),
                        _float("weibull_min", dtype))


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(typed_key, scale, concentration, shape, dtype):
    u = _uniform(typed_key, 0, 1, shape, dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def maxwell(key, shape=(), dtype=None):
    """Maxwell values: the length of a standard normal 3-vector."""
    typed, _ = _check_key("maxwell", key)
    return _maxwell(typed, _shape("maxwell", shape), _float("maxwell", dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _maxwell(typed_key, shape, dtype):
    z = _normal_real(typed_key, (*shape, 3), dtype)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) counts >= 1: floor(log u / log(1 - p)) + 1."""
    typed, _ = _check_key("geometric", key)
    dtype = _dtype("geometric", dtype, np.int32, is_integer, "int")
    shape = _shape_with("geometric", shape, p)
    return _geometric(typed, p, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _geometric(typed_key, p, shape, dtype):
    p = jnp.asarray(p)
    p = p if p.dtype.kind == "f" or p.dtype == ml_dtypes.bfloat16 else p.astype(np.float32)
    u = _uniform(typed_key, 0., 1., shape, p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1).astype(dtype)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Matrices (n, m) drawn uniformly from the orthogonal group O(n) (m = n), or
    semi-orthogonal ones: orthonormal rows if n < m, orthonormal columns if n > m.

    The Q of the QR decomposition of a normal matrix, each column's sign flipped to
    make R's diagonal positive (Mezzadri 2007): without that step Q would not be
    uniform. Real dtypes only (minijax's `qr` is real)."""
    typed, _ = _check_key("orthogonal", key)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    dtype = _float("orthogonal", dtype)
    return _orthogonal(typed, n, m, _shape("orthogonal", shape), dtype)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(typed_key, n, m, shape, dtype):
    # A tall matrix, so Q has min(n, m) orthonormal columns; transposed back if n < m.
    z = _normal_real(typed_key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    signs = jnp.sign(jnp.linalg.diagonal(r))
    x = q * jnp.expand_dims(signs, -2)
    return jnp.matrix_transpose(x) if n < m else x
