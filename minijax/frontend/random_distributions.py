"""The rest of `minijax.random`: permutations, choices and the named distributions.

Read `random.py` first: keys, `split`, the bits and the basic samplers (`uniform`,
`normal`, `bernoulli`, `randint`). Every function here is built from those with the
same operations, in the same order, as `jax.random`, so the numbers agree bit for bit;
each says what it computes in its docstring. The gamma family draws each element by
Marsaglia and Tsang's rejection method (`_gamma_one`, a `while_loop` per element,
batched with `vmap`), from a key split per element, and is differentiated with
respect to its parameter implicitly (`random_gamma_grad`), as in JAX.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as jnp
from .jit import jit
from ..transforms.custom_derivatives import custom_jvp
from .vmap import vmap
from ..ir.trace import aval_of, MinijaxError
from ..ir.types import is_float, is_integer, is_key, key_impl_name
from ..numpy._promotion import promote_dtypes_inexact
from .random_core import (_check_key, _shape, _shape_with, _float, _dtype, _check_shape, _split,
                     _random_bits, _uniform, _normal_real, randint, normal, rademacher)


def _as_float_array(name, x):
    x = jnp.asarray(x)
    if not is_float(x.dtype):
        x = x.astype(np.float32)
    return x


# -- permutations and choices ----------------------------------------------------------

def permutation(key, x, axis=0, independent=False):
    """A random permutation of `x` along `axis` (of `arange(x)` for an integer `x`).
    With `independent=True` each slice along the other axes is permuted on its own."""
    typed, _ = _check_key("permutation", key)
    ndim = aval_of(x).ndim
    axis = axis % max(ndim, 1)
    if not ndim:
        if not is_integer(aval_of(x).dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(typed, jnp.arange(int(x)), axis)
    if independent or ndim == 1:
        return _shuffle(typed, x, axis)
    order = _shuffle(typed, jnp.arange(aval_of(x).shape[axis]), 0)
    return jnp.take(x, order, axis, unique_indices=True)


@functools.partial(jit, static_argnums=2)
def _shuffle(typed_key, x, axis):
    # Sort by random 32-bit keys; colliding keys leave ties in place, so enough rounds
    # are done that all keys are distinct with high probability (JAX's criterion).
    size = aval_of(x).size
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        typed_key, subkey = _split(typed_key, (2,))
        sort_keys = _random_bits(subkey, 32, aval_of(x).shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _top_k_indices(x, k):
    """Indices of the k largest entries along the last axis, largest first (the first
    of equal entries first): `lax.top_k`'s, as JAX takes them (one primitive, so an
    eager call is one program, not an iota, a negation, a sort and a slice)."""
    return lax.top_k(x, k)[1]


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Elements drawn from `a` (or from `arange(a)`), uniformly or with probabilities
    `p`, with or without replacement."""
    typed, _ = _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = _as_float_array("choice", p)
        if p_arr.shape != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] "
                             f"is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - _uniform(typed, 0., 1., shape, np.dtype(p_cuml.dtype)))
            ind = jnp.searchsorted(p_cuml, r).astype(np.int32)
        else:   # Gumbel top-k: the k largest of log p + Gumbel noise
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = _top_k_indices(g, n_draws)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities softmax(logits) (the Gumbel-max trick;
    Gumbel top-k without replacement)."""
    typed, _ = _check_key("categorical", key)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits.shape, axis))
    shape = batch_shape if shape is None else _shape("categorical", shape)
    _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        axis = axis - logits.ndim if axis >= 0 else axis
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        noise = gumbel(typed, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(prefix)))),
                          axis=axis)
    logits = logits + gumbel(typed, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                         f"number of categories ({logits.shape[axis]}).")
    indices = _top_k_indices(jnp.moveaxis(logits, axis, -1), k)
    return lax.reshape(indices, shape, (indices.ndim - 1, *range(indices.ndim - 1)))


# -- distributions by transforming uniforms ------------------------------------------------

def _simple(name, transform):
    """A public sampler `name(key, shape=(), dtype=None)` applying `transform`."""
    compiled = jit(transform, static_argnums=(1, 2))

    def sampler(key, shape=(), dtype=None):
        typed, _ = _check_key(name, key)
        return compiled(typed, _shape(name, shape), _float(name, dtype))
    sampler.__name__ = name
    sampler.__doc__ = transform.__doc__
    return sampler


def _exponential(typed_key, shape, dtype):
    """Exponential(1) values: -log(1 - u)."""
    u = _uniform(typed_key, 0., 1., shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def _laplace(typed_key, shape, dtype):
    """Laplace(0, 1) values: sign(u) * log(1 - |u|) for u uniform in (-1, 1)."""
    u = _uniform(typed_key, -1.0 + ml_dtypes.finfo(dtype).epsneg, 1.0, shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(typed_key, shape, dtype):
    """Standard logistic values: log(u) - log(1 - u)."""
    x = _uniform(typed_key, ml_dtypes.finfo(dtype).tiny, 1.0, shape, dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


exponential = _simple("exponential", _exponential)
laplace = _simple("laplace", _laplace)
logistic = _simple("logistic", _logistic)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel values: -log(-log(u)). mode='high' spends twice the bits to
    reach further into the tail."""
    typed, _ = _check_key("gumbel", key)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode} (minijax "
                         f"supports 'low' and 'high')")
    return _gumbel(typed, _shape("gumbel", shape), _float("gumbel", dtype), mode)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(typed_key, shape, dtype, mode):
    info = ml_dtypes.finfo(dtype)
    if mode == "high":
        high, low = _uniform(typed_key, 0.0, 1.0, (2, *shape), dtype)
        x = jnp.where(high >= 0.5, high, high + 2 ** (-info.nmant) * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(typed_key, info.tiny, 1.0, shape, dtype)))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal values conditioned on lower < x < upper (inverse-CDF method)."""
    typed, _ = _check_key("truncated_normal", key)
    dtype = _float("truncated_normal", dtype)
    shape = _shape_with("truncated_normal", shape, lower, upper)
    return _truncated_normal(typed, lower, upper, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(typed_key, lower, upper, shape, dtype):
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(jnp.divide(lower, sqrt2))
    b = lax.erf(jnp.divide(upper, sqrt2))
    u = _uniform(typed_key, a, b, shape, dtype)
    out = jnp.multiply(sqrt2, lax.erf_inv(u))
    # Rounding can land on a bound; the open interval excludes them.
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype)),
                    lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype)))


# -- the gamma family -----------------------------------------------------------------------

def _gamma_one(typed_key, alpha, log_space):
    """One Gamma(alpha) sample by Marsaglia and Tsang's method (alpha < 1 is boosted:
    Gamma(alpha + 1) * u ** (1 / alpha))."""
    dtype = aval_of(alpha).dtype
    zero, one, minus_one = (np.array(v, dtype) for v in (0, 1, -1))
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, np.array(1 / 3, dtype))
    c = lax.div(np.array(1 / 3, dtype), lax.sqrt(d))

    def rejected(state):
        _, x, v, u = state
        squeeze = lax.sub(one, lax.mul(np.array(0.0331, dtype), lax.mul(x, x)))
        log_bound = lax.add(lax.mul(x, np.array(0.5, dtype)),
                            lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))
        return lax.bitwise_and(lax.ge(u, squeeze), lax.ge(lax.log(u), log_bound))

    def propose(state):
        def next_normal(kxv):
            key, subkey = _split(kxv[0], (2,))
            x = _normal_real(subkey, (), dtype)
            return key, x, lax.add(one, lax.mul(x, c))
        key, x_key, u_key = _split(state[0], (3,))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_normal,
                                 (x_key, zero, minus_one))
        u = _uniform(u_key, 0., 1., (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    typed_key, subkey = _split(typed_key, (2,))
    _, _, v, _ = lax.while_loop(rejected, propose, (typed_key, zero, one, np.array(2, dtype)))
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _uniform(subkey, 0., 1., (), dtype))
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_sampler(name, log_space):
    def sampler(key, a, shape=None, dtype=None):
        typed, _ = _check_key(name, key)
        dtype = _float(name, dtype)
        shape = _shape_with(name, shape, a)
        return _gamma(typed, a, shape, dtype, log_space)
    sampler.__name__ = name
    return sampler


gamma = _gamma_sampler("gamma", False)
gamma.__doc__ = "Gamma(a, 1) values (divide by a rate, or multiply by a scale)."
loggamma = _gamma_sampler("loggamma", True)
loggamma.__doc__ = "log of Gamma(a, 1) values, accurate where they are tiny (a << 1)."


@functools.partial(jit, static_argnums=(2, 3, 4))
def _gamma(typed_key, a, shape, dtype, log_space):
    a = lax.convert_element_type(a, dtype)
    if aval_of(a).shape != shape:
        a = jnp.broadcast_to(a, shape)
    size = math.prod(shape)
    if size == 0:
        return jnp.zeros(shape, dtype)
    keys = _split(typed_key, (size,))
    samples = _gamma_draws(log_space, keys, lax.reshape(a, (size,)))
    return lax.reshape(samples, shape)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _gamma_draws(log_space, keys, alphas):
    """One gamma draw per key and alpha. Its derivative with respect to alpha is the
    implicit one (the sample moves with alpha at a fixed value of its CDF), not the
    derivative of the rejection loop, as in JAX."""
    one = functools.partial(_gamma_one, log_space=log_space)
    if not is_key(aval_of(keys).dtype) or key_impl_name(aval_of(keys).dtype) == "threefry2x32":
        return vmap(one)(keys, alphas)
    # JAX on CPU draws the keys one after another (lax.map): for rbg keys, whose bits
    # come from rng_bit_generator, a vmap would draw every sample from the first key.
    return lax.map(lambda key_alpha: one(*key_alpha), (keys, alphas))


@_gamma_draws.defjvp
def _gamma_draws_jvp(log_space, primals, tangents):
    keys, alphas = primals
    samples = _gamma_draws(log_space, keys, alphas)
    if log_space:   # d log(x) / da = (dx / da) / x, with x = 0 read as the tiniest float
        x = lax.exp(samples)
        x = jnp.where(x == 0, np.array(ml_dtypes.finfo(x.dtype).tiny, x.dtype), x)
        d_sample = lax.random_gamma_grad(alphas, x) / x
    else:
        d_sample = lax.random_gamma_grad(alphas, samples)
    return samples, tangents[1] * d_sample


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) values, from two log-gamma draws."""
    typed, _ = _check_key("beta", key)
    dtype = _float("beta", dtype)
    shape = _shape_with("beta", shape, a, b)
    return _beta(typed, a, b, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _beta(typed_key, a, b, shape, dtype):
    key_a, key_b = _split(typed_key, (2,))
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    log_gamma_a = _gamma(key_a, a, shape, dtype, True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, True)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = jnp.exp(log_gamma_a - log_max)
    gamma_b = jnp.exp(log_gamma_b - log_max)
    return gamma_a / (gamma_a + gamma_b)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along the last axis of `alpha`."""
    typed, _ = _check_key("dirichlet", key)
    dtype = _float("dirichlet", dtype)
    alpha_shape = aval_of(alpha).shape
    if not alpha_shape:
        raise ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0")
    shape = alpha_shape[:-1] if shape is None else _shape("dirichlet", shape)
    _check_shape("dirichlet", shape, alpha_shape[:-1])
    return _dirichlet(typed, alpha, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _dirichlet(typed_key, alpha, shape, dtype):
    alpha = lax.convert_element_type(alpha, dtype)
    full = shape + aval_of(alpha).shape[-1:]
    log_gamma = _gamma(typed_key, jnp.broadcast_to(alpha, full), full, dtype, True)
    # softmax along the last axis: normalised gammas, computed in log space.
    unnormalized = jnp.exp(log_gamma - lax.stop_gradient(jnp.max(log_gamma, -1, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


def generalized_normal(key, p, shape=(), dtype=None):
    """Values with density proportional to exp(-|x|^p)."""
    typed, _ = _check_key("generalized_normal", key)
    return _generalized_normal(typed, p, _shape("generalized_normal", shape),
                               _float("generalized_normal", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _generalized_normal(typed_key, p, shape, dtype):
    key_g, key_r = _split(typed_key, (2,))
    g = _gamma(key_g, jnp.broadcast_to(lax.convert_element_type(1 / p, dtype), shape),
               shape, dtype, False)
    r = rademacher(key_r, shape, dtype)
    return r * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit p-norm ball of dimension d."""
    typed, _ = _check_key("ball", key)
    return _ball(typed, p, int(d), _shape("ball", shape), _float("ball", dtype))


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(typed_key, p, d, shape, dtype):
    key_g, key_e = _split(typed_key, (2,))
    g = _generalized_normal(key_g, p, (*shape, d), dtype)
    e = _exponential(key_e, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# -- samplers that need operations from elsewhere in minijax ---------------------------------

def _needs(module, name, user):
    function = getattr(module, name, None)
    if function is None:
        raise MinijaxError(f"random.{user} needs {module.__name__}.{name}, which this "
                           f"minijax does not have")
    return function


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts: Knuth's product of uniforms for lam < 10, Hormann's
    transformed rejection (PTRS) above."""
    typed, _ = _check_key("poisson", key)
    dtype = _dtype("poisson", dtype, np.int32, is_integer, "integer")
    shape = aval_of(lam).shape if shape is None else _shape("poisson", shape)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    return _poisson(typed, lam, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _poisson(typed_key, lam, shape, dtype):
    use_knuth = jnp.logical_or(jnp.isnan(lam), lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, jnp.full_like(lam, 100000.0), lam)
    max_iters = dtype.type(np.iinfo(dtype).max)
    result = lax.select(use_knuth,
                        _poisson_knuth(typed_key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(typed_key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


def _poisson_knuth(typed_key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, key, log_prod = carry
        key, subkey = _split(key, (2,))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(subkey, 0., 1., shape, np.dtype(np.float32))
        return i + 1, k, key, log_prod + jnp.log(u)

    def cond(carry):
        i, _, _, log_prod = carry
        return jnp.logical_and(jnp.any(log_prod > -lam), i < max_iters)
    init = (np.array(0, dtype), jnp.zeros(shape, dtype), typed_key,
            jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(typed_key, lam, shape, dtype, max_iters):
    lgamma = _needs(lax, "lgamma", "poisson")
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, (3,))
        u = _uniform(subkey_0, 0., 1., shape, lam.dtype) - 0.5
        v = _uniform(subkey_1, 0., 1., shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | (u_shifted < 0.013) & (v > u_shifted)
        accept = accept1 | ~reject & (s <= t)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.logical_and(jnp.any(~accepted), i < max_iters)
    init = (np.array(0, dtype), jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool),
            typed_key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with mean `mean` (..., n) and covariance `cov` (..., n, n):
    mean + factor @ z, the factor from cholesky, eigh or svd of `cov`."""
    typed, _ = _check_key("multivariate_normal", key)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    # As in JAX, mean and cov keep their (inexact) common dtype; `dtype` is the samples'.
    mean, cov = promote_dtypes_inexact("multivariate_normal", jnp.asarray(mean),
                                       jnp.asarray(cov))
    dtype = _float("multivariate_normal", mean.dtype if dtype is None else dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    shape = _shape("multivariate_normal", shape)
    _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    linalg = _needs(jnp, "linalg", "multivariate_normal")
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    samples = normal(typed, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)
