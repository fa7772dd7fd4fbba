"""XLA lowering of `real`, `imag`, `conj` and `complex`: one `jax.lax` call each."""
from __future__ import annotations

import functools

import numpy as np
from jax import lax

from ..ir import complex_primitives as C
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .xla import lowering_rules


def _complex(x, y):
    # the IR lets a rank-0 operand splat; lax.complex wants equal shapes
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    return [lax.complex(lax.broadcast_in_dim(x, shape, ()) if np.shape(x) != shape else x,
                        lax.broadcast_in_dim(y, shape, ()) if np.shape(y) != shape else y)]


lowering_rules[C.real_p] = lambda x: [lax.real(x)]
lowering_rules[C.imag_p] = lambda x: [lax.imag(x)]
lowering_rules[C.conj_p] = lambda x: [lax.conj(x)]
lowering_rules[C.complex_p] = _complex
for _prim in C.complex_primitives:
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
