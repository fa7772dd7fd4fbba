"""Resampling images: `resize` and `scale_and_translate`, as in `jax.image`.

Every method but 'nearest' is a separable linear filter. Along each spatial dimension
of size m resampled to size n there is an m x n weight matrix: output pixel j sits at
input coordinate `s_j = (j + 0.5 - translation) / scale - 0.5` (pixel centres at
half-integers), and input pixel i contributes `kernel(|s_j - i| / kernel_scale)`,
the weights of each output pixel normalised to sum to one. With `antialias` a
downsampling widens the kernel by `1 / scale` (`kernel_scale`), so it also low-pass
filters. The image is then contracted with one matrix per dimension (one `einsum`).
Output pixels whose sample falls outside the input get zero, except for the
'cubic-pytorch' method without antialiasing, which repeats the edge pixels instead
(the weights that fall off the image are moved onto the edge pixel).

'nearest' is a gather: output pixel j takes input pixel `floor((j + 0.5) * m / n)`.

Everything is written with `minijax.numpy`, so it traces, jits, differentiates (also
with respect to `scale` and `translation`) and batches like any other minijax code.
Both public functions run under `jit` (shapes, dimensions, method and flags static),
so an eager call compiles one program instead of one per operation.
"""
from __future__ import annotations

import enum
import string
from typing import Sequence

import numpy as np

from .. import numpy as jnp
from ..frontend.jit import jit
from ..lax import Precision

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """How `resize` and `scale_and_translate` interpolate (JAX's members and names)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(name: str) -> "ResizeMethod":
        for method, names in _NAMES.items():
            if name in names:
                return method
        raise ValueError(f'Unknown resize method "{name}"')


_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


def _lanczos(radius: float):
    def kernel(x):
        # sin(pi x) sin(pi x / r) * r / (pi x)^2, whose limit at 0 is 1
        safe = jnp.where(x > 1e-3, x, 1.0)
        value = radius * jnp.sin(np.pi * safe) * jnp.sin(np.pi * safe / radius) / (
            np.pi ** 2 * safe ** 2)
        return jnp.where(x > radius, 0.0, jnp.where(x > 1e-3, value, 1.0))
    return kernel


def _cubic(a: float):
    """The cubic convolution kernel with parameter `a` (Keys: -0.5; OpenCV's and
    PyTorch's without antialiasing: -0.75)."""
    def kernel(x):
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))
    return kernel


def _triangle(x):
    return jnp.maximum(0.0, 1.0 - jnp.abs(x))


# method: (kernel radius, kernel of the distance |sample - input pixel|)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, None),       # overlaps of intervals, not a kernel
}


def _normalised(weights, eps_scale=1000.0):
    """Each column (output pixel) divided by its sum; a column summing to ~0 is 0."""
    total = weights.sum(axis=0, keepdims=True)
    ok = jnp.abs(total) > eps_scale * float(np.finfo(np.float32).eps)
    return jnp.where(ok, weights / jnp.where(total != 0, total, 1.0), 0.0)


def _weights(m: int, n: int, scale, translation, method, antialias: bool, dtype):
    """The m x n matrix resampling one dimension of size m to size n."""
    radius, kernel = _KERNELS[method]
    inv_scale = 1.0 / scale
    out_pixels = jnp.arange(n, dtype=dtype)
    sample = (out_pixels + 0.5) * inv_scale - translation * inv_scale - 0.5
    if method is ResizeMethod.AREA:
        # the length of the overlap of output pixel j's footprint with input pixel i
        left = out_pixels * inv_scale - translation * inv_scale
        right = left + inv_scale
        in_left = jnp.arange(m, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], in_left[:, None] + 1.0)
                              - jnp.maximum(left[None, :], in_left[:, None]))
        return _inside(_normalised(weights), sample, m)
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    repeat_edges = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    pad = radius if repeat_edges else 0
    positions = jnp.arange(-pad, m + pad, dtype=dtype)
    weights = kernel(jnp.abs(sample[None, :] - positions[:, None]) / kernel_scale)
    if not repeat_edges:
        return _inside(_normalised(weights), sample, m)
    # pixels off the edge are the edge pixel repeated: add their weights onto it
    onto = np.clip(np.arange(-pad, m + pad), 0, m - 1)
    fold = jnp.asarray(np.eye(m, dtype=np.float32)[onto], dtype=weights.dtype)
    return _normalised(fold.T @ weights)


def _inside(weights, sample, m):
    """Zero the output pixels whose sample lies outside the input."""
    return jnp.where(((sample >= -0.5) & (sample <= m - 0.5))[None, :], weights, 0.0)


def _resample(image, shape, dims, scales, translations, method, antialias, precision):
    if not dims:
        return image
    letters = iter(string.ascii_letters)
    in_ids = [next(letters) for _ in range(image.ndim)]
    out_ids = list(in_ids)
    operands, specs = [image], ["".join(in_ids)]
    for d, scale, translation in zip(dims, scales, translations):
        new = next(letters)
        operands.append(_weights(image.shape[d], shape[d], scale, translation, method,
                                 antialias, image.dtype).astype(image.dtype))
        specs.append(in_ids[d] + new)
        out_ids[d] = new
    return jnp.einsum(",".join(specs) + "->" + "".join(out_ids), *operands,
                      precision=precision)


def _method(method) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a string or a ResizeMethod, got {method!r}")
    return method


def _check_shape(image, shape) -> tuple:
    shape = tuple(int(s) for s in shape)
    if len(shape) != jnp.ndim(image):
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {jnp.shape(image)}")
    return shape


def _as_inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


def _scale_and_translate(image, shape, dims, scale, translation, method, antialias,
                         precision):
    image = _as_inexact(image)
    scale, translation = _as_inexact(scale), _as_inexact(translation)
    dtype = jnp.result_type(scale, translation)
    scale, translation = scale.astype(dtype), translation.astype(dtype)
    return _resample(image, shape, dims, [scale[k] for k in range(len(dims))],
                     [translation[k] for k in range(len(dims))], method, antialias,
                     precision)


# One compiled program per call signature: op by op, an eager call would compile
# every one of the few dozen operations that build the weight matrices.
_scale_and_translate_jit = jit(_scale_and_translate, static_argnums=(1, 2, 5, 6, 7))


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method, antialias: bool = True,
                        precision=Precision.HIGHEST):
    """Resample `image` to `shape`, mapping input coordinate x of spatial dimension
    `spatial_dims[k]` to `x * scale[k] + translation[k]` (pixel centres at
    half-integers), as `jax.image.scale_and_translate`. Output pixels that sample
    outside the input are zero. `method`: any of `resize`'s except 'nearest'."""
    shape = _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    dims = tuple(int(d) % len(shape) for d in spatial_dims)
    if jnp.shape(scale) != (len(dims),) or jnp.shape(translation) != (len(dims),):
        raise ValueError(f"scale and translation need one entry per spatial dimension "
                         f"({len(dims)}), got shapes {jnp.shape(scale)} and "
                         f"{jnp.shape(translation)}")
    return _scale_and_translate_jit(image, shape, dims, scale, translation, method,
                                    antialias, precision)


def _resize_nearest(image, shape):
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        # computed in float32 as JAX does, so both pick the same pixel at ties
        picks = np.floor((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m)
                         / np.float32(n)).astype(np.int32)
        image = jnp.take(image, jnp.asarray(picks), axis=d)
    return image


def _resize(image, shape, method, antialias, precision):
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _as_inexact(image)
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    # a dimension kept at its size is left alone: every kernel interpolates
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), method, antialias,
                     precision)


_resize_jit = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(image, shape: Sequence[int], method, antialias: bool = True,
           precision=Precision.HIGHEST):
    """`image` resampled to `shape` (every dimension, batch and channel ones included:
    keep their sizes), as `jax.image.resize`. `method`: 'nearest', 'linear'
    ('bilinear', 'trilinear', 'triangle'), 'cubic' ('bicubic', 'tricubic'),
    'cubic-pytorch', 'lanczos3', 'lanczos5', 'area', or a `ResizeMethod`. With
    `antialias` a downsampling filters as it samples. 'nearest' keeps the dtype; the
    others return floats."""
    return _resize_jit(image, _check_shape(image, shape), method, antialias, precision)
