"""`minijax.scipy.spatial`: `transform` (`Rotation`, `Slerp`), as `jax.scipy.spatial`
has it; the submodule loads on first use."""
from ...frontend.lazy_modules import lazy_submodules as _lazy_submodules

_LAZY_SUBMODULES = frozenset({"transform"})


__getattr__, __dir__ = _lazy_submodules(__name__, _LAZY_SUBMODULES)
