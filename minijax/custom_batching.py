"""`minijax.custom_batching`: JAX's module of that name -- `custom_vmap` (a function
with its own vmap rule) and `sequential_vmap` (one batched by a loop). The code is in
`frontend/custom_batching.py`; the rules in `transforms/custom_vmap_rules.py`."""
from .frontend.custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
