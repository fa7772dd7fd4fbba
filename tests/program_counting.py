"""Counting the programs JAX makes while a block runs, through `jax.monitoring`.

    with programs("compiled") as made:
        f(x)
    assert len(made) == 1

"lowered" counts every program lowered to MLIR; "compiled" every program handed to
the backend, which compiles it or, when the run's persistent compilation cache
(`tests/conftest.py`) holds the same module text, loads it from there; "cache hits"
counts those loaded."""
import contextlib

import jax

_EVENTS = {"lowered": "/jax/core/compile/jaxpr_to_mlir_module_duration",
           "compiled": "/jax/core/compile/backend_compile_duration",
           "cache hits": "/jax/compilation_cache/cache_hits"}


@contextlib.contextmanager
def programs(kind: str):
    wanted, made = _EVENTS[kind], []

    def listen(event, *duration, **kwargs):
        if event == wanted:
            made.append(event)
    # (A hit is a plain event; the others are events with a duration.)
    register, unregister = ((jax.monitoring.register_event_listener,
                             jax.monitoring.unregister_event_listener)
                            if kind == "cache hits" else
                            (jax.monitoring.register_event_duration_secs_listener,
                             jax.monitoring.unregister_event_duration_listener))
    register(listen)
    try:
        yield made
    finally:
        unregister(listen)


def counted(fun, *args):
    """(fun(*args), the number of programs the call lowered)."""
    with programs("lowered") as made:
        out = jax.block_until_ready(fun(*args))
    return out, len(made)


def first_and_repeat(fun, *args, same_results=True):
    """(fun(*args), (programs lowered by a first call, by a repeat call)); the two
    calls' results must match, unless `same_results` is False (`lax.empty`, whose
    contents on a GPU are whatever the memory held)."""
    from minijax.testing import assert_trees_match
    out, first = counted(fun, *args)
    again, repeat = counted(fun, *args)
    if same_results:
        assert_trees_match(again, out)
    return out, (first, repeat)
