"""`minijax.example_libraries`: `jax.example_libraries.stax` (neural-network layers as
(init_fun, apply_fun) pairs) and `.optimizers` (optimizers as (init, update,
get_params) triples), written on minijax's API with JAX's signatures, so that the
tutorials built on them run with their imports changed.

As JAX's, each is imported by name (`from minijax.example_libraries import stax`):
this package imports neither, so `minijax.example_libraries.stax` is an
AttributeError until something imports it, on JAX as here."""
