"""Ahead-of-time compilation: `jit(f).lower(*args)` and its `.compile()`.

`Lowered` wraps JAX's own `Lowered` of the XLA program minijax emits for `f`, and
`Compiled` the executable; both speak in `f`'s arguments and output pytree, and with
refs they move the refs' contents in and out of the program as a call of the jitted
function does (frontend/jit.py).
"""
from __future__ import annotations

from jax import tree_util

from .pytrees import fun_name
from .ref_checks import value_of
from ..backends import xla
from ..backends.eager_ref_runtime import DonatingProgram, run_discharged
from ..transforms.discharge import mentions_refs


class Lowered:
    """`jit(f).lower(...)`: JAX's `Lowered` object for the XLA program minijax emits,
    whose `.compile()` gives a function of `f`'s own arguments returning `f`'s own
    output pytree, as JAX's does. Donated arguments (`donate_argnums`) are donated as
    a call of the jitted function donates them.

    XLA never sees a ref: with refs the program lowered is the discharged one, whose
    inputs are the refs' contents (closed-over refs first, so they are read at each
    call) and whose extra outputs are the final contents of the refs it writes; the
    compiled function stores those contents back in the boxes (a donated ref's
    buffer is reused for them). Without refs closed-over arrays are embedded."""

    def __init__(self, jitted, staged, leaves, donated: tuple):
        # jitted: the `JitFunction` (frontend/jit.py) whose `lower` made this
        self._jitted, self._staged = jitted, staged
        self._consts = list(staged.closed.consts)
        if mentions_refs(staged.closed.jaxpr):
            inputs = self._consts + list(leaves)
            self._plan = DonatingProgram.plan(
                staged.call_jaxpr, inputs, tuple(len(self._consts) + k for k in donated))
            values = self._plan.inputs([value_of(x) for x in inputs])
            self._lowered = xla.compile_jaxpr(
                self._plan.program, self._plan.donate_argnums).lower(*values)
        else:
            self._plan = None
            self._lowered = xla.lower_closed_jaxpr(staged.closed, *leaves,
                                                   donate_argnums=donated)

    def as_text(self, *args, **kwargs) -> str:
        return self._lowered.as_text(*args, **kwargs)

    def compile(self, *args, **kwargs) -> "Compiled":
        return Compiled(self, self._lowered.compile(*args, **kwargs))

    def __getattr__(self, name):        # the rest of JAX's Lowered (cost_analysis, ...)
        return getattr(self._lowered, name)


class Compiled:
    """The executable of a `Lowered`: call it with arguments of the types `lower` was
    given; refs' contents are updated as a call of the jitted function would update
    them."""

    def __init__(self, lowered: Lowered, compiled):
        self._from, self._compiled = lowered, compiled

    def __call__(self, *args, **kwargs):
        lowered = self._from
        staged, leaves = lowered._jitted._stage(args, kwargs)
        if staged.closed.jaxpr is not lowered._staged.closed.jaxpr:
            raise TypeError(f"this executable of {lowered._jitted!r} was compiled for "
                            f"arguments of other types; lower it again for these")
        plan = lowered._plan
        if plan is None:
            outs = self._compiled(*leaves)
        else:
            outs = run_discharged(plan.wrap(self._compiled), plan.info,
                                  lowered._consts + list(leaves),
                                  fun_name(lowered._jitted._fun))
        return tree_util.tree_unflatten(staged.out_tree, outs)

    def __getattr__(self, name):        # the rest of JAX's Compiled (as_text, ...)
        return getattr(self._compiled, name)
