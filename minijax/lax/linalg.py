"""`minijax.lax.linalg`: the decomposition primitives under `jax.lax.linalg`'s names.

`import minijax.lax.linalg`, `from minijax.lax import linalg` and `minijax.lax.linalg`
after `import minijax.lax` all reach this module, as they reach `jax.lax.linalg` in
JAX. The functions live in `frontend/linalg_ops.py` and `frontend/linalg_kernels.py`;
this module only gathers them.
"""
import importlib as _importlib
from ..frontend.linalg_ops import (cholesky, triangular_solve, lu,  # noqa: F401
                                   lu_pivots_to_permutation, eigh, svd, qr, eig)
from ..frontend.linalg_kernels import (tridiagonal, tridiagonal_solve,  # noqa: F401
                                       householder_product, hessenberg, schur, ormqr,
                                       symmetric_product, cholesky_update)
from ._qdwh import qdwh  # noqa: F401

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "eigh",
           "svd", "qr", "eig", "tridiagonal", "tridiagonal_solve", "householder_product",
           "hessenberg", "schur", "ormqr", "symmetric_product", "cholesky_update", "qdwh"]


def __getattr__(name):  # JAX's primitive objects (`linalg.qr_p`): their table loads on first use
    if not name.endswith("_p"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _importlib.import_module("minijax.lax.primitives").lookup(__name__, name)


def __dir__():  # the module's names and JAX's primitive names it answers
    return _importlib.import_module("minijax.lax.primitives").module_dir(__name__, globals())
