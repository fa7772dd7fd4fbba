"""`minijax.export`'s backend: a minijax program saved with JAX's `jax.export`, and
the lowering of `call_exported`, which calls such a saved program.

The program saved is minijax's own lowering (`lower_jaxpr`, as `jit` compiles it),
wrapped in a `jax.jit` function that `jax.export.export` serializes to StableHLO, so
what is saved, and later run, is what minijax emitted. A call of a saved program is
the call of JAX's `Exported` inside the program being lowered: StableHLO cannot be
read back into minijax's IR, so the program stays one opaque call, as in JAX.
"""
from __future__ import annotations

import jax
import jax.export
import numpy as np

from ..ir.export_primitive import call_exported_p
from .reference import reference_rules
from .xla import lowering_rules, lower_jaxpr, jit_with_placement


def export_closed_jaxpr(closed_jaxpr, out_tree, name: str, args, kwargs, *,
                        placement: tuple = (), platforms=None, disabled_checks=()):
    """JAX's `Exported` of `closed_jaxpr` (consts embedded, no refs) as a function
    named `name` of the pytrees `(args, kwargs)` (arrays or `ShapeDtypeStruct`s),
    returning the pytree `out_tree` of its outputs."""
    jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts

    def run(*args, **kwargs):
        outs = lower_jaxpr(jaxpr, consts, jax.tree_util.tree_leaves((args, kwargs)))
        return jax.tree_util.tree_unflatten(out_tree, outs)
    # JAX names the saved program after the exported function.
    run.__name__ = run.__qualname__ = name
    return jax.export.export(jit_with_placement(run, placement), platforms=platforms,
                             disabled_checks=disabled_checks)(*args, **kwargs)


def _leaves_of_call(saved, leaves) -> list:
    exported = saved.exported
    args, kwargs = exported.in_tree.unflatten(leaves)
    return jax.tree_util.tree_leaves(exported.call(*args, **kwargs))


def call_exported_lowering(*args, exported):
    return _leaves_of_call(exported, list(args))


def _reference_call_exported(*args, exported):
    # A StableHLO module has no NumPy meaning: the oracle, too, can only run it.
    return [np.asarray(out) for out in _leaves_of_call(exported, list(args))]


lowering_rules[call_exported_p] = call_exported_lowering
reference_rules[call_exported_p] = _reference_call_exported
