"""`minijax.monitoring` against `jax.monitoring`: the same functions over minijax's own
registry, and the same compile events, under the same names, for the same program."""
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax import monitoring as mmon
from tests.test_divergences import pins

COMPILE_EVENTS = "/jax/core/compile/"
CACHE_REQUEST = "/jax/compilation_cache/compile_requests_use_cache"


class Heard:
    """Listeners of the four kinds on one library's registry, keeping what they hear."""

    def __init__(self, monitoring):
        self.monitoring, self.calls = monitoring, []
        self.listeners = {
            "event": lambda event, **kw: self.calls.append(("event", event, kw)),
            "duration": lambda event, secs, **kw: self.calls.append(("duration", event, kw)),
            "span": lambda event, start, end, **kw: self.calls.append(("span", event, kw)),
            "scalar": lambda event, value, **kw: self.calls.append(("scalar", event, kw)),
        }

    def __enter__(self):
        m, ls = self.monitoring, self.listeners
        m.register_event_listener(ls["event"])
        m.register_event_duration_secs_listener(ls["duration"])
        m.register_event_time_span_listener(ls["span"])
        m.register_scalar_listener(ls["scalar"])
        return self

    def __exit__(self, *exc):
        m, ls = self.monitoring, self.listeners
        m.unregister_event_listener(ls["event"])
        m.unregister_event_duration_listener(ls["duration"])
        m.unregister_event_time_span_listener(ls["span"])
        m.unregister_scalar_listener(ls["scalar"])

    def compile_events(self):
        return [c for c in self.calls if c[1].startswith(COMPILE_EVENTS)]


def _fresh_function(np_lib):
    def f(x):              # a new function object: each library traces and compiles it
        return np_lib.sin(x) * 2.0
    return f


def test_a_jit_compile_records_what_jax_records_for_the_same_program():
    x = np.arange(3, dtype=np.float32)
    with Heard(jax.monitoring) as on_jax, Heard(mmon) as on_minijax:
        jax.jit(_fresh_function(jnp))(x)
        assert on_minijax.calls == []          # JAX's own programs are JAX's alone
        jax_calls = list(on_jax.calls)
        on_jax.calls.clear()
        g = minijax.jit(_fresh_function(mjnp))
        g(x)
        heard = on_minijax.compile_events()
        g(x)                                   # compiled already: nothing more
        assert on_minijax.compile_events() == heard
        eager_jax_calls = list(on_jax.calls)
    expected = [c for c in jax_calls if c[1].startswith(COMPILE_EVENTS)]
    assert [c[1] for c in expected] == [
        "/jax/core/compile/jaxpr_trace_duration"] * 3 + [
        "/jax/core/compile/jaxpr_to_mlir_module_duration"] * 3 + [
        "/jax/core/compile/backend_compile_duration"] * 3
    assert heard == expected
    assert heard[0] == ("scalar", "/jax/core/compile/jaxpr_trace_duration",
                        {"fun_name": "f"})
    # the persistent cache's events (conftest.py turns the cache on) come through too
    assert (CACHE_REQUEST in [c[1] for c in on_minijax.calls]) == (
        CACHE_REQUEST in [c[1] for c in jax_calls])
    # JAX's listeners still hear what JAX does for minijax (its trace of the program
    # minijax hands it, named as the function)
    assert ("duration", "/jax/core/compile/backend_compile_duration",
            {"fun_name": "jit(f)"}) in eager_jax_calls


@pytest.mark.parametrize("trace", ["make_jaxpr", "eval_shape"])
def test_tracing_alone_records_the_trace_event(trace):
    x = np.ones(2, np.float32)
    seen = {}
    for lib, np_lib in ((jax, jnp), (minijax, mjnp)):
        with Heard(lib.monitoring) as heard:
            if trace == "make_jaxpr":
                lib.make_jaxpr(_fresh_function(np_lib))(x)
            else:
                lib.eval_shape(_fresh_function(np_lib), x)
        seen[lib.__name__] = heard.compile_events()
    assert seen["minijax"] == seen["jax"] == [
        (kind, "/jax/core/compile/jaxpr_trace_duration", {"fun_name": "f"})
        for kind in ("scalar", "duration", "span")]


def test_an_unregistered_listener_hears_nothing():
    with Heard(mmon) as heard:
        pass
    minijax.jit(_fresh_function(mjnp))(np.ones(4, np.float32))
    mmon.record_event("/my/event")
    assert heard.calls == []
    for lib in (jax, minijax):           # AssertionError, as JAX's `assert`
        with pytest.raises(AssertionError):
            lib.monitoring.unregister_event_listener(heard.listeners["event"])


def test_record_functions_call_listeners_as_jax():
    def record(monitoring):
        monitoring.record_event("/a", kind="x", n=1)
        monitoring.record_event_duration_secs("/b", 0.5, fun_name="f")
        monitoring.record_event_time_span("/c", 1.0, 2.5)
        monitoring.record_scalar("/d", 7)
    seen = {}
    for lib in (jax, minijax):
        with Heard(lib.monitoring) as heard:
            record(lib.monitoring)
        seen[lib.__name__] = heard.calls
    assert seen["minijax"] == seen["jax"] == [
        ("event", "/a", {"kind": "x", "n": 1}), ("duration", "/b", {"fun_name": "f"}),
        ("span", "/c", {}), ("scalar", "/d", {})]
    with Heard(mmon) as heard:       # a listener that is not callable fails at the call
        mmon.register_event_listener(3)
        try:
            with pytest.raises(TypeError, match="not callable"):
                mmon.record_event("/e")
        finally:
            mmon.unregister_event_listener(3)


def test_signatures_are_jax_s():
    for name in [n for n in dir(jax.monitoring) if not n.startswith("_")]:
        theirs = getattr(jax.monitoring, name)
        if not inspect.isfunction(theirs):
            continue
        mine = getattr(mmon, name)
        assert list(inspect.signature(mine).parameters) == list(
            inspect.signature(theirs).parameters), name


def _jax_lists():
    # JAX's four lists, read through a JAX function's module globals (`jax.monitoring`
    # does not list its listeners)
    g = jax.monitoring.record_event.__globals__
    return [list(g[name]) for name in ("_event_listeners", "_event_duration_secs_listeners",
                                       "_event_time_span_listeners", "_scalar_listeners")]


def test_jax_registry_is_left_alone():
    """Nothing of minijax's sits in JAX's registry after its import, and registering a
    minijax listener and compiling leave JAX's lists as they were."""
    before = _jax_lists()
    assert not [f for fs in before for f in fs
                if getattr(f, "__module__", "").startswith("minijax")]
    with Heard(mmon):
        minijax.jit(_fresh_function(mjnp))(np.ones(5, np.float32))
        assert _jax_lists() == before
    assert _jax_lists() == before


@pins("monitoring_clear_keeps_scalar_listeners")
def test_clear_event_listeners_clears_scalar_listeners():
    saved = _jax_lists()
    for lib in (jax, minijax):
        heard = []
        listener = lambda event, value, **kw: heard.append(event)  # noqa: E731
        lib.monitoring.register_scalar_listener(listener)
        lib.monitoring.clear_event_listeners()
        lib.monitoring.record_scalar("/after_clear", 1)
        if lib is jax:       # JAX's clear rebinds a local, not the scalar list
            assert heard == ["/after_clear"]
            lib.monitoring.unregister_scalar_listener(listener)
        else:
            assert heard == []
            with pytest.raises(AssertionError, match="not a registered scalar listener"):
                lib.monitoring.unregister_scalar_listener(listener)
    # JAX's clear emptied the other three lists of this process: put them back
    registers = (jax.monitoring.register_event_listener,
                 jax.monitoring.register_event_duration_secs_listener,
                 jax.monitoring.register_event_time_span_listener)
    for register, listeners in zip(registers, saved):
        for listener in listeners:
            register(listener)
