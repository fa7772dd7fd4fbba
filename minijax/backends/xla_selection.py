"""XLA lowering of `top_k` and `optimization_barrier`: `jax.lax`'s functions."""
from __future__ import annotations

import functools

from jax import lax

from ..ir import selection_primitives as S
from ..ir.trace import eager_impls
from .eager_dispatch import apply_primitive
from .jax_features import TOP_K_TAKES_IS_STABLE
from .xla import lowering_rules


def _top_k(x, *, k, axis, is_stable=True):
    # An older JAX's top_k is always stable, which is what `is_stable=False` allows
    # too, so there the param is dropped.
    extra = {"is_stable": is_stable} if TOP_K_TAKES_IS_STABLE else {}
    return list(lax.top_k(x, k, axis=axis, **extra))


lowering_rules[S.top_k_p] = _top_k
lowering_rules[S.optimization_barrier_p] = lambda *xs: list(lax.optimization_barrier(xs))
for _prim in S.selection_primitives:
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
