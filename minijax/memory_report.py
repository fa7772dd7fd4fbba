"""The memory view of a gradient: live bytes over the forward and backward pass.

Read `transforms/liveness.py` (the analysis) and `remat_report.py` (the two passes)
first. `memory_report(f, *args, policy=None)` differentiates `f` at `args` with
minijax's own passes -- checkpointed with `policy` first, when one is given -- and
runs the liveness analysis over the forward pass followed by the backward pass, the
residuals linking the two. It reports:

* the peak of temporary bytes (what XLA calls temp memory) and the step it is at;
* what is live at the peak, each value with its size and what made it (the
  primitive, the line of your code, the pass);
* XLA's own `memory_analysis()` of `jit(grad(f))` compiled, beside it;
* a terminal chart of live temporary bytes over the program, forward then backward.

`print(report)` shows it all; `compare_memory(f, args, policies)` lines several
policies up side by side (the REPL's `:memory f(x) nothing_saveable dots_saveable`).
"""
from __future__ import annotations

from typing import NamedTuple

from jax import tree_util

from .frontend.checkpoint import checkpoint
from .frontend.autodiff import grad
from .frontend.jit import jit
from .ir.trace import aval_of
from .remat_report import gradient_stages
from .transforms.ad_util import is_differentiable
from .transforms.liveness import analyze, Liveness
from .transforms.policies import checkpoint_policies

__all__ = ["memory_report", "MemoryReport", "compare_memory", "human_bytes"]


class MemoryReport(NamedTuple):
    policy: str
    liveness: Liveness
    xla_temp_bytes: int | None      # XLA's memory_analysis().temp_size_in_bytes

    @property
    def peak_bytes(self) -> int:
        return self.liveness.peak_temp_bytes

    @property
    def peak_step(self):
        return self.liveness.steps[self.liveness.peak_step]

    def live_at_peak(self) -> list:
        return [v for v in self.liveness.live_at(self.liveness.peak_step)
                if v.kind == "temp"]

    def lines(self, width: int = 40, rows: int = 24) -> list:
        steps = self.liveness.steps
        out = [f"policy: {self.policy}",
               f"peak temporary memory (minijax liveness): {human_bytes(self.peak_bytes)}"
               + (f" at step {self.liveness.peak_step} ({self.peak_step.phase}: "
                  f"{self.peak_step.label})" if steps else ""),
               "XLA memory_analysis() temp of jit(grad(f)): "
               + (human_bytes(self.xla_temp_bytes) if self.xla_temp_bytes is not None
                  else "not available")]
        live = self.live_at_peak()
        if live:
            out.append("live at the peak:")
            for v in live[:12]:
                out.append(f"  {v.aval.type_text():<18} {human_bytes(v.nbytes):>10}  "
                           f"{v.source}")
            if len(live) > 12:
                out.append(f"  ... and {len(live) - 12} smaller values")
        out.append("temporary bytes over the program (each row: a run of steps):")
        out += chart(steps, width, rows)
        return out

    def __str__(self):
        return "\n".join(self.lines())


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def chart(steps, width: int = 40, rows: int = 24) -> list:
    """One bar per run of steps (the run's largest temporary bytes), the phase and the
    first equation of the run beside it; `<- peak` marks the peak's row."""
    if not steps:
        return ["  (no equations)"]
    per_row = max(1, -(-len(steps) // rows))
    top = max(s.temp_bytes for s in steps) or 1
    peak = max(range(len(steps)), key=lambda t: steps[t].temp_bytes)
    out = []
    for first in range(0, len(steps), per_row):
        run = steps[first:first + per_row]
        most = max(s.temp_bytes for s in run)
        bar = "#" * round(width * most / top)
        mark = "  <- peak" if first <= peak < first + per_row else ""
        label = run[0].label if len(run[0].label) < 40 else run[0].label[:37] + "..."
        out.append(f"  {run[0].phase[:3]} {first:>5} |{bar:<{width}}| "
                   f"{human_bytes(most):>10}  {label}{mark}")
    return out


def _as_policy(policy):
    if policy is None or not isinstance(policy, str):
        return policy
    found = getattr(checkpoint_policies, policy, None)
    if found is None:
        raise ValueError(f"memory_report: no checkpoint policy named {policy!r}; the "
                         f"names are those of minijax.checkpoint_policies")
    return found


def _policy_name(policy) -> str:
    if policy is None:
        return "none (no checkpoint)"
    return getattr(policy, "__name__", None) or str(policy)


def memory_report(f, *args, policy=None, xla: bool = True) -> MemoryReport:
    """Live bytes of `grad`-style differentiation of `f` at `args` (every float input),
    after `checkpoint(f, policy=policy)` when a policy (or its name) is given."""
    policy = _as_policy(policy)
    fun = f if policy is None else checkpoint(f, policy=policy)
    leaves, in_tree = tree_util.tree_flatten((args, {}))
    forward, backward, linear = gradient_stages(fun, leaves, in_tree)
    n_res = len(linear.jaxpr.constvars)
    n_primal = len(forward.jaxpr.outvars) - n_res
    links = {(1, i): (0, n_primal + i) for i in range(n_res)}
    liveness = analyze([("forward", forward), ("backward", backward)], links)
    xla_temp = None
    if xla:
        diff = tuple(i for i, a in enumerate(args)
                     if all(is_differentiable(aval_of(x)) for x in tree_util.tree_leaves(a)))
        if diff:
            compiled = jit(grad(fun, argnums=diff)).lower(*args).compile()
            xla_temp = int(compiled.memory_analysis().temp_size_in_bytes)
    return MemoryReport(_policy_name(policy), liveness, xla_temp)


def compare_memory(f, args, policies) -> str:
    """The reports of several policies (None: no checkpoint), then one table row each:
    the picture of what each remat choice costs and saves."""
    reports = [memory_report(f, *args, policy=p) for p in policies]
    out = []
    for report in reports:
        out += [str(report), ""]
    out.append(f"{'policy':<34} {'minijax peak':>12} {'XLA temp':>12}")
    for report in reports:
        xla = human_bytes(report.xla_temp_bytes) if report.xla_temp_bytes is not None else "-"
        out.append(f"{report.policy:<34} {human_bytes(report.peak_bytes):>12} {xla:>12}")
    return "\n".join(out)
