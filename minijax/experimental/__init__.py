"""`minijax.experimental`: the names of `jax.experimental` that minijax implements.

Here: `io_callback` (`frontend/callbacks.py`). Its submodules (`ode`, `checkify`, `jet`
(Taylor-mode differentiation, `transforms/jet.py`), `mesh_utils`, `multihost_utils`,
`compilation_cache`, `key_reuse` (a docstring only, as JAX's: the checker is the flag
`jax_debug_key_reuse`), and the deprecated `pjit` and `shard_map`) are imported by name,
as JAX's are (`from minijax.experimental import checkify`). `jax.experimental` holds
more, and a name minijax lacks is an AttributeError here rather than a stub.
"""
from ..frontend.callbacks import io_callback

__all__ = ["io_callback"]
