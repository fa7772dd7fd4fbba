"""`python -m minijax repl [FILE]`: an interactive lab for minijax's IR and passes.

Python runs as at the `>>>` prompt, with minijax preloaded under JAX's names
(`jax` is minijax, `jnp`, `lax`, `jit`, `grad`, `vmap`, `new_ref`, ...), and lines
starting with `:` are commands that show a call's IR, every pass of its gradient,
what remat saves and recomputes, a step-through run with the reference evaluator,
the StableHLO handed to XLA, and whether real JAX agrees. docs/repl.md is the guide.

Read `session.py` first (lines in, errors never fatal), then `commands.py` (one
function per command); `targets.py`, `pipeline.py`, `stepper.py`, `oracle.py` and
`render.py` hold what the commands share.
"""
from __future__ import annotations

import sys

import minijax

from .session import Session, repl_namespace
from .commands import COMMANDS

__all__ = ["Session", "repl_namespace", "run_repl", "COMMANDS"]


def run_repl(file: str | None = None, echo: bool = False) -> int:
    """Run FILE (a Python script, or a lesson of REPL lines), then read stdin: at a
    prompt when it is a terminal, as a script without prompts when it is not."""
    session = Session(echo=echo)
    if file is not None:
        if file.endswith(".py"):
            session.run_file(file)
        else:
            try:
                with open(file, encoding="utf-8") as lesson:
                    lines = lesson.read().splitlines()
            except OSError as error:
                session.error(f"{type(error).__name__}: {error}")
                lines = []
            session.run_lines(lines)
    if not session.running:
        return 0
    if sys.stdin.isatty() and not echo:
        session.interact(f"minijax {minijax.__version__} REPL; jax is minijax. "
                         f":help lists the commands, :traceback shows the last error "
                         f"in full, :quit or Ctrl-D exits.")
    else:
        session.run_lines(sys.stdin)
    return 0
