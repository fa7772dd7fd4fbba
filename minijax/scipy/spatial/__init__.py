"""`minijax.scipy.spatial`: `transform` (`Rotation`, `Slerp`), as `jax.scipy.spatial`
has it; the submodule loads on first use."""
import importlib as _importlib

_LAZY_SUBMODULES = frozenset({"transform"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)
