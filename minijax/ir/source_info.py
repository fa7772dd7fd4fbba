"""Where an equation came from: the line of the user's code that staged it.

Every equation a trace records carries a `SourceInfo`: the user's frame at the
moment of the `bind`, i.e. the innermost frame whose code lives outside minijax (and
outside JAX and the Python standard library, which minijax calls into and which
call back into it). `saved_residuals` names it (`output of sin from f.py:4:8 (f)`,
in JAX's format), and error messages about refs say `created at f.py:4`.

An `Eqn` never looks its source info up itself: whoever makes it passes it. Two
kinds of makers:

* **traced from Python** (`StagingTrace`, and the partial-eval trace under
  `linearize`): `current_source_info()` walks the call stack with `sys._getframe`.
  Whether a file is the user's is decided once per file name, so the walk costs a
  few dictionary lookups per equation. What it finds, a code object and an
  instruction offset, names a call site, and every equation made at one call site
  shares that site's one `SourceInfo` (`_sites`, looked up by the code object's
  id and the offset): recording it allocates nothing, so a deep trace leaves no
  extra object per equation for the garbage collector to scan. The file, line,
  column and function name are worked out only when shown. When a transformation's
  rule turns one operation into several equations (jvp: the primal and the
  tangent), `bind` looks the frame up once for all of them (`begin_operation`).
  The walk is what tracing pays for source info, about 5-9% of `make_jaxpr`'s time
  (CPython builds a frame object for each frame of minijax's it passes), 3-5%
  under `grad`.
* **made by a pass** from an equation of an existing jaxpr (jvp, partial eval,
  transpose, vmap, remat, discharge, DCE): an equation the pass builds itself
  copies the source info of the one it rewrites (`eqn.replace(...)`, or
  `Eqn(..., eqn.source_info)`; discharge's builder holds the one being
  discharged). A rule that traces instead (binds primitives in a staging trace)
  cannot pass it through `bind`, so the pass's per-equation loop runs under
  `source_info_from(eqn)`, and the trace reads it from there when it stages.
  The context wins over the call stack, whose user frame would be the line that
  called `grad` rather than the line that wrote the operation.

Which of the two applies is the one piece of state here: `source_context`, the
thread's `SourceContext`, changed only by `begin_operation`/`end_operation` and the
context managers below, and reset with the rest of the tracing state by
`reset_trace_state` (trace.py). The call sites met so far (`_sites`) are a cache:
`forget_source_sites` (run by `clear_caches`) empties it, and equations keep the
`SourceInfo`s they hold.

Source info is a comment, never part of the program: the printer does not show it,
parsed equations have none, and equations are compared by identity, never by it.
Inside `named_scope`s an equation's source info is a `ScopedSourceInfo`, which also
holds the scope (the thread's `source_context.scope`, empty at the start of each
trace); lowering names the equation's XLA ops with it, as JAX's name stack does.
"""
from __future__ import annotations

import contextlib
import os
import sysconfig
import threading
from sys import _getframe

__all__ = ["SourceInfo", "ScopedSourceInfo", "SourceContext", "source_context",
           "name_scope", "fresh_scope",
           "forget_source_sites", "current_source_info", "user_source_info", "user_location",
           "source_info_from", "caller_source_info", "no_source_info", "user_code"]


class SourceInfo:
    """A call site in the user's code: a code object and an instruction offset, shown
    as JAX shows it, `file:line:column (function)`."""
    __slots__ = ("code", "lasti")

    def __init__(self, code, lasti: int):
        self.code = code
        self.lasti = lasti

    @property
    def file(self) -> str:
        return self.code.co_filename

    @property
    def function(self) -> str:
        return self.code.co_qualname

    @property
    def line(self) -> int:
        return self._position()[0]

    @property
    def column(self) -> int:
        return self._position()[1]

    def _position(self) -> tuple:
        # One position per 2-byte code unit; the offset points at the call being made.
        for i, (line, _, column, _) in enumerate(self.code.co_positions()):
            if i == self.lasti // 2:
                return (line if line is not None else self.code.co_firstlineno,
                        column or 0)
        return self.code.co_firstlineno, 0

    def __str__(self):
        # JAX's summary: `file:line:column (function)`, the column left out when 0.
        line, column = self._position()
        where = f"{self.file}:{line}:{column}" if column else f"{self.file}:{line}"
        return f"{where} ({self.function})"

    def __repr__(self):
        return f"SourceInfo({self})"


class ScopedSourceInfo(SourceInfo):
    """A call site inside `named_scope`s: `scope` is their names, outermost first,
    joined by '/', relative to the jaxpr the equation is in (a trace starts with no
    scope, as JAX's does). Lowering names the equation's XLA ops with it."""
    __slots__ = ("scope",)

    def __init__(self, code, lasti: int, scope: str):
        super().__init__(code, lasti)
        self.scope = scope


def _scoped(info, scope):
    # (A site outside every user frame has no source info, so no scope either.)
    return None if info is None else ScopedSourceInfo(info.code, info.lasti, scope)


class _OffsetsOf(dict):
    """offset -> SourceInfo, for the call sites in one code object (which it keeps
    alive, so that the code object's id, its key in `_sites`, stays its own)."""
    __slots__ = ("code",)

    def __init__(self, code):
        self.code = code

    def __missing__(self, lasti):
        info = self[lasti] = SourceInfo(self.code, lasti)
        return info


# id(code object) -> _OffsetsOf: one SourceInfo per call site, made the first time an
# equation is traced there. Keyed by id because hashing a code object hashes its
# contents, which would cost more than the rest of the lookup.
_sites: dict = {}
_MAX_SITE_CODES = 4096


def forget_source_sites():
    """Drop the call sites met so far (they keep their code objects alive); equations
    already made keep their own SourceInfo, and new ones are made on demand."""
    _sites.clear()


# -- which frames are the user's ------------------------------------------------------------

def _internal_prefixes() -> tuple:
    import jax
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prefixes = {package, os.path.dirname(os.path.abspath(jax.__file__))}
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_path(key)
        if path:
            prefixes.add(os.path.abspath(path))
    return tuple(p + os.sep for p in prefixes)


class _InternalFiles(dict):
    """co_filename -> whether it is minijax's, JAX's or the standard library's,
    worked out the first time a file is met (`internal_files[name]` is one lookup)."""
    prefixes = _internal_prefixes()

    def __missing__(self, filename: str) -> bool:
        # `<input 1>`, `<stdin>`: code compiled from a string is the user's.
        internal = not filename.startswith("<") and \
            os.path.abspath(filename).startswith(self.prefixes)
        self[filename] = internal
        return internal


internal_files = _InternalFiles()


def walk_frames(frame) -> SourceInfo | None:
    """The call site (`_sites`) of the first user frame from `frame` outwards."""
    internal = internal_files
    while frame is not None:
        code = frame.f_code
        if not internal[code.co_filename]:
            per_code = _sites.get(id(code))
            if per_code is None:
                if len(_sites) >= _MAX_SITE_CODES:
                    _sites.clear()
                per_code = _sites[id(code)] = _OffsetsOf(code)
            return per_code[frame.f_lasti]
        frame = frame.f_back
    return None


def user_source_info(depth: int = 1) -> SourceInfo | None:
    """The innermost frame outside minijax, JAX and the standard library, starting
    `depth` frames above the caller; None if every frame is internal."""
    return walk_frames(_getframe(depth + 1))


def user_stacklevel() -> int:
    """The `stacklevel` that points a warning issued by the caller at the user's line
    (the first frame outside minijax, JAX and the standard library), as JAX's
    warnings point at the line that called JAX."""
    frame, level, internal = _getframe(1), 1, internal_files
    while frame is not None and internal[frame.f_code.co_filename]:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


def user_location() -> str:
    """'file:line' of the user's frame, for messages ('the ref created at ...')."""
    info = user_source_info(1)
    return "<unknown>" if info is None else f"{info.file}:{info.line}"


# -- the current operation or equation ------------------------------------------------------

class SourceContext(threading.local):
    """Where the source info of new equations comes from, in this thread: the only
    state source info keeps. `mode` is one of

    * `WALK`: nowhere yet -- walk the call stack;
    * `OPERATION`: one user operation, being expanded by a transformation's rule into
      several equations (`bind`, in trace.py) -- `info` is its frame, looked up once;
    * `EQUATION`: an equation of an existing jaxpr, being processed by a pass --
      `info` is that equation's.

    User code a rule calls back (a custom_jvp rule) is looked up afresh (`user_code`),
    except inside a pass, where the equation being processed is the origin, as in JAX.
    There is one instance, `source_context`; the functions and context managers below
    are the only code that changes it, and `reset()` (run by `reset_trace_state` in
    trace.py, with the rest of the tracing state) puts it back to `WALK`."""
    WALK, OPERATION, EQUATION = 0, 1, 2

    def __init__(self):
        self.info = None
        self.mode = SourceContext.WALK
        self.scope = ""         # the `named_scope`s around the code being traced

    def reset(self):
        self.info, self.mode, self.scope = None, SourceContext.WALK, ""

    def enter(self, info, mode) -> tuple:
        """Switch to `(info, mode)`; returns what to `restore` afterwards."""
        saved = (self.info, self.mode)
        self.info, self.mode = info, mode
        return saved

    def restore(self, saved: tuple):
        self.info, self.mode = saved


source_context = SourceContext()
_WALK, _OPERATION, _EQUATION = SourceContext.WALK, SourceContext.OPERATION, SourceContext.EQUATION


def pass_source_info():
    """The source info of the operation or equation being processed (None outside
    one), for a rule that builds an `Eqn` for it directly."""
    return source_context.info


def current_source_info():
    """What a newly traced equation records. Only a trace's `process_primitive`, or
    a helper it calls, calls this, and only minijax calls those: the walk starts
    above them, three frames up."""
    context = source_context
    if context.mode:
        return context.info
    if context.scope:
        return _scoped(walk_frames(_getframe(3)), context.scope)
    return walk_frames(_getframe(3))


def begin_operation() -> bool:
    """Called by `bind` for a user operation a transformation will expand: look up
    the user's frame (above `bind`) once for every equation it stages. Returns
    whether it did; if so, `end_operation()` must follow."""
    context = source_context
    if context.mode:
        return False
    info = walk_frames(_getframe(2))
    context.info = _scoped(info, context.scope) if context.scope else info
    context.mode = _OPERATION
    return True


def end_operation():
    context = source_context
    context.info, context.mode = None, _WALK


class name_scope(contextlib.ContextDecorator):
    """`with name_scope("layer"):` -- equations traced inside record the scope (JAX's
    `named_scope`); nested scopes join with '/'. Also a decorator, as JAX's is."""

    def __init__(self, name: str):
        self.name = name

    def _recreate_cm(self):
        # each decorated call enters a scope of its own (calls may nest or recurse)
        return name_scope(self.name)

    def __enter__(self):
        context = source_context
        self.saved = context.scope
        context.scope = f"{self.saved}/{self.name}" if self.saved else self.name

    def __exit__(self, *exc):
        source_context.scope = self.saved
        return False


class fresh_scope:
    """Around the tracing of a new jaxpr: its equations' scopes start empty, as JAX's
    name stack does, so a scope is relative to the jaxpr and nested lowering joins
    them once."""
    __slots__ = ("saved",)

    def __enter__(self):
        self.saved = source_context.scope
        source_context.scope = ""

    def __exit__(self, *exc):
        source_context.scope = self.saved
        return False


class source_info_from:
    """`with source_info_from(eqn): ...` -- equations made inside are `eqn`'s."""
    __slots__ = ("info", "saved")

    def __init__(self, eqn):
        self.info = eqn.source_info if eqn is not None else None

    def __enter__(self):
        self.saved = source_context.enter(self.info, _EQUATION)

    def __exit__(self, *exc):
        source_context.restore(self.saved)
        return False


class caller_source_info:
    """`with caller_source_info(): ...` -- equations made inside all take the source
    info an equation made here would: the user's line (or the operation's, or the
    equation's a pass is processing). For a call whose body's equations are recorded
    in place of the call (`ir/staging.py`): they are the caller's."""
    __slots__ = ("saved",)

    def __enter__(self):
        context = source_context
        if context.mode:
            info = context.info
        else:
            info = walk_frames(_getframe(1))
            info = _scoped(info, context.scope) if context.scope else info
        self.saved = context.enter(info, _EQUATION)

    def __exit__(self, *exc):
        source_context.restore(self.saved)
        return False


def no_source_info():
    """A context in which equations record no source info (parsing, checks)."""
    return source_info_from(None)


class user_code:
    """`with user_code(): rule(...)` -- around user code that a transformation's rule
    calls: equations it stages come from its own lines (in a pass: the equation's)."""
    __slots__ = ("saved",)

    def __enter__(self):
        context = source_context
        if context.mode == _OPERATION:
            self.saved = context.enter(None, _WALK)
        else:
            self.saved = context.enter(context.info, context.mode)

    def __exit__(self, *exc):
        source_context.restore(self.saved)
        return False
