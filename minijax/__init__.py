"""minijax: a small, readable re-implementation of JAX's core.

`import minijax as jax; import minijax.numpy as jnp` runs JAX programs. Start
reading at `minijax/ir/__init__.py` (the IR), then `minijax/transforms` (the
passes) and `minijax/backends` (XLA lowering and the NumPy reference evaluator).
"""
from jax import Array, ShapeDtypeStruct

from . import ir
from . import backends
from .ir.trace import MinijaxError, TracerError
from .ir.types import float0
from .api import jit, make_jaxpr
from . import lax
from . import numpy
from . import tree_util, tree  # pytrees are JAX's own

__version__ = "0.1.0"
# vmap
from .api_vmap import vmap

# autodiff
from .api_ad import (jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian,
                     custom_jvp, custom_vjp)
from . import transforms
# control flow
from . import debug  # noqa: E402

# refs
from .refs import Ref, RefError, new_ref, empty_ref, freeze, free_ref, typeof
from . import ref
from .refs import install_tracer_dispatch as _install_ref_dispatch
_install_ref_dispatch()   # after minijax.numpy attached its methods: ref tracers index as refs

# remat
from . import ad_checkpoint  # noqa: E402
from .ad_checkpoint import checkpoint, remat  # noqa: E402
from .transforms.policies import checkpoint_policies  # noqa: E402

# random numbers
from . import random  # noqa: E402

# libraries on top: jax.nn, jax.scipy, jax.test_util. Like JAX's, minijax.example_libraries
# is imported explicitly (it registers its OptimizerState as a pytree when it is).
from . import scipy, nn, test_util  # noqa: E402
