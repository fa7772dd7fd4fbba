"""`minijax.nn.initializers`: `jax.nn.initializers`' parameter initializers.

An initializer is a function `init(key, shape, dtype=float32) -> array`; the
`uniform(scale)`, `normal(stddev)`, `variance_scaling(...)`, ... functions build one.
They draw with `minijax.random`, which reproduces `jax.random` bit for bit, so the
same key gives the same parameters as JAX.

`variance_scaling(scale, mode, distribution)` is the family behind the named schemes:
the variance is `scale / n`, with n the fan-in, the fan-out, their mean or their
geometric mean (`mode`); the fans count the input and output axes (by default the
last two) times every other axis except the batch axes (a convolution's receptive
field). A truncated normal is rescaled by 0.8796..., the standard deviation of a
standard normal truncated to (-2, 2), so that the variance is still `scale / n`.

glorot/xavier: (1, "fan_avg"); lecun: (1, "fan_in"); he/kaiming: (2, "fan_in");
each as `*_uniform` and `*_normal` (a truncated normal). `orthogonal` draws
(semi-)orthogonal matrices and `delta_orthogonal` convolution kernels built on one. Complex dtypes, which JAX
draws from a disk, are not supported here (a ValueError says so).
"""
from __future__ import annotations

import math
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from .. import numpy as jnp
from .. import random
from ..frontend.random_core import scaled_normal
from ..numpy._dtypes import canonicalize_dtype

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]



@runtime_checkable
class Initializer(Protocol):
    """The type of an initializer, `init(key, shape, dtype) -> array`, for annotations
    (a module's `kernel_init: Initializer = lecun_normal()`), as JAX's: any callable
    passes `isinstance(f, Initializer)`, the check a runtime protocol makes."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = np.float32) -> Any:
        ...


# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = .87962566103423978


def _dtype(dtype):
    return np.dtype(np.float32) if dtype is None else canonicalize_dtype(dtype)


def zeros(key, shape, dtype=None):
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None):
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype):
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform in [0, scale)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def _scaled_normal(key, shape, dtype, scale):
    """`scale` times a standard normal, as JAX 0.12 computes it (its factors multiplied
    first: `scaled_normal`); JAX 0.10/0.11 computed `(sqrt(2) * erf_inv(u)) * scale`,
    one rounding apart. A complex dtype scales `random.normal`'s value."""
    if not np.issubdtype(dtype, np.floating):
        return random.normal(key, shape, dtype) * scale
    return scaled_normal(key, shape, dtype, scale)


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return _scaled_normal(key, shape, dtype, jnp.array(stddev, dtype))
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """`stddev` times a standard normal truncated to (lower, upper) (no rescaling)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev,
                                                                                   dtype)
    return init


def _size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _fans(shape, in_axis, out_axis, batch_axis):
    """(fan_in, fan_out): the input/output sizes times the receptive field size."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-"
                         f"dimensional weights tensor with default in_axis. Must be at "
                         f"least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


_DENOMINATORS = {"fan_in": lambda fan_in, fan_out: fan_in,
                 "fan_out": lambda fan_in, fan_out: fan_out,
                 "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
                 "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5}


def variance_scaling(scale, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: Sequence[int] = (), dtype=None):
    """Samples with variance `scale / n` (n from `mode`) from `distribution`:
    "truncated_normal", "normal" or "uniform"."""
    if mode not in _DENOMINATORS:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape = tuple(int(n) for n in shape)
        dtype = _dtype(dtype)
        if not np.issubdtype(dtype, np.floating):
            raise ValueError(f"variance_scaling: minijax draws real parameters only, got "
                             f"dtype {dtype}")
        variance = jnp.array(scale / _DENOMINATORS[mode](*_fans(shape, in_axis, out_axis,
                                                               batch_axis)), dtype=dtype)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return _scaled_normal(key, shape, dtype, jnp.sqrt(variance))
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
    return init


def _named_scheme(scale, mode, distribution, name):
    def scheme(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    scheme.__name__ = scheme.__qualname__ = name
    scheme.__doc__ = f"variance_scaling({scale}, {mode!r}, {distribution!r})."
    return scheme


glorot_uniform = xavier_uniform = _named_scheme(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _named_scheme(1.0, "fan_avg", "truncated_normal",
                                              "glorot_normal")
lecun_uniform = _named_scheme(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _named_scheme(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _named_scheme(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _named_scheme(2.0, "fan_in", "truncated_normal", "he_normal")


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """Uniformly distributed (semi-)orthogonal matrices times `scale`: the axis
    `column_axis` holds the columns, every other axis is flattened into the rows, and
    whichever of the two is smaller gets orthonormal vectors (`random.orthogonal`)."""
    def init(key, shape, dtype=dtype):
        shape = tuple(int(n) for n in shape)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return jnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rows_shape = tuple(np.delete(shape, column_axis)) + (n_cols,)
        q = jnp.moveaxis(jnp.reshape(q, rows_shape), -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """A convolution kernel (1, 2 or 3 spatial axes, then in, out) that is zero except
    at the window's centre, which holds an orthogonal (in, out) matrix: the delta-
    orthogonal scheme of Xiao et al. (2018). Needs in <= out."""
    def init(key, shape, dtype=dtype):
        shape = tuple(int(n) for n in shape)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype).at[centre].set(matrix)
    return init
