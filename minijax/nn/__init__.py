"""`minijax.nn`: `jax.nn`'s activation functions and `minijax.nn.initializers`.

`import minijax as jax; jax.nn.relu(x)` computes what `jax.nn.relu(x)` does; see
`functions.py` for where JAX's numerics need care and `initializers.py` for the
parameter initializers (which draw from `minijax.random`).
"""
from .functions import *  # noqa: F401,F403
from . import initializers  # noqa: F401
