"""The remat teaching report: one gradient, taken apart.

Read `transforms/remat.py` first. `remat_report(f, *args)` differentiates `f` at
`args` with minijax's own passes, stopping to keep each stage as a jaxpr:

* `forward`   -- the forward pass: inputs -> (outputs, residuals). This is everything
  that runs before the backward pass starts, every ref effect included;
* `backward`  -- the backward pass: (residuals, output cotangent) -> input cotangents;
* `saved`     -- each residual: type, bytes, and where it came from (the
  `saved_residuals` wording, source line included);
* `recomputed` -- the equations the backward pass runs *again*: inside each
  recomputing `remat` of the backward program, those that read no cotangent;
* `effects`   -- for each ref `f` uses, passed as an argument or closed over, how
  many reads, writes and accumulations each phase performs on it: the forward pass,
  the recomputation and the rest of the backward pass. The rule of docs/remat.md
  section 5 makes this `forward: 1 read, 1 write` for a read-modify-write ref and
  nothing anywhere else, whatever the policy.

`print(report)` shows it all; the REPL's `:remat` shows the same sections
(`report.sections()`). The counts are of equations, and every equation of a program
runs once per call of that program (an effect inside a loop body counts once).
"""
from __future__ import annotations

import types
from collections import Counter
from typing import NamedTuple

import numpy as np
from jax import tree_util

from .ad_checkpoint import saved_residuals, aval_text, _arg_names
from .frontend.pytrees import FlatFun
from .ir.core import ClosedJaxpr, Jaxpr, Var, ReadEffect, WriteEffect, AccumEffect
from .ir.remat_primitive import remat_p
from .ir.staging import trace_to_jaxpr
from .ir.trace import Tracer, aval_of
from .ir.types import RefType
from .transforms.dce import dce_jaxpr
from .transforms.linearize import linearize_flat
from .transforms.transpose import transpose_jaxpr

__all__ = ["remat_report", "RematReport", "SavedValue", "PHASES"]

PHASES = ("forward", "recomputation", "backward")


class SavedValue(NamedTuple):
    aval: object
    nbytes: int
    source: str


class RematReport(NamedTuple):
    forward: ClosedJaxpr
    backward: ClosedJaxpr
    saved: list              # SavedValue per residual
    recomputed: list         # equations re-run by the backward pass
    effects: dict            # phase -> {ref name: Counter(read=, write=, accumulate=)}

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved)

    def sections(self) -> list:
        """`[(title, body), ...]`: body is a jaxpr or a list of text lines. What
        `str(report)` prints and the REPL's `:remat` renders."""
        n = len(self.recomputed)
        counts = Counter(e.primitive.name for e in self.recomputed)
        width = max(len(phase) for phase in PHASES) + 1
        return [
            ("forward pass (inputs -> outputs, residuals)", self.forward),
            ("backward pass (residuals, cotangents -> input cotangents)", self.backward),
            (f"saved: {_plural(len(self.saved), 'value')}, {self.saved_bytes} bytes",
             [f"{aval_text(s.aval)} ({s.nbytes} B) {s.source}" for s in self.saved]),
            (f"recomputed in the backward pass: {_plural(n, 'equation')}",
             [", ".join(f"{k} {name}" for name, k in sorted(counts.items())) or "nothing"]),
            ("ref effects per phase",
             [f"{phase + ':':<{width}} {_effects_text(self.effects[phase])}"
              for phase in PHASES]),
        ]

    def __str__(self):
        lines = []
        for title, body in self.sections():
            lines.append(f"== {title} ==")
            lines += [str(body)] if not isinstance(body, list) else [f"  {t}" for t in body]
        return "\n".join(lines)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _effects_text(per_ref: dict) -> str:
    parts = []
    for name, counts in per_ref.items():
        done = [_plural(counts[kind], kind) for kind in ("read", "write", "accumulate")
                if counts[kind]]
        if done:
            parts.append(f"{name}: {', '.join(done)}")
    return "; ".join(parts) or "none"


def remat_report(f, *args, **kwargs) -> RematReport:
    """The report for `grad`-style differentiation of `f` at `args` (all inputs)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    forward_jaxpr, backward, linear = gradient_stages(f, leaves, in_tree)
    n_res = len(linear.jaxpr.constvars)
    saved = [SavedValue(aval, _nbytes(aval), source)
             for aval, source in saved_residuals(f, *args, **kwargs)]

    # Every ref the program touches is a value it received: an input leaf, or a const
    # of the traced forward pass (a closed-over ref), or -- never, by the rule of
    # docs/remat.md section 5, but counted if it happened -- a residual of the backward.
    names = _ref_names(f, args, kwargs, leaves, forward_jaxpr.consts)
    effects = {phase: {name: Counter() for name in names.values()} for phase in PHASES}
    forward_refs = _named(forward_jaxpr.jaxpr.constvars, forward_jaxpr.consts, names)
    forward_refs.update(_named(forward_jaxpr.jaxpr.invars, leaves, names))
    for eqn in forward_jaxpr.jaxpr.eqns:
        _count(eqn, forward_refs, effects["forward"])
    backward_refs = _named(backward.jaxpr.constvars, backward.consts, names)
    backward_refs.update(_named(backward.jaxpr.invars[:n_res], linear.consts, names))
    recomputed = []
    cotangents = backward.jaxpr.invars[n_res:]
    for eqn, phase, refs in _backward_phases(backward.jaxpr, cotangents, backward_refs):
        if phase == "recomputation":
            recomputed.append(eqn)
        _count(eqn, refs, effects[phase])
    return RematReport(forward_jaxpr, backward, saved, recomputed, effects)


def gradient_stages(f, leaves, in_tree):
    """`(forward, backward, linear)`: the forward pass (inputs -> outputs, residuals),
    the backward pass (residuals, output cotangents -> input cotangents, pruned) as
    closed jaxprs, and the linear jaxpr they come from (its consts the residuals)."""
    flat_fun = FlatFun(f, in_tree, kwargs_in_tree=True)
    linear_cell = []

    def forward(*xs):
        lin = linearize_flat(flat_fun, list(xs))
        linear_cell.append(lin)
        return list(lin.primals_out) + list(lin.linear_jaxpr.consts)
    forward_jaxpr = trace_to_jaxpr(forward, [aval_of(x) for x in leaves])
    linear = linear_cell[0].linear_jaxpr
    # The backward pass with its residuals as leading inputs, pruned to what it needs.
    n_res = len(linear.jaxpr.constvars)
    backward = transpose_jaxpr(
        Jaxpr((), linear.jaxpr.constvars + linear.jaxpr.invars, linear.jaxpr.eqns,
              linear.jaxpr.outvars),
        [False] * n_res + [True] * len(linear.jaxpr.invars))
    backward = backward if isinstance(backward, ClosedJaxpr) else ClosedJaxpr(backward, [])
    return forward_jaxpr, dce_jaxpr(backward).jaxpr, linear


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


# -- naming the refs ----------------------------------------------------------------------------

def _is_ref_value(x) -> bool:
    return not isinstance(x, Tracer) and isinstance(aval_of(x), RefType)


def _ref_names(f, args, kwargs, leaves, consts) -> dict:
    """id(ref) -> how the report names it: the argument's name, or the name it is
    closed over by (`calls (closed over)`), found in `f`'s closure and globals."""
    names = {}
    arg_names = _arg_names(f, args, kwargs)
    for i, leaf in enumerate(leaves):
        if _is_ref_value(leaf):
            name = arg_names[i] if i < len(arg_names) and arg_names[i] else f"argument {i}"
            names.setdefault(id(leaf), name)
    free = _free_names(f)
    unnamed = 0
    for value in consts:
        if _is_ref_value(value) and id(value) not in names:
            name = free.get(id(value))
            if name is None:
                name, unnamed = f"ref {unnamed}", unnamed + 1
            names[id(value)] = f"{name} (closed over)"
    return names


def _free_names(f, limit: int = 100) -> dict:
    """id(value) -> name, for the values `f` reads from its closure cells and its
    globals, and those of the functions it reaches that way (`f` closing over a
    scan body closing over the ref), nearest first."""
    found, seen, queue = {}, set(), [f]
    while queue and len(seen) < limit:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        reached = []
        code = getattr(fn, "__code__", None)
        if code is not None:
            for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
                try:
                    reached.append((name, cell.cell_contents))
                except ValueError:       # an empty cell
                    pass
            module = getattr(fn, "__globals__", {})
            reached += [(name, module[name]) for name in code.co_names if name in module]
        if getattr(fn, "__wrapped__", None) is not None:
            reached.append((None, fn.__wrapped__))
        for name, value in reached:
            if name is not None:
                found.setdefault(id(value), name)
            if isinstance(value, types.FunctionType) or hasattr(value, "__wrapped__"):
                queue.append(value)
    return found


def _named(binders, values, names) -> dict:
    """binder var -> ref name, for the binders whose value is a named ref."""
    return {v: names[id(x)] for v, x in zip(binders, values)
            if id(x) in names and _is_ref_value(x)}


# -- counting -----------------------------------------------------------------------------------

_KIND = {ReadEffect: "read", WriteEffect: "write", AccumEffect: "accumulate"}


def _count(eqn, refs: dict, counts: dict):
    """Add `eqn`'s visible effects on the named refs (a call's or a loop's count the
    effects of its body on the refs it is passed, once)."""
    for effect in eqn.effects:
        kind = _KIND.get(type(effect))
        if kind is None:
            continue
        name = refs.get(eqn.inputs[effect.input_index])
        if name is not None:
            counts[name][kind] += 1


def _backward_phases(jaxpr, cotangents, refs, recomputing=False):
    """`(eqn, phase, refs)` for each equation of the backward program, looking inside
    the recomputing `remat`s: there, an equation that reads no cotangent (directly or
    through earlier equations) is recomputation; everything else is backward."""
    dependent = set(cotangents)
    for eqn in jaxpr.eqns:
        reads_cotangent = any(type(a) is Var and a in dependent for a in eqn.inputs)
        if eqn.primitive is remat_p and eqn.params["differentiated"]:
            body = eqn.params["jaxpr"]
            pairs = list(zip(eqn.inputs, body.invars))
            yield from _backward_phases(
                body, [b for a, b in pairs if type(a) is Var and a in dependent],
                {b: refs[a] for a, b in pairs if type(a) is Var and a in refs}, True)
        else:
            phase = "recomputation" if recomputing and not reads_cotangent else "backward"
            yield eqn, phase, refs
        if reads_cotangent:
            dependent.update(eqn.outputs)
