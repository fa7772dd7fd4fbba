"""minijax's passes: each is an IR -> IR function a learner can call and print.

Autodiff, in reading order:

  ad_util.py       symbolic zeros, float0 tangents, `eval_jaxpr`
  jvp.py           the JVP trace and `jvp_jaxpr`            (rules: jvp_rules.py)
  partial_eval.py  the partial evaluator and `partial_eval_jaxpr` -- the hub
  dce.py           `dce_jaxpr`
  transpose.py     `backward_pass` and `transpose_jaxpr`   (rules: transpose_rules.py)
  linearize.py     linearize = jvp + partial eval; vjp = linearize + transpose
  calls.py         call primitives (`jit`, `remat`): rules written once for every pass
  custom_derivatives.py  `custom_jvp` / `custom_vjp` and their primitives
  custom_vmap_rules.py   `custom_vmap`'s primitive: the user's vmap rule, and its jvp
  jet.py           Taylor mode for `minijax.experimental.jet` (rules: jet_rules.py);
                   loaded with that module, not listed below

Printing every stage of `grad` for one function is in docs/autodiff.md:

    closed = minijax.make_jaxpr(f)(x)
    jvp = jvp_jaxpr(closed)                                  # primals, tangents -> both
    split = partial_eval_jaxpr(jvp, [False, True])           # known / staged + residuals
    backward = transpose_jaxpr(split.staged_jaxpr, [False] * split.num_residuals + [True])
"""
# -- the rule modules: every pass rule of every primitive is registered here ----------
# Each module below fills the pass tables (`jvp_rules[prim] = ...`) for one family of
# primitives when it is imported. This list is the one place that loads them: any
# import of a `minijax.transforms` module runs this file first, so every table is
# complete before any pass runs, whatever was imported first. A new primitive family
# adds its rule module here. (They come before the re-exports below, which give this
# package attributes named like three of the modules: `jvp_rules` is the table.)
from . import (jvp_rules as _jvp_rules,                  # noqa: F401  elementwise, shapes, indexing
               transpose_rules as _transpose_rules,      # noqa: F401
               vmap_rules as _vmap_rules,                # noqa: F401
               discharge_control_flow as _discharge_cf,  # noqa: F401  cond/while/scan with refs
               calls as _calls,                          # noqa: F401  jit
               custom_derivatives as _custom,            # noqa: F401  custom_jvp/custom_vjp
               custom_vmap_rules as _custom_vmap,        # noqa: F401  custom_vmap
               ref_rules as _ref_rules,                  # noqa: F401  new_ref/get/swap/...
               cond as _cond,                            # noqa: F401
               loops as _loops,                          # noqa: F401  while
               scan as _scan,                            # noqa: F401
               remat as _remat,                          # noqa: F401  remat, name
               debug_rules as _debug_rules,              # noqa: F401  debug_print/callback
               callback_rules as _callback_rules,        # noqa: F401  pure_callback
               linear_solve_rules as _linear_solve_rules,  # noqa: F401  custom_linear_solve
               window_rules as _window_rules,            # noqa: F401  conv, reduce_window
               scatter_rules as _scatter_rules,          # noqa: F401  scatter_mul/min/max
               linalg_rules as _linalg_rules,            # noqa: F401  cholesky, svd, ...
               eig_rules as _eig_rules,                  # noqa: F401  eig
               linalg_kernel_rules as _linalg_kernel_rules,  # noqa: F401  tridiagonal_solve, ...
               complex_rules as _complex_rules,          # noqa: F401  real, imag, conj, complex
               special_rules as _special_rules,          # noqa: F401  lgamma, igamma, ...
               fft_rules as _fft_rules,                  # noqa: F401  fft
               selection_rules as _selection_rules,      # noqa: F401  top_k, optimization_barrier
               random_rules as _random_rules,            # noqa: F401  bit ops, erf_inv, keys
               collective_rules as _collective_rules,    # noqa: F401  psum, all_gather, ppermute, ...
               shard_map_rules as _shard_map_rules,      # noqa: F401  shard_map
               export_rules as _export_rules,            # noqa: F401  call_exported
               key_reuse as _key_reuse)                  # noqa: F401  jax_debug_key_reuse


# -- what this package exports ------------------------------------------------------
from .ad_util import Zero, eval_jaxpr
from .jvp import jvp_jaxpr, JVPTrace, JVPTracer, jvp_rules
from .partial_eval import (partial_eval_jaxpr, PartialEvalResult, PartialEvalTrace,
                           partial_eval_rules)
from .dce import dce_jaxpr, DceResult
from .transpose import transpose_jaxpr, backward_pass, UndefinedPrimal, transpose_rules
from .linearize import linearize_flat, Linearized
from .vmap import vmap_jaxpr
from .discharge import discharge_jaxpr

__all__ = ["jvp_jaxpr", "partial_eval_jaxpr", "transpose_jaxpr", "dce_jaxpr", "vmap_jaxpr",
           "discharge_jaxpr", "PartialEvalResult", "DceResult", "Zero"]
