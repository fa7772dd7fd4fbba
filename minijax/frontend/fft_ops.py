"""`minijax.lax.fft` and `minijax.lax.FftType`: the front end of the `fft` primitive.

`fft(x, fft_type, fft_lengths)` converts its operand as `jax.lax.fft` does (complex
for FFT/IFFT/IRFFT, floating point for RFFT, never weakly typed), checks the shapes
with JAX's `ValueError`s, and binds `fft_p` with the type stored by name. NumPy's
interface (`minijax.numpy.fft`) is built on this function.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from jax import lax as _jax_lax

from ..ir import fft_primitives as F
from ..ir.trace import bind, aval_of
from ..ir.types import is_complex, is_inexact
from .eager_jit import jitted_eagerly
from .lax_ops import convert_element_type

# JAX's enum itself, so `minijax.lax.FftType.RFFT` and `jax.lax.FftType.RFFT` agree.
FftType = _jax_lax.FftType

_BY_LOWER_NAME = {name.lower(): name for name in F.FFT_TYPES}


def fft_type_name(fft_type) -> str:
    """'FFT', 'IFFT', 'RFFT' or 'IRFFT' from an FftType member or a name in either case."""
    if isinstance(fft_type, FftType):
        return fft_type.name
    if isinstance(fft_type, str):
        if fft_type in F.FFT_TYPES or fft_type in _BY_LOWER_NAME:
            return _BY_LOWER_NAME.get(fft_type, fft_type)
        raise ValueError(f"Unknown FFT type '{fft_type}'")
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _complex_dtype(dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else
                    dtype if is_complex(dtype) else np.complex64)


def _check_shape(kind, aval, lengths):
    if len(lengths) > aval.ndim:
        raise ValueError(f"FFT input shape {aval.shape} must have at least as many input "
                         f"dimensions as fft_lengths {lengths}.")
    minor = aval.shape[aval.ndim - len(lengths):]
    if kind == "IRFFT":
        if minor[:-1] != lengths[:-1] or minor[-1] != lengths[-1] // 2 + 1:
            raise ValueError(f"IRFFT input shape {aval.shape} minor dimensions must be "
                             f"{lengths[:-1] + (lengths[-1] // 2 + 1,)} for fft_lengths "
                             f"{lengths}")
    elif minor != lengths:
        raise ValueError(f"{kind} input shape {aval.shape} minor dimensions must be equal "
                         f"to fft_lengths {lengths}")


@jitted_eagerly("fft_type", "fft_lengths")
def fft(x, fft_type, fft_lengths: Sequence[int]):
    """The discrete Fourier transform over the trailing `len(fft_lengths)` axes of `x`."""
    kind = fft_type_name(fft_type)
    dtype = aval_of(x).dtype
    if kind == "RFFT":
        if is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        target = dtype if is_inexact(dtype) else np.dtype(np.float32)
        if target not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {target}")
    else:
        target = _complex_dtype(dtype)
    x = convert_element_type(x, target)
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    if len(lengths) > 3:
        raise ValueError(f"fft supports 1 to 3 fft_lengths (XLA's limit), got {lengths}")
    _check_shape(kind, aval_of(x), lengths)
    return bind(F.fft_p, x, fft_type=kind, fft_lengths=lengths)
