"""`minijax.experimental`: the names of `jax.experimental` that minijax implements.

Here: `io_callback` (`frontend/callbacks.py`). Its submodules `ode` and `checkify` are
imported by name, as JAX's are (`from minijax.experimental import checkify`).
`jax.experimental` holds more, and a name minijax lacks is an AttributeError here
rather than a stub.
"""
from ..frontend.callbacks import io_callback

__all__ = ["io_callback"]
