"""`:check EXPR`: run one expression through minijax and through real JAX.

Read `targets.py` first. This is the only REPL module that imports `jax`: JAX is
the oracle of differential testing, and `:check` is a differential test.

The expression is evaluated twice. First in the session's namespace, as typed.
Then in a *mirror* of that namespace in which every minijax name is replaced by
JAX's (`jnp` -> `jax.numpy`, `grad` -> `jax.grad`, ...), every function defined
in the session is rebuilt to look its globals up in the mirror, and every minijax
ref is replaced by a JAX ref holding the contents it had *before* the first run
(the first run may have written it). The two results and the final contents of
every ref are compared with `minijax.testing.assert_trees_match`. Then every
session ref is put back as it was: `:check` observes, it does not advance the
session's state (what each side's run left in a ref is shown in the comparison).

A result whose values and dtype agree but whose *weak type* differs is not called a
disagreement of values: the verdict says so in words (see `_weak_type_note`).
When the two sides disagree, the entries of the known-divergence registry that
match the program -- its text and the functions it calls -- are shown.
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
    notes: list = []         # differences that are not disagreements (weak types)
    restored: list = []      # (name, contents kept, contents the run left) per ref


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
    try:
        minijax_value = eval(code, namespace)
        ref_rows = [(name, np.asarray(minijax.ref.get(ours)), None)
                    for name, ours, _ in mirror.jax_refs]
    finally:
        restored = _restore(refs, snapshots)
    try:
        jax_value = eval(code, jax_namespace)
    except Exception as error:
        return CheckResult(minijax_value, None, [], f"JAX raised {type(error).__name__}: "
                           f"{error}", known_divergences(expr, namespace),
                           restored=restored)
    ref_rows = [(name, ours, np.asarray(theirs[...]))
                for (name, ours, _), (_, _, theirs) in zip(ref_rows, mirror.jax_refs)]
    # Every difference is reported, not just the first: a wrong value and a ref
    # written twice are two findings.
    problems, notes = [], []
    comparisons = [(minijax_value, jax_value, "result")] + [
        (ours, theirs, f"ref {name}") for name, ours, theirs in ref_rows]
    for ours, theirs, what in comparisons:
        try:
            assert_trees_match(ours, theirs, what=what, check_weak_types=False)
        except AssertionError as error:
            problems.append(_first_line(str(error), what))
            continue
        note = _weak_type_note(ours, theirs, what)
        if note:
            notes.append(note)
    problem = "\n".join(problems) or None
    return CheckResult(minijax_value, jax_value, ref_rows, problem,
                       known_divergences(expr, namespace) if problem else [], notes,
                       restored)


def _restore(refs, snapshots) -> list:
    """Put each session ref back as it was before the check; `(name, kept, left)`
    for those the run changed."""
    changed = []
    for name, ref in refs:
        before = snapshots[id(ref)]
        after = np.array(minijax.ref.get(ref))
        if after.shape != before.shape or not np.array_equal(after, before, equal_nan=True):
            changed.append((name, before, after))
            ref[...] = before
    return changed


def _weak_type_note(ours, theirs, what) -> str | None:
    """Words for a weak-type difference between two results that agree otherwise.

    A weak type is the type of a Python scalar (`1.0`) carried into an array: it
    gives way to the other operand's dtype (`weak f32 + bf16` is bf16). Two results
    that differ only there hold the same numbers of the same dtype; they can differ
    only in what a later operation with another dtype would produce."""
    from jax import tree_util
    mismatched = []
    for a, e in zip(tree_util.tree_leaves(ours), tree_util.tree_leaves(theirs)):
        aw, ew = getattr(a, "weak_type", None), getattr(e, "weak_type", None)
        if aw is not None and ew is not None and bool(aw) != bool(ew):
            mismatched.append(bool(aw))
    if not mismatched:
        return None
    weak_side, strong_side = ("minijax's", "JAX's") if mismatched[0] else ("JAX's", "minijax's")
    return (f"{what}: same values and dtype, but {weak_side} is weak-typed and "
            f"{strong_side} is not. A weak type is the type of a Python scalar such "
            f"as 1.0: it gives way to the dtype of what it meets (weak f32 + bf16 is "
            f"bf16), where a strong f32 would promote the bf16 to f32. Only such a "
            f"later mixed-dtype operation could tell the two results apart.")


# Spellings of one transform: an entry about `remat` concerns `checkpoint` too.
_SYNONYMS = {"checkpoint": "remat", "value_and_grad": "grad", "vjp": "grad",
             "fori_loop": "while_loop"}


def program_words(expr: str, namespace: dict, limit: int = 200) -> set:
    """The public names the program uses: those in `expr`, and those the session's
    functions it reaches use (their code's names, nested functions included), plus
    `new_ref` when it reaches a ref."""
    import re
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr))
    queue, seen = list(words), set()
    while queue and len(seen) < limit:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        value = namespace.get(name)
        if _is_minijax_ref(value) or (isinstance(value, (list, tuple))
                                      and any(_is_minijax_ref(v) for v in value)):
            words.add("new_ref")
        fun = getattr(value, "__wrapped__", value)
        code = getattr(fun, "__code__", None)
        if code is None:
            continue
        for cell in getattr(fun, "__closure__", None) or ():
            if _cell_filled(cell) and _is_minijax_ref(cell.cell_contents):
                words.add("new_ref")
        for names in _code_names(code):
            words.add(names)
            queue.append(names)
    return words | {_SYNONYMS[w] for w in words if w in _SYNONYMS}


def _code_names(code) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


# An entry lists the public names a program must use to meet it. Transforms and
# control flow are listed as alternatives (an entry about `grad` or `vjp` of a
# ref); every other name (new_ref, freeze, debug, ...) is needed.
_ALTERNATIVES = (
    {"grad", "jvp", "linearize", "vmap", "jit", "jacfwd", "jacrev", "hessian", "remat"},
    {"cond", "switch", "scan", "while_loop"},
)


def known_divergences(expr: str, namespace: dict | None = None) -> list:
    """The entries of the known-divergence registry (`minijax.divergences`, listed in
    docs/design.md) that match the program: it uses every name the entry needs, one
    of the transforms it lists, and one of the control-flow primitives it lists;
    of those, the ones that name the most of what the program uses. Where JAX is known to contradict its own intent, a disagreement there is JAX's,
    and the entry says why."""
    import importlib
    try:
        module = importlib.import_module("minijax.divergences")
    except ModuleNotFoundError:
        return []
    registry = getattr(module, "DIVERGENCES", None) or getattr(module, "known_divergences", [])
    words = program_words(expr, namespace or {})
    matches = []
    for entry in registry:
        listed = {_SYNONYMS.get(w, w) for w in getattr(entry, "transforms", ()) or ()}
        if not listed:
            continue
        needed = listed - set().union(*_ALTERNATIVES)
        if not needed <= words:
            continue
        if all(not (group & listed) or (group & listed & words) for group in _ALTERNATIVES):
            matches.append((len(listed & words), entry))
    # Of the matching entries, the most specific: those naming most of what is used.
    best = max((n for n, _ in matches), default=0)
    return [entry for n, entry in matches if n == best]
