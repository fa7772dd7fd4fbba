"""`minijax.debug.breakpoint`: stop a program where it runs and look around.

At trace time `breakpoint` records the Python stack above it (the user's frames:
minijax's and JAX's own are left out unless `filter_frames=False`) with each
frame's locals. The locals that are traced values become the operands of a
`debug.callback`; when the program runs, the callback rebuilds the frames with
their runtime values and hands them to a debugger. So under jit it stops each time
the compiled program reaches it, once per iteration in a loop, once per example
under vmap -- JAX's semantics, with JAX's text debugger: the `(jdb)` prompt and its
commands (p, pp, u(p), d(own), l(ist), w(here)/bt, c(ontinue), q(uit)); any other
line is evaluated in the current frame. `backend` picks a debugger registered with
`register_debugger` (this module registers "cli"); the extra keyword arguments
(`stdin`, `stdout`) go to it.
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import os
import pprint
import sys
import threading
import traceback
from typing import Any

import jax
import numpy as np
from jax import tree_util

from ..ir.trace import Tracer

_MINIJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__)) + os.sep


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame as the debugger shows it."""
    filename: str
    locals: dict
    globals: dict
    code_context: Any
    source: list
    lineno: int
    offset: int | None

    @classmethod
    def of(cls, info) -> "DebuggerFrame":
        try:
            _, start = inspect.getsourcelines(info.frame)
            source = inspect.getsource(info.frame).split("\n")
            # `start` is 0 for a whole module's source, else the first line's number.
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except OSError:
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context,
                   source, info.lineno, offset)


def _internal(info) -> bool:
    name = os.path.abspath(info.filename)
    return name.startswith(_MINIJAX_DIR) or name.startswith(_JAX_DIR)


class _CantFlatten:
    def __repr__(self):
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


def _split_locals(frames):
    """The traced values among the frames' locals, and how to put runtime values back."""
    traced, layout = [], []
    for frame in frames:
        entries = []
        for name, value in frame.locals.items():
            try:
                leaves, tree = tree_util.tree_flatten(value)
            except Exception:                # noqa: BLE001  (any unflattenable value)
                entries.append((name, None, cant_flatten, ()))
                continue
            mask = tuple(isinstance(leaf, Tracer) for leaf in leaves)
            if not any(mask):
                entries.append((name, None, value, ()))
                continue
            kept = [None if m else leaf for m, leaf in zip(mask, leaves)]
            traced.extend(leaf for m, leaf in zip(mask, leaves) if m)
            entries.append((name, tree, kept, mask))
        layout.append(entries)
    return traced, layout


def _rebuild(frames, layout, values):
    values = iter(values)
    out = []
    for frame, entries in zip(frames, layout):
        local = {}
        for name, tree, kept, mask in entries:
            if tree is None:
                local[name] = kept
                continue
            leaves = [jax.numpy.asarray(next(values)) if m else leaf
                      for m, leaf in zip(mask, kept)]
            local[name] = tree_util.tree_unflatten(tree, leaves)
        out.append(dataclasses.replace(frame, locals=local))
    return out


_debuggers: dict = {}
_lock = threading.Lock()


def register_debugger(name: str, debugger, priority: int) -> None:
    """Add a debugger `debugger(frames, thread_id, **kwargs)`; the highest priority one
    is the default."""
    if name in _debuggers:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debuggers[name] = (priority, debugger)


def get_debugger(backend: str | None = None):
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    if not _debuggers:
        raise ValueError("No debuggers registered!")
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,
               num_frames: int | None = None, ordered: bool = False, token=None,
               **kwargs):
    """Enter a debugger here, with the runtime values of the frames' locals (see the
    module docstring). With `token` (arrays), the breakpoint runs once they are
    computed and they are returned unchanged."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    frames = [DebuggerFrame.of(info) for info in infos
              if not (filter_frames and _internal(info))]
    if num_frames is not None:
        frames = frames[:num_frames]
    traced, layout = _split_locals(frames)

    def stop(*values):
        rebuilt = _rebuild(frames, layout, values)
        thread_id = (None if threading.current_thread() is threading.main_thread()
                     else threading.get_ident())
        with _lock:
            get_debugger(backend)(rebuilt, thread_id, **kwargs)

    from .. import debug, lax, pure_callback
    if token is None:
        debug.callback(stop, *traced, ordered=ordered)
        return None
    token, traced = lax.stop_gradient((token, traced))

    def stop_then_pass(token, *values):
        stop(*values)
        return token
    shapes = tree_util.tree_map(lambda t: jax.ShapeDtypeStruct(np.shape(t), t.dtype), token)
    return pure_callback(stop_then_pass, shapes, token, *traced)


class CliDebugger(cmd.Cmd):
    """The text debugger, JAX's `jdb`: its prompt, commands and messages."""
    prompt = "(jdb) "

    def __init__(self, frames, thread_id, stdin=None, stdout=None, completekey="tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
        self.intro = "Entering jdb:"

    def evaluate(self, expr):
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _show(self, expr, form):
        try:
            print(form(self.evaluate(expr)), file=self.stdout)
        except Exception:                    # noqa: BLE001  (shown as pdb shows it)
            kind, error = sys.exc_info()[:2]
            print("***", traceback.format_exception_only(kind, error)[-1].strip(),
                  file=self.stdout)

    def default(self, line):
        self._show(line, repr)

    def do_p(self, arg):
        """p expression: evaluate and print the expression's value."""
        self._show(arg, repr)

    def do_pp(self, arg):
        """pp expression: evaluate and pretty-print the expression's value."""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines=2):
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(f"->  {line}" if i == frame.offset else f"    {line}")
        print("\n".join(lines), file=self.stdout)

    def do_up(self, arg, /):
        """u(p): move up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg, /):
        """d(own): move down a stack frame."""
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, _):
        """l(ist): the source around the current line."""
        self.print_context(num_lines=5)
    do_l = do_list

    def do_continue(self, _):
        """c(ont(inue)): let the program go on."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, _):
        """q(uit), exit: leave the debugger and exit the program."""
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def do_where(self, _):
        """w(here), bt: the stack, most recent frame last."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else f"    {frame.source[frame.offset].strip()}")
        print("\n".join(lines), file=self.stdout)
    do_w = do_bt = do_where

    def run(self):
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


register_debugger("cli", lambda frames, thread_id, **kwargs:
                  CliDebugger(frames, thread_id, **kwargs).run(), -1)
