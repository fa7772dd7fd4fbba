"""`minijax.debug.log` and the sharding views of `minijax.debug`
(`inspect_array_sharding`, `visualize_array_sharding`, `visualize_sharding`).

`log` is `debug.callback` with a callback that formats the runtime values and logs
the text (logger `minijax.debug`, level INFO), the record naming the user's line
that called `log`, as JAX's record does -- so under jit it logs each time the
program runs, once per iteration in a loop, per example under vmap.

The sharding views answer for concrete arrays (their sharding is a fact of the
array). A traced value's sharding is the one XLA chooses when it compiles the
program, which minijax's programs do not report, so for a tracer they raise.
"""
from __future__ import annotations

import logging
import os
import string
import sys

import jax
import numpy as np
from jax import tree_util

from ..ir.trace import Tracer

logger = logging.getLogger("minijax.debug")
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_site():
    """(file, line) of the innermost frame outside minijax: the caller's code."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame = frame.f_back
    if frame is None:
        return "(unknown file)", 0
    return frame.f_code.co_filename, frame.f_lineno


def _placeholder(leaf):
    """A NumPy stand-in of a leaf's type, to check the format before the program runs."""
    if isinstance(leaf, Tracer) or hasattr(leaf, "aval"):
        return np.zeros(leaf.shape, leaf.dtype)
    return leaf


def log(fmt: str | None = None, *args, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs):
    """Log `fmt.format(*args, **kwargs)` with the runtime values at level INFO, as
    `jax.debug.log`. With no `fmt`, returns the function taking `fmt` and the values
    (JAX's two-call form, `log(ordered=True)("x = {x}", x=x)`)."""
    def log_now(fmt, *args, **kwargs):
        if not isinstance(fmt, str):
            raise TypeError(f"debug.log: the format must be a string, got {fmt!r}")
        if not skip_format_check:
            string.Formatter().format(fmt, *tree_util.tree_map(_placeholder, args),
                                      **tree_util.tree_map(_placeholder, kwargs))
        file_name, line = _user_site()

        def emit(*values, **named):
            record = logger.makeRecord(logger.name, logging.INFO, file_name, line,
                                       fmt.format(*values, **named), (), None)
            logger.handle(record)
        from .. import debug
        debug.callback(emit, *args, ordered=ordered, partitioned=partitioned, **kwargs)

    if fmt is not None:
        log_now(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: "
                        f"args={args!r} kwargs={kwargs!r}")
    return log_now


def _concrete(value, fname):
    if isinstance(value, Tracer):
        raise TypeError(
            f"{fname}: {value!r} is traced, and minijax does not report the sharding "
            f"XLA gives a value inside a compiled program; call it on a concrete array "
            f"(the function's input or output)")
    if not hasattr(value, "sharding"):
        value = jax.numpy.asarray(value)
    return value


def inspect_array_sharding(value, *, callback):
    """Call `callback` with the sharding of each array in the pytree `value`."""
    if not callable(callback):
        raise TypeError(f"'{type(callback).__name__}' object is not callable")
    for leaf in tree_util.tree_leaves(value):
        callback(_concrete(leaf, "inspect_array_sharding").sharding)


def visualize_array_sharding(arr, **kwargs):
    """Draw how `arr` is laid out over its devices (JAX's drawing: it needs `rich`)."""
    arr = _concrete(arr, "visualize_array_sharding")
    return jax.debug.visualize_sharding(arr.shape, arr.sharding, **kwargs)


# A drawing of a shape and a `Sharding` (both JAX's objects): JAX's own function.
visualize_sharding = jax.debug.visualize_sharding
