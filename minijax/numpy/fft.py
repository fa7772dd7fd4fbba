"""`minijax.numpy.fft`: NumPy's FFT functions with JAX's semantics.

Every transform is one `fft` primitive (`minijax.lax.fft`) over the trailing axes,
with the axes a caller names moved there first and moved back after, and the input
cropped or zero-padded first when a length `n`/`s` is given:

    fft, ifft, fft2, ifft2, fftn, ifftn          complex to complex (FFT / IFFT)
    rfft, rfft2, rfftn                           real to half spectrum (RFFT)
    irfft, irfft2, irfftn                        half spectrum to real (IRFFT)
    hfft, ihfft                                  a Hermitian signal's transforms, from
                                                 IRFFT/RFFT of the conjugate
    fftfreq, rfftfreq, fftshift, ifftshift       frequencies and reordering

More than three axes are done as JAX does them, in two transforms (XLA's own limit
is three). `norm` is None/"backward" (the inverse divides by n), "ortho" (both divide by sqrt n)
or "forward" (the forward transform divides by n), as in NumPy and JAX. Integer
inputs compute in float32/complex64 (x64 is off); results are never weakly typed.
Derivatives and vmap come from the `fft` primitive's rules.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from ..ir.dtype_args import refuse_array
from ..frontend.fft_ops import fft as _lax_fft
from ._promotion import as_operand, shape_of, ndim_of, dtype_of
from ._creation import asarray, arange, array
from ._shape import moveaxis, roll
from ._pad import pad
from ._complex import conj

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq",
           "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _norm_factor(lengths, dtype, func_name, norm):
    """The scale `norm` asks of a transform over `lengths` (None: no scaling at all)."""
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         f'"forward".')
    if norm in (None, "backward"):
        return None
    size = np.prod(np.asarray(lengths, dtype=dtype))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        return np.sqrt(size) if inverse else 1 / np.sqrt(size)
    return size if inverse else 1 / size


def _crop_or_pad(arr, sizes):
    """`arr` cut down or zero-padded (at the end of each axis) to `sizes`."""
    shape = shape_of(arr)
    arr = arr[tuple(slice(n) for n in sizes)]
    return pad(arr, [(0, max(n - m, 0)) for n, m in zip(sizes, shape)])


def _transform(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = as_operand(full_name, a)
    ndim = ndim_of(arr)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    named_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if named_axes is not None:
        axes = tuple(range(ndim - len(axes), ndim))
        arr = moveaxis(arr, named_axes, axes)
    shape = shape_of(arr)
    if s is not None:
        sizes = list(shape)
        for axis, n in zip(axes, s):
            sizes[axis] = n
        if fft_type == "IRFFT":
            sizes[-1] = sizes[-1] // 2 + 1
        arr = _crop_or_pad(arr, sizes)
    elif fft_type == "IRFFT":
        s = [shape[axis] for axis in axes[:-1]]
        if axes:
            s.append(max(0, 2 * (shape[axes[-1]] - 1)))
    else:
        s = [shape[axis] for axis in axes]
    out = _fft_over_trailing_axes(arr, fft_type, tuple(s))
    factor = _norm_factor(s, dtype_of(out), func_name, norm)
    if factor is not None:
        out = out * asarray(factor.astype(dtype_of(out)))
    if named_axes is not None:
        out = moveaxis(out, axes, named_axes)
    return out


def _fft_over_trailing_axes(arr, fft_type, lengths):
    """The transform over the trailing len(lengths) axes. XLA does at most three at
    once, so a longer one is split, as JAX does: the last two or three axes (the
    ones a real transform halves) and a complex transform of the rest, which is first
    moved behind them."""
    if len(lengths) <= 3:
        return _lax_fft(arr, fft_type, lengths)
    last = 2 if len(lengths) == 4 else 3
    ndim = ndim_of(arr)
    outer = tuple(range(ndim - len(lengths), ndim - last))
    moved = tuple(range(ndim - len(lengths) + last, ndim))
    if fft_type in ("FFT", "RFFT"):
        arr = moveaxis(_lax_fft(arr, fft_type, lengths[-last:]), outer, moved)
        return moveaxis(_fft_over_trailing_axes(arr, "FFT", lengths[:-last]), moved, outer)
    arr = _fft_over_trailing_axes(moveaxis(arr, outer, moved), "IFFT", lengths[:-last])
    return _lax_fft(moveaxis(arr, moved, outer), fft_type, lengths[-last:])


def _one_axis(func_name, axis):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. "
                         f"Please use jax.numpy.fft.{func_name}n. Got axis = {axis!r}.")
    return None if axis is None else [axis]


def _two_axes(func_name, axes):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. "
                         f"Got axes = {axes!r}.")
    return axes


def _transform_1d(func_name, fft_type, a, n, axis, norm):
    return _transform(func_name, fft_type, a, None if n is None else [n],
                      _one_axis(func_name, axis), norm)


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The one-dimensional discrete Fourier transform along `axis`."""
    return _transform_1d("fft", "FFT", a, n, axis, norm)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of `fft`."""
    return _transform_1d("ifft", "IFFT", a, n, axis, norm)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The FFT of real input: the n // 2 + 1 non-negative frequencies."""
    return _transform_1d("rfft", "RFFT", a, n, axis, norm)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of `rfft`: n real outputs (default 2 (m - 1) from m inputs)."""
    return _transform_1d("irfft", "IRFFT", a, n, axis, norm)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The FFT of a signal with Hermitian symmetry, given by its first half: real."""
    conj_a = conj(as_operand("jax.numpy.fft.hfft", a))
    _one_axis("hfft", axis)
    size = (shape_of(conj_a)[axis] - 1) * 2 if n is None else n
    return _transform_1d("hfft", "IRFFT", conj_a, n, axis, norm) * size


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of `hfft`: the half spectrum of a real signal, conjugated."""
    _one_axis("ihfft", axis)
    arr = as_operand("jax.numpy.fft.ihfft", a)
    size = shape_of(arr)[axis] if n is None else n
    return conj(_transform_1d("ihfft", "RFFT", arr, n, axis, norm)) * (1 / size)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
    """The two-dimensional FFT over `axes`."""
    return _transform("fft2", "FFT", a, s, _two_axes("fft2", axes), norm)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """The inverse of `fft2`."""
    return _transform("ifft2", "IFFT", a, s, _two_axes("ifft2", axes), norm)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """The two-dimensional FFT of real input (the last axis halved)."""
    return _transform("rfft2", "RFFT", a, s, _two_axes("rfft2", axes), norm)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
    """The inverse of `rfft2`."""
    return _transform("irfft2", "IRFFT", a, s, _two_axes("irfft2", axes), norm)


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """The FFT over up to three axes (default: all, or the last len(s))."""
    return _transform("fftn", "FFT", a, s, axes, norm)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of `fftn`."""
    return _transform("ifftn", "IFFT", a, s, axes, norm)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The FFT of real input over up to three axes (the last one halved)."""
    return _transform("rfftn", "RFFT", a, s, axes, norm)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
    """The inverse of `rfftn`."""
    return _transform("irfftn", "IRFFT", a, s, axes, norm)


def _frequency_args(func_name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single "
                         f"value. Got d = {list(d)}.")


def _frequency_dtype(dtype):
    refuse_array(dtype)
    return np.dtype(np.float32 if dtype is None else dtype)


def _float_dtype_for(dtype):
    # Not a number at all (`object`): kept, so that finfo's ValueError names it, as JAX's.
    return dtype if dtype.kind in "fcOUSMm" else np.dtype(np.float32)


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point FFT with sample spacing d:
    [0, 1, ..., n // 2 - 1 (or (n-1) // 2), -(n // 2), ..., -1] / (d n)."""
    _frequency_args("fftfreq", n, d)
    out_dtype = _frequency_dtype(dtype)
    compute = np.dtype(np.finfo(_float_dtype_for(out_dtype)).dtype)
    i = arange(n, dtype=compute)
    k = (i + n // 2) % n - n // 2
    return (k / array(d * n, dtype=compute)).astype(out_dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies of an n-point RFFT: [0, ..., n // 2] / (d n)."""
    _frequency_args("rfftfreq", n, d)
    dtype = _frequency_dtype(dtype)
    k = arange(0, n // 2 + 1, dtype=dtype)
    return k / array(d * n, dtype=dtype)


def _shifts(x, axes, sign):
    shape = shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
        return [sign * (n // 2) for n in shape], axes
    if isinstance(axes, int):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[axis] // 2) for axis in axes], axes


def fftshift(x, axes=None):
    """Roll the zero frequency to the centre of each axis in `axes` (default all)."""
    x = as_operand("fftshift", x)
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of `fftshift`."""
    x = as_operand("ifftshift", x)
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
