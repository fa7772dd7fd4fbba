"""The corpus in tests/programs/: JAX programs run unchanged on JAX and on minijax.

Each program is executed twice from the same source file: once as written, and once
with every `jax` import in it resolved to `minijax` (the file is not edited; only the
names its `import` statements bind change). Their `main()` results must agree:
random numbers bit for bit (they decide everything downstream), floats within a
tolerance that allows for a few training steps of rounding differences. Where a
program showed minijax compiling more than JAX for the same eager call, a test below
pins the fix (an eager `jnp.stack` is one cached program, as JAX's).
"""
from __future__ import annotations

import builtins
import importlib
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
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
    # dont_inherit: this file's `from __future__ import annotations` must not reach the
    # program (it turned a program's dataclass annotations into strings).
    exec(compile(path.read_text(), str(path), "exec", dont_inherit=True), namespace)
    return namespace["main"]()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_runs_unchanged_with_jax_results(path):
    expected = run_program(path, "jax")
    actual = run_program(path, "minijax")
    assert_trees_match(actual, expected, rtol=2e-4, atol=2e-5, check_weak_types=False,
                       what=path.stem)


def test_the_corpus_is_large_enough():
    assert len(PROGRAMS) >= 29


def test_the_loader_really_swaps_the_library(tmp_path):
    program = tmp_path / "p_which.py"
    program.write_text("import jax\nfrom jax import numpy as jnp\n"
                       "def main():\n    return jax.__name__, jnp.__name__\n")
    assert run_program(program, "jax") == ("jax", "jax.numpy")
    assert run_program(program, "minijax") == ("minijax", "minijax.numpy")


def test_eager_stack_is_one_cached_program_as_in_jax():
    # p04 and p05 stack a list of results eagerly; JAX jits `stack`, so each call is one
    # program (minijax's was an expand_dims per array and a concatenate).
    x = jnp.arange(6.0).reshape(2, 3)
    calls = [lambda m: m.stack([x, x + 1]),
             lambda m: m.stack((x, x), axis=-1, dtype=np.float16),
             lambda m: m.stack([1.0, 2.0]), lambda m: m.stack([np.int8(3), np.int8(4)]),
             lambda m: m.stack([1, 2, 3]), lambda m: m.stack([1000, 2]),
             lambda m: m.stack(x), lambda m: m.stack([np.float32(1), 2.0])]
    for call in calls:
        for _ in range(2):       # the second call runs the cached program
            assert_trees_match(call(mnp), call(jnp))
    assert mnp.stack.eager_jit.call_cache().fast is not None
    for bad, error in (([], ValueError), ([x, x[0]], ValueError), ([[1, 2], [3]], TypeError)):
        for module in (mnp, jnp):
            with pytest.raises(error):
                module.stack(bad)
    # traced, the body is inline: no nested call in the program
    traced = minijax.make_jaxpr(lambda a: mnp.stack([a, a]))(x)
    names = [e.primitive.name for e in traced.jaxpr.eqns]
    assert names == ["expand_dims", "expand_dims", "concatenate"]
    assert_trees_match(minijax.grad(lambda a: mnp.stack([a, 2 * a]).sum())(x),
                       jax.grad(lambda a: jnp.stack([a, 2 * a]).sum())(x))
