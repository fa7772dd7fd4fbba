"""`minijax.scipy.signal`: n-d `convolve` and `correlate`, as `jax.scipy.signal`.

Both are one `lax.conv_general_dilated` (see `minijax/numpy/_convolve.py`). `method`
is accepted for compatibility: 'auto' and 'direct' are the direct convolution JAX
uses too; 'fft' (an FFT-based algorithm in JAX) is computed directly as well, which
gives the same values up to rounding.
"""
from __future__ import annotations

from .. import lax
from ..numpy._convolve import convolve_nd
from ..numpy._shape import flip
from ..numpy._promotion import as_operand, dtype_of, is_complex

__all__ = ["convolve", "correlate"]

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
