"""Backends: `xla` lowers jaxprs to `jax.lax` inside `jax.jit`; `reference` is an
independent NumPy interpreter used as an oracle and as the step-through evaluator.

This file is the one place that loads the backend rule modules. Each fills
`lowering_rules`, `reference_rules` and `eager_impls` for one family of primitives;
any import of a `minijax.backends` module runs this file first, so the tables are
complete whatever was imported first. A new primitive family adds its module here.
"""
from . import (xla,                     # noqa: F401  lowering of the catalogue
               eager_dispatch,          # noqa: F401  eager = compile one op; stop_gradient
               reference,               # noqa: F401  the NumPy evaluator
               xla_control_flow,        # noqa: F401  cond/while/scan/debug lowering and eager
               reference_control_flow,  # noqa: F401
               reference_refs,          # noqa: F401  indexed get/swap/addupdate, reference side
               xla_remat,               # noqa: F401  remat, name
               eager_ref_runtime,       # noqa: F401  Ref boxes: eager ref ops, `jit` with refs
               xla_window,              # noqa: F401  conv, reduce_window: lowering, eager
               reference_window,        # noqa: F401
               xla_linalg,              # noqa: F401  cholesky, triangular_solve, lu, eigh, svd, qr
               reference_linalg,        # noqa: F401
               xla_complex,             # noqa: F401  real, imag, conj, complex
               reference_complex,       # noqa: F401
               xla_special,             # noqa: F401  lgamma, digamma, igamma, betainc, ...
               reference_special,       # noqa: F401
               xla_fft,                 # noqa: F401  fft: jax.lax.fft / numpy.fft
               reference_fft,           # noqa: F401
               xla_selection,           # noqa: F401  top_k, optimization_barrier
               reference_selection,     # noqa: F401
               xla_random,              # noqa: F401  bit ops, erf_inv, keys, threefry2x32
               reference_random,        # noqa: F401
               reference_rng,           # noqa: F401  rng_bit_generator, rng_uniform
               xla_collectives,         # noqa: F401  psum, all_gather, ...: JAX's collectives
               reference_collectives,   # noqa: F401
               xla_export)              # noqa: F401  call_exported; saving with jax.export

# Last, because they read what the modules above registered: every lowered primitive
# without an eager impl of its own runs eagerly as a one-primitive XLA program; then an
# eager cond/while/scan whose operands or bodies involve refs runs discharged.
eager_dispatch.install_default_eager_impls()
eager_ref_runtime.route_ref_users_through_discharge()


def clear_caches():
    """Empty every cache of compiled programs the backends hold (`minijax.clear_caches`
    calls this): the lowering's, the eager fast path's, eager control flow's and the
    donating calls' with refs."""
    xla.clear_caches()
    eager_dispatch.clear_caches()
    xla_control_flow.clear_caches()
    eager_ref_runtime.clear_caches()
