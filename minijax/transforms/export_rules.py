"""The rules of `call_exported` (ir/export_primitive.py) in the passes.

An exported program is opaque StableHLO, so the passes cannot look inside it. Its
derivative is the VJP program saved with it, which `Exported.call` reaches through
`custom_vjp` (frontend/export.py), as JAX's does; the primitive itself has no JVP and
no batching rule, and says so with JAX's errors (JAX 0.10.2 to 0.12.0.1 batch no
exported call, not even one exported with a symbolic batch dimension).
"""
from __future__ import annotations

from ..ir.export_primitive import call_exported_p
from .batching import vmap_rules
from .jvp import jvp_rules


def _no_jvp(primals, tangents, **params):
    raise NotImplementedError("Differentiation rule for 'call_exported' not implemented")


def _no_vmap(axis_size, values, dims, **params):
    raise NotImplementedError("Batching rule for 'call_exported' not implemented")


jvp_rules[call_exported_p] = _no_jvp
vmap_rules[call_exported_p] = _no_vmap
