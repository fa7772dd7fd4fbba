"""`python -m minijax repl [FILE]`: a small interactive shell for poking at minijax.

It is the standard library's `code.InteractiveConsole` with JAX's usual names
preloaded -- `jax` (which is minijax), `jnp` (minijax.numpy), `lax`, `jit`,
`make_jaxpr`, and `np` (NumPy) -- and three changes:

* an error prints one short line (`TypeError: ...`) and the session goes on;
  `import traceback; traceback.print_last()` shows the full traceback;
* when stdin is not a terminal there are no prompts and no banner, so
  `python -m minijax repl < lesson.txt` prints just what the lesson prints and the
  values of its expression lines, as at the `>>>` prompt;
* a line that starts at column 0 right after an indented block ends the block, as a
  blank line would, so a lesson file need not leave a blank line after each block.

`FILE`, when given, runs first as a whole script (like `python -i FILE`), then the
shell reads stdin.
"""
from __future__ import annotations

import code
import codeop
import importlib
import importlib.util
import sys
import traceback


def repl_namespace() -> dict:
    """The names a REPL session starts with, under the names a JAX user expects."""
    import numpy as np
    import minijax
    namespace = {"__name__": "__main__", "__doc__": None, "jax": minijax}
    if importlib.util.find_spec("minijax.numpy") is not None:
        try:
            namespace["jnp"] = importlib.import_module("minijax.numpy")
        except Exception as error:  # the shell stays usable without it
            print(f"warning: minijax.numpy failed to import: {error!r}", file=sys.stderr)
    namespace.update(lax=minijax.lax, jit=minijax.jit, make_jaxpr=minijax.make_jaxpr, np=np)
    return namespace


class Console(code.InteractiveConsole):
    def __init__(self, namespace: dict):
        super().__init__(namespace, filename="<stdin>")

    def run_lines(self, lines):
        """Run lines as if typed at the prompt, but print no prompts."""
        for line in lines:
            self.push(line.rstrip("\r\n"))
        self.push("")  # the end of input ends a pending block

    def push(self, line):
        if self.buffer and line[:1] not in ("", " ", "\t") and self._ends_block(line):
            super().push("")
        return super().push(line)

    def _ends_block(self, line: str) -> bool:
        """Whether `line` cannot continue the pending block although the block itself
        is complete: then it is the next statement, not part of the block."""
        try:
            codeop.compile_command("\n".join([*self.buffer, line]), self.filename)
            return False
        except SyntaxError:
            pass
        try:
            return codeop.compile_command("\n".join(self.buffer) + "\n", self.filename) is not None
        except SyntaxError:
            return False

    def run_file(self, path: str):
        """Run a whole script in the session's namespace, as `python -i FILE` does."""
        try:
            with open(path, encoding="utf-8") as file:
                source = file.read()
            compiled = compile(source, path, "exec")
        except OSError as error:
            self.write(f"{type(error).__name__}: {error}\n")
            return
        except (SyntaxError, ValueError):
            self.showsyntaxerror(path)
            return
        self.runcode(compiled)

    def showtraceback(self):
        exc_type, exc, tb = sys.exc_info()
        sys.last_type, sys.last_value, sys.last_traceback = exc_type, exc, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = exc
        where, script = "", self.locals.get("__file__")
        for frame, lineno in traceback.walk_tb(tb):
            if script is not None and frame.f_code.co_filename == script:
                where = f"{script}, line {lineno}: "
        self.write(where + "".join(traceback.format_exception_only(exc_type, exc)))
        # An error mid-trace must not leave the next line running under that trace.
        from .ir.trace import reset_trace_state
        reset_trace_state()

    def write(self, data):
        sys.stdout.flush()  # keep errors in order with what was printed before them
        sys.stderr.write(data)
        sys.stderr.flush()


def run_repl(file: str | None = None) -> int:
    namespace = repl_namespace()
    loaded = ", ".join(name for name in namespace if not name.startswith("__"))
    console = Console(namespace)
    if file is not None:
        console.locals["__file__"] = file
        console.run_file(file)
    if not sys.stdin.isatty():
        console.run_lines(sys.stdin)
        return 0
    try:
        import readline  # noqa: F401  -- line editing and history at the prompt
    except ImportError:
        pass
    console.interact(banner=f"minijax {namespace['jax'].__version__} REPL; jax is minijax. "
                            f"Loaded: {loaded}.\n"
                            "Errors print one line; `import traceback; traceback.print_last()` "
                            "shows the last in full. Ctrl-D exits.", exitmsg="")
    return 0
