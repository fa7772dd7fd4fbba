"""`minijax.typing`: the annotations of `jax.typing` (`ArrayLike`, `DTypeLike`).

`ArrayLike` is what a minijax function takes as an array: JAX's own union (jax and
NumPy arrays, NumPy and Python scalars) plus a minijax tracer, the form an array takes
while a function is transformed. `DTypeLike` is JAX's."""
from typing import Union

import jax.typing

from .ir.trace import Tracer

ArrayLike = Union[jax.typing.ArrayLike, Tracer]
DTypeLike = jax.typing.DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
