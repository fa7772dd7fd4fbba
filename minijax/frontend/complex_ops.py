"""`minijax.lax.real/imag/conj/complex`: complex numbers apart and together.

As in `jax.lax`, `conj` of a real array is the complex array with that real part
(the conversion is an explicit `convert_element_type` in front of the primitive),
and `complex` takes two real operands of one dtype (a Python scalar takes the
other operand's dtype, weakly).
"""
from __future__ import annotations

import numpy as np

from ..ir import complex_primitives as C
from ..ir.trace import bind, aval_of
from ..ir.types import is_complex
from . import lax_ops as lax


def real(x):
    """The real part of a complex array (the `real` primitive)."""
    return bind(C.real_p, x)


def imag(x):
    """The imaginary part of a complex array (the `imag` primitive)."""
    return bind(C.imag_p, x)


def conj(x):
    """The complex conjugate; a real operand is first made complex."""
    dtype = aval_of(x).dtype
    if not is_complex(dtype):
        target = np.complex128 if dtype == np.float64 else np.complex64
        x = lax.convert_element_type(x, target)
    return bind(C.conj_p, x)


def complex(x, y):
    """x + iy for real x and y of one dtype (the `complex` primitive)."""
    x, y = lax._match_scalars(x, y)
    return bind(C.complex_p, x, y)
