"""`:passes`, `:remat` and `:residuals`: a gradient taken apart, stage by stage.

Read `minijax/transforms/__init__.py` first: grad is jvp, then partial evaluation
with the tangents unknown (the *known* jaxpr is the forward pass and returns the
residuals; the *staged* jaxpr is the linear part), then transposition of the staged
jaxpr (the backward pass). This module calls those IR -> IR passes one by one on the
traced program and prints each result with what changed from the stage before.

`:remat` shows `minijax.remat_report` of `checkpoint(f, policy=...)`: the forward and
backward programs, what is saved (type, bytes, origin), what the backward pass
recomputes, and each ref's reads/writes per phase (forward, recomputation,
backward), refs closed over included. Counts are static: an equation inside a loop
body counts once.
"""
from __future__ import annotations

import minijax
from minijax import transforms
from minijax.remat_report import remat_report
from minijax.transforms.discharge import discharge_jaxpr, mentions_refs

from .render import change_summary, human_bytes, nbytes
from .targets import Target, trace


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


class Unavailable(Exception):
    """A feature this build of minijax does not have yet."""


REMAT_MISSING = "remat is not available yet in this build"


def split_gradient(closed):
    """(jvp jaxpr, partial-eval result) with every tangent input unknown."""
    n = len(closed.jaxpr.invars)
    jvp = transforms.jvp_jaxpr(closed)
    n_tangents = len(jvp.jaxpr.invars) - n
    split = transforms.partial_eval_jaxpr(jvp, [False] * n + [True] * n_tangents)
    return jvp, split


def show_passes(session, target: Target):
    stages = []          # titles of the stages begun, for the error message
    previous = None

    def stage(title, build, note=""):
        nonlocal previous
        stages.append(title)
        program = build()
        text = program if isinstance(program, str) else str(program)
        if previous is not None and not isinstance(program, str) and \
                text == str(previous[1]):
            session.title(f"== {title}: unchanged from {previous[0]}" +
                          (f" ({note})" if note else ""))
            return program
        summary = ""
        if previous is not None and not isinstance(program, str) \
                and not isinstance(previous[1], str):
            summary = f"  [{change_summary(previous[1], program)}]"
        session.title(f"== {title}{summary}")
        if note:
            session.say(f"   {note}")
        if isinstance(program, str):
            session.say(program.rstrip())
        else:
            session.show_ir(program)
        previous = (title, program)
        return program

    try:
        traced = stage("traced", lambda: trace(target))
        jvp, split = split_gradient(traced)
        stage("jvp", lambda: jvp, "inputs: primals then tangents; outputs: primals "
                                  "then tangents")
        previous_jvp = previous
        stage("known (forward)", lambda: split.known_jaxpr,
              f"primal outputs then {_count(split.num_residuals, 'residual')}: "
              + (" ".join(v.aval.type_text() for v in split.residuals) or "none"))
        previous = previous_jvp
        staged = stage("staged (linear)", lambda: split.staged_jaxpr,
                       "inputs: residuals then tangents")
        n_linear = len(staged.jaxpr.invars) - split.num_residuals
        stage("transposed (backward)", lambda: transforms.transpose_jaxpr(
            staged, [False] * split.num_residuals + [True] * n_linear),
            "inputs: residuals then output cotangents; outputs: input cotangents")
        grad_fun = minijax.grad(target.fun)
        program = stage("grad (what minijax.grad traces to)",
                        lambda: minijax.make_jaxpr(grad_fun)(*target.args, **target.kwargs))
        if mentions_refs(getattr(program, "jaxpr", program)):
            stage("discharged (refs -> values)", lambda: discharge_jaxpr(program).jaxpr)
        else:
            session.title("== discharged: unchanged (no refs)")
        stage("lowered (StableHLO)", lambda: minijax.jit(grad_fun).lower(
            *target.args, **target.kwargs).as_text())
    except Exception as error:
        session.record_error(error)
        session.error(f":passes: stage {stages[-1] if stages else 'traced'!r} failed: "
                      f"{type(error).__name__}: {error}")


# -- remat ---------------------------------------------------------------------------------

def policy_names() -> dict:
    """The remat policies by name, for `:remat f(x) dots_saveable`."""
    policies = getattr(minijax, "checkpoint_policies", None)
    if policies is None:
        return {}
    return {name: getattr(policies, name) for name in dir(policies)
            if not name.startswith("_")}


def _checkpointed(target: Target, policy):
    checkpoint = getattr(minijax, "checkpoint", None)
    if checkpoint is None:
        raise Unavailable(f"{REMAT_MISSING} (no minijax.checkpoint)")
    return checkpoint(target.fun) if policy is None else checkpoint(target.fun, policy=policy)


def show_remat(session, target: Target, policy=None, **options):
    """`minijax.remat_report` of `checkpoint(f, policy)` at the call's arguments, one
    section after another (the same sections `print(report)` shows)."""
    if options:
        raise TypeError(f":remat takes one POLICY; got options {sorted(options)}")
    report = remat_report(_checkpointed(target, policy), *target.args, **target.kwargs)
    for title, body in report.sections():
        session.title(f"== {title}")
        if isinstance(body, list):
            for line in body:
                session.say(f"  {line}")
        else:
            session.show_ir(body)


def _saved_residuals_fn():
    import importlib
    try:
        module = importlib.import_module("minijax.ad_checkpoint")
    except ModuleNotFoundError as error:
        if error.name != "minijax.ad_checkpoint":
            raise
        return None
    return getattr(module, "saved_residuals", None)


def show_residuals(session, target: Target, policy=None, **options):
    if options:
        raise TypeError(f":residuals takes one POLICY; got options {sorted(options)}")
    saved_residuals = _saved_residuals_fn()
    if saved_residuals is None:
        raise Unavailable(f"{REMAT_MISSING} (no minijax.ad_checkpoint.saved_residuals)")
    fun = target.fun if policy is None else _checkpointed(target, policy)
    rows = list(saved_residuals(fun, *target.args, **target.kwargs))
    total = sum(nbytes(aval) for aval, _ in rows)
    session.title(f"== {_count(len(rows), 'residual')}, {human_bytes(total)}")
    for aval, description in rows:
        text = aval.type_text() if hasattr(aval, "type_text") else str(aval) \
            if not hasattr(aval, "shape") else f"{aval.dtype}{list(aval.shape)}"
        session.say(f"  {text:<14} {human_bytes(nbytes(aval)):>9}  {description}")
