"""What `import minijax` costs, against `import jax.numpy` (which it includes).

Every process that uses minijax pays its import: each user script, and each
subprocess the test suite starts (the CLI, the REPL, the fuzzers, the 8-device
tests). `import minijax` imports `jax` and `jax.numpy` and then minijax's own
modules: the IR and its primitive catalogue, the passes, the backends and the
public API, all of which register rules that must be in place before the first
trace. What is not needed for that loads on first use:

* `minijax.random`, `scipy`, `nn`, `image`, `test_util` (a module `__getattr__`
  in `minijax/__init__.py`; they register no rules);
* the IR text parser (`minijax.ir.parse_jaxpr`, `loads`, `ParseError`);
* `jax.extend` (the interop bridge reads JAX jaxprs with it; importing it loads
  JAX's Pallas);
* the concrete type of a JAX array (`ir/types.py`'s `jax_array_type`): reading it
  off `jnp.zeros(())` at import started JAX's backend, loaded the MHLO dialect and
  compiled a program, a quarter of a second by itself.

    PYTHONPATH=. .venv/bin/python benchmarks/import_time.py [--rounds 5]

Each round starts one fresh interpreter per side, in turn (so both see the same
machine load), and reads the CPU time of the import statement alone; the minimum
per side is kept. The bytecode of minijax is compiled first (`compileall`, into the
usual `__pycache__` folders), as an installed package's is: with
PYTHONDONTWRITEBYTECODE set and no cached bytecode, every import compiles all of
minijax's sources again, about 0.5 s more (`make test` compiles them first for
that reason).

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load 5-6),
min of 5 rounds, two runs each of the tree before this work and after it:

    case                     before     after
    import jax.numpy         0.36-0.37  0.34-0.37
    import minijax           0.54       0.39-0.42
    ratio                    1.45-1.48  1.14-1.15

Without cached bytecode (PYTHONDONTWRITEBYTECODE, no `__pycache__`), as the suite's
subprocesses ran before `make test` compiled it: 0.74-0.79 s before, 0.64-0.72 after.
"""
from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TIMED = ("import time; t = time.process_time(); import {module}; "
          "print(time.process_time() - t)")


def import_seconds(module: str, env: dict) -> float:
    """CPU seconds of `import module` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _TIMED.format(module=module)],
                         capture_output=True, text=True, check=True, env=env, cwd=_ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    compileall.compile_dir(os.path.join(_ROOT, "minijax"), quiet=1)
    env = {**os.environ, "PYTHONPATH": _ROOT, "JAX_PLATFORMS": "cpu"}
    cases = {"import jax.numpy": "jax.numpy", "import minijax": "minijax"}
    best = {name: float("inf") for name in cases}
    for _ in range(args.rounds):
        for name, module in cases.items():
            best[name] = min(best[name], import_seconds(module, env))
    print(f"{'case':38s} {'seconds':>8s}")
    for name, seconds in best.items():
        print(f"{name:38s} {seconds:8.3f}")
    print(f"{'ratio minijax / jax.numpy':38s} "
          f"{best['import minijax'] / best['import jax.numpy']:8.2f}")
    return best


if __name__ == "__main__":
    main()
