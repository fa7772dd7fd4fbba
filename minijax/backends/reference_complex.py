"""The reference evaluator's rules for `real`, `imag`, `conj` and `complex` (NumPy)."""
from __future__ import annotations

import numpy as np

from ..ir import complex_primitives as C
from .reference import reference_rules

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}

reference_rules[C.real_p] = lambda x: [np.asarray(np.real(x))]
reference_rules[C.imag_p] = lambda x: [np.asarray(np.imag(x))]
reference_rules[C.conj_p] = lambda x: [np.asarray(np.conj(x))]


def _complex(x, y):
    # set the parts directly: x + 1j * y would turn an infinite y into a NaN real part
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y
    return [out]


reference_rules[C.complex_p] = _complex
