"""The discrete Fourier transform primitive, `fft`, with `jax.lax.fft`'s params.

    fft  x -> y   params: fft_type (one of 'FFT', 'IFFT', 'RFFT', 'IRFFT'),
                          fft_lengths (a tuple of 1 to 3 ints)

The transform runs over the trailing `len(fft_lengths)` axes of its operand and maps
over the leading ones:

    FFT    c64[..., n1, n2]        -> c64[..., n1, n2]          forward, complex to complex
    IFFT   c64[..., n1, n2]        -> c64[..., n1, n2]          inverse (divides by n1*n2)
    RFFT   f32[..., n1, n2]        -> c64[..., n1, n2 // 2 + 1]  forward, real input: only
                                                                 the non-redundant half
    IRFFT  c64[..., n1, n2 // 2 + 1] -> f32[..., n1, n2]         inverse of RFFT

(c128/f64 likewise.) `fft_type` is stored by name so the equation prints and parses in
the text form; `minijax.lax.fft` also accepts `jax.lax.FftType` members and lower-case
names, as JAX does. All four transforms are linear over the reals, which fixes the
derivative rules (`transforms/fft_rules.py`); the lowering is `jax.lax.fft`
(`backends/xla_fft.py`) and the reference evaluator uses `numpy.fft`
(`backends/reference_fft.py`). Weak types carry through, as in JAX.
"""
from __future__ import annotations

import numpy as np

from .types import is_complex
from .registry import Primitive, type_rules, _array, _fail

__all__ = ["fft_p", "FFT_TYPES", "fft_primitives"]

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: f for f, c in _COMPLEX_OF.items()}

fft_p = Primitive("fft")


def fft_output_shape(shape, fft_type, fft_lengths) -> tuple:
    lead = tuple(shape[:len(shape) - len(fft_lengths)])
    if fft_type == "RFFT":
        return lead + tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        return lead + tuple(fft_lengths)
    return tuple(shape)


def _fft_rule(x, *, fft_type, fft_lengths):
    _array("fft", x)
    if fft_type not in FFT_TYPES:
        _fail("fft", f"fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    lengths = tuple(fft_lengths)
    if not 1 <= len(lengths) <= 3 or any(n < 0 for n in lengths):
        _fail("fft", f"fft_lengths must be 1 to 3 non-negative sizes, got {lengths}")
    if len(lengths) > x.ndim:
        _fail("fft", f"operand {x} has fewer axes than fft_lengths {lengths}")
    minor = x.shape[x.ndim - len(lengths):]
    if fft_type == "RFFT":
        if x.dtype not in _COMPLEX_OF:
            _fail("fft", f"RFFT operand must be float32 or float64, got {x}")
        expected, dtype = lengths, _COMPLEX_OF[x.dtype]
    else:
        if not is_complex(x.dtype):
            _fail("fft", f"{fft_type} operand must be complex64 or complex128, got {x}")
        dtype = _REAL_OF[x.dtype] if fft_type == "IRFFT" else x.dtype
        expected = (lengths[:-1] + (lengths[-1] // 2 + 1,) if fft_type == "IRFFT"
                    else lengths)
    if tuple(minor) != expected:
        _fail("fft", f"{fft_type} of fft_lengths {lengths} needs trailing axes {expected}, "
              f"got operand {x}")
    return [x.update(shape=fft_output_shape(x.shape, fft_type, lengths), dtype=dtype)]


type_rules[fft_p] = _fft_rule

fft_primitives = (fft_p,)
