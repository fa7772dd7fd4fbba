"""Submodules loaded on first read, as JAX loads `jax.scipy`'s and its libraries': a
package lists them and takes the module-level `__getattr__`/`__dir__` made here, so a
program that never reads one does not pay for importing it."""
from __future__ import annotations

import importlib
import sys


def lazy_submodules(package: str, names: frozenset):
    """`(__getattr__, __dir__)` for package `package` whose submodules `names` are
    imported when first read (`package.name` or `from package import name`)."""
    def __getattr__(name):
        if name in names:
            # (`from . import name` in the package would ask this very hook for it.)
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | names)
    return __getattr__, __dir__
