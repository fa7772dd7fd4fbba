"""minijax's own registry of monitoring listeners, and the points that record into it.

`minijax.monitoring` is the public face (JAX's `jax.monitoring` functions); the
registry lives here, beside nothing else, so that the code that records events
(`frontend/tracing.py`, `frontend/jit.py`) imports it without loading the public
module. It is minijax's alone: importing minijax or registering a listener here adds
nothing to JAX's registry.

What minijax records, under JAX's names for the same moments:

* `/jax/core/compile/jaxpr_trace_duration` (`fun_name`: the function's name) where
  minijax traces a function to its IR as JAX's `jit` would trace it: a `jit` call
  for new types, `jit(f).trace`/`.lower`, `make_jaxpr`, `eval_shape`. As JAX's
  `log_elapsed_time` does, a scalar (the start time) at the start, then the duration
  and the time span.
* What JAX itself does with the program minijax hands it -- lowering it to MLIR
  (`/jax/core/compile/jaxpr_to_mlir_module_duration`), compiling it
  (`/jax/core/compile/backend_compile_duration`, `fun_name` `jit(f)`), the
  persistent cache (`/jax/compilation_cache/...`) -- happens inside JAX, so while a
  `jit` call at the root may compile, JAX's events of this thread are passed on
  (`forwarding_jax_events`). JAX's own trace event for that program is not: its body
  is minijax's trace, already recorded. The forwarders sit in JAX's registry only
  for that call, and only when a minijax listener is registered.
"""
from __future__ import annotations

import threading
import time

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"

event_listeners: list = []
duration_listeners: list = []
time_span_listeners: list = []
scalar_listeners: list = []
_ALL = (event_listeners, duration_listeners, time_span_listeners, scalar_listeners)


def listening() -> bool:
    return bool(event_listeners or duration_listeners or time_span_listeners
                or scalar_listeners)


def record_event(event, **kwargs):
    for callback in tuple(event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
    for callback in tuple(duration_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
    for callback in tuple(time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
    for callback in tuple(scalar_listeners):
        callback(event, value, **kwargs)


def clear():
    for listeners in _ALL:
        listeners.clear()


class timed:
    """`with timed(event, fun_name):` records `event` as JAX's `log_elapsed_time`
    does: the start time as a scalar on entry, the duration and the span on exit (not
    when the body raised: JAX's trace event comes from a trace that finished)."""
    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event, self.fun_name = event, fun_name

    def __enter__(self):
        self.start = time.time()
        if listening():
            record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and listening():
            end = time.time()
            record_event_duration_secs(self.event, end - self.start,
                                       fun_name=self.fun_name)
            record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)


class _Forwarding(threading.local):
    def __init__(self):
        self.skipped: list = []     # the names of the programs being forwarded for
        self.forwarders = None


_forwarding = _Forwarding()


class forwarding_jax_events:
    """While it is entered, the events JAX records in this thread reach minijax's
    listeners too, but for JAX's trace event of `traced_name`, the function whose
    body is minijax's trace (recorded by minijax itself). Does nothing when no minijax
    listener is registered. Nested (a `jit` call inside another's trace), one set of
    forwarders serves both."""
    __slots__ = ("traced_name", "_entered")

    def __init__(self, traced_name: str):
        self.traced_name = traced_name
        self._entered = False

    def __enter__(self):
        if not listening():
            return
        state = _forwarding
        if state.forwarders is None:
            state.forwarders = _install_forwarders(state.skipped)
        state.skipped.append(self.traced_name)
        self._entered = True

    def __exit__(self, exc_type, exc, tb):
        if not self._entered:
            return
        state = _forwarding
        state.skipped.pop()
        if not state.skipped:
            for unregister, callback in state.forwarders:
                try:
                    unregister(callback)
                except AssertionError:     # JAX's listeners were cleared meanwhile
                    pass
            state.forwarders = None


def _install_forwarders(skipped: list) -> list:
    """Listeners in JAX's registry that pass this thread's events on to minijax's
    (but for JAX's trace events of the names in `skipped`); `(unregister, callback)`
    pairs to take them out again."""
    from jax import monitoring
    thread = threading.get_ident()

    def ours(event, kwargs):
        return threading.get_ident() == thread and not (
            event == JAXPR_TRACE_EVENT and kwargs.get("fun_name") in skipped)

    def on_event(event, **kwargs):
        if ours(event, kwargs):
            record_event(event, **kwargs)

    def on_duration(event, duration, **kwargs):
        if ours(event, kwargs):
            record_event_duration_secs(event, duration, **kwargs)

    def on_span(event, start_time, end_time, **kwargs):
        if ours(event, kwargs):
            record_event_time_span(event, start_time, end_time, **kwargs)

    def on_scalar(event, value, **kwargs):
        if ours(event, kwargs):
            record_scalar(event, value, **kwargs)
    pairs = [(monitoring.register_event_listener, monitoring.unregister_event_listener,
              on_event),
             (monitoring.register_event_duration_secs_listener,
              monitoring.unregister_event_duration_listener, on_duration),
             (monitoring.register_event_time_span_listener,
              monitoring.unregister_event_time_span_listener, on_span),
             (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
              on_scalar)]
    for register, _, callback in pairs:
        register(callback)
    return [(unregister, callback) for _, unregister, callback in pairs]
