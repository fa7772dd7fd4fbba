"""What `python -m minijax diff` and `python -m minijax check` do.

`diff SCRIPT.py` runs a JAX script twice in this process, on JAX and on minijax
(`interop/run_hook.py`), recording everything it prints together with the script
line that printed it, and the arrays it leaves in its global variables. The two
records are compared in order: the same text, with every number equal within a
float tolerance. The first line whose output differs is named, with both outputs.

`check FILE.py[::FUNCTION]` loads a file of JAX code (with real JAX), and runs
`cross_check` on its functions: the one named with `::FUNCTION` called with `--args`,
or every function listed in the file's `EXAMPLES = {"name": (arg, ...), ...}` dict.
Reports are printed; reproducers of any disagreement go to `--out`.
"""
from __future__ import annotations

import dataclasses
import builtins
import io
import math
import os
import re
import runpy
import sys
from contextlib import redirect_stdout

import numpy as np

__all__ = ["diff_script", "check_file", "Printed"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)")


class Printed:
    """One `print` call of the script: the line that made it and the text."""

    def __init__(self, line: int, text: str):
        self.line, self.text = line, text


def _recording_builtins(records, base_builtins):
    namespace = dict(base_builtins)
    real_print = builtins.print

    def print(*args, sep=" ", end="\n", file=None, flush=False):  # noqa: A001
        if file is None or file is sys.stdout:
            caller = sys._getframe(1)
            buffer = io.StringIO()
            real_print(*args, sep=sep, end=end, file=buffer)
            records.append(Printed(caller.f_lineno, buffer.getvalue()))
        real_print(*args, sep=sep, end=end, file=file, flush=flush)
    namespace["print"] = print
    return namespace


def _run_recorded(path, argv, on_minijax: bool):
    from ..interop import run_hook
    records = []
    base = run_hook.minijax_builtins() if on_minijax else vars(builtins)
    namespace_builtins = _recording_builtins(records, base)
    out = io.StringIO()
    error = None
    try:
        with redirect_stdout(out):
            namespace = run_hook.run_script(path, argv, on_minijax=on_minijax,
                                            script_builtins=namespace_builtins)
    except Exception as failure:  # noqa: BLE001 -- a script that fails is a finding
        error, namespace = _Stopped(type(failure).__name__, str(failure)), {}
    arrays = {name: np.asarray(value) for name, value in namespace.items()
              if not name.startswith("_") and _is_array(value)}
    return records, arrays, error


@dataclasses.dataclass(frozen=True)
class _Stopped:
    """The exception a run stopped with. Two runs stop alike when they raise the same
    type after the same prints: the messages are each library's own words."""
    kind: str
    message: str

    def __str__(self):
        return f"{self.kind}: {self.message}"


def _is_array(value) -> bool:
    return type(value).__name__ in ("ArrayImpl", "ndarray") and hasattr(value, "shape")


def _same_text(a: str, b: str, rtol: float, atol: float) -> bool:
    # Whitespace is layout: NumPy pads an array's numbers to one width, so numbers
    # equal within the tolerance can print as `-0.433146 ,` and `-0.43314594,`.
    # Each number is one `#` token, so two numbers never merge into one.
    if "".join(_NUMBER.sub("#", a).split()) != "".join(_NUMBER.sub("#", b).split()):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        fx, fy = float(x), float(y)
        if math.isnan(fx) and math.isnan(fy):
            continue
        if not (fx == fy or abs(fx - fy) <= atol + rtol * abs(fy)):
            return False
    return True


def diff_script(path: str, argv=(), rtol: float = 1e-5, atol: float = 1e-6) -> tuple[int, str]:
    """(exit status, report text): 0 when JAX and minijax agree on everything the
    script prints and leaves in its globals, 1 otherwise."""
    jax_records, jax_arrays, jax_error = _run_recorded(path, argv, on_minijax=False)
    mini_records, mini_arrays, mini_error = _run_recorded(path, argv, on_minijax=True)
    source = open(path, encoding="utf-8").read().splitlines()
    name = os.path.basename(path)

    def where(line):
        text = source[line - 1].strip() if 0 < line <= len(source) else ""
        return f"{name}:{line}: {text}"

    for jax_printed, mini_printed in zip(jax_records, mini_records):
        if not _same_text(mini_printed.text, jax_printed.text, rtol, atol):
            return 1, (f"first difference at {where(jax_printed.line)}\n"
                       f"  jax:     {jax_printed.text.rstrip()}\n"
                       f"  minijax: {mini_printed.text.rstrip()}")
    if len(jax_records) != len(mini_records) or (
            getattr(jax_error, "kind", None) != getattr(mini_error, "kind", None)):
        line = (jax_records[len(mini_records)].line if len(jax_records) > len(mini_records)
                else mini_records[len(jax_records)].line if mini_records[len(jax_records):]
                else 0)
        return 1, (f"the runs stop differently{' at ' + where(line) if line else ''}: "
                   f"jax printed {len(jax_records)} times ({jax_error or 'no error'}), "
                   f"minijax {len(mini_records)} times ({mini_error or 'no error'})")
    for var in sorted(set(jax_arrays) | set(mini_arrays)):
        a, b = mini_arrays.get(var), jax_arrays.get(var)
        if a is None or b is None or a.shape != b.shape or not _close(a, b, rtol, atol):
            return 1, (f"the global {var} differs after the run\n  jax:     {b}\n"
                       f"  minijax: {a}")
    stopped = "" if jax_error is None else (
        f"; both stop with {jax_error.kind}\n  jax:     {jax_error.message}\n"
        f"  minijax: {mini_error.message}")
    return 0, (f"{name}: jax and minijax agree on {len(jax_records)} printed lines and "
               f"{len(jax_arrays)} global arrays{stopped}")


def _close(a, b, rtol, atol) -> bool:
    if a.dtype.kind not in "fciub" or b.dtype.kind not in "fciub":
        return bool(np.array_equal(a, b))
    # complex128 when either is complex: a cast to float64 would drop imaginary parts
    wide = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
    return bool(np.allclose(a.astype(wide), b.astype(wide), rtol=rtol,
                            atol=atol, equal_nan=True))


def check_file(target: str, args_text: str | None = None, transforms=None, policies=None,
               out_dir: str | None = None) -> tuple[int, str]:
    """(exit status, text of the reports) for `FILE.py[::FUNCTION]`."""
    import jax
    import jax.numpy as jnp
    from .cross_check import cross_check, DEFAULT_POLICIES
    path, _, function = target.partition("::")
    module = runpy.run_path(path, run_name="minijax_check_target")
    if function:
        if function not in module:
            raise SystemExit(f"{path} defines no function {function!r}")
        if args_text is None and function not in module.get("EXAMPLES", {}):
            raise SystemExit(f"give example arguments for {function} with --args '...' or "
                             f"an EXAMPLES entry in {path}")
        examples = {function: _parse_args(args_text, jax, jnp) if args_text is not None
                    else module["EXAMPLES"][function]}
    else:
        examples = dict(module.get("EXAMPLES", {}))
        if not examples:
            raise SystemExit(f"{path} has no EXAMPLES dict; name a function with "
                             f"{path}::FUNCTION and give --args")
    texts, status = [], 0
    for name, example_args in examples.items():
        example_args = example_args if isinstance(example_args, tuple) else (example_args,)
        report = cross_check(module[name], *example_args, transforms=transforms,
                             policies=DEFAULT_POLICIES if policies is None else policies,
                             reproducer_dir=out_dir)
        report.function = name
        texts.append(str(report))
        status = status or (0 if report.ok else 1)
    return status, "\n\n".join(texts)


def _parse_args(text: str, jax, jnp) -> tuple:
    value = eval(text, {"np": np, "jnp": jnp, "jax": jax})   # the user's own expression
    return value if isinstance(value, tuple) else (value,)
