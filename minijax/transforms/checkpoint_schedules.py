"""Checkpointing schedules for reverse-mode loops: which carries to keep, what to redo.

Read `checkpointed_loops.py` for how a schedule becomes a program; this module is
the arithmetic alone, in plain Python, so it can be printed and tested without
tracing anything.

Reverse mode through `n` steps of `carry = f(carry, x)` needs, for step `i`, the
carry that went *into* step `i` -- but it needs them in reverse order, last step
first. `lax.scan` stores all `n` (O(n) memory, nothing recomputed). A checkpointing
schedule stores a few and recomputes the rest from the nearest stored one.

minijax's schedules are **nested, static segmentations**, so every loop in the
resulting program has a static trip count and the schedule can be read off the IR:

    chunks = (c_0, c_1, ..., c_k)        with c_0 > c_1 > ... > c_k

To reverse a segment of `m` steps at level `l` (the whole loop is level 0): if
`l == len(chunks)`, differentiate it as a plain `scan` (storing its `m` residuals:
the *base* segment). Otherwise cut it into `q = m // c_l` chunks of `c_l` steps and a
remainder of `r = m % c_l` steps, run forward once to store the carry entering each
chunk (`q` carries, plus one for the remainder), then reverse the remainder and
then the chunks, last first, each as a segment of level `l + 1`.

* `"all"`:       `chunks = ()` -- plain scan: `n` stored, nothing recomputed.
* `"sqrt"`:      `chunks = (ceil(n / c),)` with `c` checkpoints (default `ceil(sqrt n)`):
  the two-level scheme -- at most `c` carries stored plus one chunk's residuals,
  every step recomputed once.
* `"binomial"`:  `chunks = (b^(L-1), ..., b, 1)`, `L = ceil(log_b n)`: at most `b`
  carries per level stored, `L` levels, so O(log n) memory for O(n log n)
  recomputation -- the memory/compute class of Griewank and Walther's binomial
  ("revolve") schedule, reached by recursive b-ary splitting with static segment
  sizes (revolve's exact optimum needs segment sizes chosen per segment, at run
  time). With `c` checkpoints, `b` is the largest branching factor whose schedule
  stores at most `c` carries; the default `c` is `2 * ceil(log2 n)`.

`simulate(schedule)` walks the same recursion the program builder walks and counts,
per step, how often the backward pass runs the body forward again (`recomputed`),
and the peak number of carries held.
"""
from __future__ import annotations

import math
from typing import NamedTuple

SCHEDULES = ("binomial", "sqrt", "all")


class ScheduleError(ValueError):
    """A checkpointing schedule was asked for with arguments that do not fit."""


class Schedule(NamedTuple):
    kind: str          # "binomial" | "sqrt" | "all"
    length: int        # steps of the loop
    chunks: tuple      # chunk size per level (module docstring)
    checkpoints: int   # the budget asked for (stored carries)


def make_schedule(length: int, schedule: str = "binomial", checkpoints=None) -> Schedule:
    """The static segmentation for a loop of `length` steps (module docstring)."""
    if schedule not in SCHEDULES:
        raise ScheduleError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))}, "
                            f"got {schedule!r}")
    n = int(length)
    if n < 0:
        raise ScheduleError(f"a loop cannot have a negative length, got {length}")
    if checkpoints is not None:
        if not isinstance(checkpoints, int) or isinstance(checkpoints, bool) \
                or checkpoints < 1:
            raise ScheduleError(f"checkpoints must be a positive int, got {checkpoints!r}")
    if schedule == "all" or n <= 1:
        return Schedule(schedule, n, (), n if checkpoints is None else checkpoints)
    if schedule == "sqrt":
        c = math.isqrt(n - 1) + 1 if checkpoints is None else min(checkpoints, n)
        chunk = -(-n // c)
        return Schedule(schedule, n, (chunk,) if chunk < n else (), c)
    c = 2 * _levels(n, 2) if checkpoints is None else checkpoints
    # carries held, at most; a branching above both the budget and b = 2's cost can
    # neither fit nor be the cheapest
    widest = min(n, max(c, 2 * _levels(n, 2)))
    cost = {b: b * _levels(n, b) for b in range(2, widest + 1)}
    fitting = [b for b in cost if cost[b] <= c]
    if not fitting:
        raise ScheduleError(f"the binomial schedule for {n} steps needs at least "
                            f"{min(cost.values())} checkpoints, got {c}; use "
                            f"schedule='sqrt' for fewer")
    # the fewest levels (least recomputation) that fit, then the least memory
    branching = min(fitting, key=lambda b: (_levels(n, b), b))
    levels = _levels(n, branching)
    chunks = tuple(branching ** k for k in range(levels - 1, -1, -1))
    return Schedule(schedule, n, chunks, c)


def _levels(n: int, branching: int) -> int:
    """The smallest L with branching**L >= n."""
    levels, size = 0, 1
    while size < n:
        levels, size = levels + 1, size * branching
    return levels


def split(m: int, level: int, chunks: tuple):
    """How a segment of `m` steps at `level` is cut: `(q, chunk, r)`, or None when it
    is a base segment (differentiated as a plain scan). A segment no longer than the
    level's chunk goes to the next level whole."""
    while level < len(chunks) and m <= chunks[level]:
        level += 1
    if level == len(chunks):
        return None
    q, r = divmod(m, chunks[level])
    return q, chunks[level], r, level


class Simulation(NamedTuple):
    recomputed: list       # per step: forward re-runs of the body in the backward pass
    stored: list           # per step: whether the carry entering it is ever stored
    peak_carries: int      # most carries held at once (checkpoints)
    base_steps: int        # longest base segment: its residuals are held at once
    relinearized: int      # steps run forward again in the backward pass to linearize
    #                        them (all of them, unless the loop is one base segment,
    #                        linearized by the forward pass itself)

    @property
    def recomputations(self) -> int:
        return sum(self.recomputed)

    @property
    def backward_body_runs(self) -> int:
        """Forward evaluations of the body in the backward pass."""
        return self.recomputations + self.relinearized


def simulate(s: Schedule) -> Simulation:
    """Walk the schedule's recursion (as `checkpointed_loops` builds it)."""
    recomputed = [0] * s.length
    stored = [False] * s.length
    longest_base = [0]

    def segment(start, m, level, held, top):
        cut = split(m, level, s.chunks)
        if cut is None:
            longest_base[0] = max(longest_base[0], m)
            return held
        q, chunk, r, level = cut
        # The forward sweep runs every chunk but the last one (whose end is not needed
        # when there is no remainder); at the top it is the primal pass, not redone.
        advanced = q * chunk if r else (q - 1) * chunk
        if not top:
            for i in range(start, start + advanced):
                recomputed[i] += 1
        for k in range(q + (1 if r else 0)):
            stored[start + k * chunk] = True
        now = held + q + (1 if r else 0)
        peak = now
        if r:
            peak = max(peak, segment(start + q * chunk, r, level + 1, now, False))
        for k in range(q):
            peak = max(peak, segment(start + k * chunk, chunk, level + 1, now, False))
        return peak
    peak = segment(0, s.length, 0, 0, True) if s.length else 0
    relinearized = 0 if split(s.length, 0, s.chunks) is None else s.length
    return Simulation(recomputed, stored, peak, longest_base[0], relinearized)


def describe(s: Schedule, width: int = 64) -> str:
    """The schedule in words and one line per step (or per run of steps for long
    loops): `S` = carry stored, then how many times the step is recomputed."""
    sim = simulate(s)
    lines = [f"{s.kind} schedule, {s.length} steps, chunks {list(s.chunks) or 'none'}",
             f"  carries stored at most at once: {sim.peak_carries} "
             f"(+ residuals of {sim.base_steps} step(s) in the innermost segment)",
             f"  body evaluations: forward {s.length}, backward "
             f"{sim.recomputations} to recompute carries + {sim.relinearized} to "
             f"linearize steps"]
    if s.length == 0:
        return "\n".join(lines)
    per_row = max(1, -(-s.length // width))
    row_s, row_r = [], []
    for i in range(0, s.length, per_row):
        block = range(i, min(i + per_row, s.length))
        row_s.append("S" if any(sim.stored[j] for j in block) else ".")
        most = max(sim.recomputed[j] for j in block)
        row_r.append(str(most) if most < 10 else "+")
    unit = "step" if per_row == 1 else f"{per_row} steps"
    lines.append(f"  stored     |{''.join(row_s)}|  (one column per {unit})")
    lines.append(f"  recomputed |{''.join(row_r)}|  (times the body is re-run)")
    return "\n".join(lines)
