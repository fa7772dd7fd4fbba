"""The reference evaluator and the collectives.

The reference evaluator runs one program instance on NumPy values; a collective
combines the values of *several* instances, so a lone instance can only evaluate one
whose axis is bound by something around it. Programs the evaluator is given are
whole programs: `vmap` has already rewritten the collectives on its own axes into
array ops (`transforms/collective_rules.py`), so a collective still in the program
names no bound axis. It is reported as JAX reports it, with the same `NameError` the
eager path gives (`xla_collectives.unbound_axis_error`).
"""
from __future__ import annotations

from ..ir import collective_primitives as C
from .reference import reference_rules
from .xla_collectives import unbound_axis_error


def _unbound(prim):
    def rule(*args, **params):
        raise unbound_axis_error(prim, params)
    return rule


for _prim in C.collective_primitives:
    reference_rules[_prim] = _unbound(_prim)
