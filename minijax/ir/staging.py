"""The staging trace: run a Python function on tracers and record a `Jaxpr`.

`trace_to_jaxpr(fun, in_avals)` makes a `StagingTrace` whose parent is the current
trace, feeds `fun` one tracer per input, and records every `bind` as an equation,
with the user's line that made it (`source_info.py`).

Closure conversion happens in `to_atom`: a value the function uses but did not
receive -- a NumPy/jax array it closed over, or a tracer of an *outer* trace (say,
a jvp tracer captured by a jitted inner function) -- becomes a constvar of the
jaxpr, and its value is returned alongside so the caller can pass it back in. Rank-0
concrete values become `Literal`s inline instead, as in JAX's jaxprs.

One equation is folded rather than recorded, as JAX folds it: `convert_element_type`
of a rank-0 host constant (a Python or NumPy scalar, not an array of a backend; or a
tracer of this trace that stands for such a literal, as `jnp.array(3.0)` under jit
does) is the converted `Literal`, and of a NumPy array to the type it has, the array's
constvar. `lax.convert_element_type(4.0, jnp.float16)` in a traced
function is then the literal `4.0:f16[]` that JAX's jaxpr has, not an equation whose
output a checkpointed backward pass would save (fuzz finding F31).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np

from .checks import checks_enabled, check_traced
from . import leak_checks
from .core import Var, Literal, Eqn, Jaxpr, ClosedJaxpr, literal_value
from .elementwise import convert_element_type_p
from .primitives import jit_p, signature_of
from .source_info import caller_source_info, current_source_info, fresh_scope, no_source_info
from .errors import UnexpectedTracerError
from .trace import (Trace, Tracer, current_trace, set_current_trace, aval_of,
                    JAX_TRACER_NAMES)
from .types import ShapedArray, is_key


class StagingTracer(Tracer):
    # `ir_var`, not `var`: that is the array method `.var()`. A Var, or the Literal a
    # folded equation made (see `process_primitive`).
    __slots__ = ("ir_var",)

    def __init__(self, trace: "StagingTrace", var: Var):
        self._trace = trace
        self.ir_var = var

    @property
    def aval(self):
        return self.ir_var.aval

    # Read by every lax operation's dtype check: one property call rather than two.
    dtype = property(lambda self: self.ir_var.aval.dtype)

    def _short_repr(self):
        return f"{JAX_TRACER_NAMES[self._trace.kind]}({self.ir_var.aval})"


class StagingTrace(Trace):
    kind = "staging"
    expands_operations = False     # one application, one equation
    stages_program = True

    def __init__(self, parent: Trace):
        super().__init__(parent)
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.const_values: list = []
        self._const_var_by_id: dict[int, tuple] = {}

    def new_arg(self, aval) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def new_args(self, avals) -> list:
        """`new_arg` of each aval, at once (a trace's inputs can be thousands)."""
        invars = [Var(aval) for aval in avals]
        self.invars.extend(invars)
        return [StagingTracer(self, var) for var in invars]

    def to_atom(self, x):
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.ir_var
            if not x._trace.is_ancestor_of(self):
                raise UnexpectedTracerError(
                    f"an escaped tracer {x!r} was used in a function being traced; it "
                    f"belongs to a transformation that has already finished.")
            return self._closed_over(x, aval_of(x))
        aval = aval_of(x)
        if aval.shape == () and isinstance(aval, ShapedArray) and not is_key(aval.dtype):
            return Literal(np.asarray(x), aval)   # a key is never a literal: a constvar
        return self._closed_over(x, aval)

    def _closed_over(self, value, aval) -> Var:
        # Keyed by identity; the original object is kept alive so its id stays unique.
        original = value
        known = self._const_var_by_id.get(id(original))
        if known is not None:
            return known[1]
        if isinstance(value, np.ndarray) and value.dtype != aval.dtype:
            value = value.astype(aval.dtype)  # x64 is off: f64 constants become f32
        var = Var(aval)
        self._const_var_by_id[id(original)] = (original, var)
        self.constvars.append(var)
        self.const_values.append(value)
        return var

    def process_primitive(self, prim, args, params):
        # Run once per traced operation, so written for speed: plain loops (in Python
        # 3.11 each comprehension is a function call) and one-output operations, the
        # common case, without a loop at all.
        if prim is jit_p and params.get("inline"):
            return self._inline_call(params["jaxpr"], args)
        inputs, in_avals = [], []
        for x in args:
            # This trace's own tracers are most inputs: read their variables directly.
            atom = x.ir_var if type(x) is StagingTracer and x._trace is self else self.to_atom(x)
            inputs.append(atom)
            in_avals.append(atom.aval)
        signature = signature_of(prim, in_avals, params)
        out_avals = signature.out_avals
        if prim is convert_element_type_p:
            # (A tracer standing for a literal -- `jnp.array(3.0)` under jit -- is a
            # host scalar JAX knows the value of, and folds the same way.)
            if _is_host_scalar(args[0]) or type(inputs[0]) is Literal and \
                    type(args[0]) is StagingTracer:
                # The tracer stands for a literal: its `ir_var` is that Literal, which
                # every reader (equation inputs, outvars, to_atom) takes as an atom.
                return [StagingTracer(self, _converted_literal(inputs[0], out_avals[0]))]
            if in_avals[0] == out_avals[0]:
                # A host array converted to the type it has (`lax` forwards an array
                # or tracer itself): the constant is forwarded, as JAX forwards it.
                return [StagingTracer(self, inputs[0])]
        if len(out_avals) == 1:
            var = Var(out_avals[0])
            self.eqns.append(Eqn(prim, inputs, params, (var,), signature.effects,
                                 current_source_info()))
            return [StagingTracer(self, var)]
        outputs = tuple([Var(aval) for aval in out_avals])
        self.eqns.append(Eqn(prim, inputs, params, outputs, signature.effects,
                             current_source_info()))
        return [StagingTracer(self, v) for v in outputs]

    def _inline_call(self, body: Jaxpr, args) -> list:
        """A `jit` call marked `inline` (JAX's `jit(..., inline=True)`; the jnp
        functions' calls, `frontend/eager_jit.py`): its body's equations are recorded
        here in place of the call, as JAX's staging does. This is the one place the
        flag is honoured; evaluating such a call, or transforming it, treats it as any
        call. The equations take the *caller's* source info -- the user's line that
        made the call, or the call equation's when a pass re-traces a program -- not
        the lines recorded in the body, which was traced (and cached) wherever the
        function was first called."""
        with caller_source_info():
            env = dict(zip(body.invars, args))
            for eqn in body.eqns:
                inputs = [literal_value(a) if type(a) is Literal else env[a]
                          for a in eqn.inputs]
                # (A nested inline call is met here again, and inlined in turn.)
                outs = self.process_primitive(eqn.primitive, inputs, eqn.params)
                env.update(zip(eqn.outputs, outs))
        # Each output is this trace's tracer, as a recorded call's would be: a literal
        # output keeps its aval (a weak type), a forwarded input is taken in.
        return [StagingTracer(self, a) if type(a) is Literal else self._own(env[a])
                for a in body.outvars]

    def _own(self, x) -> StagingTracer:
        if type(x) is StagingTracer and x._trace is self:
            return x
        return StagingTracer(self, self.to_atom(x))

    def to_closed_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.const_values)


_HOST_SCALAR_TYPES = (bool, int, float, complex, np.generic, np.ndarray)


def _is_host_scalar(x) -> bool:
    return isinstance(x, _HOST_SCALAR_TYPES) and np.ndim(x) == 0


def _converted_literal(literal: Literal, out_aval) -> Literal:
    value = literal.value
    if np.iscomplexobj(value) and not np.issubdtype(out_aval.dtype, np.complexfloating):
        value = value.real
    return Literal(value.astype(out_aval.dtype), out_aval)


def trace_to_jaxpr(fun, in_avals) -> ClosedJaxpr:
    """Trace `fun(*tracers) -> list of outputs` at `in_avals` into a closed jaxpr.

    The closed jaxpr's consts may be tracers of the enclosing trace (closures over
    traced values); bind the jaxpr in that trace to use it."""
    trace = StagingTrace(parent=current_trace())
    with _collector_paused():
        with set_current_trace(trace), fresh_scope():
            outs = fun(*trace.new_args(in_avals))
        closed = trace.to_closed_jaxpr(outs)
        # The tracers go before the collector resumes (its first pass scans every
        # object made while it was paused): only the jaxpr is left to scan.
        del outs
    if leak_checks.checking.on:
        leak_checks.check_no_leaks(trace)
    if checks_enabled():
        with no_source_info():      # what the check parses back is not the user's code
            check_traced(closed)
    return closed


@contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while tracing.

    Tracing allocates many small, long-lived objects (vars, equations, avals) and no
    cycles worth collecting; with the collector on, its full collections rescan every
    one of them again and again, making tracing cost grow faster than program size.
    Reference counting still frees everything that is dropped."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def convert_constvars_to_invars(jaxpr: Jaxpr) -> Jaxpr:
    """The same program with its constvars turned into leading inputs."""
    if not jaxpr.constvars:
        return jaxpr
    return Jaxpr((), jaxpr.constvars + jaxpr.invars, jaxpr.eqns, jaxpr.outvars)
