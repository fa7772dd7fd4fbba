"""Fuzz op entries for the primitives of the fifth round: the FFT, `top_k`,
`optimization_barrier`, `reduce_precision`, `zeta` and the exponentially scaled Bessel
functions (docs/fuzzing.md). As in `fuzz_ops_special.py`, each works on float32 values
inside its domain, so a difference is never an undefined point:

* `zeta(s, q)` with s in (1.5, ...) and q positive; JAX defines no derivative of it, so
  both arguments go through `stop_gradient` (minijax's derivative in q is tested by
  tests/test_lax_more.py);
* the FFT over the last axis, of every type: complex in and out for FFT and IFFT, real in
  for RFFT, Hermitian half-spectrum in for IRFFT; the program goes on with real parts;
* `top_k` over the last axis of a non-empty one, `k` at most its size.
"""
from __future__ import annotations

import numpy as np

import minijax.lax as lax
from .fuzz_ops import floating, op
from .fuzz_ops_special import _float32_operand, _positive, as_float32


@op("special:bessel", ["bessel_i0e", "bessel_i1e"], "special", weight=0.3)
def _bessel(b):
    x = _float32_operand(b)
    if x is None:
        return None
    return [b.rng.choice([lax.bessel_i0e, lax.bessel_i1e])(lax.clamp(-30.0, x, 30.0))]


@op("special:zeta", ["zeta"], "special", weight=0.2, smooth=False)
def _zeta(b):
    x = _float32_operand(b)
    if x is None:
        return None
    s = lax.add(_positive(x), np.float32(1.5))
    q = lax.add(_positive(lax.neg(x)), np.float32(0.25))
    return [lax.zeta(lax.stop_gradient(s), lax.stop_gradient(q))]


# not smooth: finite differences see the rounding's steps (derivative 0), the jvp the
# rounded tangent
@op("bits:reduce_precision", ["reduce_precision"], "bits", weight=0.3, smooth=False)
def _reduce_precision(b):
    x = b.pick(floating)
    if x is None:
        return None
    exponent_bits, mantissa_bits = b.rng.choice([(5, 10), (8, 7), (4, 3)])
    return [lax.reduce_precision(x, exponent_bits=exponent_bits,
                                 mantissa_bits=mantissa_bits)]


@op("complex:fft", ["fft"], "complex", weight=0.4)
def _fft(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1 and a.shape[-1] > 0)
    if x is None:
        return None
    x = as_float32(x)
    n = int(np.shape(x)[-1])
    kind = b.rng.choice(["FFT", "IFFT", "RFFT", "IRFFT"])
    if kind == "RFFT":
        return [lax.real(lax.fft(x, kind, (n,)))]
    z = lax.complex(x, lax.mul(x, np.float32(0.5)))
    if kind == "IRFFT":
        # the half spectrum z holds n bins: the signal has 2 (n - 1) samples (1 for n = 1)
        return [lax.fft(z, kind, (max(2 * (n - 1), 1),))]
    return [lax.real(lax.fft(z, kind, (n,)))]


@op("sorting:top_k", ["top_k"], "sorting", weight=0.4, smooth=False)
def _top_k(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1 and a.shape[-1] > 0)
    if x is None:
        return None
    k = b.rng.randrange(1, int(np.shape(x)[-1]) + 1)
    values, indices = lax.top_k(x, k)
    return [values, indices]


@op("optimization_barrier", ["optimization_barrier"], "elementwise", weight=0.2)
def _optimization_barrier(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    y = b.pick(lambda a: True)
    return list(lax.optimization_barrier((x, y)))
