"""The thread's jit mode: `disable_jit` (jitted functions run op by op),
`ensure_compile_time_eval` (concrete operations inside a transformation run now), and
`jax_disable_jit` as `config.update` sets it. The state itself is in
`ir/root_modes.py`, which `jit`'s cached call tests once per call.
"""
from __future__ import annotations

import contextlib

from ..ir import root_modes
from ..ir.root_modes import modes as _root_modes
from ..ir.trace import CompileTimeEvalTrace, EvalTrace, current_trace, set_current_trace


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Inside `with disable_jit():`, a jitted function runs its Python op by op (each
    operation eagerly), as `jax.disable_jit`: print values, set breakpoints."""
    previous = _root_modes.jit_disabled
    root_modes.set_here("jit_disabled", disable)
    try:
        yield
    finally:
        root_modes.set_here("jit_disabled", previous)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside a transformation (`jit`, `grad`, ...), operations on concrete values in
    this block run right away and give concrete values, which Python can then branch
    on; operations on traced values are traced as usual. At the root it changes
    nothing. As `jax.ensure_compile_time_eval`."""
    outer = current_trace()
    if type(outer) is EvalTrace or isinstance(outer, CompileTimeEvalTrace):
        yield
        return
    with set_current_trace(CompileTimeEvalTrace(outer)):
        yield


def jit_disabled() -> bool:
    """Whether jitted functions run op by op in this thread now."""
    return _root_modes.jit_disabled


def set_jit_disabled_by_config(disable: bool):
    """`config.update("jax_disable_jit", disable)`: the default of threads started
    from now on, and this thread's state outside its `disable_jit` contexts."""
    root_modes.set_default("jit_disabled", disable)
