"""`minijax.scipy.signal`: n-d `convolve` and `correlate`, the 2-d `convolve2d`
and `correlate2d`, and (in `_spectral.py`) `fftconvolve`, `detrend` and the spectral
estimators `stft`, `istft`, `csd`, `welch`, as `jax.scipy.signal`.

Both are one `lax.conv_general_dilated` (see `minijax/numpy/_convolve.py`). `method`
is accepted for compatibility: 'auto' and 'direct' are the direct convolution JAX
uses too; 'fft' (an FFT-based algorithm in JAX) is computed directly as well, which
gives the same values up to rounding.
"""
from __future__ import annotations

from .. import lax
from ..numpy._convolve import convolve_nd
from ..numpy._shape import flip
from ..numpy._promotion import as_operand, dtype_of, is_complex, shape_of

from ._spectral import fftconvolve, detrend, stft, istft, csd, welch  # noqa: F401

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "csd", "welch"]

_METHODS = ("auto", "direct", "fft")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The n-d convolution of `in1` and `in2` (modes 'full', 'same', 'valid')."""
    _check_method(method)
    return convolve_nd("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The n-d cross-correlation: the convolution with `in2` conjugated (if complex)
    and flipped on every axis."""
    _check_method(method)
    in2 = as_operand("correlate", in2)
    if is_complex(dtype_of(in2)):
        in2 = lax.conj(in2)
    return convolve_nd("correlate", in1, flip(in2), mode, precision)


def _conj(x):
    return lax.conj(x) if is_complex(dtype_of(x)) else x


def _check_2d(fname, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{fname}() only supports boundary='fill', fillvalue=0")
    in1, in2 = as_operand(fname, in1), as_operand(fname, in2, 1)
    if len(shape_of(in1)) != 2 or len(shape_of(in2)) != 2:
        raise ValueError(f"{fname}() only supports 2-dimensional inputs.")
    return in1, in2


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """The 2-d convolution of `in1` and `in2`: `convolve` for two matrices. Only the
    zero-filled boundary is supported, as in JAX."""
    in1, in2 = _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve_nd("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """The 2-d cross-correlation of `in1` and `in2`, computed as JAX computes it: a
    convolution of `in1` flipped with `in2` conjugated, flipped back -- or, when `in2`
    is the larger one, of `in2` flipped with `in1` conjugated (and for 'full' the
    result conjugated back)."""
    in1, in2 = _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    s1, s2 = shape_of(in1), shape_of(in2)
    swap = all(a <= b for a, b in zip(s1, s2))
    if swap and s1 != s2 and mode == "valid":
        return convolve_nd("correlate2d", flip(in2), _conj(in1), mode, precision)
    if swap and mode not in ("same", "valid"):
        return _conj(convolve_nd("correlate2d", flip(in2), _conj(in1), mode, precision))
    return flip(convolve_nd("correlate2d", flip(in1), _conj(in2), mode, precision))
