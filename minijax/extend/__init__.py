"""JAX's `jax.extend`: for libraries that build on minijax's IR. `extend.core` has
`Primitive` (operations of your own, given meaning through `minijax.interpreters`)
and the IR's data structures. As in JAX, `import minijax` leaves it unread: import
`minijax.extend.core` by name."""
from . import core

__all__ = ["core"]
