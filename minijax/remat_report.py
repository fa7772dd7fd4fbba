"""The remat teaching report: one gradient, taken apart.

Read `transforms/remat.py` first. `remat_report(f, *args)` differentiates `f` at
`args` with minijax's own passes, stopping to keep each stage as a jaxpr:

* `forward`   -- the forward pass: inputs -> (outputs, residuals). This is everything
  that runs before the backward pass starts, every ref effect included;
* `backward`  -- the backward pass: (residuals, output cotangent) -> input cotangents;
* `saved`     -- each residual: type, bytes, and where it came from (the
  `saved_residuals` wording);
* `recomputed` -- the equations the backward pass runs *again*: inside each
  recomputing `remat`, those that do not read a cotangent;
* `effects`   -- for each ref input of `f`, how many reads, writes and accumulations
  each phase performs on it (forward, recomputation, backward). The rule of
  DESIGN.md section 5 makes this `forward: 1 read, 1 write` for a read-modify-write
  ref and zero everywhere else, whatever the policy.

`print(report)` shows it all. The counts are of equations, and every equation of a
program runs once per call of that program.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import numpy as np
from jax import tree_util

from .ad_checkpoint import saved_residuals, aval_text
from .api_util import flatten_fun
from .ir.core import ClosedJaxpr, Literal, ReadEffect, WriteEffect, AccumEffect
from .ir.remat_primitive import remat_p
from .ir.staging import trace_to_jaxpr
from .ir.trace import aval_of
from .ir.types import RefType
from .transforms.dce import dce_jaxpr
from .transforms.linearize import linearize_flat
from .transforms.transpose import transpose_jaxpr

__all__ = ["remat_report", "RematReport", "SavedValue"]


class SavedValue(NamedTuple):
    aval: object
    nbytes: int
    source: str


class RematReport(NamedTuple):
    forward: ClosedJaxpr
    backward: ClosedJaxpr
    saved: list              # SavedValue per residual
    recomputed: list         # equations re-run by the backward pass
    effects: dict            # phase -> {ref input index: Counter(read/write/accumulate)}

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved)

    def __str__(self):
        lines = ["== forward pass (inputs -> outputs, residuals) ==", str(self.forward),
                 "== backward pass (residuals, cotangents -> input cotangents) ==",
                 str(self.backward),
                 f"== saved: {len(self.saved)} values, {self.saved_bytes} bytes =="]
        lines += [f"  {aval_text(s.aval)} ({s.nbytes} B) {s.source}" for s in self.saved]
        lines.append(f"== recomputed in the backward pass: {len(self.recomputed)} "
                     f"equations ==")
        lines += [f"  {_eqn_text(e)}" for e in self.recomputed]
        lines.append("== ref effects per phase (ref input: reads/writes/accumulates) ==")
        for phase, per_ref in self.effects.items():
            text = ", ".join(f"input {i}: {c['read']}/{c['write']}/{c['accumulate']}"
                             for i, c in sorted(per_ref.items())) or "none"
            lines.append(f"  {phase}: {text}")
        return "\n".join(lines)


def _eqn_text(eqn) -> str:
    outs = " ".join(aval_text(v.aval) for v in eqn.outputs)
    return f"{outs} = {eqn.primitive.name}"


def remat_report(f, *args) -> RematReport:
    """The report for `grad`-style differentiation of `f` at `args` (all inputs)."""
    leaves, in_tree = tree_util.tree_flatten((args, {}))
    flat_fun, _ = flatten_fun(f, in_tree)
    linear_cell = []

    def forward(*xs):
        lin = linearize_flat(flat_fun, list(xs))
        linear_cell.append(lin)
        return list(lin.primals_out) + list(lin.linear_jaxpr.consts)
    forward_jaxpr = trace_to_jaxpr(forward, [aval_of(x) for x in leaves])
    linear = linear_cell[0].linear_jaxpr
    # The backward pass with its residuals as leading inputs, pruned to what it needs.
    backward = transpose_jaxpr(linear.jaxpr.__class__(
        (), linear.jaxpr.constvars + linear.jaxpr.invars, linear.jaxpr.eqns,
        linear.jaxpr.outvars),
        [False] * len(linear.jaxpr.constvars) + [True] * len(linear.jaxpr.invars))
    backward = backward if isinstance(backward, ClosedJaxpr) else ClosedJaxpr(backward, [])
    backward = dce_jaxpr(backward).jaxpr
    saved = [SavedValue(aval, _nbytes(aval), source)
             for aval, source in saved_residuals(f, *args)]
    recomputed = _recomputed(linear.jaxpr)
    ref_positions = [i for i, x in enumerate(leaves) if isinstance(aval_of(x), RefType)]
    # The recomputing remats and the backward program are pure by construction (the
    # ref rewrite in transforms/remat.py): they do not even receive a ref. Their rows
    # are zeros, shown so the learner sees the contrast with JAX's double effect.
    effects = {
        "forward": _ref_effects(forward_jaxpr.jaxpr, ref_positions),
        "recomputation": {i: Counter() for i in ref_positions},
        "backward": {i: Counter() for i in ref_positions},
    }
    return RematReport(forward_jaxpr, backward, saved, recomputed, effects)


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _recomputed(linear_jaxpr) -> list:
    """Equations of the recomputing `remat`s that read no tangent: the recomputation.

    Found in the linear program (before transposition), where "reads no tangent" is a
    forward data-flow question: tangents are the program's inputs and whatever is
    computed from them; residuals are everything else."""
    linear = set(linear_jaxpr.invars)
    out = []
    for eqn in linear_jaxpr.eqns:
        flags = [not isinstance(a, Literal) and a in linear for a in eqn.inputs]
        if eqn.primitive is remat_p:
            body = eqn.params["jaxpr"]
            body_linear = {v for v, f in zip(body.invars, flags) if f}
            for e in body.eqns:
                if any(not isinstance(a, Literal) and a in body_linear for a in e.inputs):
                    body_linear.update(e.outputs)
                else:
                    out.append(e)
        if any(flags):
            linear.update(eqn.outputs)
    return out


_KIND = {ReadEffect: "read", WriteEffect: "write", AccumEffect: "accumulate"}


def _ref_effects(jaxpr, ref_positions) -> dict:
    """Reads/writes/accumulates per ref input, counted over the visible effects of each
    top-level equation (a call counts its body's effects on the refs it is passed)."""
    position = {v: i for i, v in enumerate(jaxpr.invars)}
    counts = {i: Counter() for i in ref_positions}
    for eqn in jaxpr.eqns:
        for effect in eqn.effects:
            kind = _KIND.get(type(effect))
            if kind is None:
                continue
            ref = eqn.inputs[effect.input_index]
            i = position.get(ref)
            if i in counts:
                counts[i][kind] += 1
    return counts
