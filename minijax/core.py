"""JAX's `jax.core`: the few names of JAX's tracing machinery it keeps public.

Each is minijax's own: `Tracer` and `Trace` are the classes of `ir/trace.py` (so
`isinstance(x, jax.core.Tracer)`, the usual test for "is this value being traced",
reads the same after `import minijax as jax`), `ShapedArray` the aval of `ir/types.py`,
and `eval_jaxpr` runs a minijax jaxpr (`make_jaxpr(f)(...).jaxpr`) by binding each
equation in the current trace, so a transformation of the caller transforms it too.

JAX's `AbstractValue` (the base of its avals) is not here: minijax's two avals,
`ShapedArray` and `RefType`, share no base class.
"""
import contextlib as _contextlib
from typing import Any as _Any, Union as _Union

from .frontend.jit_modes import ensure_compile_time_eval
from .ir import core as _ir_core
from .ir.trace import Trace, Tracer
from .ir.trace import root_trace as _root_trace, set_current_trace as _set_current_trace
from .ir.types import ShapedArray
from .transforms.ad_util import eval_jaxpr as _eval_jaxpr

__all__ = ["Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"]

Atom = _Union[_ir_core.Var, _ir_core.Literal]
Value = _Any
ParamDict = dict[str, _Any]


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True) -> list:
    """The outputs of `jaxpr` on `args` (and its constants `consts`), as a list: each
    equation is bound in the current trace, at its own source line."""
    del propagate_source_info     # every equation already runs at its own line
    return _eval_jaxpr(jaxpr, consts, args)


@_contextlib.contextmanager
def eval_context():
    """Inside the block, operations run on concrete values right away, even inside a
    transformation; a traced value met there is an escaped tracer
    (`UnexpectedTracerError`). Unlike `ensure_compile_time_eval`, nothing is handed
    to the enclosing transformation."""
    with _set_current_trace(_root_trace()):
        yield


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes (minijax's sizes are always integers)."""
    return max(d1, d2)


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes."""
    return min(d1, d2)
