"""`minijax.scipy.cluster`: `vq`, as `jax.scipy.cluster` has it."""
from . import vq  # noqa: F401
