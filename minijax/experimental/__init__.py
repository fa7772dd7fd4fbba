"""`minijax.experimental`: the names of `jax.experimental` that minijax implements.

Here: `io_callback` (`frontend/callbacks.py`). Its submodules are imported by name, as
JAX's are (`import minijax.experimental.pjit`). `jax.experimental` holds more, and a
name minijax lacks is an AttributeError here rather than a stub.

Submodules: `jet` (Taylor-mode differentiation; `transforms/jet.py`).
"""
from ..frontend.callbacks import io_callback

__all__ = ["io_callback"]
