"""`minijax.scipy`: the parts of `jax.scipy` minijax provides -- `special`, `stats`,
`linalg`, `signal`, `integrate`, `sparse.linalg`, `optimize`, and (loaded on first
use, as JAX's are) `fft`, `ndimage`, `interpolate`, `cluster`, `spatial` -- built from
`minijax.lax`, `minijax.numpy` and minijax's own primitives, so everything here
traces, jits, differentiates and batches like any other minijax code."""
import importlib as _importlib

from . import special, stats, linalg, signal, integrate, sparse, optimize  # noqa: F401

_LAZY_SUBMODULES = frozenset({"fft", "ndimage", "interpolate", "cluster", "spatial"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)
