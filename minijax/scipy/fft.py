"""`minijax.scipy.fft`: the type-II discrete cosine transform and its inverse
(`dct`, `dctn`, `idct`, `idctn`), as `jax.scipy.fft` has them, built on `jnp.fft`.

The DCT of length N is one complex FFT of the same length (Makhoul 1980): reorder the
input as its even-indexed samples followed by its odd-indexed ones reversed, take the
FFT, turn each bin k by exp(-iπk/2N) and keep twice the real part. The inverse runs
the steps backwards. JAX implements type 2 only (other types raise
NotImplementedError), norm None/'backward' or 'ortho'; complex input transforms its
real and imaginary parts apart. The n-d transforms apply the 1-d one axis by axis.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy import fft as jnp_fft
from ..numpy._promotion import as_operand, canonicalize_axis, promote_dtypes_inexact
from ..frontend.eager_jit import jitted_eagerly

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(fname, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{fname}: norm={norm!r} is not implemented")


def _operand(fname, x):
    return jnp.asarray(as_operand(fname, x))


def _resize(x, axis, n):
    # zero-pad or truncate to n samples along axis (a negative high padding cuts)
    if n is None:
        return x
    pads = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, jnp.array(0, x.dtype), pads)


def _along(vector, axis, ndim):
    return lax.expand_dims(vector, [a for a in range(ndim) if a != axis])


def _turn(n, k):
    """exp(-iπk/2n), in the complex dtype of k."""
    return jnp.exp(-0.5j * np.pi * k / n)


def _ortho_scale(x, axis):
    # 1/sqrt(4N) for the first coefficient, 1/sqrt(2N) for the others
    n = x.shape[axis]
    factor = lax.concatenate([lax.full((1,), 4, x.dtype), lax.full((n - 1,), 2, x.dtype)], 0)
    return x / lax.sqrt(_along(factor, axis, x.ndim) * n)


def _evens_then_odds_reversed(x, axis):
    evens = lax.slice_in_dim(x, None, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([evens, odds], axis)


def _undo_reorder(x, axis):
    n = x.shape[axis]
    half = math.ceil(n / 2)
    first = lax.slice_in_dim(x, 0, half, 1, axis)
    second = lax.rev(lax.slice_in_dim(x, half, n, 1, axis), (axis,))
    index = [slice(None)] * x.ndim
    out = jnp.zeros(x.shape, x.dtype)
    index[axis] = slice(None, None, 2)
    out = out.at[tuple(index)].set(first)
    index[axis] = slice(1, None, 2)
    return out.at[tuple(index)].set(second)


def _one_axis(fname, core, x, type, n, axis, norm):
    """What `dct` and `idct` share: check the arguments, transform a complex input's
    real and imaginary parts apart, resize to `n`, then run `core(x, axis, norm)`."""
    x = _operand(fname, x)
    _check(fname, type, norm)
    if jnp.iscomplexobj(x):
        parts = (jnp.real(x), jnp.imag(x))
        return lax.complex(*(_one_axis(fname, core, part, type, n, axis, norm) for part in parts))
    axis = canonicalize_axis(fname, axis, x.ndim)
    return core(_resize(x, axis, n), axis, norm)


def _dct_core(x, axis, norm):
    size = x.shape[axis]
    spectrum = jnp_fft.fft(_evens_then_odds_reversed(x, axis), axis=axis)
    k = _along(jnp.arange(size, dtype=jnp.real(spectrum).dtype), axis, x.ndim)
    out = 2 * jnp.real(spectrum * _turn(size, k))
    return _ortho_scale(out, axis) if norm == "ortho" else out


def _idct_core(x, axis, norm):
    size = x.shape[axis]
    x, = promote_dtypes_inexact("idct", x)
    if norm != "ortho":
        x = _ortho_scale(x, axis)
    x = _ortho_scale(x, axis)
    k = _along(jnp.arange(size, dtype=x.dtype), axis, x.ndim)
    turn = _turn(size, k)
    x = x.astype(turn.dtype) / turn * 2 * size
    return _undo_reorder(jnp.real(jnp_fft.ifft(x, axis=axis)), axis)


@jitted_eagerly("type", "n", "axis", "norm")
def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The type-II DCT of `x` along `axis`, zero-padded or truncated to `n` first."""
    return _one_axis("dct", _dct_core, x, type, n, axis, norm)


@jitted_eagerly("type", "n", "axis", "norm")
def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of `dct`: idct(dct(x)) == x for either norm."""
    return _one_axis("idct", _idct_core, x, type, n, axis, norm)


def _shape_and_axes(fname, x, s, axes):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(canonicalize_axis(fname, a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}: repeated axis in axes {axes}")
    return (s if s is not None else [None] * len(axes)), axes


def _nd(fname, one_axis, x, type, s, axes, norm):
    x = _operand(fname, x)
    _check(fname, type, norm)
    sizes, axes = _shape_and_axes(fname, x, s, axes)
    for n, axis in zip(sizes, axes):
        x = one_axis(x, n=n, axis=axis, norm=norm)
    return x


@jitted_eagerly("type", "s", "axes", "norm")
def dctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """The type-II DCT over `axes` (all, or the last len(s)), each resized to `s`."""
    return _nd("dctn", dct, x, type, s, axes, norm)


@jitted_eagerly("type", "s", "axes", "norm")
def idctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of `dctn`."""
    return _nd("idctn", idct, x, type, s, axes, norm)
