"""`jax_check_tracer_leaks`: a tracer still alive after its transformation finished.

A traced value stored where it outlives its trace (a global, a list, an attribute)
is an error when it is used later (`EvalTrace` reports an escaped tracer). With the
flag on (`minijax.checking_leaks()`), a trace that ends -- a staged trace
(`jit`, `make_jaxpr`, every pass that re-traces) or a jvp trace (`grad`, `jvp`) --
looks for tracers of its own that are still referenced, and raises as JAX does: a
plain `Exception("Leaked trace ...")` naming them. Looking means a full garbage
collection per trace, so the check is off by default, as in JAX.
"""
from __future__ import annotations

import gc
import threading


class _Checking(threading.local):
    def __init__(self):
        self.on = _default[0]


_default = [False]
checking = _Checking()


def set_here(value: bool):
    checking.on = bool(value)


def set_default(value: bool):
    _default[0] = bool(value)
    set_here(value)


def check_no_leaks(trace):
    """Raise if a tracer of `trace`, which has finished, is still referenced."""
    from .trace import Tracer
    gc.collect()
    leaked = [r for r in gc.get_referrers(trace)
              if isinstance(r, Tracer) and r._trace is trace]
    if leaked:
        shown = "\n".join(repr(t) for t in leaked)
        raise Exception(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n"
                        f"{shown}")
