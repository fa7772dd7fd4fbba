"""Liveness: how many bytes a program holds at each equation, from its IR alone.

A value is *live* from the equation that makes it to the last equation that reads
it (a program output: to the end). Walking the equations in order and summing the
sizes of the live values gives the program's memory over time; its maximum is the
*peak*. This is the model XLA's buffer assignment starts from; on top of it the
analysis models XLA's fusion (which never materialises some values) and in-place
reuse (an output shares the buffer of an input that dies where it is made -- above
all a loop's carry, which would otherwise be counted twice, going in and coming
out). What it does not model is XLA's scheduler reordering equations to shorten
lifetimes, where minijax's number is higher.

A program here is a sequence of *stages* run one after the other (the forward and
the backward pass of a gradient), each a jaxpr; `links` say which inputs of a later
stage are outputs of an earlier one (the residuals), so a residual is one value,
live from where the forward pass makes it to where the backward pass last reads it.

Values are classified as `argument` (the program's inputs and constants: held by
the caller), `output` (the final results: XLA's output buffers) or `temp`
(everything else: what XLA's `memory_analysis().temp_size_in_bytes` measures). An
equation with bodies (a loop, a call, a remat) adds, while it runs, the peak of the
temporaries inside its largest body (a loop body's temporaries are reused from one
iteration to the next; the stacked outputs of a `scan` are outputs of the
equation, live like any value).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..ir.core import Jaxpr, Var
from ..ir.types import ShapedArray


def nbytes(aval) -> int:
    if not isinstance(aval, ShapedArray):
        return 0
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


class Value(NamedTuple):
    aval: object
    nbytes: int
    kind: str          # "argument" | "output" | "temp" | "fused" (never in memory)
    source: str        # what made it
    start: int         # first step it is live at (-1: before the program)
    end: int           # last step it is live at


class Step(NamedTuple):
    phase: str
    label: str         # the equation, in a few words
    live_bytes: int    # everything live, arguments and outputs included
    temp_bytes: int    # temporaries live, plus the inside of the equation's bodies


class Liveness(NamedTuple):
    steps: list
    values: list

    @property
    def peak_step(self) -> int:
        return max(range(len(self.steps)), key=lambda t: self.steps[t].temp_bytes,
                   default=-1)

    @property
    def peak_temp_bytes(self) -> int:
        return max((s.temp_bytes for s in self.steps), default=0)

    @property
    def peak_live_bytes(self) -> int:
        return max((s.live_bytes for s in self.steps), default=0)

    def live_at(self, t: int) -> list:
        """The values live at step `t`, largest first."""
        return sorted((v for v in self.values if v.start <= t <= v.end),
                      key=lambda v: -v.nbytes)


# Equations whose result XLA computes into a buffer of its own: the rest (elementwise
# arithmetic, broadcasts, converts, reshapes, slices, selects...) XLA *fuses* into
# the kernel of the equation that reads them, and never materialises.
MATERIALIZED = frozenset({
    "dot_general", "conv_general_dilated", "reduce_sum", "reduce_prod", "reduce_max",
    "reduce_min", "reduce_and", "reduce_or", "argmax", "argmin", "cumsum", "cumprod",
    "cummax", "cummin", "sort", "gather", "scatter", "scatter_add", "scatter_mul",
    "scatter_min", "scatter_max", "dynamic_update_slice", "scan", "while", "cond",
    "remat", "jit", "custom_jvp_call", "custom_vjp_call", "custom_lin", "debug_print",
    "debug_callback", "optimization_barrier"})
# Calls whose body is run once, in place: analysed as part of the enclosing program.
INLINED = frozenset({"remat", "jit"})
# ...and the readers a fusible producer can be fused into (XLA's loop and input fusion).
FUSING_READERS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                            "reduce_and", "reduce_or", "argmax", "argmin"})


def is_materialized(eqn) -> bool:
    """Whether XLA gives `eqn`'s result a buffer of its own. A `dot_general` that
    contracts nothing (an outer product) is an elementwise multiply of broadcasts to
    XLA's algebraic simplifier, so it fuses like one."""
    if eqn.primitive.name == "dot_general":
        (contract, _), (batch, _) = eqn.params["dimension_numbers"]
        return bool(contract) or bool(batch)
    return eqn.primitive.name in MATERIALIZED


def in_place_pairs(eqn):
    """(input position, output position) pairs whose buffers XLA may share when the
    input dies at `eqn`: a loop's carry is updated in place, an update-slice or
    scatter writes into its operand, and a fused elementwise kernel may write its
    result over an input of the same size."""
    name = eqn.primitive.name
    if name == "scan":
        first = eqn.params["num_consts"]
        return [(first + i, i) for i in range(eqn.params["num_carry"])]
    if name == "while":
        first = eqn.params["cond_nconsts"] + eqn.params["body_nconsts"]
        return [(first + i, i) for i in range(len(eqn.outputs))]
    if name == "dynamic_update_slice" or name.startswith("scatter"):
        return [(0, 0)]
    if not is_materialized(eqn):
        return [(i, o) for o in range(len(eqn.outputs)) for i in range(len(eqn.inputs))]
    return []


def eqn_label(eqn) -> str:
    where = f" at {eqn.source_info}" if eqn.source_info else ""
    return f"{eqn.primitive.name}{where}"


def inner_peak(eqn, fusion: bool = True, in_place: bool = True) -> int:
    """The most temporary bytes any body of `eqn` holds while it runs."""
    peak = 0
    for value in eqn.params.values():
        for sub in (value if isinstance(value, tuple) else (value,)):
            if isinstance(sub, Jaxpr):
                peak = max(peak, analyze([("body", sub)], {}, fusion, in_place)
                           .peak_temp_bytes)
    return peak


def analyze(stages, links, fusion: bool = True, in_place: bool = True) -> Liveness:
    """Liveness of `stages` = [(phase, jaxpr or closed jaxpr), ...] run in order.
    `links[(stage, input position)] = (earlier stage, output position)`: that input
    is that output (a residual). The first stage's inputs and every stage's
    constants are arguments; the last stage's outputs, and any earlier output no
    later stage takes, are outputs. With `fusion`, a value made by a fusible
    equation and read only by fusible equations or reductions is never in memory
    (kind "fused"): its readers recompute it from its own inputs, which stay live
    until then -- XLA's loop fusion. With `in_place`, an output may take the buffer
    of a temporary input that dies at its equation (`in_place_pairs`): XLA's buffer
    reuse, which is what makes a loop's carry cost one buffer, not two."""
    jaxprs = [getattr(j, "jaxpr", j) for _, j in stages]
    taken = set(links.values())
    alias, kind, source, avals = {}, {}, {}, {}
    program = []               # (phase, eqn) in running order
    final = set()              # program outputs

    def key(v):
        while v in alias:
            v = alias[v]
        return v

    inlined = set()

    def add_equations(eqns, phase):
        for eqn in eqns:
            body = eqn.params.get("jaxpr")
            # A call runs its body once, in place: its equations join the timeline
            # (the recomputation inside a backward `remat` shows step by step). A
            # body met twice (one jit called twice) stays one opaque step.
            if eqn.primitive.name in INLINED and isinstance(body, Jaxpr) \
                    and id(body) not in inlined and not body.constvars:
                inlined.add(id(body))
                for inner, outer in zip(body.invars, eqn.inputs):
                    if type(outer) is Var:
                        alias[inner] = outer
                    else:
                        kind[inner], source[inner] = "argument", "a literal"
                        avals[inner] = inner.aval
                add_equations(body.eqns, phase)
                for outer, inner in zip(eqn.outputs, body.outvars):
                    if type(inner) is Var:
                        alias[outer] = inner
                    else:
                        kind[outer], source[outer] = "argument", "a literal"
                        avals[outer] = outer.aval
                continue
            program.append((phase, eqn))
            for v in eqn.outputs:
                kind[v], source[v], avals[v] = "temp", f"{eqn_label(eqn)} ({phase})", v.aval

    for s, ((phase, _), jaxpr) in enumerate(zip(stages, jaxprs)):
        for v in jaxpr.constvars:
            kind[v], source[v], avals[v] = "argument", "a constant", v.aval
        for i, v in enumerate(jaxpr.invars):
            out = jaxprs[links[(s, i)][0]].outvars[links[(s, i)][1]] \
                if (s, i) in links else None
            if type(out) is Var:
                alias[v] = out
            else:
                kind[v], source[v] = "argument", f"input {i} of the {phase} pass"
                avals[v] = v.aval
        add_equations(jaxpr.eqns, phase)
        for pos, v in enumerate(jaxpr.outvars):
            if type(v) is Var and (s == len(stages) - 1 or (s, pos) not in taken):
                final.add(key(v))
    for k in final:
        if kind[k] == "temp":
            kind[k] = "output"

    readers, producer = {}, {}
    for t, (_, eqn) in enumerate(program):
        for a in eqn.inputs:
            if type(a) is Var:
                readers.setdefault(key(a), []).append((eqn.primitive.name, eqn))
        for v in eqn.outputs:
            producer[v] = t
    if fusion:
        for t, (_, eqn) in enumerate(program):
            if is_materialized(eqn):
                continue
            for v in eqn.outputs:
                names = readers.get(v, [])
                if kind[v] == "temp" and names and all(
                        n not in MATERIALIZED or n in FUSING_READERS
                        or (n == "dot_general" and not is_materialized(r))
                        for n, r in names):
                    kind[v] = "fused"

    memo = {}

    def reads(t) -> frozenset:
        """What equation `t` reads from memory: a fused input is recomputed from its
        own inputs."""
        if t not in memo:
            out = set()
            for a in program[t][1].inputs:
                if type(a) is not Var:
                    continue
                k = key(a)
                out |= reads(producer[k]) if kind.get(k) == "fused" else {k}
            memo[t] = frozenset(out)
        return memo[t]

    total = len(program)
    start = {k: -1 for k in kind if k not in alias}
    end = {k: (total - 1 if kind[k] in ("argument", "output") else -1) for k in start}
    steps_meta = []
    for t, (phase, eqn) in enumerate(program):
        for k in reads(t):
            end[k] = max(end[k], t)
        for v in eqn.outputs:
            start[v], end[v] = t, max(end[v], t)
        steps_meta.append((phase, eqn_label(eqn), inner_peak(eqn, fusion, in_place)))
    # In-place reuse: an output that takes the buffer of a temporary input dying at
    # its equation does not add to the bytes held there -- the input's life ends
    # one step early instead (two values never share one buffer twice).
    for t, (_, eqn) in enumerate(program if in_place else ()):
        reused, taken_outputs = set(), set()
        for i, o in in_place_pairs(eqn):
            a, v = eqn.inputs[i], eqn.outputs[o]
            if type(a) is not Var or o in taken_outputs:
                continue
            k = key(a)
            if kind.get(k) == "temp" and end[k] == t and start[k] < t and k not in reused \
                    and nbytes(avals[k]) == nbytes(v.aval) and kind.get(v) != "fused":
                end[k] = t - 1
                reused.add(k)
                taken_outputs.add(o)
    values = [Value(avals[k], 0 if kind[k] == "fused" else nbytes(avals[k]), kind[k],
                    source[k], start[k], end[k]) for k in start]
    live = np.zeros(total + 1, np.int64)
    temp = np.zeros(total + 1, np.int64)
    for v in values:
        lo, hi = max(v.start, 0), max(v.end, 0)
        live[lo:hi + 1] += v.nbytes
        if v.kind == "temp":
            temp[lo:hi + 1] += v.nbytes
    steps = [Step(phase, label, int(live[i]) + inner, int(temp[i]) + inner)
             for i, (phase, label, inner) in enumerate(steps_meta)]
    return Liveness(steps, values)
