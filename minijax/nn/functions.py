"""`minijax.nn`'s activation functions, normalisations and `one_hot`, with JAX's numerics.

Each function is a few lines of `minijax.numpy`/`minijax.lax`, written so that it
computes what `jax.nn`'s function of the same name computes, derivatives included:

* `relu` and `relu6` are `custom_jvp` functions whose derivative at the kinks is 0
  (plain `max(x, 0)` would give 1/2 at 0 under JAX's tie rule for `max`);
* `softplus` is `logaddexp(x, 0)`, so large inputs do not overflow `exp`;
* `softmax` has a `custom_jvp` that reuses its output, `y * (t - sum(y * t))`, when
  `jax_softmax_custom_jvp` is set (JAX's default is unset: plain differentiation
  with the maximum held constant); `log_softmax` subtracts the (constant) maximum
  first either way;
* `where=` masks in `softmax`, `log_softmax` and `standardize` leave out elements:
  masked elements of `softmax` are 0, of `log_softmax` -inf.

The functions JAX jits (all but `gelu`, `softmax` and the custom_jvp ones) are
`jitted_eagerly` with JAX's static arguments: an eager call runs as one cached
compiled program, as JAX's does, instead of dispatching each operation.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.config_flags import softmax_custom_jvp
from ..frontend.eager_jit import jitted_eagerly
from ..transforms.custom_derivatives import custom_jvp
from ..numpy._promotion import (promote_args_inexact, as_operand, dtype_of, shape_of,
                                canonicalize_axis, canonicalize_axes)
from ..numpy._dtypes import canonicalize_dtype
from ..scipy.special import logsumexp, _masked

__all__ = ["identity", "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "soft_sign",
           "silu", "swish", "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh",
           "hard_sigmoid", "hard_silu", "hard_swish", "glu", "mish", "squareplus",
           "sparse_plus", "sparse_sigmoid", "log1mexp", "softmax", "log_softmax",
           "logsumexp", "logmeanexp", "one_hot", "standardize", "tanh"]

# jax.nn re-exports jnp.tanh under its own name.
tanh = jnp.tanh


@jitted_eagerly()
def identity(x):
    return jnp.asarray(x)


@custom_jvp
def relu(x):
    """max(x, 0), with derivative 0 at x = 0."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, jnp.zeros_like(g)))


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at both kinks."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, jnp.zeros_like(g)))


@jitted_eagerly()
def sigmoid(x):
    """1 / (1 + exp(-x)); like JAX's, it accepts only inexact dtypes."""
    return lax.logistic(jnp.asarray(x))


@jitted_eagerly()
def softplus(x):
    """log(1 + exp(x)), computed as logaddexp(x, 0) so that it does not overflow."""
    return jnp.logaddexp(x, 0)


@jitted_eagerly()
def log_sigmoid(x):
    return -softplus(-jnp.asarray(x))


@jitted_eagerly()
def soft_sign(x):
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


@jitted_eagerly()
def silu(x):
    """x * sigmoid(x) (also called swish)."""
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit: the tanh approximation, or (approximate=False)
    exactly x * Phi(x), written with erfc as JAX does."""
    x, = promote_args_inexact("gelu", x)
    dtype = dtype_of(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(dtype)
    return jnp.asarray(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@jitted_eagerly()
def elu(x, alpha=1.0):
    x = jnp.asarray(x)
    # expm1 only sees the non-positive part, so the unused branch cannot overflow.
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


@jitted_eagerly()
def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jitted_eagerly()
def selu(x):
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@jitted_eagerly()
def leaky_relu(x, negative_slope=1e-2):
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


@jitted_eagerly()
def hard_tanh(x):
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jitted_eagerly()
def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


@jitted_eagerly()
def hard_silu(x):
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@jitted_eagerly()
def mish(x):
    """x * tanh(softplus(x))."""
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


@jitted_eagerly()
def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, a smooth relu."""
    x = jnp.asarray(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@jitted_eagerly()
def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)^2 / 4 between: a piecewise-quadratic softplus."""
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jitted_eagerly()
def sparse_sigmoid(x):
    """The derivative of sparse_plus: (x + 1) / 2 clipped to [0, 1]."""
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, by whichever of log(-expm1(-x)) and
    log1p(-exp(-x)) is accurate on each side of log 2."""
    x = jnp.asarray(x)
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


@jitted_eagerly("axis")
def glu(x, axis: int = -1):
    """The gated linear unit: the first half of `axis` times sigmoid of the second."""
    x = as_operand("glu", x)
    size = shape_of(x)[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} must have even size, got {size}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


@jitted_eagerly("axis")
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`; masked-out elements (where=False) are -inf."""
    x = as_operand("log_softmax", x)
    x_max = jnp.max(_masked(x, where, -np.inf), axis, initial=-np.inf, keepdims=True)
    x_safe = _masked(x, where, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(_masked(jnp.exp(shifted), where, 0), axis,
                                        keepdims=True))
    result = shifted - shifted_logsumexp
    return result if where is None else jnp.where(where, result, -np.inf)


def _softmax_impl(x, axis, where):
    x_safe = _masked(x, where, -np.inf)
    x_max = jnp.max(x_safe, axis, initial=-np.inf, keepdims=True)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(_masked(unnormalized, where, 0), axis, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


_softmax = custom_jvp(_softmax_impl, nondiff_argnums=(1,))


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax(x, axis, where)
    return y, y * (x_dot - jnp.sum(_masked(y * x_dot, where, 0), axis, keepdims=True))


def _softmax_differentiated(x, axis, where):
    """JAX's softmax under `jax_softmax_custom_jvp=False` (its default): the maximum
    is held constant and the rest differentiated as written, so a derivative saves
    `exp`'s output and the sum's rather than the result alone."""
    x_safe = _masked(x, where, -np.inf)
    x_max = jnp.max(x_safe, axis, initial=-np.inf, keepdims=True)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(_masked(unnormalized, where, 0), axis, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis`; masked-out elements (where=False) are 0.
    Its derivative follows `jax_softmax_custom_jvp`, as JAX's: the custom_jvp rule
    when it is set, plain differentiation otherwise."""
    x = as_operand("softmax", x)
    axis = canonicalize_axes("softmax", axis, len(shape_of(x)))
    if softmax_custom_jvp.value:
        return _softmax(x, axis, where)
    return _softmax_differentiated(x, axis, where)


@jitted_eagerly("axis", "keepdims")
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """log(mean(exp(x))) over `axis` (all axes when None) and the elements `where`
    selects: `logsumexp` less the log of how many elements were summed."""
    total = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    counted = jnp.ones(shape_of(x), bool) if where is None else jnp.broadcast_to(
        where, shape_of(x))
    count = jnp.sum(counted, axis=axis, keepdims=keepdims, dtype=total.dtype)
    return total - jnp.log(count)


@jitted_eagerly("axis", "algorithm")
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """(x - mean) / sqrt(variance + epsilon), with the mean and variance along `axis`
    (over the elements `where` selects) unless given. "fast" computes the variance as
    mean(x^2) - mean(x)^2, clipped at 0; "stable" as mean((x - mean)^2)."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    x = as_operand("standardize", x)

    def masked_mean(values):
        if where is None:
            return jnp.mean(values, axis, keepdims=True)
        counts = jnp.sum(jnp.broadcast_to(where, shape_of(values)), axis, keepdims=True)
        return jnp.sum(_masked(values, where, 0), axis, keepdims=True) / counts

    if mean is None:
        mean = masked_mean(x)
    if variance is None:
        if algorithm == "stable":
            variance = masked_mean(jnp.square(jnp.subtract(x, mean)))
        else:
            variance = jnp.clip(masked_mean(jnp.square(x)) - jnp.square(mean), 0)
    return jnp.subtract(x, jnp.asarray(mean)) * lax.rsqrt(jnp.asarray(variance) + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1):
    """Each index of `x` as a vector of `num_classes` zeros with a one at the index
    (all zeros for an index out of range), along the new axis `axis`."""
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"one_hot: num_classes must be a concrete int, got "
                        f"{num_classes!r}") from None
    return _one_hot(x, num_classes, dtype=canonicalize_dtype(np.float32 if dtype is None
                                                            else dtype), axis=axis)


@jitted_eagerly("num_classes", "dtype", "axis")
def _one_hot(x, num_classes, *, dtype, axis):
    x = jnp.asarray(x)
    ndim = len(shape_of(x))
    out_axis = canonicalize_axis("one_hot", axis, ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(dtype_of(x), rhs_shape, out_axis)
    return (lhs == rhs).astype(dtype)
