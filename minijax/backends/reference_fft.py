"""The reference evaluator's rule for `fft`: `numpy.fft` over the trailing axes.

NumPy computes in double precision; the result is rounded once to the primitive's
output dtype (complex64 or float32 for single-precision operands).
"""
from __future__ import annotations

import numpy as np

from ..ir import fft_primitives as F
from .reference import reference_rules

_TRANSFORMS = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
               "IRFFT": np.fft.irfftn}
_OUTPUT_DTYPE = {
    "FFT": lambda d: d, "IFFT": lambda d: d,
    "RFFT": lambda d: np.result_type(d, np.complex64),
    "IRFFT": lambda d: np.finfo(d).dtype}


def _fft(x, *, fft_type, fft_lengths):
    lengths = tuple(fft_lengths)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    out_dtype = _OUTPUT_DTYPE[fft_type](x.dtype)
    if 0 in lengths or 0 in x.shape:
        shape = F.fft_output_shape(x.shape, fft_type, lengths)
        return [np.zeros(shape, out_dtype)]
    out = _TRANSFORMS[fft_type](x, s=lengths, axes=axes)
    return [np.asarray(out).astype(out_dtype)]


reference_rules[F.fft_p] = _fft
