"""`pure_callback` and `io_callback` under the passes: no derivative, and vmap by the
callback's `vmap_method` (an io_callback: one call per example, or JAX's error when it
is ordered).

A pure callback is a Python function minijax cannot look into, so:

* jvp: an error, as in JAX -- a derivative needs a `custom_jvp` (or `custom_vjp`)
  around the callback. (No tangent means no linear use, so there is no transpose.)
* vmap: how the callback sees a batch is the user's choice, `vmap_method`:
  - 'sequential' / 'sequential_unrolled': one call per example, the outputs stacked;
  - 'expand_dims': one call, batched arguments with the batch axis first and
    unbatched ones with a new axis of size 1 there; it returns batched results;
  - 'broadcast_all': one call, every argument batched (unbatched ones copied);
  - 'legacy_vectorized': one call, batched arguments with the batch axis first and
    unbatched ones as they are;
  - None: refused, as JAX refuses it.
* DCE: no effect, so an unused call is dropped (the default), as JAX does.

An `io_callback` has the `Debug` effect, so DCE keeps it and partial eval runs it once
with the known values (no rule needed for either). jvp is JAX's error for it too. Under
vmap an unordered one is called once per example, in example order, and its results
stacked -- JAX's only batching of it; an ordered one is refused, as JAX refuses it (the
examples' calls would have no order of their own).
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from .jvp import jvp_rules
from .vmap import vmap_rules, Batched, not_mapped
from .batching import moveaxis, batch_at, lane_of


def _no_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _no_io_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _stack(values, axis_size):
    """`values` (one per example, same type) stacked along a new leading axis."""
    expanded = [P.broadcast_in_dim_p.bind(
        v, shape=(1,) + aval_of(v).shape,
        broadcast_dimensions=tuple(range(1, aval_of(v).ndim + 1))) for v in values]
    return expanded[0] if axis_size == 1 else P.concatenate_p.bind(*expanded, dimension=0)


def _vmap_pure_callback(axis_size, values, dims, *, callback, result_shapes, result_dtypes,
                        vmap_method):
    params = dict(callback=callback, result_shapes=result_shapes,
                  result_dtypes=result_dtypes, vmap_method=vmap_method)
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            "'legacy_vectorized'. Got vmap_method=None.")
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _one_call_per_lane(CF.pure_callback_p, axis_size, values, dims, params)
    if vmap_method == "expand_dims":
        args = [P.broadcast_in_dim_p.bind(v, shape=(1,) + aval_of(v).shape,
                                          broadcast_dimensions=tuple(range(1, aval_of(v).ndim + 1)))
                if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(values, dims)]
    elif vmap_method == "broadcast_all":
        args = [batch_at(v, d, 0, axis_size) for v, d in zip(values, dims)]
    else:     # legacy_vectorized
        args = [v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(values, dims)]
    params["result_shapes"] = tuple((axis_size,) + tuple(s) for s in result_shapes)
    outs = bind(CF.pure_callback_p, *args, **params)
    return Batched(list(outs), [0] * len(outs))


def _one_call_per_lane(prim, axis_size, values, dims, params):
    per_lane = [bind(prim, *[v if d is not_mapped else lane_of(v, d, lane)
                             for v, d in zip(values, dims)], **params)
                for lane in range(axis_size)]
    outs = [_stack([lane[i] for lane in per_lane], axis_size)
            for i in range(len(params["result_shapes"]))]
    return Batched(outs, [0] * len(outs))


def _vmap_io_callback(axis_size, values, dims, **params):
    if params["ordered"]:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _one_call_per_lane(CF.io_callback_p, axis_size, values, dims, params)


jvp_rules[CF.pure_callback_p] = _no_jvp
vmap_rules[CF.pure_callback_p] = _vmap_pure_callback
jvp_rules[CF.io_callback_p] = _no_io_jvp
vmap_rules[CF.io_callback_p] = _vmap_io_callback
