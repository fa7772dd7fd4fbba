"""`minijax.scipy`: the parts of `jax.scipy` minijax provides -- `special`, `stats`,
`linalg`, `signal`, `integrate`, `sparse.linalg`, `optimize` -- built from `minijax.lax`,
`minijax.numpy` and minijax's own primitives, so everything here traces, jits, differentiates and batches like any other
minijax code."""
from . import special, stats, linalg, signal, integrate, sparse, optimize  # noqa: F401
