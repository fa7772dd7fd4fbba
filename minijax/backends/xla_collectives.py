"""XLA lowering of the collectives: one `jax.lax` collective each.

A collective only means something where its axis names are bound. `vmap` rewrites
the collectives on its own axis into array ops before anything is lowered
(`transforms/collective_rules.py`), so the collectives that reach this backend name
the axes of a mesh: they lower, inside the body JAX's `shard_map` runs, to JAX's own
collectives over those axes. Run eagerly, outside any named axis, a collective is the
user's mistake, reported as JAX reports it: a `NameError` naming the unbound axis.
"""
from __future__ import annotations

from jax import lax

from ..ir import collective_primitives as C
from ..ir.trace import eager_impls
from .xla import lowering_rules


def _reduction(lax_fn):
    return lambda x, *, axes: [lax_fn(x, axes)]


lowering_rules[C.psum_p] = _reduction(lax.psum)
lowering_rules[C.pmax_p] = _reduction(lax.pmax)
lowering_rules[C.pmin_p] = _reduction(lax.pmin)
lowering_rules[C.all_gather_p] = (
    lambda x, *, axis_name, axis, tiled, axis_size:
    [lax.all_gather(x, axis_name, axis=axis, tiled=tiled)])
lowering_rules[C.psum_scatter_p] = (
    lambda x, *, axis_name, scatter_dimension, tiled, axis_size:
    [lax.psum_scatter(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled)])
lowering_rules[C.ppermute_p] = (
    lambda x, *, axis_name, perm: [lax.ppermute(x, axis_name, perm)])
lowering_rules[C.all_to_all_p] = (
    lambda x, *, axis_name, split_axis, concat_axis, tiled, axis_size:
    [lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled)])
lowering_rules[C.axis_index_p] = lambda *, axis_name: [lax.axis_index(axis_name)]


def unbound_axis_error(prim, params) -> NameError:
    names = ", ".join(repr(n) for n in C.axis_names_of(prim, params))
    return NameError(f"unbound axis name: {names}. {prim.name} can only be used inside a "
                     f"vmap(..., axis_name=...) or shard_map that binds that name")


def _eager(prim):
    def impl(*args, **params):
        raise unbound_axis_error(prim, params)
    return impl


for _prim in C.collective_primitives:
    eager_impls[_prim] = _eager(_prim)
