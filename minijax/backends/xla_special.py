"""XLA lowering of the special-function primitives: `jax.lax`'s functions of the same
names (read `xla.py` first). JAX's operand orders are minijax's, so each rule is
the `jax.lax` function itself, with a rank-0 operand splatted to the common shape
as the IR allows and `jax.lax` does not. Eagerly, each runs as one compiled op."""
from __future__ import annotations

import functools

import numpy as np
from jax import lax

from ..ir import special_primitives as S
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .xla import _register_single


def _elementwise(fn):
    def rule(*operands):
        shape = next((np.shape(x) for x in operands if np.shape(x) != ()), ())
        return fn(*(lax.broadcast_in_dim(x, shape, ()) if np.shape(x) != shape else x
                    for x in operands))
    return rule


for _prim, _fn in [(S.lgamma_p, lax.lgamma), (S.digamma_p, lax.digamma),
                   (S.erfc_p, lax.erfc), (S.polygamma_p, lax.polygamma),
                   (S.igamma_p, lax.igamma), (S.igammac_p, lax.igammac),
                   (S.igamma_grad_a_p, lax.igamma_grad_a),
                   (S.regularized_incomplete_beta_p, lax.betainc), (S.zeta_p, lax.zeta),
                   (S.bessel_i0e_p, lax.bessel_i0e), (S.bessel_i1e_p, lax.bessel_i1e)]:
    _register_single(_prim, _elementwise(_fn))

for _prim in S.special_primitives:
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
