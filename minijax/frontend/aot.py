"""Ahead-of-time compilation: `jit(f).lower(*args)` and its `.compile()`.

`Lowered` wraps JAX's own `Lowered` of the XLA program minijax emits for `f`, and
`Compiled` the executable; both speak in `f`'s dynamic arguments and output pytree
(as JAX's, the executable is called without the static arguments), and with refs
they move the refs' contents in and out of the program as a call of the jitted
function does (frontend/jit.py).
"""
from __future__ import annotations

from jax import tree_util

from .pytrees import fun_name
from .stages import CallInfo, StagedFacts
from .ref_checks import check_staged_refs, path_text, value_of
from .tracing import flatten_call_inputs
from .vmap import describe_argument
from ..backends import xla
from ..backends.eager_ref_runtime import DonatingProgram, run_discharged
from ..ir.trace import Tracer
from ..transforms.discharge import mentions_refs


class Traced(StagedFacts):
    """`jit(f).trace(*args)`: minijax's trace of that call, as `jax.stages.Traced`.
    `jaxpr` is the closed jaxpr a call binds; `lower()` lowers it to XLA without
    tracing again."""

    def __init__(self, jitted, args, kwargs):
        staged, _ = jitted._stage(args, kwargs)
        self._info = CallInfo(jitted, staged, args, kwargs)
        self._args, self._kwargs = args, kwargs

    @property
    def jaxpr(self):
        return self._info.staged.closed

    @property
    def fun_name(self) -> str:
        return fun_name(self._info.jitted._fun)

    out_avals = property(lambda self: self._info.out_avals)
    out_info = property(lambda self: self._info.out_info())

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None):
        """`lowering_platforms`: lower for these platforms (say `('tpu',)` on a CPU
        machine, to read the program), as JAX's; such a program compiles only there."""
        return Lowered(self._info.jitted, self._args, self._kwargs,
                       lowering_platforms=lowering_platforms)

    def __repr__(self):
        return f"<Traced {self.fun_name}>"


class Lowered(StagedFacts):
    """`jit(f).lower(...)`: JAX's `Lowered` object for the XLA program minijax emits,
    whose `.compile()` gives a function of `f`'s own dynamic arguments returning
    `f`'s own output pytree, as JAX's does. Donated arguments (`donate_argnums`) are donated as
    a call of the jitted function donates them.

    XLA never sees a ref: with refs the program lowered is the discharged one, whose
    inputs are the refs' contents (closed-over refs first, so they are read at each
    call) and whose extra outputs are the final contents of the refs it writes; the
    compiled function stores those contents back in the boxes (a donated ref's
    buffer is reused for them). Without refs closed-over arrays are embedded."""

    def __init__(self, jitted, args, kwargs, lowering_platforms=None):
        # jitted: the `JitFunction` (frontend/jit.py) whose `lower(*args, **kwargs)`
        # made this
        staged, leaves = jitted._stage(args, kwargs)
        self._jitted, self._staged = jitted, staged
        self._info = CallInfo(jitted, staged, args, kwargs)
        dyn_args, dyn_kwargs = jitted.dynamic_arguments(args, kwargs)
        self._in_tree = self._info.in_tree
        self._consts = list(staged.closed.consts)
        if mentions_refs(staged.closed.jaxpr):
            inputs = self._consts + list(leaves)
            donated = jitted.donated_leaves(args, kwargs)
            self._plan = DonatingProgram.plan(
                staged.call_jaxpr, inputs, tuple(len(self._consts) + k for k in donated))
            values = self._plan.inputs([value_of(x) for x in inputs])
            program = xla.compile_jaxpr(self._plan.program, self._plan.donate_argnums,
                                        xla.placement_key(jitted.placement))
            self._lowered = program.lower(*values) if lowering_platforms is None else \
                program.trace(*values).lower(lowering_platforms=lowering_platforms)
        else:
            self._plan = None
            positions, names = jitted.donated_arguments(args, kwargs)
            # Named after `f`, as JAX names the module of `jax.jit(f).lower(...)`.
            self._lowered = xla.lower_closed_jaxpr(
                staged.closed, staged.out_tree, dyn_args, dyn_kwargs, positions, names,
                xla.placement_key(jitted.placement), name=fun_name(jitted._fun),
                lowering_platforms=lowering_platforms)

    out_info = property(lambda self: self._info.out_info(weak_types=False))

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        return self._lowered.as_text(dialect, debug_info=debug_info)

    def compile(self, compiler_options=None, *, device_assignment=None) -> "Compiled":
        return Compiled(self, self._lowered.compile(compiler_options,
                                                    device_assignment=device_assignment))

    def __getattr__(self, name):        # the rest of JAX's Lowered (cost_analysis, ...)
        return getattr(self._lowered, name)


class Compiled(StagedFacts):
    """The executable of a `Lowered`: call it with the dynamic arguments `lower` was
    given -- the static ones are part of the executable and are left out, as with
    JAX's -- of the types `lower` saw; refs' contents are updated as a call of the
    jitted function would update them.

    Without refs a call is a call of JAX's executable, which takes `f`'s own pytrees
    (`xla.lower_closed_jaxpr`): JAX's C++ flattens the arguments, checks their
    structure, shapes and dtypes against those lowered, runs, and builds the output
    pytree, so the call costs what a call of `jax.jit(f).lower(...).compile()` costs.
    As in JAX, an argument whose weak type differs from the one lowered is taken
    (the program is fixed; only its inputs' shapes and dtypes matter). A call JAX
    refuses is looked at again by minijax (`_checked_leaves`), which names the
    mismatch. With refs every call takes that look, which also checks that the refs
    are live, not views and not aliased before the program reads and writes them."""

    def __init__(self, lowered: Lowered, compiled):
        self._from, self._compiled = lowered, compiled
        self._info = lowered._info
        plan = lowered._plan
        self._run_with_refs = None if plan is None else plan.wrap(compiled)

    def __call__(self, *args, **kwargs):
        if self._run_with_refs is None:
            try:
                return self._compiled(*args, **kwargs)
            except TypeError as error:    # other types or structure, a ref, a tracer
                refused = error
            # (Out of the except clause, so that minijax's error is not shown as
            # raised while handling JAX's.)
            self._checked_leaves(args, kwargs)      # names the mismatch
            raise refused       # none that minijax sees: JAX's own reason stands
        lowered = self._from
        outs = run_discharged(self._run_with_refs, lowered._plan.info,
                              lowered._consts + self._checked_leaves(args, kwargs),
                              fun_name(lowered._jitted._fun))
        return tree_util.tree_unflatten(lowered._staged.out_tree, outs)

    @property
    def out_info(self):
        # JAX's executable knows the outputs' shardings and layouts; with refs its
        # outputs include the refs' contents, so minijax's trace answers.
        if self._run_with_refs is None:
            return self._compiled.out_info
        return self._info.out_info(weak_types=False)

    def _checked_leaves(self, args, kwargs) -> list:
        """The call's leaves, after the checks of a staged call (valid values; refs
        live, not views, not aliased, not also closed over) and a comparison of their
        structure and types with those `lower` saw; a mismatch is a TypeError."""
        lowered = self._from
        jitted, staged = lowered._jitted, lowered._staged
        where = f"jit({fun_name(jitted._fun)})"
        leaves, in_avals, in_tree = flatten_call_inputs(args, kwargs, where)
        lowered_tree = lowered._in_tree
        if any(isinstance(leaf, Tracer) for leaf in leaves):
            raise TypeError(f"the executable of {jitted!r} was compiled for one signature "
                            f"and runs outside every transformation; under grad, vmap or "
                            f"jit, call the jitted function itself")
        if in_tree != lowered_tree and _passes_statics(jitted, args, kwargs, lowered_tree):
            raise TypeError(f"the executable of {jitted!r} is called without its static "
                            f"arguments, as JAX's is: their values at `lower` are part "
                            f"of it")
        # A compiled program's inputs have no weak types.
        if in_tree != lowered_tree:
            mismatches = [f"arguments of the structure {in_tree}, compiled for "
                          f"{lowered_tree}"]
        else:
            mismatches = [
                f"{_leaf_name(jitted, path)} compiled with {want.str_short()} and called "
                f"with {got.str_short()}"
                for path, got, want in zip(_leaf_paths(args, kwargs), in_avals,
                                           staged.closed.in_avals)
                if _strong(got) != _strong(want)]
        if mismatches:
            raise TypeError(f"this executable of {jitted!r} was compiled for arguments "
                            f"of other types; lower it again for these: "
                            + "; ".join(mismatches))
        check_staged_refs(staged.closed, leaves, where)
        return leaves

    def __getattr__(self, name):        # the rest of JAX's Compiled (as_text, ...)
        return getattr(self._compiled, name)


def _strong(aval):
    strip = getattr(aval, "strip_weak_type", None)    # a ref's type has no weak type
    return aval if strip is None else strip()


def _leaf_paths(args, kwargs) -> list:
    return [path for path, _ in tree_util.tree_flatten_with_path((tuple(args), kwargs))[0]]


def _leaf_name(jitted, path) -> str:
    """`argument x`, `argument d['a']`, `kwargs['y']` as JAX names them; with static
    arguments left out, positions no longer match the signature: `args[0]`."""
    if jitted._static_argnums:
        return path_text(path)
    return describe_argument(jitted._fun, path)


def _passes_statics(jitted, args, kwargs, in_tree) -> bool:
    """Whether a call whose structure is not `in_tree` would match it without the
    static arguments (passed, as minijax's executables took them until session 11)."""
    try:
        return tree_util.tree_structure(jitted.dynamic_arguments(args, kwargs)) == in_tree
    except ValueError:          # an unhashable static argument: not that mistake
        return False
