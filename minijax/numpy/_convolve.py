"""`jnp.convolve` and `jnp.correlate` (1-d), and the n-d direct convolution that
`minijax.scipy.signal` builds on.

Each is one `conv_general_dilated` with a single batch and feature axis: the longer
operand is the input, the shorter one (flipped, for a convolution) is the kernel, and
the mode picks the padding -- 'full' pads by kernel size - 1 on both sides, 'valid'
not at all, 'same' so that the output has the input's length, centred as NumPy does.
"""
from __future__ import annotations

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ._promotion import as_operand, as_array, shape_of, dtype_of, promote_dtypes_inexact
from ._shape import flip

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")


def _inexact_operands(fname, a, v, preferred_element_type):
    a, v = as_operand(fname, a), as_operand(fname, v, 1)
    if preferred_element_type is None:
        a, v = promote_dtypes_inexact(fname, a, v)
    return a, v


def _conv_1d(fname, a, v, mode, precision, preferred_element_type, flip_kernel):
    _check_mode(mode)
    a, v = _inexact_operands(fname, a, v, preferred_element_type)
    if len(shape_of(a)) != 1 or len(shape_of(v)) != 1:
        raise ValueError(f"{fname}() only support 1-dimensional inputs.")
    if shape_of(a)[0] == 0 or shape_of(v)[0] == 0:
        raise ValueError(f"{fname}: inputs cannot be empty, got shapes {shape_of(a)} and "
                         f"{shape_of(v)}.")
    if not flip_kernel and dtype_of(v).kind == "c":
        v = lax.conj(v)  # a correlation pairs a[n + k] with conj(v[n])
    reverse_output = False
    if shape_of(a)[0] < shape_of(v)[0]:
        # Slide the shorter one. A convolution is symmetric; a correlation with the
        # roles swapped is the original one reversed (the conjugate stays on the
        # caller's v, as JAX keeps it).
        a, v = v, a
        reverse_output = not flip_kernel
    if flip_kernel:
        v = flip(v)
    k = shape_of(v)[0]
    padding = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}
    out = lax.conv_general_dilated(lax.reshape(a, (1, 1) + shape_of(a)),
                                   lax.reshape(v, (1, 1, k)), (1,), [padding[mode]],
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)
    out = lax.reshape(out, shape_of(out)[2:])
    return as_array(flip(out) if reverse_output else out)


@jitted_eagerly("mode", "precision", "preferred_element_type")
def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-d arrays, `(a * v)[n] = sum_m a[m]
    v[n - m]`."""
    return _conv_1d("convolve", a, v, mode, precision, preferred_element_type, True)


@jitted_eagerly("mode", "precision", "preferred_element_type")
def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-d arrays, `c[k] = sum_n a[n + k] v[n]`."""
    return _conv_1d("correlate", a, v, mode, precision, preferred_element_type, False)


def convolve_nd(fname, in1, in2, mode, precision):
    """n-d convolution of two arrays of equal rank, one at least as large as the other
    along every axis (scipy.signal's direct method)."""
    _check_mode(mode)
    in1, in2 = _inexact_operands(fname, in1, in2, None)
    s1, s2 = shape_of(in1), shape_of(in2)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if 0 in s1 or 0 in s2:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{s1} and {s2}.")
    larger_first = all(a >= b for a, b in zip(s1, s2))
    if not larger_first and not all(a <= b for a, b in zip(s1, s2)):
        raise ValueError("One input must be smaller than the other in every dimension.")
    if not larger_first:
        in1, in2 = in2, in1
    # 'same' gives the shape of in1 as the caller passed it, even when swapped: the
    # padding is measured against the caller's in2.
    kernel, centred_on = shape_of(in2), s2
    if mode == "valid":
        padding = [(0, 0)] * len(kernel)
    elif mode == "same":
        padding = [(k - 1 - (n - 1) // 2, k - n + (n - 1) // 2)
                   for k, n in zip(kernel, centred_on)]
    else:
        padding = [(k - 1, k - 1) for k in kernel]
    flipped = flip(in2)
    out = lax.conv_general_dilated(lax.reshape(in1, (1, 1) + shape_of(in1)),
                                   lax.reshape(flipped, (1, 1) + kernel),
                                   (1,) * len(kernel), padding, precision=precision)
    return as_array(lax.reshape(out, shape_of(out)[2:]))
