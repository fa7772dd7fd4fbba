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
                          _normal_real, _rademacher)
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


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) values: the ratio of two chi-squares, each over its degrees."""
    typed, _ = _check_key("f", key)
    dtype = _float("f", dtype)
    return _f(typed, dfnum, dfden, _shape_with("f", shape, dfnum, dfden), dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _f(typed_key, dfnum, dfden, shape, dtype):
    dfnum = lax.convert_element_type(dfnum, dtype)
    dfden = lax.convert_element_type(dfden, dtype)
    key_den, key_num = _split(typed_key, (2,))
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_den, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, scale 1) values, by Michael, Schucany and Haas's
    transformation of a normal and a uniform."""
    typed, _ = _check_key("wald", key)
    dtype = _float("wald", dtype)
    return _wald(typed, mean, _shape_with("wald", shape, mean), dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _wald(typed_key, mean, shape, dtype):
    key_normal, key_uniform = _split(typed_key, (2,))
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    y = lax.integer_pow(_normal_real(key_normal, shape, dtype), 2)
    z = _uniform(key_uniform, 0., 1., shape, dtype)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) values, by inverting the distribution function."""
    typed, _ = _check_key("triangular", key)
    dtype = _float("triangular", dtype)
    shape = _shape_with("triangular", shape, left, mode, right)
    return _triangular(typed, left, mode, right, shape, dtype)


@functools.partial(jit, static_argnums=(4, 5))
def _triangular(typed_key, left, mode, right, shape, dtype):
    left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, mode, right))
    mode_fraction = (mode - left) / (right - left)
    u = _uniform(typed_key, 0., 1., shape, dtype)
    below = left + lax.sqrt(u * (right - left) * (mode - left))
    above = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < mode_fraction, below, above)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """loc + scale * (a Maxwell value with a random sign).

    As in JAX, the parameters' broadcast shape is appended to `shape` (when `shape`
    is empty it is that shape, appended to itself)."""
    typed, _ = _check_key("double_sided_maxwell", key)
    dtype = _float("double_sided_maxwell", dtype)
    return _double_sided_maxwell(typed, loc, scale, _shape("double_sided_maxwell", shape),
                                 dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(typed_key, loc, scale, shape, dtype):
    param_shape = tuple(np.broadcast_shapes(jnp.shape(loc), jnp.shape(scale)))
    shape = (shape or param_shape) + param_shape
    key_maxwell, key_sign = _split(typed_key, (2,))
    magnitude = _maxwell(key_maxwell, shape, dtype)
    sign = _rademacher(key_sign, shape, dtype)
    return sign * magnitude * scale + loc
