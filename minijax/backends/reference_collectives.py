"""The reference evaluator and the collectives.

The reference evaluator runs one program instance on NumPy values; a collective
combines the values of *several* instances, so a lone instance can only evaluate one
whose axis is bound by something around it. Programs the evaluator is given are
whole programs: `vmap` has already rewritten the collectives on its own axes into
array ops (`transforms/collective_rules.py`), so a collective still in the program
names no bound axis. It is reported as JAX reports it, with the same `NameError` the
eager path gives (`xla_collectives.unbound_axis_error`). `shard_map`, which binds
its mesh's axes, is evaluated whole (below).
"""
from __future__ import annotations

import numpy as np

from ..ir import collective_primitives as C
from ..ir.shard_map_primitive import (shard_map_p, sharding_constraint_p, block_shape,
                                      global_shape, manual_axes)
from ..ir.trace import current_trace, set_current_trace
from ..transforms.batching import AxisFrame
from ..transforms.vmap import vmap_jaxpr
from ..transforms.discharge import discharge_jaxpr, mentions_refs
from .reference import reference_rules, eval_jaxpr, RefBox
from .xla_collectives import unbound_axis_error


def _unbound(prim):
    def rule(*args, **params):
        raise unbound_axis_error(prim, params)
    return rule


for _prim in C.collective_primitives:
    reference_rules[_prim] = _unbound(_prim)


# -- shard_map: every device at once, as nested named vmaps -------------------------------
#
# Running the body on each device in turn cannot work: a collective needs the other
# devices' values. But a shard_map *is* a vmap over the devices with the mesh axes as
# axis names: stack the per-device blocks along one leading axis per mesh axis, batch
# the body once per mesh axis (innermost: the last), and the collectives become array
# ops (`transforms/collective_rules.py`) that NumPy evaluates. The per-device outputs
# are then put back together by the out specs.

def _device_slices(spec, mesh_axes, coords, block):
    """The slices of a global array that hold the block of the device at `coords`."""
    sizes = dict(mesh_axes)
    slices = []
    for d, size in enumerate(block):
        entry = spec[d] if d < len(spec) else None
        position = 0
        for name in entry or ():
            position = position * sizes[name] + coords[name]
        slices.append(slice(position * size, (position + 1) * size))
    return tuple(slices)


def _stack_blocks(x, spec, mesh_axes):
    x = np.asarray(x)
    sizes = dict(mesh_axes)
    block = block_shape(x.shape, spec, sizes)
    out = np.empty(tuple(sizes.values()) + block, x.dtype)
    names = list(sizes)
    for index in np.ndindex(*sizes.values()):
        out[index] = x[_device_slices(spec, mesh_axes, dict(zip(names, index)), block)]
    return out


def _unstack_blocks(stacked, spec, mesh_axes):
    sizes = dict(mesh_axes)
    block = stacked.shape[len(sizes):]
    out = np.empty(global_shape(block, spec, sizes), stacked.dtype)
    names = list(sizes)
    for index in np.ndindex(*sizes.values()):
        out[_device_slices(spec, mesh_axes, dict(zip(names, index)), block)] = stacked[index]
    return out


def _shard_map(*args, jaxpr, mesh_axes, device_ids, in_specs, out_specs, auto_axes=()):
    # along an auto axis the body sees whole arrays: only the manual axes are mapped
    mesh_axes = manual_axes(mesh_axes, auto_axes)
    if mentions_refs(jaxpr) or any(isinstance(x, RefBox) for x in args):
        return _shard_map_with_refs(args, jaxpr, mesh_axes, in_specs, out_specs)
    program = jaxpr
    # every mesh axis stays bound while each is batched: a collective over several
    # names is split using the sizes of the others (transforms/collective_split.py)
    with set_current_trace(AxisFrame(current_trace(), dict(mesh_axes))):
        for name, size in reversed(mesh_axes):
            program = vmap_jaxpr(program, [0] * len(program.invars), size,
                                 out_axes=[0] * len(program.outvars), axis_name=name).jaxpr
    stacked = [_stack_blocks(x, spec, mesh_axes) for x, spec in zip(args, in_specs)]
    outs = eval_jaxpr(program, [], *stacked)
    return [_unstack_blocks(np.asarray(o), spec, mesh_axes) for o, spec in zip(outs, out_specs)]


def _shard_map_with_refs(args, jaxpr, mesh_axes, in_specs, out_specs):
    """Refs passed in: the discharged body on their contents, whose final values
    (split like the refs) go back into the boxes."""
    result = discharge_jaxpr(jaxpr)
    values = [x.read("shard_map") if isinstance(x, RefBox) else x for x in args]
    written_specs = tuple(in_specs[i] for i in result.info.written)
    outs = _shard_map(*values, jaxpr=result.jaxpr, mesh_axes=mesh_axes, device_ids=(),
                      in_specs=in_specs, out_specs=tuple(out_specs) + written_specs)
    n = result.info.num_outputs
    for position, final in zip(result.info.written, outs[n:]):
        args[position].value = np.array(final)
    return outs[:n]


reference_rules[shard_map_p] = _shard_map

# A layout request changes no value.
reference_rules[sharding_constraint_p] = lambda x, **params: [np.asarray(x)]
