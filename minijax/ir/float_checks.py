"""The NaN and infinity checks behind `jax_debug_nans` / `jax_debug_infs`.

With a check on, every primitive applied eagerly (`EvalTrace`) has its floating-point
outputs looked at, and the first one holding a NaN (or an infinity) raises
`FloatingPointError("invalid value (nan) encountered in <primitive>")`, as JAX does.
A jitted call is checked on its outputs; `frontend/jit.py` then runs the function
again op by op to name the primitive that made the value.

The flags are two of this thread's root modes (`ir/root_modes.py`, kept together
with the root trace and `disable_jit` so that a cached jitted call tests all of them
at once); `minijax.config` (frontend/config.py) sets them through `set_here` and
`set_default` below. Like `disable_jit`'s state they are per thread:
`config.update` sets the default every thread starts from and this thread's value;
the context managers change this thread's value for their block.
"""
from __future__ import annotations

import numpy as np

from . import root_modes
from .types import is_inexact

# This thread's flags, read as `float_checks.nans` / `float_checks.infs`.
float_checks = root_modes.modes


def checks_on() -> bool:
    return float_checks.nans or float_checks.infs


def set_here(which: str, flag: bool):
    """The `jax_debug_<which>` check (`which` is "nans" or "infs") is `flag` in this
    thread."""
    root_modes.set_here(which, flag)


def set_default(which: str, flag: bool):
    """`config.update("jax_debug_<which>", flag)`."""
    root_modes.set_default(which, flag)


def invalid_value_in(values) -> str | None:
    """'nan' or 'inf' when one of `values` holds a value a check that is on looks for."""
    for value in values:
        dtype = getattr(value, "dtype", None)
        if dtype is None or not is_inexact(dtype):
            continue
        array = np.asarray(value)
        if float_checks.nans and np.isnan(array).any():
            return "nan"
        if float_checks.infs and np.isinf(array).any():
            return "inf"
    return None


def check_outputs(where: str, values):
    """Raise FloatingPointError, as JAX does, if `values` (the outputs of `where`) hold
    an invalid value a check that is on looks for."""
    found = invalid_value_in(values)
    if found is not None:
        raise FloatingPointError(f"invalid value ({found}) encountered in {where}")
