"""Complex numbers: `real`, `imag`, `conj`/`conjugate`, `angle`, `iscomplexobj`.

On a complex array these are the `real`, `imag` and `conj` primitives; on a real one
NumPy's answers without them: the array itself, zeros, the array itself.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import as_operand, as_array, dtype_of, convert, is_inexact, shape_of
from ._creation import zeros_like

__all__ = ["real", "imag", "conj", "conjugate", "angle", "iscomplexobj"]


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (its values are not inspected)."""
    if isinstance(x, complex):
        return True
    try:
        return np.dtype(dtype_of(as_operand("iscomplexobj", x))).kind == "c"
    except TypeError:
        return np.iscomplexobj(x)


@jitted_eagerly()
def real(val):
    val = as_operand("real", val)
    return lax.real(val) if iscomplexobj(val) else as_array(val)


@jitted_eagerly()
def imag(val):
    val = as_operand("imag", val)
    if iscomplexobj(val):
        return lax.imag(val)
    return zeros_like(val)


@jitted_eagerly()
def conjugate(x):
    x = as_operand("conjugate", x)
    return lax.conj(x) if iscomplexobj(x) else as_array(x)


conj = conjugate


@jitted_eagerly("deg")
def angle(z, deg: bool = False):
    """The argument of z in radians (degrees with deg=True): atan2(imag z, real z)."""
    z = as_operand("angle", z)
    if iscomplexobj(z):
        re, im = lax.real(z), lax.imag(z)
    elif is_inexact(dtype_of(z)) and len(shape_of(z)) > 0:
        re = z
        im = lax.full_like(z, 0)
    else:
        # An integer or boolean array, or a real scalar of any precision, in the default
        # float type, as JAX (and NumPy, for a scalar) does.
        re = convert("angle", z, np.float32)
        im = lax.full_like(re, 0)
    result = lax.atan2(im, re)
    return result * (180 / np.pi) if deg else result
