"""JAX's `jax.interpreters`: the rule tables a primitive of your own
(`minijax.extend.core.Primitive`) is given its derivatives, batching and lowering
in. `ad`, `batching` and `mlir` hold JAX's names for them; each rule is translated
into minijax's own table for the pass (docs/primitives.md)."""
from . import ad, batching, mlir

__all__ = ["ad", "batching", "mlir"]
