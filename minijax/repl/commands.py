"""The `:commands` of the REPL, one function each, and the table that names them.

Read `session.py` (how a line becomes a command) and `targets.py` (what EXPR
means) first; the pipeline commands (`:passes`, `:remat`, `:residuals`) live in
`pipeline.py` and the step-through evaluator in `stepper.py`.

Every command is `run(session, rest)`: `rest` is the text after the command's name.
A command prints through the session (`session.say`, `session.show_ir`) and reports
a mistake by raising; the session turns any exception into one short line.
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import jax

import minijax
from minijax.ir import loads, verify_jaxpr

from .targets import UsageError, read_target, split_expr, parse_options, trace
from . import lessons, oracle, pipeline, stepper


class Command(NamedTuple):
    run: Callable
    usage: str
    summary: str
    details: str = ""


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, summary: str, details: str = ""):
    def register(run):
        COMMANDS[name] = Command(run, usage, summary, details.strip())
        return run
    return register


def target_and_options(session, rest: str, extra: dict | None = None):
    expr, options = split_expr(rest)
    target = read_target(expr, session.namespace)
    args, kwargs = parse_options(options, session.namespace, extra)
    return target, args, kwargs


def target_only(session, rest: str, command: str):
    """The call or jaxpr a command that takes no options works on."""
    target, args, kwargs = target_and_options(session, rest)
    if args or kwargs:
        raise UsageError(f":{command} takes no options")
    return target


def no_positional(args, name):
    if args:
        raise UsageError(f":{name} takes keyword options only, e.g. `argnums=1`")


# -- the session ---------------------------------------------------------------------------

@command("help", ":help [COMMAND]", "list the commands, or explain one")
def _help(session, rest):
    name = rest.strip().lstrip(":")
    if name:
        entry = COMMANDS.get(name)
        if entry is None:
            raise UsageError(f"no command :{name}; :help lists them")
        session.say(f"{entry.usage}\n  {entry.summary}")
        if entry.details:
            session.say("\n".join("  " + line for line in entry.details.splitlines()))
        return
    session.say("Python runs as at `>>>`; lines starting with ':' are commands.\n"
                "EXPR is a call such as `f(1.0, r)` (traced, not run) or the name of "
                "a jaxpr.\n")
    width = max(len(c.usage) for c in COMMANDS.values())
    for entry in COMMANDS.values():
        session.say(f"  {entry.usage.ljust(width)}  {entry.summary}")


@command("quit", ":quit", "leave the REPL (so does Ctrl-D)")
def _quit(session, rest):
    session.stop()


@command("traceback", ":traceback", "the full traceback of the last error")
def _traceback(session, rest):
    session.say(session.last_traceback or "no error yet")


# -- IR and its transformations ----------------------------------------------------

@command("ir", ":ir EXPR", "the IR of a call, e.g. `:ir f(1.0, r)`",
         "The call is traced with make_jaxpr, not run: refs passed in keep their "
         "contents.\nA jaxpr's name shows that jaxpr.")
def _ir(session, rest):
    target = target_only(session, rest, "ir")
    session.show_ir(trace(target))


@command("grad", ":grad EXPR [argnums=N]", "the IR of grad of a call",
         "`:grad f(x, y) argnums=1` is `make_jaxpr(grad(f, argnums=1))(x, y)`.")
def _grad(session, rest):
    target, args, kwargs = target_and_options(session, rest)
    no_positional(args, "grad")
    fun = minijax.grad(target.fun, **kwargs)
    session.show_ir(minijax.make_jaxpr(fun)(*target.args, **target.kwargs))


@command("jvp", ":jvp EXPR", "the IR of the JVP of a call (jvp_jaxpr)",
         "The result takes the primal inputs then one tangent per input and returns\n"
         "the primal outputs then their tangents.")
def _jvp(session, rest):
    target = target_only(session, rest, "jvp")
    session.show_ir(minijax.transforms.jvp_jaxpr(trace(target)))


@command("vmap", ":vmap EXPR [in_axes=..., out_axes=...]", "the IR of vmap of a call",
         "The arguments are the *batched* inputs: `:vmap f(xs)` maps over axis 0 of "
         "xs,\nas `make_jaxpr(vmap(f))(xs)`; options go to vmap.")
def _vmap(session, rest):
    target, args, kwargs = target_and_options(session, rest)
    no_positional(args, "vmap")
    fun = minijax.vmap(target.fun, **kwargs)
    session.show_ir(minijax.make_jaxpr(fun)(*target.args, **target.kwargs))


@command("lower", ":lower EXPR", "the StableHLO minijax hands to XLA for a call",
         "Refs are discharged first: XLA never sees one. When the program places\n"
         "arrays on several devices (shard_map, sharding constraints), the module\n"
         "XLA's SPMD partitioner makes of it -- one device's view -- follows.")
def _lower(session, rest):
    target = target_only(session, rest, "lower")
    lowered = minijax.jit(target.fun).lower(*target.args, **target.kwargs)
    session.say(lowered.as_text().rstrip())
    if _uses_devices(minijax.make_jaxpr(target.fun)(*target.args, **target.kwargs).jaxpr):
        session.say("\n-- partitioned: the program each device runs --")
        session.say(lowered.compile().as_text().rstrip())


def _uses_devices(jaxpr) -> bool:
    """Whether `jaxpr` (or a body in it) lays arrays out over a mesh."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("shard_map", "sharding_constraint"):
            return True
        for value in eqn.params.values():
            for body in value if isinstance(value, tuple) else (value,):
                inner = getattr(body, "jaxpr", body)
                if hasattr(inner, "eqns") and _uses_devices(inner):
                    return True
    return False


@command("passes", ":passes EXPR", "every stage of grad of a call, with what changed",
         "traced -> jvp -> partial eval (known + staged, residuals) -> transposed\n"
         "-> discharged -> StableHLO. A stage the pass left alone is folded to one "
         "line.\nEXPR must return one float scalar, as for grad.")
def _passes(session, rest):
    target = target_only(session, rest, "passes")
    pipeline.show_passes(session, target)


@command("discharge", ":discharge EXPR", "the IR of a call with its refs discharged",
         "Shows the program as XLA gets it (docs/refs.md, \"How refs run: discharge\"):\n"
         "every ref operation becomes a pure operation on the ref's current value,\n"
         "refs made inside disappear, each ref input becomes an array input, and the\n"
         "final value of each ref input the program writes becomes an extra output.")
def _discharge(session, rest):
    from minijax.transforms.discharge import discharge_jaxpr
    closed = trace(target_only(session, rest, "discharge"))
    result = discharge_jaxpr(closed)
    session.show_ir(result.jaxpr)
    info = result.info
    binders = list(closed.jaxpr.constvars) + list(closed.jaxpr.invars)
    n_consts = len(closed.jaxpr.constvars)

    def named(position):
        return (f"closed-over ref {position}" if position < n_consts
                else f"argument {position - n_consts}")
    if not info.ref_inputs:
        internal = any(v.aval.__class__.__name__ == "RefType"
                       for eqn in closed.jaxpr.eqns for v in eqn.outputs)
        session.say("refs made inside became values; no ref input" if internal
                    else "no refs: discharge changes nothing")
        return
    for position in info.ref_inputs:
        aval = binders[position].aval.type_text()   # as the jaxpr shown beside it
        if position in info.written:
            k = info.num_outputs + list(info.written).index(position)
            session.say(f"{named(position)} ({aval}) became a value; its final contents "
                        f"are output {k}")
        else:
            session.say(f"{named(position)} ({aval}) became a value (only read)")


@command("remat", ":remat EXPR [POLICY]", "what checkpoint saves and recomputes, and "
         "how often each effect runs",
         "Checkpoints the call's function with POLICY (a name from "
         "checkpoint_policies,\nsuch as dots_saveable, or any policy expression) and "
         "shows minijax.remat_report:\nthe forward and backward programs, the residuals "
         "(type, bytes, origin), the\nrecomputed equations and each ref's reads and "
         "writes per phase (refs closed\nover included).")
def _remat(session, rest):
    target, args, kwargs = target_and_options(session, rest, pipeline.policy_names())
    pipeline.show_remat(session, target, *args, **kwargs)


@command("residuals", ":residuals EXPR [POLICY]", "what grad saves for the backward "
         "pass", "With POLICY the function is checkpointed with it first.")
def _residuals(session, rest):
    target, args, kwargs = target_and_options(session, rest, pipeline.policy_names())
    pipeline.show_residuals(session, target, *args, **kwargs)


@command("memory", ":memory EXPR [POLICY ...]", "live bytes of grad of a call, forward "
         "and backward, per remat policy",
         "Shows minijax.memory_report: the peak of temporary bytes from a liveness\n"
         "analysis of minijax's own IR, what is live there and where it came from,\n"
         "XLA's memory_analysis() of jit(grad(f)) beside it, and a chart over the\n"
         "program. With several POLICYs (names from checkpoint_policies, or `none`\n"
         "for no checkpoint), one report each and a table side by side.")
def _memory(session, rest):
    from minijax.memory_report import memory_report
    expr, options = split_expr(rest)
    target = read_target(expr, session.namespace)
    names = {**pipeline.policy_names(), "none": None}
    # `:memory f(x) nothing_saveable dots_saveable`: policies apart by spaces or commas
    policies = [parse_options(word, session.namespace, names)[0][0]
                for word in options.replace(",", " ").split()] or [None]
    fun = functools.partial(target.fun, **target.kwargs) if target.kwargs else target.fun
    reports = [memory_report(fun, *target.args, policy=p) for p in policies]
    for report in reports:
        session.title(f"== memory of grad, policy {report.policy}")
        for line in report.lines():
            session.say(f"  {line}")
    if len(reports) > 1:
        session.title("== side by side")
        for report in reports:
            xla = "-" if report.xla_temp_bytes is None else f"{report.xla_temp_bytes:,d}"
            session.say(f"  {report.policy:<34} minijax peak {report.peak_bytes:>12,d} B"
                        f"   XLA temp {xla:>12} B")


# -- running -------------------------------------------------------------------------------

@command("eval", ":eval EXPR", "run a call or jaxpr with the reference evaluator",
         "Shows the outputs and every ref's final contents. The evaluator works on\n"
         "copies of the refs you pass: your refs keep their contents.")
def _eval(session, rest):
    target = target_only(session, rest, "eval")
    stepper.run(session, target, step=False)


@command("step", ":step EXPR", "run equation by equation: values and ref contents",
         "Like :eval, printing each equation, the values it produced and every ref\n"
         "whose contents it changed.")
def _step(session, rest):
    target = target_only(session, rest, "step")
    stepper.run(session, target, step=True)


@command("check", ":check EXPR", "run an expression with minijax and real JAX and compare",
         "EXPR is any expression, e.g. `:check grad(f)(1.0)`. JAX's side runs the same\n"
         "text with jnp/lax/grad/... from JAX, your functions rebuilt to use them,\n"
         "and JAX refs holding what your refs held before. Values and final ref\n"
         "contents are compared; afterwards your refs are put back as they were\n"
         "(the check observes, it does not advance a counter). A difference only in\n"
         "weak type is explained, not called a disagreement; on a disagreement the\n"
         "known divergences matching your program are shown.")
def _check(session, rest):
    expr = rest.strip()
    if not expr:
        raise UsageError(":check needs an expression, e.g. `:check f(1.0)`")
    result = oracle.run_check(expr, session.namespace)
    session.say(f"minijax: {session.format(result.minijax_value)}")
    if result.jax_value is not None:
        session.say(f"jax {jax.__version__}: {session.format(result.jax_value)}")
    for name, ours, theirs in result.refs:
        session.say(f"ref {name}: minijax {session.format(ours)}, "
                    f"jax {session.format(theirs)}")
    for name, kept, left in result.restored:
        session.say(f"ref {name} put back to {session.format(kept)} (the check's minijax "
                    f"run left {session.format(left)}; your session is unchanged)")
    if result.problem is None:
        if result.notes:
            session.say(session.style("agree in values and dtypes; weak types differ",
                                      "ok"))
            for note in result.notes:
                session.say(f"  {note}")
        else:
            session.say(session.style("agree", "ok"))
        return
    session.say(session.style("DISAGREE", "error"))
    for line in result.problem.splitlines():
        session.say(f"  {line}")
    for note in result.notes:
        session.say(f"  {note}")
    if not result.divergences:
        session.say("  no known divergence matches this program")
    for entry in result.divergences:
        session.say(f"known divergence {entry.name} (jax {entry.jax_version}):\n"
                    f"  JAX: {entry.jax_behaviour}\n  minijax: {entry.minijax_behaviour}\n"
                    f"  why: {entry.reason}")


# -- reading IR text ------------------------------------------------------------------------

@command("parse", ":parse [NAME]", "read IR text (the lines that follow) into NAME",
         "Type or paste the text form after the command; it ends when its braces\n"
         "close. NAME defaults to `jaxpr`. The text may also follow NAME on the same\n"
         "line. The result is verified, then usable by the other commands.")
def _parse(session, rest):
    name, _, text = rest.strip().partition(" ")
    if name.startswith("{"):
        name, text = "", rest.strip()
    name = name or "jaxpr"
    if not name.isidentifier():
        raise UsageError(f":parse NAME: {name!r} is not a Python name")
    session.collect_ir(name, text)


def bind_ir(session, name: str, text: str, source: str):
    """Parse and verify IR text, then bind it: the end of `:parse` and `:load`."""
    closed = loads(text)
    verify_jaxpr(closed)
    session.namespace[name] = closed
    jaxpr = closed.jaxpr
    session.say(f"{name} = jaxpr from {source}: {len(jaxpr.invars)} inputs, "
                f"{len(jaxpr.eqns)} equations, {len(jaxpr.outvars)} outputs")


@command("load", ":load FILE [NAME]", "read IR text from a file into NAME",
         "NAME defaults to the file's name without its extension.")
def _load(session, rest):
    import os
    import shlex
    try:
        parts = shlex.split(rest)
    except ValueError as error:
        raise UsageError(f":load FILE [NAME]: {error}") from None
    if not parts or len(parts) > 2:
        raise UsageError("usage: :load FILE [NAME]")
    path = os.path.expanduser(parts[0])
    name = parts[1] if len(parts) == 2 else (
        os.path.splitext(os.path.basename(path))[0].replace("-", "_"))
    if not name.isidentifier():
        raise UsageError(f"{name!r} is not a Python name; give one: :load FILE NAME")
    with open(path, encoding="utf-8") as file:
        text = file.read()
    bind_ir(session, name, text, path)


# -- lessons ------------------------------------------------------------------------------------

@command("lesson", ":lesson [N]", "list the lessons, or run lesson N and start its exercises",
         "The lessons are docs/lessons/: each runs as a transcript in this session\n"
         "(its names stay defined), then asks its exercises one by one.")
def _lesson(session, rest):
    lessons.start(session, rest)


@command("hint", ":hint", "a hint for the current exercise")
def _hint(session, rest):
    lessons.hint(session)


@command("answer", ":answer [EXPR]", "answer the current exercise (alone: show the answer)",
         "EXPR is evaluated in the session, e.g. `:answer 3` or `:answer (2, 3)`, and\n"
         "compared with what the tools compute. Right answers move to the next exercise.")
def _answer(session, rest):
    lessons.answer(session, rest)
