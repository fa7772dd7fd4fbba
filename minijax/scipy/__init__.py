"""`minijax.scipy`: the parts of `jax.scipy` minijax provides -- `special`, `stats`,
`linalg`, `signal`, `integrate`, `sparse.linalg`, (loaded on first use, as JAX's are)
`fft`, `ndimage`, `interpolate`, `cluster`, and (imported by name, as JAX's:
`import minijax.scipy.optimize`) `optimize` and `spatial` -- built from
`minijax.lax`, `minijax.numpy` and minijax's own primitives, so everything here
traces, jits, differentiates and batches like any other minijax code."""
from ..frontend.lazy_modules import lazy_submodules as _lazy_submodules

from . import special, stats, linalg, signal, integrate, sparse  # noqa: F401

_LAZY_SUBMODULES = frozenset({"fft", "ndimage", "interpolate", "cluster"})


__getattr__, __dir__ = _lazy_submodules(__name__, _LAZY_SUBMODULES)
