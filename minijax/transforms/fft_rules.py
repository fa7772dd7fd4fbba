"""Derivatives and batching of the `fft` primitive (ir/fft_primitives.py).

Every FFT type is linear over the reals, so the JVP applies the same transform to the
tangent and reverse mode needs only a transpose rule, written with JAX's convention
that a cotangent pairs with a tangent through the real inner product Re(ct . t):

* FFT and IFFT: the DFT matrix is symmetric (F[j, k] = w^(jk)), so the transpose of a
  complex FFT is the same FFT of the cotangent, unconjugated.
* RFFT keeps m = n // 2 + 1 of the n outputs of a real input's FFT. Its transpose is
  n * IRFFT(conj(ct) / mask), where `mask` counts how often each kept output stands for
  itself and its mirror image: 1 for the zero frequency (and for the Nyquist one when n
  is even), 2 for the others. IRFFT rebuilds the mirrored half from conj(ct), which
  the division by `mask` undoes, and its 1/n is cancelled by the factor n.
* IRFFT reads only the m kept inputs; its transpose is conj(RFFT(ct) * mask / n) by the
  same counting, conjugated because of the real-inner-product convention.

(For several fft_lengths, n above is their product; only the last axis is halved.)
Batching moves the batch axis to the front: the transform maps over leading axes.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import fft_primitives as F
from ..ir import complex_primitives as C
from ..ir.trace import bind, aval_of
from .ad_util import mul, broadcast_in_dim
from .jvp_rules import _deflinear
from .transpose import transpose_rules
from .vmap import Batched, vmap_rules, batch_at


def _hermitian_weights(n: int, dtype, scale: float) -> np.ndarray:
    """`scale` times 1 for the zero (and, n even, the Nyquist) frequency, 2 elsewhere,
    over the n // 2 + 1 frequencies an RFFT of length n keeps."""
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return (scale * weights).astype(dtype)


def _along_last_axis(x, weights):
    """`x` times `weights` along its last axis (a constant broadcast to x's shape)."""
    shape = aval_of(x).shape
    return mul(x, broadcast_in_dim(weights, shape, (len(shape) - 1,)))


def _fft_transpose(cts, x, *, fft_type, fft_lengths):
    ct, = cts
    lengths = tuple(fft_lengths)
    size = math.prod(lengths)
    dtype = aval_of(ct).dtype
    if fft_type == "RFFT":
        weights = (size / _hermitian_weights(lengths[-1], np.float64, 1.0)).astype(dtype)
        scaled = _along_last_axis(bind(C.conj_p, ct), weights)
        return [bind(F.fft_p, scaled, fft_type="IRFFT", fft_lengths=lengths)]
    if fft_type == "IRFFT":
        spectrum = bind(F.fft_p, ct, fft_type="RFFT", fft_lengths=lengths)
        complex_dtype = aval_of(spectrum).dtype
        weights = _hermitian_weights(lengths[-1], complex_dtype, 1 / size)
        return [bind(C.conj_p, _along_last_axis(spectrum, weights))]
    return [bind(F.fft_p, ct, fft_type=fft_type, fft_lengths=lengths)]


def _fft_batch(axis_size, values, dims, **params):
    (x,), (d,) = values, dims
    return Batched([bind(F.fft_p, batch_at(x, d, 0, axis_size), **params)], [0])


_deflinear(F.fft_p)
transpose_rules[F.fft_p] = _fft_transpose
vmap_rules[F.fft_p] = _fft_batch
