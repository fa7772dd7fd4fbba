"""Forward-mode differentiation: the JVP trace and the `jvp_jaxpr` pass.

Read `ad_util.py` (symbolic zeros) first; the per-primitive rules are in
`jvp_rules.py`.

A `JVPTracer` carries a value and its tangent: `(primal, tangent)`. The `JVPTrace`
that owns it interprets each primitive application by looking up the primitive's
rule in `jvp_rules`, whose one signature is

    rule(primals: list, tangents: list, **params) -> JvpResult(primals_out, tangents_out)

Tangents may be `Zero`. The rule runs with the trace's *parent* as the current trace
(stackless tracing), so every `bind` inside it -- the primal computation and the
tangent computation alike -- goes one level out: to the eager evaluator, to a
staging trace, to the partial evaluator of `linearize`, or to another JVP trace
(higher-order derivatives).

Two shortcuts keep the trace cheap:
* an application none of whose inputs has a tangent is handed to the parent untouched;
* outputs whose tangent is a symbolic zero are returned as plain parent values, not
  wrapped, so the zero costs nothing further.

`JVPTracer.concrete_value()` is the primal's concrete value, so Python control flow
on values (`if x > 0:`) works under `jvp` and `grad` outside `jit`, as in JAX.

`jvp_jaxpr(jaxpr)` is the same machinery as an IR -> IR pass: it re-runs the jaxpr
under a JVP trace whose parent is a staging trace, giving a jaxpr from
`(primals, tangents)` to `(primals_out, tangents_out)`.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from ..ir import leak_checks
from ..ir.core import Jaxpr, ClosedJaxpr
from ..ir.primitives import register_rule_table
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import (Trace, Tracer, aval_of, current_trace, set_current_trace,
                        JAX_TRACER_NAMES, short_repr)
from ..ir.types import RefType, is_inexact
from .ad_util import (Zero, tangent_aval, is_differentiable, instantiate, eval_jaxpr,
                      fresh_root)


class JvpResult(NamedTuple):
    primals_out: list
    tangents_out: list


jvp_rules: dict = register_rule_table("jvp", {})


class PrimalTracer(Tracer):
    """A tracer of a forward-mode trace: a primal value (its `primal` slot) and what
    the transformation carries beside it (a tangent here, a Taylor series in
    `jet.py`). Its type and concrete value are the primal's."""
    __slots__ = ()

    @property
    def aval(self):
        return aval_of(self.primal)

    def concrete_value(self):
        primal = self.primal
        return primal.concrete_value() if isinstance(primal, Tracer) else primal


class JVPTracer(PrimalTracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: "JVPTrace", primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent      # never a Zero: zero tangents are not wrapped

    def _short_repr(self):
        kind = self._trace.kind
        primal = short_repr(self.primal)
        if kind == "linearize":     # the tangent is a variable of the linear program
            tangent = aval_of(self.tangent).str_short(True)
            return f"{JAX_TRACER_NAMES[kind]}(primal={primal}, typeof(tangent)={tangent})"
        return f"{JAX_TRACER_NAMES[kind]}(primal={primal}, tangent={short_repr(self.tangent)})"


class JVPTrace(Trace):
    """Differentiates every primitive applied to its tracers. `tag` names the
    transformation (for messages); ownership of tracers is by trace identity."""

    def __init__(self, parent: Trace, tag: str = "jvp"):
        super().__init__(parent)
        self.tag = tag

    @property
    def kind(self):
        return self.tag

    def make_tracer(self, primal, tangent):
        """`primal` with `tangent`; a symbolic zero tangent needs no tracer at all."""
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)

    def unpack(self, x):
        """(primal, tangent) of any value: values that are not ours have zero tangent."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero(tangent_aval(aval_of(x)))

    def unpack_all(self, outs) -> JvpResult:
        """The primals and the tangents of a function's outputs, as two lists."""
        pairs = [self.unpack(x) for x in outs]
        return JvpResult([p for p, _ in pairs], [t for _, t in pairs])

    def process_primitive(self, prim, args, params):
        primals = []
        has_tangent = False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                has_tangent = True
            else:
                primals.append(x)
        parent = self.parent
        if not has_tangent and not prim.allocates_ref:
            with set_current_trace(parent):
                return parent.process_primitive(prim, primals, params)
        tangents = [x.tangent if type(x) is JVPTracer and x._trace is self
                    else Zero(tangent_aval(aval_of(x))) for x in args]
        rule = jvp_rules.get(prim)
        if rule is None:
            raise prim.missing_rule_error("jvp", NotImplementedError(
                f"differentiation rule for '{prim.name}' is not implemented (no jvp rule)"))
        with set_current_trace(parent):
            primals_out, tangents_out = rule(primals, tangents, **params)
        return [p if type(t) is Zero else JVPTracer(self, p, t)
                for p, t in zip(primals_out, tangents_out)]


# -- jvp of a flat function and of a jaxpr -------------------------------------------------

def jvp_flat(fun, primals, tangents, parent: Trace) -> JvpResult:
    """Run `fun(*primals) -> list` under a fresh JVP trace (child of `parent`)."""
    trace = JVPTrace(parent)
    inputs = [trace.make_tracer(p, t) for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
        outs = fun(*inputs)
    result = trace.unpack_all(outs)
    if leak_checks.checking.on:
        del inputs, outs
        leak_checks.check_no_leaks(trace)
    return result


class JvpJaxpr(NamedTuple):
    """A jvp'd jaxpr without constvars: inputs `consts + primals + tangents` (tangents
    only where `nonzeros`), outputs `primals_out + tangents_out` (only where
    `out_nonzeros`)."""
    jaxpr: Jaxpr
    consts: list
    out_nonzeros: tuple


def _jvp_traceable(jaxpr: Jaxpr, consts, nonzeros, instantiate_outs):
    n_primals = len(jaxpr.invars)

    def fun(*args):
        primals, tangent_args = args[:n_primals], iter(args[n_primals:])
        tangents = [next(tangent_args) if nz else Zero(tangent_aval(v.aval))
                    for v, nz in zip(jaxpr.invars, nonzeros)]
        result = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, consts, xs), primals, tangents,
                          current_trace())
        out_tangents = []
        for var, t in zip(jaxpr.outvars, result.tangents_out):
            if not is_differentiable(var.aval):
                continue                  # integer outputs have float0 tangents: omitted
            out_tangents.append(instantiate(t) if instantiate_outs else t)
        fun.out_nonzeros = tuple(type(t) is not Zero for t in out_tangents)
        return list(result.primals_out) + [t for t in out_tangents if type(t) is not Zero]
    return fun


def has_tangent_input(aval) -> bool:
    # A ref of an inexact dtype passed into a call has a tangent ref beside it
    # (transforms/ref_rules.py), which the jvp'd body reads and writes.
    return is_differentiable(aval) or (isinstance(aval, RefType) and is_inexact(aval.dtype))


def _jvp_closed(closed: ClosedJaxpr, nonzeros, instantiate_outs) -> tuple:
    jaxpr = closed.jaxpr
    nonzeros = [bool(nz) and has_tangent_input(v.aval) for v, nz in zip(jaxpr.invars, nonzeros)]
    fun = _jvp_traceable(jaxpr, closed.consts, nonzeros, instantiate_outs)
    in_avals = jaxpr.in_avals + [v.aval for v, nz in zip(jaxpr.invars, nonzeros) if nz]
    return trace_to_jaxpr(fun, in_avals), fun.out_nonzeros


def jvp_jaxpr(jaxpr, nonzeros=None, instantiate: bool = True):
    """The JVP of `jaxpr` as a jaxpr: `(primals..., tangents...) -> (primals_out...,
    tangents_out...)`.

    `nonzeros[i]` says whether input i gets a tangent input (default: every float
    input; integer inputs never do). Integer outputs get no tangent output. With
    `instantiate=False`, tangent outputs that are provably zero are left out too.
    A `ClosedJaxpr` gives a `ClosedJaxpr`; a `Jaxpr` gives a `Jaxpr` (its constvars,
    if any, are treated as leading inputs)."""
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(
        convert_constvars_to_invars(jaxpr), [])
    if nonzeros is None:
        nonzeros = [True] * len(closed.jaxpr.invars)
    out, _ = _jvp_closed(closed, nonzeros, instantiate)
    if isinstance(jaxpr, ClosedJaxpr):
        return out
    return convert_constvars_to_invars(out.jaxpr) if not out.consts else out


@functools.lru_cache(maxsize=1024)
def jvp_jaxpr_for_call(jaxpr: Jaxpr, nonzeros: tuple) -> JvpJaxpr:
    """Cached JVP of a call's body (a jaxpr without constvars), zeros not instantiated.
    Used by the `jit` rule so that differentiating a jitted function stays one call."""
    with set_current_trace(fresh_root()):
        out, out_nonzeros = _jvp_closed(ClosedJaxpr(jaxpr, []), nonzeros, False)
    return JvpJaxpr(convert_constvars_to_invars(out.jaxpr), list(out.consts), out_nonzeros)


# The rules are registered by importing their module.
