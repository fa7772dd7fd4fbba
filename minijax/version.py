"""`minijax.version`: minijax's version, as `jax.version` holds JAX's.

`__version__` and `_version` are one string (the package's `minijax.__version__`),
`__version_info__` its numbers as a tuple (`minijax.__version_info__`), as in JAX;
the rest of `jax.version` is JAX's build tooling, which minijax has no use for.
"""
from . import __version__, __version_info__

_version = __version__
