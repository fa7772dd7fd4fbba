"""`python -m minijax run SCRIPT.py [args]`: run a JAX script on minijax, unchanged.

The script's own `import jax`, `import jax.numpy as jnp`, `from jax import lax` must
get minijax, while minijax itself -- and every installed package -- keeps importing
real JAX (minijax lowers to `jax.lax`; a library the script uses was written for
JAX). `sys.modules["jax"]` is one global, so swapping it cannot tell importers
apart. Instead the swap is made per *importing module*: the script, and every module
loaded from the script's own folder, is executed with a `__builtins__` whose
`__import__` maps `jax` and `jax.X` to `minijax` and `minijax.X`. Modules found
anywhere else load normally. Nothing of JAX's is touched.

C code that imports on the script's behalf looks `__import__` up in the script's
builtins too: `pickle.dumps(x)` imports `jax._src.array` to check how it will rebuild a
jax.Array (minijax's arrays are JAX's), and `pickle.loads` imports it to rebuild one.
minijax has no `jax._src`, so a module minijax lacks is still JAX's when the request is
not an `import` statement of the script's; a statement naming one fails clearly.
"""
from __future__ import annotations

import builtins
import dis
import importlib
import importlib.abc
import importlib.util
import os
import sys
from contextlib import contextmanager

__all__ = ["run_script", "minijax_builtins", "UserFilesFinder"]


def _minijax_name(name: str) -> str | None:
    if name == "jax" or name.startswith("jax."):
        return "minijax" + name[len("jax"):]
    return None


def _redirecting_import(name, globals=None, locals=None, fromlist=(), level=0):
    target = _minijax_name(name) if level == 0 else None
    if target is None:
        return builtins.__import__(name, globals, locals, fromlist, level)
    try:
        importlib.import_module(target)
    except ModuleNotFoundError:
        if not _is_import_statement(sys._getframe(1)):
            return builtins.__import__(name, globals, locals, fromlist, level)
        where = (globals or {}).get("__file__", "the script")
        raise ModuleNotFoundError(f"{where} imports {name}, which minijax does not "
                                  f"provide ({target} does not exist)", name=name) from None
    return builtins.__import__(target, globals, locals, fromlist, 0)


def _is_import_statement(frame) -> bool:
    """Whether `frame` (the caller of `__import__`) is executing an `import` statement
    rather than a call from C code such as pickle's (which has no frame of its own)."""
    return dis.opname[frame.f_code.co_code[frame.f_lasti]] == "IMPORT_NAME"


def minijax_builtins() -> dict:
    """A copy of the builtins whose `__import__` resolves `jax` to minijax."""
    namespace = dict(vars(builtins))
    namespace["__import__"] = _redirecting_import
    return namespace


class _UserModuleLoader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__["__builtins__"] = minijax_builtins()
        with open(self.path, encoding="utf-8") as source:
            code = compile(source.read(), self.path, "exec")
        exec(code, module.__dict__)


class UserFilesFinder(importlib.abc.MetaPathFinder):
    """Finds the script's own modules (`.py` files and packages in `folder`) and
    loads them with the redirecting `__import__`."""

    def __init__(self, folder: str):
        self.folder = os.path.abspath(folder)

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        base = os.path.join(self.folder, *parts)
        for candidate, is_package in ((base + ".py", False),
                                      (os.path.join(base, "__init__.py"), True)):
            if os.path.isfile(candidate):
                spec = importlib.util.spec_from_file_location(
                    fullname, candidate, loader=_UserModuleLoader(candidate),
                    submodule_search_locations=[base] if is_package else None)
                return spec
        return None


@contextmanager
def _user_files_hook(folder):
    finder = UserFilesFinder(folder)
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)


def run_script(path: str, argv=(), *, on_minijax: bool = True, script_builtins=None) -> dict:
    """Run the script at `path` as `__main__` with `sys.argv = [path, *argv]`; with
    `on_minijax`, its `jax` imports (and those of its own modules) are minijax.
    `script_builtins` replaces the script's builtins (`diff` records its prints so).
    Returns the script's globals."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    with open(path, encoding="utf-8") as source:
        code = compile(source.read(), path, "exec")
    if script_builtins is None:
        script_builtins = minijax_builtins() if on_minijax else builtins
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": script_builtins}
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *argv]
    sys.path.insert(0, folder)
    _forget_modules_of(folder)      # a module the script imports is loaded for this run
    try:
        if on_minijax:
            import minijax  # noqa: F401  -- loaded before the script's first import
            with _user_files_hook(folder):
                exec(code, namespace)
        else:
            exec(code, namespace)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        _forget_modules_of(folder)  # ... and not reused by a later run on the other side
    return namespace


def _forget_modules_of(folder):
    """Drop the modules loaded from the script's folder from `sys.modules`: they were
    executed with one side's `jax`, so another run must load them afresh."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if file and os.path.abspath(file).startswith(folder + os.sep):
            del sys.modules[name]
