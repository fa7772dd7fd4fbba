"""XLA lowering of `top_k` and `optimization_barrier`: `jax.lax`'s functions."""
from __future__ import annotations

import functools

from jax import lax

from ..ir import selection_primitives as S
from ..ir.trace import eager_impls
from .xla import lowering_rules, apply_primitive

lowering_rules[S.top_k_p] = lambda x, *, k, axis: list(lax.top_k(x, k, axis=axis))
lowering_rules[S.optimization_barrier_p] = lambda *xs: list(lax.optimization_barrier(xs))
for _prim in S.selection_primitives:
    eager_impls[_prim] = functools.partial(apply_primitive, _prim)
