"""The front end: the code behind minijax's public functions.

Each module turns a user's Python function and pytrees into IR and back: it
flattens arguments, checks them (naming the user's mistake), traces with the
machinery of `minijax/ir`, runs the passes of `minijax/transforms` and executes
through `minijax/backends`. The public modules at the package root (`minijax`,
`minijax.lax`, `minijax.ref`, `minijax.ad_checkpoint`, ...) re-export from here.

  jit.py           `jit`, `make_jaxpr`
  autodiff.py      `jvp`, `linearize`, `vjp`, `grad`, jacobians
  vmap.py          `vmap`
  control_flow.py  `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`
  refs.py          refs while tracing: `new_ref`, indexing, views, `freeze`
  ref_checks.py    the ref misuse `jit` and the control-flow bodies reject
  pytrees.py       flattening functions and arguments, static arguments
"""
