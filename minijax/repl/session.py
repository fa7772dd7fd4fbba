"""The REPL session: reading lines, running Python, dispatching `:commands`.

Read this module first, then `commands.py` (the command table), `targets.py` (what
a command's EXPR means) and `render.py` (colour and formatting).

A `Session` is fed one line at a time by `feed(line)`, whether the line comes from
the terminal (`interact`, with readline), from a piped script (`run_lines`) or from
a lesson file. Each line is one of:

* a `:command` (only at the start of a statement: no Python statement starts with
  a colon, so there is no ambiguity) -- run through `commands.COMMANDS`;
* a line of IR text after `:parse`, collected until its braces close;
* Python: compiled as at the `>>>` prompt, in the session's namespace, with a
  pending block ended by a blank line -- or, in scripts, by a line at column 0
  that cannot continue it, so lessons need no blank line after each block.

Nothing a line does can end the session except `:quit`, Ctrl-D or `exit()`: every
exception -- from Python, from the parser or the verifier, from a command -- prints
one short line (to stderr) and its full traceback is kept for `:traceback`.
"""
from __future__ import annotations

import code
import codeop
import difflib
import linecache
import sys
import traceback

import numpy as np

import minijax
# The REPL's `jax.ad_checkpoint...` works without an import line, as `jax.numpy` does
# (a program imports it by name, as on JAX).
import minijax.ad_checkpoint  # noqa: F401
from minijax.ir import reset_trace_state
from . import render
from .commands import COMMANDS, bind_ir
from .pipeline import Unavailable
from .targets import UsageError


def repl_namespace() -> dict:
    """The names a session starts with, under the names a JAX user expects. Names
    minijax does not have yet (say `checkpoint` before remat lands) are left out
    and appear once they exist."""
    namespace = {"__name__": "__main__", "__doc__": None, "jax": minijax,
                 "jnp": minijax.numpy, "lax": minijax.lax, "np": np}
    for name in ("jit", "make_jaxpr", "grad", "value_and_grad", "vjp", "jvp", "linearize",
                 "vmap", "jacfwd", "jacrev", "hessian", "custom_jvp", "custom_vjp",
                 "checkpoint", "remat", "checkpoint_policies", "new_ref", "empty_ref",
                 "freeze", "free_ref", "Ref", "ref", "debug"):
        if hasattr(minijax, name):
            namespace[name] = getattr(minijax, name)
    return namespace


def one_line(exc: BaseException) -> str:
    """`TypeName: message`, without the notes libraries attach (JAX adds one about
    its traceback filtering) -- those belong to `:traceback`."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class _Python(code.InteractiveInterpreter):
    """Runs Python source for the session and reports errors through it."""

    def __init__(self, session: "Session"):
        super().__init__(session.namespace)
        self.session = session

    def showtraceback(self):
        exc_type, exc, tb = sys.exc_info()
        sys.last_type, sys.last_value, sys.last_traceback = exc_type, exc, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = exc
        if exc_type is SystemExit:
            self.session.stop()
            return
        where, script = "", self.locals.get("__file__")
        for frame, lineno in traceback.walk_tb(tb):
            if script is not None and frame.f_code.co_filename == script:
                where = f"{script}, line {lineno}: "
        # The first frame is this module's own `exec`: not the user's business.
        self.session.record_error(exc, skip_frames=1)
        self.session.error(where + one_line(exc))

    def showsyntaxerror(self, filename=None, **kwargs):
        exc_type, exc, _ = sys.exc_info()
        self.session.record_error(exc)
        self.session.error("".join(traceback.format_exception_only(exc_type, exc)).rstrip())

    def write(self, data):
        self.session.error(data.rstrip())


class Session:
    """One REPL session: its namespace, its pending input and its last error."""

    def __init__(self, namespace: dict | None = None, *, stdout=None, stderr=None,
                 colour: bool | None = None, echo: bool = False):
        self.namespace = repl_namespace() if namespace is None else namespace
        self.stdout = stdout or sys.stdout
        # With `echo`, the output is a transcript: errors belong in it, in order.
        self.stderr = self.stdout if echo else (stderr or sys.stderr)
        self.colour = render.colour_enabled(self.stdout) if colour is None else colour
        self.echo = echo
        self.running = True
        self.last_traceback: str | None = None
        self.buffer: list[str] = []          # lines of a pending Python block
        self.ir_lines: list[str] | None = None   # lines of a pending `:parse`
        self.ir_name = ""
        self.inputs = 0                      # Python inputs run so far
        self.python = _Python(self)
        self.lesson = None                   # lessons.Progress after `:lesson N`

    # -- output ----------------------------------------------------------------------

    def say(self, text: str = ""):
        print(text, file=self.stdout)

    def show_ir(self, program):
        self.say(render.colour_ir(str(program), self.colour))

    def title(self, text: str):
        self.say(render.style(text, "title", self.colour))

    def style(self, text: str, kind: str) -> str:
        return render.style(text, kind, self.colour)

    def format(self, value) -> str:
        return render.format_value(value)

    def error(self, text: str):
        self.stdout.flush()   # keep an error after the output that came before it
        print(render.style(text, "error", self.colour), file=self.stderr)
        self.stderr.flush()

    def record_error(self, exc: BaseException, skip_frames: int = 0):
        tb = exc.__traceback__
        for _ in range(skip_frames):
            tb = tb.tb_next if tb is not None and tb.tb_next is not None else tb
        self.last_traceback = "".join(
            traceback.format_exception(type(exc), exc, tb)).rstrip()
        # An error in the middle of a trace must not leave the next line under it.
        reset_trace_state()

    def stop(self):
        self.running = False

    # -- input -----------------------------------------------------------------------

    @property
    def continuing(self) -> bool:
        """Whether the next line continues something (a block or IR text)."""
        return bool(self.buffer) or self.ir_lines is not None

    def feed(self, line: str):
        """Run one line of input (without its newline)."""
        line = line.rstrip("\r\n")
        if self.buffer and line[:1] not in ("", " ", "\t", "#") and (
                line.startswith(":") or self._ends_block(line)):
            # A line at column 0 that cannot continue the pending block ends it
            # first, as a blank line would, so the block's output comes before it.
            self._flush()
        if self.echo and (line.strip() or self.continuing):
            self.say(("... " if self.continuing else ">>> ") + line
                     if line.strip() else "...")
        if self.ir_lines is not None:
            self._collect(line)
        elif line.lstrip().startswith(":") and not self.buffer:
            self.run_command(line.strip()[1:])
        else:
            self._push_python(line)

    def finish_block(self):
        """End a pending Python block (or `:parse`) as the end of input does."""
        if self.ir_lines is not None:
            self._end_ir()
        if self.buffer:
            self._flush()

    def run_lines(self, lines):
        for line in lines:
            if not self.running:
                return
            self.feed(line)
        self.finish_block()

    # -- Python ----------------------------------------------------------------------

    def _push_python(self, line: str):
        self.buffer.append(line)
        self._run_buffer()

    def _run_buffer(self, extra: str | None = None):
        source = "\n".join(self.buffer + ([extra] if extra is not None else []))
        # Each input gets its own file name with its source in linecache, so a
        # traceback (`:traceback`) shows the lines the user typed.
        filename = f"<input {self.inputs + 1}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        more = self.python.runsource(source, filename)
        if not more:
            self.buffer = []
            self.inputs += 1

    def _flush(self):
        """End the pending block. Input that is still incomplete then (`f(` with no
        `)`) is a syntax error, reported as one, rather than swallowing what follows."""
        self._run_buffer(extra="")
        if self.buffer:
            filename = f"<input {self.inputs + 1}>"
            try:
                compile("\n".join(self.buffer) + "\n", filename, "exec")
            except SyntaxError:
                self.python.showsyntaxerror(filename)
            self.buffer = []
            self.inputs += 1

    def _ends_block(self, line: str) -> bool:
        """Whether `line` cannot continue the pending block although the block is
        complete: then it is the next statement, not part of the block."""
        try:
            codeop.compile_command("\n".join([*self.buffer, line]), "<stdin>")
            return False
        except SyntaxError:
            pass
        try:
            return codeop.compile_command("\n".join(self.buffer) + "\n", "<stdin>") is not None
        except SyntaxError:
            return False

    def run_file(self, path: str):
        """Run a whole Python script in the namespace, as `python -i FILE` does."""
        self.namespace["__file__"] = path
        try:
            with open(path, encoding="utf-8") as file:
                source = file.read()
            compiled = compile(source, path, "exec")
        except OSError as error:
            self.record_error(error)
            self.error(f"{type(error).__name__}: {error}")
            return
        except (SyntaxError, ValueError):
            self.python.showsyntaxerror(path)
            return
        self.python.runcode(compiled)

    # -- commands --------------------------------------------------------------------

    def run_command(self, text: str):
        name, _, rest = text.partition(" ")
        name = name.strip()
        try:
            name, entry = self._lookup(name)
            entry.run(self, rest.strip())
        except KeyboardInterrupt:
            self.error("KeyboardInterrupt")
        except SystemExit:
            self.stop()
        except Exception as exc:
            self.record_error(exc)
            self.error(self._describe(name, exc))

    def _lookup(self, name: str):
        if name in COMMANDS:
            return name, COMMANDS[name]
        matches = [c for c in COMMANDS if c.startswith(name)] if name else []
        if len(matches) == 1:   # a unique prefix is enough: `:st` is `:step`
            return matches[0], COMMANDS[matches[0]]
        close = matches or difflib.get_close_matches(name, COMMANDS, n=3)
        hint = f" (did you mean {', '.join(':' + c for c in close)}?)" if close else ""
        raise UsageError(f"unknown command :{name}{hint}; :help lists the commands")

    @staticmethod
    def _describe(name: str, exc: Exception) -> str:
        if isinstance(exc, (UsageError, Unavailable)):
            return f":{name}: {exc}" if name in COMMANDS else str(exc)
        message = str(exc).strip() or "(no message)"
        return f":{name}: {type(exc).__name__}: {message}"

    # -- :parse ----------------------------------------------------------------------

    def collect_ir(self, name: str, text: str):
        """Start collecting IR text for `:parse NAME`; `text` is any on the same line."""
        self.ir_name, self.ir_lines = name, []
        if text:
            self._collect(text)

    def _collect(self, line: str):
        if not line.strip() and not "".join(self.ir_lines).strip():
            self.ir_lines = None
            self.error(":parse: no IR text given (type it after :parse, e.g. "
                       "`{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }`)")
            return
        self.ir_lines.append(line)
        text = "\n".join(self.ir_lines)
        if not line.strip() or (text.count("{") and text.count("{") <= text.count("}")):
            self._end_ir()

    def _end_ir(self):
        text, self.ir_lines = "\n".join(self.ir_lines), None
        try:
            bind_ir(self, self.ir_name, text, ":parse")
        except Exception as exc:
            self.record_error(exc)
            self.error(self._describe("parse", exc))

    # -- the terminal -----------------------------------------------------------------

    def interact(self, banner: str):
        """Prompt, read and run until :quit or Ctrl-D; Ctrl-C drops the pending input."""
        _setup_readline(self.namespace)
        self.say(banner)
        while self.running:
            try:
                line = input("... " if self.continuing else ">>> ")
            except EOFError:
                self.say()
                self.finish_block()
                break
            except KeyboardInterrupt:
                self.say("\nKeyboardInterrupt")
                self.buffer, self.ir_lines = [], None
                continue
            try:
                self.feed(line)
            except KeyboardInterrupt:
                self.error("KeyboardInterrupt")
                self.buffer, self.ir_lines = [], None


def _setup_readline(namespace: dict):
    """Line editing, history in ~/.minijax_history and tab completion of commands
    and names. Every step is optional: no readline, a read-only HOME or a broken
    history file cost the user only that feature."""
    try:
        import readline
        import rlcompleter
    except ImportError:
        return
    import atexit
    import os
    names = rlcompleter.Completer(namespace)

    def complete(text, state):
        buffer = readline.get_line_buffer().lstrip()
        if buffer.startswith(":") and " " not in buffer:
            options = [":" + c + " " for c in COMMANDS if (":" + c).startswith(text)]
            return options[state] if state < len(options) else None
        return names.complete(text, state)

    readline.set_completer(complete)
    readline.set_completer_delims(" \t\n`~!@#$%^&*()-=+[{]}\\|;'\",<>/?")
    # libedit (macOS) and GNU readline spell the tab binding differently.
    doc = getattr(readline, "__doc__", "") or ""
    readline.parse_and_bind("bind ^I rl_complete" if "libedit" in doc else "tab: complete")
    path = os.path.join(os.path.expanduser("~"), ".minijax_history")
    try:
        readline.read_history_file(path)
    except (OSError, ValueError):
        pass
    readline.set_history_length(5000)

    def save():
        try:
            readline.write_history_file(path)
        except (OSError, ValueError):
            pass
    atexit.register(save)
