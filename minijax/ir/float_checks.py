"""The NaN and infinity checks behind `jax_debug_nans` / `jax_debug_infs`.

With a check on, every primitive applied eagerly (`EvalTrace`) has its floating-point
outputs looked at, and the first one holding a NaN (or an infinity) raises
`FloatingPointError("invalid value (nan) encountered in <primitive>")`, as JAX does.
A jitted call is checked on its outputs; `frontend/jit.py` then runs the function
again op by op to name the primitive that made the value.

The flags live here, in the IR layer, because the root trace reads them on every
eager operation; `minijax.config` (frontend/config.py) sets them. Like
`disable_jit`'s state they are per thread: `config.update` sets the default every
thread starts from and this thread's value; the context managers change this thread's
value for their block.
"""
from __future__ import annotations

import threading

import numpy as np

from .types import is_inexact

# What `config.update` set: the values each thread starts from.
_defaults = {"nans": False, "infs": False}


class _FloatChecks(threading.local):
    def __init__(self):
        self.nans = _defaults["nans"]
        self.infs = _defaults["infs"]


float_checks = _FloatChecks()


def checks_on() -> bool:
    return float_checks.nans or float_checks.infs


def set_default(which: str, flag: bool):
    """`config.update("jax_debug_<which>", flag)`."""
    _defaults[which] = bool(flag)
    setattr(float_checks, which, bool(flag))


def reset():
    """Both checks off, by default and in this thread."""
    for which in _defaults:
        set_default(which, False)


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
