"""`minijax.experimental.serialize_executable`: save a compiled executable as bytes and
load it again, as JAX's module does.

`jit(f).lower(...).compile()` is a minijax `Compiled` around JAX's executable of the
program minijax lowered (`frontend/aot.py`), so saving it is saving JAX's:
`serialize(compiled)` gives JAX's `(payload, in_tree, out_tree)`, and
`deserialize_and_load(payload, in_tree, out_tree)` gives back JAX's `Compiled`, called
with the same dynamic arguments (its checks of their types and structure are JAX's).
A program with refs is refused: its executable also moves the refs' contents in and
out, which no saved executable can do (JAX's executables have no refs either). As
JAX warns, loading runs code from the payload: never load one you do not trust.
"""
from __future__ import annotations

from jax.experimental import serialize_executable as _jax

from ..frontend.aot import Compiled

__all__ = ["serialize", "deserialize_and_load"]


def serialize(compiled: Compiled):
    """`(payload, in_tree, out_tree)`: the executable as bytes, and the pytrees of its
    arguments and results, which are not serializable (keep them yourself)."""
    if not isinstance(compiled, Compiled):
        raise TypeError(f"serialize takes the executable of jit(f).lower(...).compile(), "
                        f"got {type(compiled).__name__}")
    if compiled._run_with_refs is not None:
        raise ValueError("serialize: this executable reads and writes refs, which a "
                         "saved executable cannot; pass their values as arguments")
    return _jax.serialize(compiled._compiled)


def deserialize_and_load(serialized, in_tree, out_tree, backend=None,
                         execution_devices=None):
    """The executable `serialize` saved, loaded on `backend` (JAX's `Compiled`)."""
    return _jax.deserialize_and_load(serialized, in_tree, out_tree, backend=backend,
                                     execution_devices=execution_devices)
