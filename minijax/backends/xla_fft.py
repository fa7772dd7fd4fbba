"""XLA lowering of the `fft` primitive: `jax.lax.fft` with the type named by the param."""
from __future__ import annotations

import functools

from jax import lax

from ..ir import fft_primitives as F
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .xla import lowering_rules


def _fft(x, *, fft_type, fft_lengths):
    return [lax.fft(x, lax.FftType[fft_type], tuple(fft_lengths))]


lowering_rules[F.fft_p] = _fft
eager_impls[F.fft_p] = functools.partial(apply_primitive, F.fft_p)
