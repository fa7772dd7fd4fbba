"""The verifier: is a jaxpr well scoped and well typed?

Read `core.py` (Var, Literal, Eqn, Jaxpr) and `primitives.py` (type and effect
rules) first. `verify_jaxpr(jaxpr)` returns None or raises `VerifierError`. It checks:

* scoping and single assignment -- every var is bound exactly once (constvars, then
  invars, then equation outputs, in order) and used only after it is bound, in the
  jaxpr's own scope; outvars are bound. Sub-jaxprs in equation params are closed:
  each is verified in a scope of its own, so using an outer var inside one is an error;
* literals -- rank-0 arrays whose value has the literal's dtype;
* types -- each equation's primitive has a type rule, and the rule, run on the input
  avals and params, gives exactly the declared output avals (shape, dtype, weak type);
* effects -- each equation's effects are exactly what the primitive's effect rule says;
* refs -- a ref is not used after the `freeze` or `free_ref` that consumed it.

The error names the offending equation and shows it with about three equations of
context either side, marked with `>>>`, so the message alone locates the problem.

Tests run this after every pass, on jaxprs of thousands of equations, so the checks
are linear in program size: one pass over the equations, set lookups by var
identity, and each shared sub-jaxpr verified once. Error text is only built on
failure.
"""
from __future__ import annotations

import numpy as np

from .core import Var, Literal, Jaxpr, ClosedJaxpr, jaxprs_in_params
from .primitives import Primitive, type_rules, effects_of, freeze_p, free_ref_p
from .printer import pp_jaxpr
from .trace import MinijaxError
from .types import ShapedArray, RefType, canonical_dtype, aval_of_value

# How many equations of context to show before and after the offending one.
CONTEXT_EQNS = 3


class VerifierError(MinijaxError, TypeError):
    """A jaxpr is ill scoped or ill typed. The message names the equation."""


def verify_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise `VerifierError` unless `jaxpr` is well scoped and well typed."""
    _Verifier().verify(jaxpr, enclosing=())


class _Problem(Exception):
    """Raised inside the checks; turned into a `VerifierError` with context."""

    def __init__(self, message: str, eqn_index: int | None, where: str = "eqn"):
        self.message = message
        self.eqn_index = eqn_index   # None: the problem is in the binders or outvars
        self.where = where           # "binders", "eqn" or "outvars"


# freeze and free_ref consume their ref (input 0): it must not be used afterwards.
_CONSUMING = {freeze_p: "frozen", free_ref_p: "freed"}


class _Verifier:
    def __init__(self):
        # Sub-jaxprs are often shared (one traced function called many times), and
        # jaxprs are immutable, so each is verified once per call. Keyed by identity.
        self.verified: set[int] = set()

    def verify(self, jaxpr, enclosing):
        """`enclosing`: (outer jaxpr, equation index, param name) for each level of
        nesting, outermost first, so an error deep inside can say where it is."""
        if isinstance(jaxpr, ClosedJaxpr):
            self._check_consts(jaxpr, enclosing)
            jaxpr = jaxpr.jaxpr
        if not isinstance(jaxpr, Jaxpr):
            raise VerifierError(f"expected a Jaxpr or ClosedJaxpr, got {type(jaxpr).__name__}")
        if id(jaxpr) in self.verified:
            return
        try:
            self._check_jaxpr(jaxpr, enclosing)
        except _Problem as problem:
            raise VerifierError(_describe(jaxpr, problem, enclosing)) from None
        self.verified.add(id(jaxpr))

    def _check_consts(self, closed, enclosing):
        for i, (var, const) in enumerate(zip(closed.jaxpr.constvars, closed.consts)):
            aval = var.aval
            shape, dtype = getattr(const, "shape", None), getattr(const, "dtype", None)
            if not isinstance(aval, ShapedArray) or shape is None or dtype is None:
                continue  # refs, tracers of unusual kinds: nothing cheap to compare
            if str(dtype).startswith("key<"):  # a jax.Array of keys
                dtype = aval_of_value(const).dtype
            if tuple(shape) != aval.shape or canonical_dtype(dtype) != aval.dtype:
                problem = _Problem(f"const {i} has shape {tuple(shape)} and dtype "
                                   f"{np.dtype(dtype).name}, but its constvar is {_text(aval)}",
                                   None, "binders")
                raise VerifierError(_describe(closed.jaxpr, problem, enclosing))

    def _check_jaxpr(self, jaxpr: Jaxpr, enclosing):
        bound: set[Var] = set()
        consumed: dict[Var, tuple[int, str]] = {}   # ref -> (eqn index, "frozen"/"freed")

        def bind(var, what, eqn_index, where):
            if not isinstance(var, Var):
                raise _Problem(f"{what} must be a Var, got {var!r}", eqn_index, where)
            if var in bound:
                raise _Problem(f"{what} rebinds a variable that is already bound "
                               f"(each variable is bound exactly once)", eqn_index, where)
            bound.add(var)

        for i, var in enumerate(jaxpr.constvars):
            bind(var, f"constvar {i}", None, "binders")
        for i, var in enumerate(jaxpr.invars):
            bind(var, f"invar {i}", None, "binders")

        def check_use(atom, what, eqn_index, where):
            if isinstance(atom, Literal):
                _check_literal(atom, what, eqn_index, where)
            elif not isinstance(atom, Var):
                raise _Problem(f"{what} must be a Var or a Literal, got {atom!r}",
                               eqn_index, where)
            elif atom not in bound:
                raise _Problem(f"{what} is used before it is bound (or is not bound in "
                               f"this jaxpr's scope; sub-jaxprs are closed)", eqn_index, where)
            elif atom in consumed:
                index, how = consumed[atom]
                raise _Problem(f"{what} is a ref used after it was {how} by equation "
                               f"{index}", eqn_index, where)

        for i, eqn in enumerate(jaxpr.eqns):
            prim = eqn.primitive
            if not isinstance(prim, Primitive) or prim not in type_rules:
                raise _Problem(f"{prim!r} is not a primitive with a type rule", i)
            for k, atom in enumerate(eqn.inputs):
                check_use(atom, f"input {k} of {prim.name}", i, "eqn")
            in_avals = [atom.aval for atom in eqn.inputs]
            self._check_types(prim, in_avals, eqn, i)
            for k, var in enumerate(eqn.outputs):
                bind(var, f"output {k} of {prim.name}", i, "eqn")
            how = _CONSUMING.get(prim)
            if how is not None and eqn.inputs and isinstance(eqn.inputs[0], Var):
                consumed[eqn.inputs[0]] = (i, how)
            for name, sub in _sub_jaxprs(eqn.params):
                self.verify(sub, enclosing + ((jaxpr, i, name),))

        for k, atom in enumerate(jaxpr.outvars):
            check_use(atom, f"outvar {k}", None, "outvars")

    def _check_types(self, prim, in_avals, eqn, i):
        try:
            out_avals = type_rules[prim](*in_avals, **eqn.params)
        except Exception as e:  # noqa: BLE001 -- any complaint of the rule is the verdict
            raise _Problem(f"ill-typed: {e}", i) from None
        if len(out_avals) != len(eqn.outputs):
            raise _Problem(f"binds {len(eqn.outputs)} outputs but {prim.name} produces "
                           f"{len(out_avals)}", i)
        for k, (var, expected) in enumerate(zip(eqn.outputs, out_avals)):
            if isinstance(var, Var) and var.aval != expected:
                raise _Problem(f"output {k} is declared {_exact(var.aval)} but {prim.name} "
                               f"produces {_exact(expected)}", i)
        expected_effects = effects_of(prim, in_avals, eqn.params)
        if eqn.effects != expected_effects:
            raise _Problem(f"declares effects {_effects(eqn.effects)} but {prim.name} has "
                           f"effects {_effects(expected_effects)}", i)


def _check_literal(literal, what, eqn_index, where):
    aval, value = literal.aval, literal.value
    if not isinstance(aval, ShapedArray) or aval.shape != ():
        raise _Problem(f"{what} is a literal of type {_text(aval)}; literals must be rank-0 "
                       f"arrays", eqn_index, where)
    if getattr(value, "dtype", None) != aval.dtype or np.shape(value) != ():
        raise _Problem(f"{what} is a literal {value!r} whose value is not a rank-0 "
                       f"{aval.dtype.name}", eqn_index, where)


def _sub_jaxprs(params):
    """(param name, sub-jaxpr) pairs, following `core.jaxprs_in_params`."""
    for name, value in params.items():
        for sub in jaxprs_in_params({name: value}):
            yield name, sub


def _exact(aval) -> str:
    return aval.type_text(exact=True) if isinstance(aval, (ShapedArray, RefType)) else repr(aval)


# The verifier shows the program in its text form, so its messages name types that way.
def _text(aval) -> str:
    return aval.type_text() if isinstance(aval, (ShapedArray, RefType)) else str(aval)


def _effects(effects) -> str:
    return "{" + ", ".join(sorted(map(str, effects))) + "}"


# -- the error message -----------------------------------------------------------------
#
# Built only on failure, so it may print the whole jaxpr: the window then uses the
# printer's own text (and names), exactly what `print(jaxpr)` shows.

# An equation whose text is longer than this (a call with a big body) is cut short.
MAX_EQN_LINES = 12


def _describe(jaxpr, problem: _Problem, enclosing) -> str:
    if problem.eqn_index is not None:
        eqn = jaxpr.eqns[problem.eqn_index]
        name = getattr(eqn.primitive, "name", repr(eqn.primitive))
        head = f"equation {problem.eqn_index} ({name}): {problem.message}"
    else:
        head = f"{problem.where}: {problem.message}"
    lines = [head, *_window(jaxpr, problem)]
    for outer, index, param in reversed(enclosing):
        lines.append(f"inside param {param!r} of equation {index} of the enclosing jaxpr:")
        lines.extend(_window(outer, _Problem("", index), context=0, max_eqn_lines=3))
    return "\n".join(lines)


def _window(jaxpr, problem: _Problem, context: int = CONTEXT_EQNS,
            max_eqn_lines: int = MAX_EQN_LINES) -> list[str]:
    """The jaxpr's text around the problem: header, ~3 equations either side of the
    marked one, footer. Elided stretches are shown as `...`."""
    header, eqn_texts, footer = _listing(jaxpr)
    n = len(eqn_texts)
    if problem.where == "binders":
        lo, hi, marked = 0, min(n, context), None
    elif problem.where == "outvars":
        lo, hi, marked = max(0, n - context), n, None
    else:
        marked = problem.eqn_index
        lo, hi = max(0, marked - context), min(n, marked + context + 1)

    def show(text, here):
        text_lines = text.split("\n")
        if len(text_lines) > max_eqn_lines:   # keep the head and the closing line
            text_lines = [*text_lines[:max_eqn_lines - 2], " " * 10 + "...", text_lines[-1]]
        return [(">>> " if here else "    ") + text_lines[0],
                *("    " + line for line in text_lines[1:])]

    def elided(count):
        return [f"            ... ({count} equation{'s' if count > 1 else ''})"] if count else []

    lines = show(header, problem.where == "binders") + elided(lo)
    for i in range(lo, hi):
        lines += show(eqn_texts[i], i == marked)
    return lines + elided(n - hi) + show(footer, problem.where == "outvars")


def _listing(jaxpr) -> tuple[str, list[str], str]:
    """`print(jaxpr)` cut into its header, one text per equation, and its footer.

    The printer puts each top-level equation at a 4-space indent and everything
    nested in it deeper (or on a closing `]` line). A jaxpr too broken to print, or
    whose text does not cut cleanly, is shown by `_fallback_listing` instead."""
    try:
        lines = pp_jaxpr(jaxpr).split("\n")
    except Exception:  # noqa: BLE001 -- the printer may choke on the very defect found
        return _fallback_listing(jaxpr)
    eqn_texts: list[str] = []
    for line in lines[1:-1]:
        starts_eqn = line.startswith("    ") and line[4:5] not in (" ", "]")
        if starts_eqn or not eqn_texts:
            eqn_texts.append(line)
        else:
            eqn_texts[-1] += "\n" + line
    if len(eqn_texts) != len(jaxpr.eqns):
        return _fallback_listing(jaxpr)
    return lines[0], eqn_texts, lines[-1]


def _fallback_listing(jaxpr) -> tuple[str, list[str], str]:
    """A plain rendering that survives any defect: vars named a, b, ... in binding
    order, params by repr, sub-jaxprs summarised."""
    names: dict[int, str] = {}

    def name(var):
        if not isinstance(var, Var):
            return repr(var)
        if id(var) not in names:
            names[id(var)] = _letters(len(names))
        return names[id(var)]

    def atom(a):
        return f"{a.value!s}:{_text(a.aval)}" if isinstance(a, Literal) else name(a)

    def binder(var):
        return f"{name(var)}:{_text(getattr(var, 'aval', '?'))}"

    def param(value):
        if isinstance(value, (Jaxpr, ClosedJaxpr)):
            return f"{{ lambda ... {len(value.eqns)} equations }}"
        if isinstance(value, tuple):
            return "(" + ", ".join(map(param, value)) + ")"
        return getattr(value, "name", None) if isinstance(value, np.dtype) else repr(value)

    consts = " ".join(map(binder, jaxpr.constvars))
    header = f"{{ lambda {consts}; {' '.join(map(binder, jaxpr.invars))}. let"
    eqn_texts = []
    for eqn in jaxpr.eqns:
        outs = " ".join(map(binder, eqn.outputs))
        params = " ".join(f"{k}={param(v)}" for k, v in sorted(eqn.params.items()))
        prim = getattr(eqn.primitive, "name", repr(eqn.primitive))
        eqn_texts.append(f"    {outs + ' = ' if outs else ''}{prim}"
                         f"{'[' + params + ']' if params else ''}"
                         + "".join(" " + atom(a) for a in eqn.inputs))
    outs = list(map(atom, jaxpr.outvars))
    footer = f"  in ({outs[0]},) }}" if len(outs) == 1 else f"  in ({', '.join(outs)}) }}"
    return header, eqn_texts, footer


def _letters(i: int) -> str:
    """a, ..., z, ba, bb, ...: JAX's naming scheme."""
    text = ""
    while True:
        text = chr(ord("a") + i % 26) + text
        i //= 26
        if i == 0:
            return text
