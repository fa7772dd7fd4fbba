"""`minijax.nn`: `jax.nn`'s activation functions, `dot_product_attention` and
`minijax.nn.initializers`.

`import minijax as jax; jax.nn.relu(x)` computes what `jax.nn.relu(x)` does; see
`functions.py` for where JAX's numerics need care and `initializers.py` for the
parameter initializers (which draw from `minijax.random`); `attention.py` for
`dot_product_attention`.
"""
from .functions import *  # noqa: F401,F403
from .attention import dot_product_attention  # noqa: F401
from . import initializers  # noqa: F401
