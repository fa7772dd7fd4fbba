"""`minijax.experimental.compilation_cache`: see its `compilation_cache` module."""
