"""Which submodules a program reaches after a bare `import minijax`, against JAX.

JAX loads some submodules with the package (`jax.nn`, `jax.stages`), some on first
read (`jax.scipy.linalg`), and leaves the rest to an explicit import
(`jax.ad_checkpoint`, `jax.scipy.optimize`, `jax.experimental.checkify`). A program
that reads `minijax.ad_checkpoint` without importing it would run here and fail on
JAX with AttributeError, so every public module of minijax that JAX also has is
read the same way in both: each name in a fresh process (a child forked right after
the import, so no read sees what an earlier one loaded).
"""
import json
import os
import pathlib
import subprocess
import sys

import minijax

# A child per name, forked after the import: 0 reached, 1 AttributeError, 2 (jax
# only) JAX has no such module.
_PROBE = r"""
import importlib, importlib.util, json, os, sys
pkg = importlib.import_module(sys.argv[1])
answers = {}
for name in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        try:
            obj = pkg
            for part in name.split("."):
                obj = getattr(obj, part)
            code = 0
        except AttributeError:
            code = 1
            try:
                if importlib.util.find_spec(f"{sys.argv[1]}.{name}") is None:
                    code = 2
            except ImportError:
                code = 2
        os._exit(code)
    answers[name] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(answers))
"""

# minijax's own modules, with no JAX counterpart to compare with
_MINIJAX_ONLY = {"ir", "transforms", "backends", "frontend", "interop", "testing", "repl",
                 "divergences", "cli", "remat_report", "memory_report"}


def _public_modules() -> list:
    root = pathlib.Path(minijax.__file__).parent
    names = []
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if (parts and parts[0] not in _MINIJAX_ONLY
                and not any(p.startswith("_") for p in parts)):
            names.append(".".join(parts))
    # One distribution stands for the others: `scipy.stats` loads them all at once.
    return sorted(n for n in names
                  if not n.startswith("scipy.stats.") or n == "scipy.stats.norm")


def _reached(package: str, names: list) -> dict:
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join([str(pathlib.Path(minijax.__file__).parents[1]),
                                          os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", _PROBE, package, *names],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_submodules_are_reached_after_import_as_on_jax():
    names = _public_modules()
    jax_answers = _reached("jax", names)
    shared = [n for n in names if jax_answers[n] != 2]
    mine = _reached("minijax", shared)
    assert {n: mine[n] for n in shared} == {n: jax_answers[n] for n in shared}
    # The cases this file was written for, so that the comparison is not vacuous.
    expected = {"ad_checkpoint": 1, "test_util": 1, "flatten_util": 1,
                "example_libraries.stax": 1, "scipy.optimize": 1, "scipy.spatial": 1,
                "experimental.checkify": 1, "scipy.linalg": 0, "stages": 0,
                "experimental.compilation_cache.compilation_cache": 0}
    assert {n: mine[n] for n in expected} == expected


def test_an_explicit_import_makes_the_name_readable():
    code = ("import minijax, minijax.ad_checkpoint, minijax.scipy.optimize\n"
            "print(minijax.ad_checkpoint.checkpoint is minijax.checkpoint,"
            " callable(minijax.scipy.optimize.minimize))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
