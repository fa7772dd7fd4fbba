"""JAX's `jax.interpreters.batching`: batching rules of your own primitives.

`primitive_batchers[p] = rule`, JAX's signature `rule(batched_args, batch_dims,
**params) -> (out, out_dim)` (lists when `p.multiple_results`; a dim is an axis, or
`None` for an operand or result without the batch axis), becomes minijax's
`vmap_rules[p]`, `rule(axis_size, values, dims, **params) -> Batched(values, dims)`.
`defvectorized` and `bdim_at_front` are JAX's helpers for writing one.
"""
from __future__ import annotations

import functools

from ..ir import primitives as _P
from ..ir.trace import aval_of as _aval_of, bind as _bind
from ..transforms.batching import Batched, vmap_rules as _vmap_rules
from ._tables import UserRuleTable, check_user_primitive

__all__ = ["bdim_at_front", "defvectorized", "primitive_batchers"]


def _translate(prim, rule):
    def vmap_rule(axis_size, values, dims, **params):
        out = rule(list(values), list(dims), **params)
        try:
            values_out, dims_out = out
        except (TypeError, ValueError):
            raise TypeError(f"the batching rule of {prim.name} must return a pair "
                            f"(out, out_dim), got {out!r}") from None
        if prim.multiple_results:
            return Batched(list(values_out), list(dims_out))
        return Batched([values_out], [dims_out])
    vmap_rule.__wrapped__ = rule
    return vmap_rule


primitive_batchers = UserRuleTable("batching.primitive_batchers", _vmap_rules, _translate)


def _vectorized(prim, batched_args, batch_dims, **params):
    dims = {d for d in batch_dims if d is not None}
    if len(dims) != 1 or None in batch_dims:
        raise ValueError(f"{prim.name} is batched by defvectorized, which needs every "
                         f"operand batched along the same axis; got axes {batch_dims}")
    out = prim.bind(*batched_args, **params)
    dim = dims.pop()
    return out, ([dim] * len(out) if prim.multiple_results else dim)


def defvectorized(prim):
    """Batch `prim` by applying it to the batched operands as they are: for a
    primitive that works elementwise along any leading axis."""
    check_user_primitive(prim, "batching.defvectorized")
    primitive_batchers[prim] = functools.partial(_vectorized, prim)


def bdim_at_front(x, bdim, size, mesh_axis=None):
    """`x` with its batch axis `bdim` moved to the front; an operand without one
    (`bdim` None) is broadcast to `size` along a new leading axis. (`mesh_axis`, a
    sharding of the new axis in JAX, must be None: minijax's vmap does not shard.)"""
    if mesh_axis is not None:
        raise NotImplementedError("bdim_at_front: minijax's vmap does not shard the "
                                  "batch axis; pass mesh_axis=None")
    aval = _aval_of(x)
    if bdim is None:
        return _bind(_P.broadcast_in_dim_p, x, shape=(size, *aval.shape),
                     broadcast_dimensions=tuple(range(1, len(aval.shape) + 1)))
    if bdim == 0:
        return x
    rest = [d for d in range(len(aval.shape)) if d != bdim]
    return _bind(_P.transpose_p, x, permutation=(bdim, *rest))
