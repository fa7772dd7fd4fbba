"""`minijax.scipy`: the parts of `jax.scipy` that minijax implements."""
from . import linalg  # noqa: F401
