"""Backends: `xla` lowers jaxprs to `jax.lax` inside `jax.jit`; `reference` is an
independent NumPy interpreter used as an oracle and as the step-through evaluator."""
from . import xla
from . import reference
from . import xla_control_flow  # noqa: E402,F401
from . import reference_control_flow  # noqa: E402,F401
from . import xla_special  # noqa: E402,F401
from . import reference_special  # noqa: E402,F401
from . import xla_random  # noqa: E402,F401  (bit ops, erf_inv, keys: lowering, eager)
from . import reference_random  # noqa: E402,F401
from . import reference_refs  # indexed get/swap/addupdate for the reference evaluator
from . import eager_refs   # after xla: refs' eager impls, and `jit` of bodies with refs
from . import xla_remat  # noqa: E402,F401  (remat, name: lowering, reference, eager)
