"""This thread's modes of eager evaluation, and the one flag a cached call reads.

A cached call of a jitted function (`frontend/jit.py`) or an eager `jnp` call
(`frontend/eager_jit.py`) may go straight to JAX's compiled executable only when this
thread is

* at the root trace (not inside a minijax transformation, nor in an
  `ensure_compile_time_eval` block),
* not inside `disable_jit` (`jax_disable_jit`), and
* checking no values for NaN or infinity (`jax_debug_nans` / `jax_debug_infs`), and
* checking no keys for reuse (`jax_debug_key_reuse`: each eager call must look at
  which keys it consumes, `transforms/key_reuse.py`), and
* not under a flag minijax applies by entering JAX's own context manager around its
  dispatch (`jax_applied`: a transfer guard, `jax_no_execution`;
  `frontend/config_flags.py` registers that context as `applied_to_jax`).

Testing those one by one (`current_trace()`, `float_checks.checks_on()`, ...)
cost about half of minijax's Python in front of JAX's C++ dispatch. So the modes live
together here, each change goes through `set_here` (or `set_default`), and that
recomputes `modes.direct`: the one attribute the hot paths read. `at_root` is kept by
`ir/trace.py`'s `set_current_trace` (and `reset_trace_state`), the only code that
changes the current trace. When `direct` is False, a caller that can still run
compiled (at the root under NaN checks, say) makes the exact checks itself.

Reading a per-thread attribute is itself most of that test (about 50 ns, a plain
attribute 2 ns), so `everywhere.direct` says the same of every thread at once: True
while no thread has left that state and a thread started now would start in it. A hot
path reads it first and the per-thread flag only when it is False (some thread, maybe
this one, is inside a transformation, `disable_jit` or NaN checks). Every change goes
through `set_here` under one lock, so the set of threads that are not direct and the
flag change together; a thread that ends takes itself out of the set (the flag is
recomputed at the next change anywhere).

The modes are per thread, as JAX's are: `set_default` (what `config.update` calls)
sets the value every thread starts from and this thread's value; `set_here` (the
context managers) changes this thread's value only. `config.reset()` puts the
configurable ones back where they started, through `float_checks.set_default` and
`frontend/jit.py`'s `set_jit_disabled_by_config`; `reset_trace_state` resets `at_root`.
"""
from __future__ import annotations

import contextlib
import threading

# The values each thread starts from (set by `config.update`).
_defaults = {"nans": False, "infs": False, "jit_disabled": False, "key_reuse": False,
             "jax_applied": False}


class _RootModes(threading.local):
    def __init__(self):
        self.at_root = True      # a thread starts at its root trace
        self.nans = _defaults["nans"]
        self.infs = _defaults["infs"]
        self.jit_disabled = _defaults["jit_disabled"]
        self.key_reuse = _defaults["key_reuse"]
        self.jax_applied = _defaults["jax_applied"]
        self.direct = _direct(self)
        # Dropped with this thread's modes when the thread ends.
        self.departure = _Departure(threading.get_ident())
        with _lock:
            _note(self.direct)


def _direct(state) -> bool:
    return state.at_root and not (state.nans or state.infs or state.jit_disabled
                                  or state.key_reuse or state.jax_applied)


class _Everywhere:
    __slots__ = ("direct",)


class _Departure:
    __slots__ = ("ident",)

    def __init__(self, ident):
        self.ident = ident

    def __del__(self):
        # (No lock here: this may run in any thread, at any point. Leaving the set
        # can only make the flag True at the next recompute, never wrongly False.)
        _not_direct.discard(self.ident)


everywhere = _Everywhere()
everywhere.direct = False     # until `modes` below is made
_not_direct: set = set()      # the idents of threads whose modes are not direct
# Reentrant: making a thread's modes (on its first read, which may happen under the
# lock) takes it too.
_lock = threading.RLock()


def _note(direct: bool):
    """Record this thread's `direct` (under `_lock`) and recompute `everywhere`."""
    if direct:
        _not_direct.discard(threading.get_ident())
    else:
        _not_direct.add(threading.get_ident())
    everywhere.direct = not _not_direct and not any(_defaults.values())


modes = _RootModes()


def set_here(mode: str, flag: bool):
    """This thread's `mode` ("at_root", "nans", "infs", "jit_disabled" or "key_reuse")
    is `flag`.
    (Called whenever a transformation enters or leaves the root, so the name is not
    checked here: the callers are minijax's own, and `set_default` checks.)"""
    with _lock:
        setattr(modes, mode, bool(flag))
        modes.direct = direct = _direct(modes)
        _note(direct)


def set_default(mode: str, flag: bool):
    """`mode` is `flag` in every thread started from now on, and in this one."""
    if mode not in _defaults:
        raise ValueError(f"unknown configurable root mode {mode!r}")
    with _lock:
        _defaults[mode] = bool(flag)
        set_here(mode, flag)



# What `applied_to_jax` enters: set by `frontend/config_flags.py` (this module sits
# below the frontend, and the root trace's dispatch reads it).
_jax_context = [contextlib.nullcontext]


def applied_to_jax():
    """JAX's context managers for the flags minijax applies through them, with this
    thread's values: entered around a dispatch while `modes.jax_applied`."""
    return _jax_context[0]()
