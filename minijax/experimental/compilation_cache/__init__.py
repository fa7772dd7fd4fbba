"""`minijax.experimental.compilation_cache`: see its `compilation_cache` module, which
loads with `minijax.experimental` as JAX's loads with `jax.experimental`."""
from . import compilation_cache  # noqa: F401
