"""`minijax.experimental.checkify`: run-time checks as values, as
`jax.experimental.checkify`.

`checkify(f, errors=...)(*args)` returns `(error, out)`: `out` is `f`'s result and
`error` an `Error` that records the first failed check -- a `check(pred, msg)` the
user wrote, or (with `errors=` naming them) a NaN made by a primitive, a division by
zero or an out-of-bounds index. Because the error is an ordinary value, the checked
function can be jitted, vmapped, differentiated and put in loops; `error.throw()` (or
`check_error(error)`) raises it afterwards as `JaxRuntimeError`.

How: `f` is traced to a jaxpr, and `_checkify_pass.py` re-traces that jaxpr with the
error threaded through it (read its docstring). A `check` leaves a `debug_callback`
equation whose callback marks it as a check; the pass merges what it carries into the
threaded error instead of calling it. A `check` that no `checkify` encloses raises at
once when its predicate is concrete, and inside `jit` raises JAX's "not
functionalized" ValueError when traced (JAX raises it when lowering).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import jax
import numpy as np
from jax import tree_util

from .. import numpy as jnp
from ..ir import control_flow_primitives as CF
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import Tracer, aval_of, bind, current_trace, stages_a_program
from ._checkify_errors import (DivisionByZeroError, Error, FailedCheckError,
                               JaxException, JaxRuntimeError, NaNError, OOBError,
                               init_error, reduce_batched, throw_error)
from ._checkify_pass import CheckMarker, Context, checkify_jaxpr

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks",
           "float_checks", "index_checks", "init_error", "nan_checks", "user_checks"]

ErrorCategory = type[JaxException]

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

_FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")

# How many `checkify` calls are tracing their function in this thread: a `check`
# staged inside one is functionalized later; one staged outside none cannot be.
_tracing = threading.local()


@contextmanager
def _tracing_checkified():
    _tracing.depth = getattr(_tracing, "depth", 0) + 1
    try:
        yield
    finally:
        _tracing.depth -= 1


def checkify(f, errors=user_checks):
    """`f` made to return `(error, out)`: the `Error` of the first failed check among
    the enabled `errors` (a set of categories: `user_checks` by default, `nan_checks`,
    `div_checks`, `index_checks`, or unions like `float_checks | user_checks`), and
    `f`'s result, as `jax.experimental.checkify.checkify`."""
    errors = frozenset(errors)

    def checked_fun(*args, **kwargs):
        # Python and NumPy values stay what they are for `f`, as JAX's closure over
        # the arguments leaves them; JAX arrays are traced, since JAX stages every
        # operation on them too (an index read from one is still checked).
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        traced = [k for k, leaf in enumerate(leaves) if _is_array(leaf)]
        out_tree = []

        def flat(*arrays):
            values = list(leaves)
            for k, array in zip(traced, arrays):
                values[k] = array
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, values)
            outs, tree = tree_util.tree_flatten(f(*call_args, **call_kwargs))
            out_tree.append(tree)
            return outs

        with _tracing_checkified():
            closed = trace_to_jaxpr(flat, [aval_of(leaves[k]) for k in traced])
        ctx = Context(errors)
        error, outs = checkify_jaxpr(ctx, closed.jaxpr, closed.consts, init_error,
                                     [leaves[k] for k in traced])
        error = Error(error._pred, error._code, dict(ctx.metadata), error._payload)
        return error, tree_util.tree_unflatten(out_tree[0], outs)

    checked_fun.__name__ = f"checkify({getattr(f, '__name__', 'fun')})"
    checked_fun.__wrapped__ = f
    return checked_fun


def check(pred, msg: str, *fmt_args, debug: bool = False, **fmt_kwargs) -> None:
    """Record an error with message `msg.format(*fmt_args, **fmt_kwargs)` where the
    scalar boolean `pred` is False. Inside `checkify` the error becomes part of its
    `Error`; run eagerly outside one, a failing check raises `JaxRuntimeError`."""
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """`check` that only `checkify` runs; outside one it does nothing."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, Tracer))


def _is_scalar_pred(pred) -> bool:
    return isinstance(pred, bool) or (_is_array(pred) and np.shape(pred) == ()
                                      and np.dtype(pred.dtype) == np.dtype(bool))


def _check(pred, msg, debug, *fmt_args, **fmt_kwargs):
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (jax.Array, np.ndarray, Tracer)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees "
                            f"of arrays, but got {arg!r} of type {type(arg)}.")
    payload, fmt_tree = tree_util.tree_flatten((fmt_args, fmt_kwargs))
    effect = FailedCheckError.effect(payload)
    error = Error({effect: jnp.logical_not(pred)}, {effect: np.int32(0)},
                  {0: ("FailedCheckError", (msg, fmt_tree))}, {effect: payload})
    _check_error(error, debug=debug)


def check_error(error: Error) -> None:
    """Raise `error` as `JaxRuntimeError` if it holds a failure; inside `checkify` it is
    merged into that function's error instead, as JAX's `check_error`."""
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, "
                        f"got type {type(error)} instead.")
    _check_error(error, debug=False)


def _check_error(error: Error, *, debug: bool):
    if any(np.shape(v) for v in error._pred.values()):
        error = reduce_batched(error)
    leaves, tree = tree_util.tree_flatten(error)
    if not any(isinstance(leaf, Tracer) for leaf in leaves):
        if not debug:
            throw_error(error)
        return
    if getattr(_tracing, "depth", 0) == 0 and stages_a_program(current_trace()):
        if debug:
            return
        raise ValueError(_FUNCTIONALIZATION_ERROR)
    bind(CF.debug_callback_p, *leaves,
         callback=CheckMarker(tree, sorted(error._pred), debug))
