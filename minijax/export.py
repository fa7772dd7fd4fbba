"""`minijax.export`, JAX's `jax.export`: save a `jit` function as StableHLO and call
it later, here or in JAX (docs/export.md). The code is in `frontend/export.py`.

Symbolic shapes (`symbolic_shape`, `symbolic_args_specs`, `SymbolicScope`, ...) are
not here: minijax's types have only concrete dimensions.
"""
from jax.export import (  # noqa: F401  JAX's serializer is the one minijax saves with
    minimum_supported_calling_convention_version, maximum_supported_calling_convention_version,
    register_pytree_node_serialization, register_namedtuple_serialization)

from .frontend.export import (export, Exported, deserialize,  # noqa: F401
                              DisabledSafetyCheck, default_export_platform)
