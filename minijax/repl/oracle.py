"""`:check EXPR`: run one expression through minijax and through real JAX.

Read `targets.py` first. This is the only REPL module that imports `jax`: JAX is
the oracle of differential testing, and `:check` is a differential test.

The expression is evaluated twice. First in the session's namespace, as typed.
Then in a *mirror* of that namespace in which every minijax name is replaced by
JAX's (`jnp` -> `jax.numpy`, `grad` -> `jax.grad`, ...), every function defined
in the session is rebuilt to look its globals up in the mirror, and every minijax
ref is replaced by a JAX ref holding the contents it had *before* the first run
(the first run may have written it). The two results and the final contents of
every ref are compared with `minijax.testing.assert_trees_match`.
"""
from __future__ import annotations

import types
from typing import NamedTuple

import numpy as np

import minijax
from minijax.testing import assert_trees_match


class CheckResult(NamedTuple):
    minijax_value: object
    jax_value: object
    refs: list               # (name, minijax contents, jax contents)
    problem: str | None      # None when they agree
    divergences: list        # registry entries that may explain a disagreement


def _is_minijax_ref(value) -> bool:
    return isinstance(value, minijax.Ref)


def _jax_counterpart(value, jax):
    """JAX's object of the same public name as a minijax module or function, or None."""
    if isinstance(value, types.ModuleType) and value.__name__.startswith("minijax"):
        import importlib
        try:
            return importlib.import_module("jax" + value.__name__[len("minijax"):])
        except ImportError:
            return None
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if module.startswith("minijax") and name and callable(value):
        for namespace in (jax, jax.numpy, jax.lax, getattr(jax, "ref", None)):
            if namespace is not None and getattr(namespace, name, None) is not None \
                    and getattr(minijax_namespace_of(namespace), name, None) is value:
                return getattr(namespace, name)
    return None


def minijax_namespace_of(jax_module):
    """The minijax module that mirrors a jax module (`jax.numpy` -> `minijax.numpy`)."""
    import importlib
    try:
        return importlib.import_module("minijax" + jax_module.__name__[len("jax"):])
    except ImportError:
        return None


class _Mirror:
    """Builds the JAX-side copy of a namespace, object by object, once each."""

    def __init__(self, namespace: dict, ref_snapshots: dict):
        import jax
        self.jax = jax
        self.source = namespace
        self.snapshots = ref_snapshots       # id(minijax ref) -> contents before the run
        self.done: dict = {}
        self.globals: dict = {}
        self.jax_refs: list = []             # (name, minijax ref, jax ref)

    def build(self) -> dict:
        for name, value in self.source.items():
            self.globals[name] = self.convert(value, name)
        return self.globals

    def convert(self, value, name="?"):
        key = id(value)
        if key in self.done:
            return self.done[key]
        out = self._convert(value, name)
        self.done[key] = out
        return out

    def _convert(self, value, name):
        jax = self.jax
        if value is minijax:
            return jax
        if _is_minijax_ref(value):
            contents = self.snapshots.get(id(value), np.asarray(minijax.ref.get(value)))
            ref = jax.new_ref(np.array(contents))
            self.jax_refs.append((name, value, ref))
            return ref
        counterpart = _jax_counterpart(value, jax)
        if counterpart is not None:
            return counterpart
        if type(value).__module__.startswith("minijax") and callable(
                getattr(value, "__wrapped__", None)):
            # A jitted session function: jit only changes how it runs, not what it
            # computes, so JAX's side calls the mirrored Python function under jax.jit.
            return jax.jit(self.convert(value.__wrapped__, name))
        if isinstance(value, types.FunctionType) and value.__globals__ is self.source:
            return self._function(value)
        if isinstance(value, (list, tuple)) and any(_is_minijax_ref(v) for v in value):
            return type(value)(self.convert(v) for v in value)
        return value

    def _function(self, fun: types.FunctionType):
        closure = None
        if fun.__closure__:
            closure = tuple(types.CellType(self.convert(cell.cell_contents))
                            if _cell_filled(cell) else cell for cell in fun.__closure__)
        copy = types.FunctionType(fun.__code__, self.globals, fun.__name__,
                                  fun.__defaults__, closure)
        copy.__kwdefaults__ = fun.__kwdefaults__
        self.done[id(fun)] = copy   # before converting defaults: recursion ends here
        if fun.__defaults__:
            copy.__defaults__ = tuple(self.convert(d) for d in fun.__defaults__)
        return copy


def _cell_filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _first_line(message: str, what: str) -> str:
    """NumPy's long "Not equal to tolerance" report, cut to what a reader needs."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = lines[0] if lines else "differs"
    if first.startswith("Not equal to tolerance"):
        worst = next((l for l in lines if l.startswith("Max absolute")), "")
        return f"{what}: values differ" + (f" ({worst[:1].lower()}{worst[1:]})" if worst else "")
    return first


def _all_refs(namespace: dict) -> list:
    """(name, ref) for every minijax ref the session can reach by name."""
    out = []
    for name, value in namespace.items():
        if _is_minijax_ref(value):
            out.append((name, value))
        elif isinstance(value, (list, tuple)):
            out.extend((f"{name}[{i}]", v) for i, v in enumerate(value) if _is_minijax_ref(v))
    return out


def run_check(expr: str, namespace: dict) -> CheckResult:
    """Evaluate `expr` with minijax and with JAX and compare. Raises what minijax
    raises; a JAX-side exception is reported as the disagreement."""
    code = compile(expr, "<check>", "eval")
    refs = _all_refs(namespace)
    snapshots = {id(ref): np.array(minijax.ref.get(ref)) for _, ref in refs}
    mirror = _Mirror(namespace, snapshots)
    jax_namespace = mirror.build()
    minijax_value = eval(code, namespace)
    try:
        jax_value = eval(code, jax_namespace)
    except Exception as error:
        return CheckResult(minijax_value, None, [], f"JAX raised {type(error).__name__}: "
                           f"{error}", known_divergences(expr))
    ref_rows = [(name, np.asarray(minijax.ref.get(ours)), np.asarray(theirs[...]))
                for name, ours, theirs in mirror.jax_refs]
    # Every difference is reported, not just the first: a wrong value and a ref
    # written twice are two findings.
    problems = []
    comparisons = [(minijax_value, jax_value, "result", True)] + [
        (ours, theirs, f"ref {name}", False) for name, ours, theirs in ref_rows]
    for ours, theirs, what, weak in comparisons:
        try:
            assert_trees_match(ours, theirs, what=what, check_weak_types=weak)
        except AssertionError as error:
            problems.append(_first_line(str(error), what))
    problem = "\n".join(problems) or None
    return CheckResult(minijax_value, jax_value, ref_rows, problem,
                       known_divergences(expr) if problem else [])


# Spellings of one transform: an entry about `remat` concerns `checkpoint` too.
_SYNONYMS = {"checkpoint": "remat", "value_and_grad": "grad", "vjp": "grad"}


def known_divergences(expr: str) -> list:
    """The entries of the known-divergence registry (`minijax.divergences`, design
    section 6) that best match what `expr` uses: those sharing the most words with
    it, a word being a transform the entry lists or a word of the entry's name. Where
    JAX is known to contradict its own intent, a disagreement there is JAX's, and
    the entry says why; the closest entries are the ones worth reading."""
    import importlib
    import re
    try:
        module = importlib.import_module("minijax.divergences")
    except ModuleNotFoundError:
        return []
    registry = getattr(module, "DIVERGENCES", None) or getattr(module, "known_divergences", [])
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr))
    words |= {_SYNONYMS[w] for w in words if w in _SYNONYMS}
    overlaps = []
    for entry in registry:
        keys = set(getattr(entry, "transforms", ()) or ()) | set(entry.name.split("_"))
        overlaps.append(len(words & keys))
    best = max(overlaps, default=0)
    return [entry for entry, n in zip(registry, overlaps) if best and n == best]
