"""The corpus in tests/programs/: JAX programs run unchanged on JAX and on minijax.

Each program is executed twice from the same source file: once as written, and once
with every `jax` import in it resolved to `minijax` (the file is not edited; only the
names its `import` statements bind change). Their `main()` results must agree:
random numbers bit for bit (they decide everything downstream), floats within a
tolerance that allows for a few training steps of rounding differences.
"""
from __future__ import annotations

import builtins
import importlib
import pathlib

import numpy as np
import pytest

from minijax.testing import assert_trees_match

PROGRAMS = sorted((pathlib.Path(__file__).parent / "programs").glob("p*.py"))


def _import_resolving_jax_to(library: str):
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "jax" or name.startswith("jax.")):
            name = library + name[len("jax"):]
            module = importlib.import_module(name)
            if not fromlist:
                return importlib.import_module(library)
            for attribute in fromlist:     # `from jax.x import submodule`
                if not hasattr(module, attribute):
                    importlib.import_module(f"{name}.{attribute}")
            return module
        return real_import(name, globals, locals, fromlist, level)
    return import_


def run_program(path: pathlib.Path, library: str):
    """Execute the program file with `jax` meaning `library`, and return `main()`."""
    namespace = {"__name__": f"program_{path.stem}_{library}", "__file__": str(path),
                 "__builtins__": {**vars(builtins),
                                  "__import__": _import_resolving_jax_to(library)}}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["main"]()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_runs_unchanged_with_jax_results(path):
    expected = run_program(path, "jax")
    actual = run_program(path, "minijax")
    assert_trees_match(actual, expected, rtol=2e-4, atol=2e-5, check_weak_types=False,
                       what=path.stem)


def test_the_corpus_is_large_enough():
    assert len(PROGRAMS) >= 15


def test_the_loader_really_swaps_the_library(tmp_path):
    program = tmp_path / "p_which.py"
    program.write_text("import jax\nfrom jax import numpy as jnp\n"
                       "def main():\n    return jax.__name__, jnp.__name__\n")
    assert run_program(program, "jax") == ("jax", "jax.numpy")
    assert run_program(program, "minijax") == ("minijax", "minijax.numpy")
