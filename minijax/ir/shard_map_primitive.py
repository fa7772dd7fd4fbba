"""`shard_map`: a per-shard program run on every device of a mesh.

    outs = shard_map[jaxpr mesh_axes device_ids in_specs out_specs] *args

`args` and `outs` are *global* arrays. The body `jaxpr` (no constvars) is written for
one shard: each input is cut into blocks along the mesh axes its spec names, and each
device runs the body on its block, with the mesh axes bound as named axes for the
collectives inside (`collective_primitives.py`). The outputs' blocks are put back
together by `out_specs`.

Params, all printable in the text form:

* `mesh_axes`: `(('x', 4), ('y', 2))`, the mesh's axis names and sizes, in order;
* `device_ids`: the ids of the mesh's devices in row-major mesh order, or None for
  the mesh `jax.set_mesh` puts in context (a bare `PartitionSpec`, or `shard_map`
  without `mesh=`): JAX's public API names no devices inside `jax.jit`, so the program
  says "the context mesh", and lowering checks that its axes are still these;
* `in_specs` / `out_specs`: one spec per input / output, as a tuple with one entry
  per array dimension (shorter means the rest are not split): `None` (not split) or a
  tuple of mesh axis names (split over those axes, major to minor) --
  `PartitionSpec('x', None)` is `(('x',), None)`. A mesh axis a spec does not name
  holds a replica of that array on each of its members;
* `auto_axes` (present only when given): mesh axes the body is *not* written per
  shard over, as `jax.shard_map(..., axis_names=...)` naming a subset of the mesh.
  Specs and collectives may not name them; along them the body works on whole
  arrays and XLA's partitioner decides the layout (it is "manual" over the rest).
"""
from __future__ import annotations

import math

from .catalogue import _call_effects
from .core import Jaxpr
from .registry import Primitive, type_rules, effect_rules, _array, _fail
from .types import RefType

__all__ = ["shard_map_p", "sharding_constraint_p", "block_shape", "global_shape",
           "unmentioned_axes", "manual_axes"]

# A ref passed in is split like an array: each device's body reads and writes its own
# block of it (its effects are the body's, on the inputs it passes in).
shard_map_p = Primitive("shard_map", multiple_results=True, has_ref_effects_of_body=True)


def _split_factor(mesh_sizes, entry) -> int:
    return 1 if entry is None else math.prod(mesh_sizes[name] for name in entry)


def block_shape(shape, spec, mesh_sizes, what="input") -> tuple:
    """The per-device shape of a global array of `shape` split by `spec`."""
    if len(spec) > len(shape):
        _fail("shard_map", f"the spec {spec} of an {what} of shape {tuple(shape)} has "
              f"more entries than the array has dimensions")
    out = list(shape)
    for d, entry in enumerate(spec):
        factor = _split_factor(mesh_sizes, entry)
        if out[d] % factor:
            _fail("shard_map", f"dimension {d} of an {what} of shape {tuple(shape)} has "
                  f"size {out[d]}, which its spec {spec} splits into {factor} blocks: "
                  f"it must be divisible by {factor}")
        out[d] //= factor
    return tuple(out)


def global_shape(shape, spec, mesh_sizes) -> tuple:
    out = list(shape)
    for d, entry in enumerate(spec):
        out[d] *= _split_factor(mesh_sizes, entry)
    return tuple(out)


def manual_axes(mesh_axes, auto_axes=()) -> tuple:
    """The `(name, size)` pairs of the mesh axes a shard_map's body is written per
    shard over: all of them but `auto_axes`."""
    return tuple((name, size) for name, size in mesh_axes if name not in auto_axes)


def unmentioned_axes(spec, mesh_axes) -> tuple:
    """The mesh axes (of `mesh_axes`, pass the manual ones) along which an array with
    this spec is replicated."""
    named = {name for entry in spec if entry is not None for name in entry}
    return tuple(name for name, _ in mesh_axes if name not in named)


def _check_spec(spec, mesh_sizes):
    if not isinstance(spec, tuple):
        _fail("shard_map", f"a spec must be a tuple, got {spec!r}")
    seen = []
    for entry in spec:
        if entry is None:
            continue
        if not isinstance(entry, tuple) or not all(n in mesh_sizes for n in entry):
            _fail("shard_map", f"spec {spec} names an axis that is not in the mesh "
                  f"{tuple(mesh_sizes)}")
        seen.extend(entry)
    if len(set(seen)) != len(seen):
        _fail("shard_map", f"spec {spec} names a mesh axis twice")


def _check_device_ids(prim, device_ids, mesh_axes):
    if device_ids is None:           # the context mesh
        if not mesh_axes:
            _fail(prim, "a context mesh (device_ids=None) must have axes")
    elif len(device_ids) != math.prod(dict(mesh_axes).values()):
        _fail(prim, f"{len(device_ids)} device ids for a mesh {mesh_axes}")


def _shard_map_rule(*in_avals, jaxpr, mesh_axes, device_ids, in_specs, out_specs,
                    auto_axes=()):
    if not isinstance(jaxpr, Jaxpr) or jaxpr.constvars:
        _fail("shard_map", "the jaxpr param must be a Jaxpr with its constants as inputs")
    _check_device_ids("shard_map", device_ids, mesh_axes)
    if not isinstance(auto_axes, tuple) or not set(auto_axes) < set(dict(mesh_axes)):
        _fail("shard_map", f"auto_axes {auto_axes!r} must be a tuple of some (not all) of "
              f"the mesh axes {tuple(dict(mesh_axes))}")
    mesh_sizes = dict(manual_axes(mesh_axes, auto_axes))
    if len(in_specs) != len(in_avals) or len(in_specs) != len(jaxpr.invars):
        _fail("shard_map", f"{len(in_specs)} in_specs for {len(in_avals)} inputs and a "
              f"body of {len(jaxpr.invars)} inputs")
    if len(out_specs) != len(jaxpr.outvars):
        _fail("shard_map", f"{len(out_specs)} out_specs for {len(jaxpr.outvars)} outputs")
    for i, (aval, spec, var) in enumerate(zip(in_avals, in_specs, jaxpr.invars)):
        if not isinstance(aval, RefType):
            _array("shard_map", aval, f"input {i}")
        _check_spec(spec, mesh_sizes)
        block = block_shape(aval.shape, spec, mesh_sizes)
        if (block != var.aval.shape or aval.dtype != var.aval.dtype
                or isinstance(aval, RefType) != isinstance(var.aval, RefType)):
            _fail("shard_map", f"input {i} of type {aval} split by {spec} gives blocks "
                  f"of shape {block}, but the body expects {var.aval}")
    outs = []
    for spec, aval in zip(out_specs, jaxpr.out_avals):
        if isinstance(aval, RefType):
            _fail("shard_map", f"a shard_map cannot return a ref (got {aval}); return "
                  f"its value, or pass the ref in and write to it")
        _check_spec(spec, mesh_sizes)
        outs.append(aval.update(shape=global_shape(aval.shape, spec, mesh_sizes)))
    return outs


type_rules[shard_map_p] = _shard_map_rule
effect_rules[shard_map_p] = _call_effects


# -- sharding_constraint: where an array should live -------------------------------------
#
#     y = sharding_constraint[mesh_axes device_ids spec] x
#
# `y` is `x`, asked to be laid out across the mesh as `spec` says (the same mesh and
# spec params as shard_map's, so the text form shows them). It changes no value; it
# is a request to XLA's SPMD partitioner, which chooses every layout it is not told.
# With `explicit_axes` (present only when given: the mesh's axes of JAX's `Explicit`
# type) it is `jax.sharding.reshard`, which moves the array to that layout where JAX
# tracks layouts in types, rather than a request.

sharding_constraint_p = Primitive("sharding_constraint")


def _sharding_constraint_rule(x, *, mesh_axes, device_ids, spec, explicit_axes=()):
    _array("sharding_constraint", x)
    if not isinstance(explicit_axes, tuple) or not set(explicit_axes) <= set(dict(mesh_axes)):
        _fail("sharding_constraint", f"explicit_axes {explicit_axes!r} must be a tuple of "
              f"mesh axes {tuple(dict(mesh_axes))}")
    mesh_sizes = dict(mesh_axes)
    _check_device_ids("sharding_constraint", device_ids, mesh_axes)
    _check_spec(spec, mesh_sizes)
    if len(spec) > x.ndim:
        _fail("sharding_constraint", f"the spec {spec} has more entries than {x} has "
              f"dimensions")
    return [x]


type_rules[sharding_constraint_p] = _sharding_constraint_rule
