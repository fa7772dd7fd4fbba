"""minijax: a small, readable re-implementation of JAX's core.

`import minijax as jax; import minijax.numpy as jnp` runs JAX programs. Start
reading at docs/design.md (how the layers fit), then `minijax/ir/__init__.py` (the
IR), `minijax/transforms` (the passes), `minijax/backends` (XLA lowering and the
NumPy reference evaluator) and `minijax/frontend` (the code behind the public API).
"""
from jax import ShapeDtypeStruct, Device, Shard   # JAX's own: minijax's arrays are JAX's

from . import ir
from . import backends
from .ir.errors import MinijaxError
from . import errors
from .ir.types import float0
from .frontend.jit import jit, clear_caches
from .frontend.jit_modes import disable_jit, ensure_compile_time_eval
from .frontend.lazy_modules import lazy_submodules as _lazy_submodules
from .frontend.tracing import make_jaxpr, eval_shape
from .frontend.config import (config, enable_x64, debug_nans, debug_infs,
                              default_matmul_precision, numpy_rank_promotion,
                              numpy_dtype_promotion, enable_checks, log_compiles,
                              no_tracing, default_device, check_tracer_leaks,
                              checking_leaks, debug_key_reuse, legacy_prng_key,
                              enable_custom_prng, default_prng_impl)
from .frontend.config_flags import (  # noqa: F401  (config_flags.py)
    transfer_guard, transfer_guard_host_to_device, transfer_guard_device_to_device,
    transfer_guard_device_to_host, explain_cache_misses, threefry_partitionable,
    softmax_custom_jvp, no_execution)
from .frontend.devices import (device_put, devices, local_devices, device_count,
                               local_device_count, process_index, process_count,
                               default_backend, block_until_ready, device_get,
                               named_call, named_scope)
from .frontend.processes import (host_id, host_count, host_ids, process_indices,
                                 print_environment_info, live_arrays,
                                 make_array_from_callback,
                                 make_array_from_single_device_arrays,
                                 make_array_from_process_local_data, copy_to_host_async)
from . import lax
from . import numpy
from .numpy._dtypes import Array   # jax arrays and minijax tracers, as JAX's Array
from . import tree_util, tree  # pytrees are JAX's own
from . import dtypes, typing  # noqa: F401  (jax.dtypes, jax.typing)

__version__ = "0.1.0"
# As JAX's: the release's numbers, for comparisons such as `__version_info__ >= (0, 1)`.
__version_info__ = tuple(int(part) for part in __version__.split(".")[:3])
# vmap
from .frontend.vmap import vmap
# many devices: shard_map (collectives are in minijax.lax) and JAX's sharding names
from .frontend.shard_map import shard_map, smap
from .frontend.pmap import pmap
from . import sharding
from jax import make_mesh, set_mesh, NamedSharding, P  # JAX's objects and mesh context
from .sharding import reshard

# autodiff
from .frontend.autodiff import (jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
                                jacobian, hessian, custom_jvp, custom_vjp, fwd_and_bwd)
from .frontend.autodiff_more import linear_transpose, custom_gradient, closure_convert
from . import transforms
# control flow
from . import debug  # noqa: E402
from .frontend.callbacks import pure_callback, effects_barrier  # noqa: E402

# refs
from .frontend.refs import Ref, RefError, new_ref, empty_ref, freeze, free_ref, typeof, ds
from . import ref

# Operators and methods on tracers, in this one place: NumPy's array methods, then the
# ref methods, which dispatch on the tracer's aval and fall back to the array ones.
from .numpy._tracer_methods import attach_methods as _attach_array_methods
from .frontend.refs import install_tracer_dispatch as _install_ref_dispatch
_attach_array_methods()
_install_ref_dispatch()

# remat (`minijax.ad_checkpoint` itself is imported by name, as JAX's is)
from .frontend.checkpoint import checkpoint, remat  # noqa: E402
from .transforms.policies import checkpoint_policies  # noqa: E402
# The function, not the module: `minijax.memory_report(f, *args)` as the issue names it
# (`from minijax.memory_report import MemoryReport` still reads the module).
from .memory_report import memory_report  # noqa: E402

# The bridge to real JAX for differential testing (its import/export tables are rule
# tables too, so they are registered whenever minijax is).
from . import interop  # noqa: E402

# Libraries on top, loaded on first use: jax.random, jax.nn, jax.scipy, jax.image,
# jax.ops, jax.experimental, jax.custom_batching, jax.custom_derivatives,
# jax.profiler, jax.dlpack, jax.stages, jax.interpreters, jax.export. `minijax.scipy` (or `import minijax.scipy`) imports the module then;
# they register no rules, so nothing depends on whether they were loaded, and a
# program that never reads them does not pay for them. Like JAX's, test_util,
# flatten_util, ad_checkpoint and example_libraries are imported by name: `import
# minijax` alone leaves them unset, so a program that runs here runs on JAX
# (tests/test_module_loading.py checks each against JAX's).
_LAZY_SUBMODULES = frozenset({"random", "scipy", "nn", "image", "ops",
                                "experimental", "custom_batching", "custom_derivatives",
                                "profiler", "dlpack", "core", "stages", "monitoring",
                                "version", "distributed", "interpreters", "export"})


__getattr__, __dir__ = _lazy_submodules(__name__, _LAZY_SUBMODULES)
