"""The remat teaching report: one gradient, taken apart.

Read `transforms/remat.py` first. `remat_report(f, *args)` differentiates `f` at
`args` with minijax's own passes, stopping to keep each stage as a jaxpr:

* `forward`   -- the forward pass: inputs -> (outputs, residuals). This is everything
  that runs before the backward pass starts, every ref effect included;
* `backward`  -- the backward pass: (residuals, output cotangent) -> input cotangents;
* `saved`     -- each residual: type, bytes, and where it came from (the
  `saved_residuals` wording, source line included);
* `recomputed` -- the equations the backward pass runs *again*: inside each
  recomputing `remat` of the backward program, those that read no cotangent,
  looked for inside loop and branch bodies too. Each is a `Recomputed(eqn, where,
  trips)`: `where` names the loops and branches around it (`scan (length 4)`),
  `trips` how many times it runs per gradient (the product of the enclosing scans'
  lengths; None inside a `while`, whose trip count is known only at run time);
* `effects`   -- for each ref `f` uses, passed as an argument or closed over, how
  many reads, writes and accumulations each phase performs on it: the forward pass,
  the recomputation and the rest of the backward pass. The rule of docs/remat.md
  section 5 makes this `forward: 1 read, 1 write` for a read-modify-write ref and
  nothing anywhere else, whatever the policy.

`print(report)` shows it all; the REPL's `:remat` shows the same sections
(`report.sections()`). Recomputation is counted per iteration of each loop and in
total (x trip count); of a `cond`'s branches only one runs, so the total counts the
largest. Ref effects are counts of equations: an effect inside a loop body counts
once, as one equation of the program.
"""
from __future__ import annotations

import types
from collections import Counter
from typing import NamedTuple

import numpy as np
from jax import tree_util

from .frontend.checkpoint import saved_residuals, aval_text, _arg_names
from .frontend.pytrees import FlatFun
from .ir.core import ClosedJaxpr, Jaxpr, Var, ReadEffect, WriteEffect, AccumEffect
from .ir.control_flow_primitives import cond_p, scan_p, while_p
from .ir.remat_primitive import remat_p
from .ir.staging import trace_to_jaxpr
from .ir.trace import Tracer, aval_of
from .ir.types import RefType
from .transforms.dce import dce_jaxpr
from .transforms.linearize import linearize_flat
from .transforms.transpose import transpose_jaxpr

__all__ = ["remat_report", "RematReport", "SavedValue", "Recomputed", "PHASES"]

PHASES = ("forward", "recomputation", "backward")


class SavedValue(NamedTuple):
    aval: object
    nbytes: int
    source: str


class Recomputed(NamedTuple):
    eqn: object
    where: tuple             # the loops/branches around it, outermost first; () at top
    trips: object            # runs per gradient (int), or None inside a while loop


class RematReport(NamedTuple):
    forward: ClosedJaxpr
    backward: ClosedJaxpr
    saved: list              # SavedValue per residual
    recomputed: list         # Recomputed per equation re-run by the backward pass
    effects: dict            # phase -> {ref name: Counter(read=, write=, accumulate=)}

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved)

    @property
    def recomputed_total(self) -> int:
        """Equation runs the recomputation costs per gradient: each recomputed
        equation times its trip count (the largest branch of a cond; equations inside
        a while loop are not in it, see `recomputed_in_while`)."""
        return _total(self.recomputed)

    @property
    def recomputed_in_while(self) -> int:
        """Recomputed equations inside a while loop, per iteration."""
        return sum(1 for r in self.recomputed if r.trips is None)

    def recomputed_lines(self) -> list:
        """Per place (top level, each loop body, each branch): what is recomputed
        there, once per run of that place, and how many runs per gradient."""
        by_place = {}
        for r in self.recomputed:
            by_place.setdefault(r.where, [Counter(), r.trips])[0][r.eqn.primitive.name] += 1
        lines = []
        for where, (counts, trips) in by_place.items():
            n = sum(counts.values())
            what = ", ".join(f"{k} {name}" for name, k in sorted(counts.items()))
            if not where:
                lines.append(f"top level: {_plural(n, 'equation')} ({what})")
            elif not any(w.startswith(("scan", "while")) for w in where):
                lines.append(f"in {' > '.join(where)}: {_plural(n, 'equation')} ({what})")
            elif trips is None:
                lines.append(f"in {' > '.join(where)}: {n} per iteration, times a trip "
                             f"count known only at run time ({what})")
            else:
                lines.append(f"in {' > '.join(where)}: {n} per iteration x {trips} = "
                             f"{n * trips} ({what})")
        return lines or ["nothing"]

    def sections(self) -> list:
        """`[(title, body), ...]`: body is a jaxpr or a list of text lines. What
        `str(report)` prints and the REPL's `:remat` renders."""
        total = self.recomputed_total
        in_while = self.recomputed_in_while
        title = f"recomputed in the backward pass: {_plural(total, 'equation run')}"
        if in_while:
            title += f" + {in_while} per iteration of a while loop"
        width = max(len(phase) for phase in PHASES) + 1
        return [
            ("forward pass (inputs -> outputs, residuals)", self.forward),
            ("backward pass (residuals, cotangents -> input cotangents)", self.backward),
            (f"saved: {_plural(len(self.saved), 'value')}, {self.saved_bytes} bytes",
             [f"{aval_text(s.aval)} ({s.nbytes} B) {s.source}" for s in self.saved]),
            (title, self.recomputed_lines()),
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
    cotangents = backward.jaxpr.invars[n_res:]
    for eqn, phase, refs in _backward_phases(backward.jaxpr, cotangents, backward_refs):
        _count(eqn, refs, effects[phase])
    recomputed = list(_recomputation(backward.jaxpr, set(cotangents)))
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


# -- recomputation, inside loops and branches -----------------------------------------------

def _total(recomputed) -> int:
    """Runs per gradient; of the branches of one cond only the largest counts."""
    branches = {}            # (where of the cond, cond index) -> {branch: runs}
    total = 0
    for r in recomputed:
        if r.trips is None:
            continue
        cond_at = next((i for i, w in enumerate(r.where) if w.startswith("branch ")), None)
        if cond_at is None:
            total += r.trips
        else:
            # "branch k of cond (equation i)": the cond is the text after the branch.
            branch = r.where[cond_at]
            key = r.where[:cond_at] + (branch.split(" of ", 1)[1],)
            per = branches.setdefault(key, {})
            per[branch] = per.get(branch, 0) + r.trips
    return total + sum(max(per.values()) for per in branches.values())


def _sub_bodies(eqn):
    """`(body, inputs, trips, label, carries)` for each jaxpr `eqn` runs: `inputs`
    the atoms its invars receive, `trips` how often per run of `eqn` (None: run
    time), `label` the place's name (None: a call, transparent), `carries` the
    (start, count) of the loop carries among the body's inputs."""
    params = eqn.params
    if eqn.primitive is scan_p:
        yield (params["jaxpr"], list(eqn.inputs), params["length"],
               f"scan of length {params['length']}",
               (params["num_consts"], params["num_carry"]))
    elif eqn.primitive is while_p:
        nc = params["cond_nconsts"]
        yield (params["body_jaxpr"], list(eqn.inputs[nc:]), None, "while",
               (params["body_nconsts"], len(params["body_jaxpr"].outvars)))
    elif eqn.primitive is cond_p:
        for k, branch in enumerate(params["branches"]):
            yield branch, list(eqn.inputs[1:]), 1, f"branch {k} of cond", (0, 0)
    else:
        for value in params.values():
            body = value.jaxpr if isinstance(value, ClosedJaxpr) else value
            if isinstance(body, Jaxpr) and len(body.invars) == len(eqn.inputs):
                yield body, list(eqn.inputs), 1, None, (0, 0)


def _recomputation(jaxpr, dependent, recomputing=False, where=(), trips=1):
    """`Recomputed` for each equation of the backward program that re-runs forward
    work: inside a recomputing `remat`, an equation that reads no cotangent (directly
    or through earlier equations). Loop and branch bodies are looked into, with the
    cotangent-dependence of their inputs (and of a scan's carries, to a fixpoint)."""
    dependent = set(dependent)
    for position, eqn in enumerate(jaxpr.eqns):
        reads_cotangent = any(type(a) is Var and a in dependent for a in eqn.inputs)
        is_recomputing_remat = eqn.primitive is remat_p and eqn.params["differentiated"]
        bodies = list(_sub_bodies(eqn))
        if bodies:
            inner_recomputing = recomputing or is_recomputing_remat
            for body, inputs, body_trips, label, carries in bodies:
                inner = {b for a, b in zip(inputs, body.invars)
                         if type(a) is Var and a in dependent}
                inner = _carry_fixpoint(body, inner, *carries)
                yield from _recomputation(
                    body, inner, inner_recomputing,
                    where + ((f"{label} (equation {position})",) if label else ()),
                    None if trips is None or body_trips is None else trips * body_trips)
        elif recomputing and not reads_cotangent:
            yield Recomputed(eqn, where, trips)
        if reads_cotangent:
            dependent.update(eqn.outputs)


def _carry_fixpoint(body, dependent, start, num_carry) -> set:
    """A loop carry that comes out cotangent-dependent goes in so the next time."""
    carry_in = body.invars[start:start + num_carry]
    while True:
        reached = set(dependent)
        for eqn in body.eqns:
            if any(type(a) is Var and a in reached for a in eqn.inputs):
                reached.update(eqn.outputs)
        grown = {i for i, o in zip(carry_in, body.outvars[:num_carry])
                 if type(o) is Var and o in reached} - dependent
        if not grown:
            return dependent
        dependent = dependent | grown
