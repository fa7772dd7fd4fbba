"""How the REPL shows things: colour for IR text, values, byte sizes, and the
one-line "what changed" summary between two stages of a pipeline.

Read `session.py` first; this module has no state. Colour is decided once per
session (`colour_enabled`) and passed in, so the same functions serve the terminal,
a piped script and the tests.
"""
from __future__ import annotations

import collections
import os
import re

import numpy as np

from ..ir.primitives import primitives_by_name
from ..ir.types import float0

# ANSI styles: dim types, bold primitives, yellow for anything touching a ref.
_STYLE = {"type": "\033[2;36m", "prim": "\033[1m", "ref": "\033[33m",
          "error": "\033[31m", "title": "\033[1;34m", "ok": "\033[32m", "reset": "\033[0m"}



def _is_ref_op(name: str) -> bool:
    """Ref ops are coloured like the `<-` / `+=` sugar."""
    prim = primitives_by_name.get(name)
    return prim is not None and prim.ref_op

_TYPE = re.compile(r"(:)((?:Ref\{)?[a-z]+[0-9]*\[[^\]]*\]\}?~?)")
_PRIM = re.compile(r"(= )([a-z_][a-z0-9_]*)")
_REF_SUGAR = re.compile(r"( <- | \+= )")


def colour_enabled(stream) -> bool:
    """Colour only for a real terminal that can show it, and never under NO_COLOR
    (https://no-color.org), so logs and CI output stay plain."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM", "") in ("", "dumb"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def style(text: str, kind: str, colour: bool) -> str:
    return f"{_STYLE[kind]}{text}{_STYLE['reset']}" if colour else text


def colour_ir(text: str, colour: bool) -> str:
    """IR text with types, primitives and ref effects coloured (unchanged if not `colour`)."""
    if not colour:
        return text

    def prim(match):
        name = match.group(2)
        kind = "ref" if _is_ref_op(name) else "prim"
        return match.group(1) + style(name, kind, True)
    text = _TYPE.sub(lambda m: m.group(1) + style(m.group(2), "type", True), text)
    text = _PRIM.sub(prim, text)
    return _REF_SUGAR.sub(lambda m: style(m.group(1), "ref", True), text)


def format_value(value) -> str:
    """A value as the user should read it: arrays short and NumPy-like."""
    if hasattr(value, "state") and hasattr(value, "value"):   # a reference-evaluator RefBox
        return f"Ref({format_value(value.value)})" + (
            "" if value.state == "live" else f" [{value.state}]")
    try:
        array = np.asarray(value)
    except Exception:  # anything NumPy cannot hold is shown as Python shows it
        return repr(value)
    if array.dtype == float0:   # (bfloat16 and the narrow dtypes are kind 'V' too)
        return f"float0{list(array.shape)}"
    if array.ndim == 0:
        return str(array[()])
    return np.array2string(array, separator=", ", threshold=20, precision=6)


def nbytes(aval) -> int:
    inner = getattr(aval, "inner", aval)
    return int(np.prod(inner.shape, dtype=np.int64)) * np.dtype(inner.dtype).itemsize


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # unreachable; keeps type checkers quiet


# -- what changed between two stages ---------------------------------------------------

def _jaxpr_of(program):
    return getattr(program, "jaxpr", program)


def primitive_counts(program) -> collections.Counter:
    """How many equations of each primitive, nested jaxprs included (a learner
    counts a `cos` inside a `jit` as a `cos`)."""
    counts: collections.Counter = collections.Counter()
    stack = [_jaxpr_of(program)]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            for param in eqn.params.values():
                for sub in (param if isinstance(param, (tuple, list)) else (param,)):
                    if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                        stack.append(_jaxpr_of(sub))
    return counts


def signature(program) -> str:
    jaxpr = _jaxpr_of(program)
    ins = " ".join(v.aval.type_text() for v in jaxpr.invars) or "()"
    outs = " ".join(v.aval.type_text() for v in jaxpr.outvars) or "()"
    return f"({ins}) -> ({outs})"


def change_summary(before, after) -> str:
    """One line saying how `after` differs from `before`: equation count, primitives
    added and removed, and the signature when it changed."""
    old, new = primitive_counts(before), primitive_counts(after)
    parts = []
    added = new - old
    removed = old - new
    if added:
        parts.append(" ".join(f"+{n} {name}" for name, n in sorted(added.items())))
    if removed:
        parts.append(" ".join(f"-{n} {name}" for name, n in sorted(removed.items())))
    line = f"{sum(old.values())} -> {sum(new.values())} equations"
    if parts:
        line += "; " + ", ".join(parts)
    if signature(before) != signature(after):
        line += f"; signature now {signature(after)}"
    return line
