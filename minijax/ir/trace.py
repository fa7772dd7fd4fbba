"""Stackless tracing: one current trace, tracers that know their trace, and `bind`.

Every primitive application goes through `bind(prim, *args, **params)`, which hands
it to the *current* trace. There is no stack of levels: each trace remembers its
`parent` (the trace that was current when it was made) and runs its rules with the
parent installed as current, so the rule's own `bind` calls go one level out.

A `Tracer` belongs to exactly one trace, by identity. When a trace meets a value that
is not its own tracer -- a constant, or a tracer of an outer trace -- it lifts it
(`JVPTrace` gives it a zero tangent, the staging trace closes over it). A tracer of
a trace that is no longer reachable is an escaped tracer and an error.

Each trace carries a `RefLedger` (`ref_ledger.py`): the facts about refs learnt while
it runs live there, and go when the trace goes.

The root is `EvalTrace`, which runs each primitive on concrete values through
`eager_impls`, a table the XLA backend fills in (so `ir` never imports a backend).
"""
from __future__ import annotations

import threading

from . import float_checks as _float_checks
from . import root_modes
from .ref_ledger import RefLedger
from .source_info import begin_operation, end_operation, source_context
from .types import aval_of_value
from .errors import (MinijaxError, TracedShapeError, ConcretizationTypeError,
                     TracerBoolConversionError, TracerIntegerConversionError,
                     TracerArrayConversionError, UnexpectedTracerError)


# Which of JAX's tracer classes does the job of each of minijax's trace kinds (a
# trace's `kind`): a tracer's repr reads as JAX's tracer's for the same program, so
# `print(x)` inside a transformation and the error messages that show a tracer say
# what JAX's say. The same on jax 0.10.2 through 0.12.0.1 (tests/test_tracer_repr.py).
JAX_TRACER_NAMES = {
    "staging": "JitTracer",        # jit, make_jaxpr, eval_shape, checkpoint, loop bodies
    "partial_eval": "JaxprTracer",  # an unknown of linearize's tangent program
    "jvp": "JVPTracer",            # jvp
    # grad, vjp, linearize, jacrev, and jacfwd here, which linearizes once (JAX's
    # jacfwd is vmap of jvp); JAX's class is LinearizeTracer
    "linearize": "GradTracer",
    "vmap": "VmapTracer",          # vmap (JAX's BatchTracer)
    "jet": "JetTracer",            # experimental.jet
}


class Trace:
    """Base class: a context that interprets primitive applications."""
    # The key of its tracers' name in `JAX_TRACER_NAMES` (None: it makes no tracers).
    kind = None
    # Whether one primitive application may become several equations (a jvp rule
    # stages the primal and the tangent): `bind` then looks up the user's source line
    # once for all of them (`source_info.py`). Staging and evaluation make one.
    expands_operations = True
    # Whether this trace records a program -- its results are variables of a program
    # that runs later -- rather than computing values now or handing operations to its
    # parent. The staging trace does. Where any trace of the chain does
    # (`stages_a_program`), a jnp function's body runs inline rather than as one call
    # (`frontend/eager_jit.py`): the program shows its equations, as JAX's does.
    stages_program = False

    def __init__(self, parent: "Trace | None"):
        self.parent = parent
        self._ref_ledger = None

    @property
    def ref_ledger(self) -> RefLedger:
        """What this trace learns about refs (who made one, which are used up, ...):
        kept with the trace and dropped with it (`ref_ledger.py`). Made on first use,
        so a trace that meets no ref pays nothing for it."""
        ledger = self._ref_ledger
        if ledger is None:
            ledger = self._ref_ledger = RefLedger()
        return ledger

    def process_primitive(self, prim, args, params):
        raise NotImplementedError(type(self).__name__)

    def is_ancestor_of(self, other: "Trace") -> bool:
        trace = other
        while trace is not None:
            if trace is self:
                return True
            trace = trace.parent
        return False

    def __repr__(self):
        return f"{type(self).__name__}@{id(self):x}"


class Tracer:
    """A value being traced. Operators and methods are attached by `minijax.numpy`."""
    __array_priority__ = 1000
    __slots__ = ("_trace",)

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def concrete_value(self):
        """The underlying concrete value, or None if it depends on traced inputs."""
        return None

    def _concrete_or_raise(self, what, error=ConcretizationTypeError):
        """The concrete value, or `error` (JAX's class for the mistake) if it is traced."""
        value = self.concrete_value()
        if value is None:
            raise error(
                f"{what} needs a concrete value, but this is an abstract tracer, "
                f"{self._short_repr()}. Python control flow "
                f"cannot depend on values traced by jit; use lax.cond / jnp.where, or "
                f"mark the argument static with static_argnums.")
        return value

    def __bool__(self):
        return bool(self._concrete_or_raise("bool()", TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete_or_raise("int()"))

    def __float__(self):
        return float(self._concrete_or_raise("float()"))

    def __index__(self):
        return int(self._concrete_or_raise("an index (__index__)",
                                           TracerIntegerConversionError))

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__} (tracers are not hashable)")

    def __array__(self, *args, **kwargs):
        value = self._concrete_or_raise("conversion to a NumPy array",
                                        TracerArrayConversionError)
        import numpy as np
        return np.asarray(value, *args, **kwargs)

    def __repr__(self):
        return self._short_repr()

    def _short_repr(self) -> str:
        # JAX's default form, for the kinds whose tracers show no contents
        return f"{JAX_TRACER_NAMES.get(self._trace.kind, 'Tracer')}<{self.aval}>"


def short_repr(x) -> str:
    """How a tracer shows a value it holds: a tracer by its own short form, anything
    else by `str` (an array's values, as JAX prints a JVPTracer's primal)."""
    return x._short_repr() if isinstance(x, Tracer) else str(x)


def refuse_traced_dims(fname: str, dims) -> None:
    """JAX's TypeError when a shape argument holds a traced size (`jnp.ones((n,))`
    under `jit` with `n` a jitted argument): the shape of every value must be known
    when the function is traced, so the size has to be static."""
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    if any(isinstance(d, Tracer) and d.concrete_value() is None for d in dims):
        raise TracedShapeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {dims}. "
            f"{fname}: a size here is a traced value, but every shape must be known while "
            f"tracing; mark the argument static (static_argnums/static_argnames) or "
            f"compute the size from an array's .shape.")


# -- the current trace ----------------------------------------------------------------

class _TraceState(threading.local):
    def __init__(self):
        self.trace = EvalTrace()


class EvalTrace(Trace):
    """The root trace: apply primitives to concrete values right away."""
    expands_operations = False

    def __init__(self):
        super().__init__(parent=None)

    def process_primitive(self, prim, args, params):
        for arg in args:
            if isinstance(arg, Tracer):
                raise UnexpectedTracerError(
                    f"an escaped tracer {arg!r} reached {prim.name} outside its "
                    f"transformation. A traced value was stored somewhere (a global, a "
                    f"list, an attribute) and used after the function returned.")
        try:
            impl = eager_impls[prim]
        except KeyError:
            raise NotImplementedError(f"no eager implementation registered for "
                                      f"{prim.name}; import minijax first") from None
        if root_modes.modes.key_reuse and eager_key_reuse:
            # the keys this operation consumes are checked against those used before
            check_keys, run = eager_key_reuse[0], impl
            impl = lambda *args, **params: check_keys(prim, args, params, run)
        if root_modes.modes.jax_applied:    # a transfer guard, jax_no_execution
            with root_modes.applied_to_jax():
                outs = impl(*args, **params)
        else:
            outs = impl(*args, **params)
        if _float_checks.checks_on():      # jax_debug_nans / jax_debug_infs
            name = params.get("name")    # a call primitive's function: jit(f)
            _float_checks.check_outputs(
                f"{prim.name}({name})" if isinstance(name, str) else prim.name, outs)
        return outs


class CompileTimeEvalTrace(EvalTrace):
    """The trace of an `ensure_compile_time_eval` block inside a transformation: an
    operation on concrete values runs now (its result is a value, not a staged
    equation); one that meets a tracer goes to `outer`, the trace that was current
    when the block began, as in JAX."""
    # Its chain stops here (no parent), and what it does not run now, `outer` stages:
    # so calls met here are taken as met by a staging trace.
    stages_program = True

    def __init__(self, outer: Trace):
        super().__init__()
        self.outer = outer

    def process_primitive(self, prim, args, params):
        if any(isinstance(arg, Tracer) for arg in args):
            with set_current_trace(self.outer):
                return self.outer.process_primitive(prim, args, params)
        return super().process_primitive(prim, args, params)


_state = _TraceState()
# Filled by minijax.backends: primitive -> function(*concrete_args, **params).
eager_impls: dict = {}
# `transforms/key_reuse.py` puts here the function `(prim, args, params, impl) -> outs`
# that runs an eager primitive while `jax_debug_key_reuse` is on: its consumed keys
# are refused and marked, as JAX's root trace does.
eager_key_reuse: list = []


def current_trace() -> Trace:
    return _state.trace


def stages_a_program(trace: Trace) -> bool:
    """Whether `trace` or any trace it runs over records a program (`stages_program`),
    so that a call made now would show up in a program rather than only run."""
    while trace is not None:
        if trace.stages_program:
            return True
        trace = trace.parent
    return False


def root_trace() -> "EvalTrace":
    """The root of the current chain of traces: the owner of eager ref boxes."""
    trace = _state.trace
    while trace.parent is not None:
        trace = trace.parent
    return trace


class set_current_trace:
    """`with set_current_trace(trace): ...` -- `trace` is current inside the block.

    Every rule a transformation runs is inside one (the parent is current while the
    rule binds), so it is a small class rather than a generator-based context
    manager, which costs several times as much to enter and leave. Entering or
    leaving the root trace also updates `root_modes` (what cached jitted calls test)."""
    __slots__ = ("trace", "previous", "starts", "crosses_root")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        trace = self.trace
        previous = self.previous = _state.trace
        _state.trace = trace
        was_root, is_root = type(previous) is EvalTrace, type(trace) is EvalTrace
        # Leaving the root: a transformation starts (see `TransformationScope`).
        self.starts = was_root and not is_root
        self.crosses_root = was_root is not is_root
        if self.starts:
            try:
                transformation_scope.enter()
            except BaseException:
                _state.trace = previous
                raise
        if self.crosses_root:
            root_modes.set_here("at_root", is_root)
        return trace

    def __exit__(self, *exc):
        _state.trace = self.previous
        if self.starts:
            transformation_scope.exit()
        if self.crosses_root:
            root_modes.set_here("at_root", type(self.previous) is EvalTrace)
        return False


class TransformationScope:
    """Counts the minijax transformations running (in any thread) and calls the
    registered `(on_first_start, on_last_end)` pairs when the count leaves and
    returns to zero. `minijax.numpy` uses it to give `jax.Array` indexing a minijax
    path only while minijax is tracing (`numpy/_array_interop.py`); outside every
    transformation -- and so whenever JAX runs its own programs -- nothing is changed."""

    def __init__(self):
        self.hooks: list = []
        self.active = 0
        self._lock = threading.Lock()

    def register(self, on_first_start, on_last_end):
        self.hooks.append((on_first_start, on_last_end))

    def enter(self):
        with self._lock:
            self.active += 1
            if self.active == 1:
                for on_first_start, _ in self.hooks:
                    on_first_start()

    def exit(self):
        with self._lock:
            self.active -= 1
            if self.active == 0:
                for _, on_last_end in self.hooks:
                    on_last_end()

    def reset(self):
        with self._lock:
            if self.active:
                for _, on_last_end in self.hooks:
                    on_last_end()
            self.active = 0


transformation_scope = TransformationScope()


def reset_trace_state():
    """Back to a fresh root trace (for tests and for the REPL after an interrupt)."""
    _state.trace = EvalTrace()
    root_modes.set_here("at_root", True)
    transformation_scope.reset()
    source_context.reset()


def bind(prim, *args, **params):
    """Apply `prim` in the current trace. Returns one value, or a list if
    `prim.multiple_results`."""
    trace = _state.trace
    if trace.expands_operations and begin_operation():
        try:
            outs = trace.process_primitive(prim, args, params)
        finally:
            end_operation()
    else:
        outs = trace.process_primitive(prim, args, params)
    return outs if prim.multiple_results else outs[0]


def aval_of(x):
    """The aval of a tracer or a concrete value."""
    if isinstance(x, Tracer):
        return x.aval
    return aval_of_value(x)
