"""The primitives that take complex numbers apart and put them together.

    real     c64[...] -> f32[...]      the real part
    imag     c64[...] -> f32[...]      the imaginary part
    conj     c64[...] -> c64[...]      the complex conjugate
    complex  f32[...], f32[...] -> c64[...]    x + iy (a rank-0 operand splats)

(c128 <-> f64 likewise.) All four are linear over the reals, which fixes their
derivative rules (`transforms/complex_rules.py`). Weak types carry through, as in
JAX: the real part of a weakly typed complex scalar is a weak float.
"""
from __future__ import annotations

import numpy as np

from .types import ShapedArray, is_complex, is_float
from .registry import Primitive, type_rules, _array, _fail
from .elementwise import _binary_shape

__all__ = ["real_p", "imag_p", "conj_p", "complex_p", "complex_primitives"]

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: f for f, c in _COMPLEX_OF.items()}


def _complex_part(name):
    prim = Primitive(name)

    def rule(x):
        _array(name, x)
        if not is_complex(x.dtype):
            _fail(name, f"operand must be complex, got {x}")
        return [x.update(dtype=_REAL_OF[x.dtype])]
    type_rules[prim] = rule
    return prim


real_p = _complex_part("real")
imag_p = _complex_part("imag")
conj_p = Primitive("conj")


def _conj_rule(x):
    _array("conj", x)
    if not is_complex(x.dtype):
        _fail("conj", f"operand must be complex, got {x}")
    return [x]


type_rules[conj_p] = _conj_rule
complex_p = Primitive("complex")


def _complex_rule(x, y):
    _array("complex", x, "real part")
    _array("complex", y, "imaginary part")
    if x.dtype != y.dtype or not is_float(x.dtype) or x.dtype not in _COMPLEX_OF:
        _fail("complex", f"operands must be float32 or float64 of one dtype, got {x} and {y}")
    shape = _binary_shape("complex", (x, y))
    return [ShapedArray(shape, _COMPLEX_OF[x.dtype], x.weak_type and y.weak_type)]


type_rules[complex_p] = _complex_rule

complex_primitives = (real_p, imag_p, conj_p, complex_p)
