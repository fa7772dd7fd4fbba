"""`minijax.experimental`: the names of `jax.experimental` that minijax implements.

Only `io_callback` so far (`frontend/callbacks.py`); `jax.experimental` holds many
more, and a name minijax lacks is an AttributeError here rather than a stub.
"""
from .frontend.callbacks import io_callback

__all__ = ["io_callback"]
