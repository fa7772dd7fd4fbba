"""The front end: the code behind minijax's public functions.

Each module turns a user's Python function and pytrees into IR and back: it
flattens arguments, checks them (naming the user's mistake), traces with the
machinery of `minijax/ir`, runs the passes of `minijax/transforms` and executes
through `minijax/backends`. The public modules at the package root (`minijax`,
`minijax.lax`, `minijax.ref`, `minijax.ad_checkpoint`, ...) re-export from here.

  jit.py              `jit` (jit_modes.py: `disable_jit`, `ensure_compile_time_eval`)
  cache_misses.py     why a `jit` call traced again (`jax_explain_cache_misses`)
  tracing.py          `make_jaxpr`, `eval_shape`; the checks every staged call
                      makes and the staging cache `jit` and `checkpoint` share
                      (`stage_cached`)
  aot.py              `jit(f).lower(...)` and `.compile()` (`Lowered`, `Compiled`)
  autodiff.py         `jvp`, `linearize`, `vjp`, `grad`, jacobians, `fwd_and_bwd`
  vjp_function.py     the pullback `vjp` returns, a pytree of its residuals
  vmap.py             `vmap`
  custom_batching.py  `custom_vmap`, `sequential_vmap`
  callbacks.py        `pure_callback`, `io_callback`
  control_flow.py     `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`
  checkpointed_loops.py, checkpointed_vjp.py
                      loops whose reverse pass stores a few carries
  lax_ops.py          `minijax.lax`'s functions (lax_dot.py: `dot_general`, `dot`;
                      windows.py, linalg_ops.py and
                      complex_ops.py: its window, linear-algebra and complex ones;
                      fft_ops.py: `lax.fft`; lax_extras.py: `top_k`, scans,
                      `reduce`, shape helpers; implicit_solves.py: `custom_root`;
                      lax_rng.py: `rng_bit_generator`, `rng_uniform`;
                      int_params.py: the check of their integer parameters)
  random_core.py, random_distributions.py, random_more.py
                      `minijax.random`
  devices.py          devices and placement
  refs.py             refs while tracing: `new_ref`, indexing, views, `freeze`
  ref_checks.py       the ref misuse `jit` and the control-flow bodies reject
  pytrees.py          `FlatFun` (a function on pytrees as one on flat leaves),
                      checked flattening, static arguments
  user_primitives.py  `extend.core.Primitive`, a primitive of the user's (its
                      other rules: `minijax/interpreters`)
"""
