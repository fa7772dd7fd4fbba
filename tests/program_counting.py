"""Counting the programs JAX makes while a block runs, through `jax.monitoring`.

    with programs("compiled") as made:
        f(x)
    assert len(made) == 1

"lowered" counts every program lowered to MLIR (a compile, or a hit of the run's
persistent compilation cache, `tests/conftest.py`); "compiled" counts XLA backend
compiles only."""
import contextlib

import jax

_EVENTS = {"lowered": "/jax/core/compile/jaxpr_to_mlir_module_duration",
           "compiled": "/jax/core/compile/backend_compile_duration"}


@contextlib.contextmanager
def programs(kind: str):
    wanted, made = _EVENTS[kind], []

    def listen(event, duration, **kwargs):
        if event == wanted:
            made.append(event)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield made
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
