"""`minijax.example_libraries`: `jax.example_libraries.stax` (neural-network layers as
(init_fun, apply_fun) pairs) and `.optimizers` (optimizers as (init, update,
get_params) triples), written on minijax's API with JAX's signatures, so that the
tutorials built on them run with their imports changed."""
from . import optimizers, stax  # noqa: F401
