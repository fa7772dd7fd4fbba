"""linearize = jvp + partial evaluation; vjp = linearize + transpose.

Read `jvp.py`, `partial_eval.py` and `transpose.py` first; this file only wires them.

`linearize_flat(fun, primals)` runs `fun` under a JVP trace whose parent is a
partial-eval trace in which the *tangent* inputs are the unknowns:

    current trace  <-  PartialEvalTrace (tangents unknown)  <-  JVPTrace

Every primal operation has only known inputs, so the partial evaluator hands it on to
the current trace: it runs eagerly (so `if x > 0:` works) or is staged into an
enclosing jaxpr. Every tangent operation reads an unknown tangent, so it is recorded
into the *linear jaxpr*, with the primal values it needs (`cos(x)` for `sin`) as
residuals. The result is the primal outputs plus a closed linear jaxpr: tangents in,
tangents out, residuals as consts.

`vjp_flat` transposes that linear jaxpr with `backward_pass`: the cotangent function
is the linear jaxpr run backwards, in whatever trace is current when it is called.
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir import leak_checks
from ..ir import primitives as P
from ..ir.core import ClosedJaxpr
from ..ir.trace import aval_of, current_trace, set_current_trace
from .ad_util import Zero, tangent_aval, is_differentiable, eval_jaxpr, scalar
from .dce import dce_jaxpr
from .jvp import JVPTrace
from .partial_eval import PartialEvalTrace
from .policies import everything_saveable
from .transpose import backward_pass, UndefinedPrimal


class Linearized(NamedTuple):
    """`primals_out`: the outputs of the function. `linear_jaxpr`: a closed jaxpr
    from the tangents of the differentiable inputs (`differentiable[i]`) to the
    tangents of all outputs, its consts the residuals. `out_differentiable[j]`: whether
    output j has a real (not float0) tangent."""
    primals_out: list
    linear_jaxpr: ClosedJaxpr
    differentiable: tuple
    out_differentiable: tuple


def linearize_flat(fun, primals, policy=everything_saveable) -> Linearized:
    """Linearize `fun(*primals) -> list of outputs` at `primals`."""
    partial_trace = PartialEvalTrace(parent=current_trace(), policy=policy)
    jvp_trace = JVPTrace(parent=partial_trace, tag="linearize")
    differentiable = tuple(is_differentiable(_aval(p)) for p in primals)
    inputs = [jvp_trace.make_tracer(p, partial_trace.new_arg(tangent_aval(_aval(p))))
              if diff else p for p, diff in zip(primals, differentiable)]
    with set_current_trace(jvp_trace):
        primals_out, tangents_out = jvp_trace.unpack_all(fun(*inputs))
    out_differentiable = tuple(is_differentiable(_aval(p)) for p in primals_out)
    with set_current_trace(partial_trace):
        # A tangent that is provably zero still has to be an output of the linear
        # jaxpr: materialise it there (staged, so it costs no residual). So is one that
        # no tangent input reaches (a custom_jvp rule's instantiated zeros, summed): a
        # linear map's constant is zero, and returning the known value would make it a
        # residual (JAX's linearize returns a zero literal there).
        tangents_out = [_staged_zeros(partial_trace, _as_zero(t))
                        if diff and (type(t) is Zero or not partial_trace.is_unknown(t))
                        else t for t, diff in zip(tangents_out, out_differentiable)]
    linear = partial_trace.to_jaxpr([t for t, diff in zip(tangents_out, out_differentiable)
                                     if diff])
    # Tangent equations no tangent output needs are dropped, with the residuals only
    # they read (as JAX's linearize does): the tangent of a value a zero-derivative op
    # (sign, floor) discards saves nothing, and a custom_vjp call whose result is
    # unused leaves no custom_lin to fail when the linear function runs.
    linear = dce_jaxpr(linear).jaxpr
    if leak_checks.checking.on:
        del inputs
        leak_checks.check_no_leaks(jvp_trace)
    return Linearized(primals_out, linear, differentiable, out_differentiable)


def _aval(x):
    return aval_of(x)


def _as_zero(t):
    return t if type(t) is Zero else Zero(tangent_aval(aval_of(t)))


def _staged_zeros(partial_trace: PartialEvalTrace, zero: Zero):
    aval = zero.aval
    value = scalar(0, aval.dtype, aval.weak_type)
    if not aval.shape:
        return value
    return partial_trace.stage(P.broadcast_in_dim_p, [value],
                               dict(shape=aval.shape, broadcast_dimensions=()))[0]


def apply_linear(linearized: Linearized, tangents) -> list:
    """Run the linear jaxpr on tangents of the differentiable inputs."""
    linear = linearized.linear_jaxpr
    return eval_jaxpr(linear.jaxpr, linear.consts, tangents)


def vjp_backward(linearized: Linearized, cotangents) -> list:
    """Cotangents of the differentiable inputs given cotangents of the differentiable
    outputs (`Zero` allowed). Returns `Zero` for inputs that receive none."""
    return transpose_linear(linearized.linear_jaxpr, cotangents)


def transpose_linear(linear: ClosedJaxpr, cotangents) -> list:
    """`vjp_backward` of a linear jaxpr whose consts (the residuals) may come from
    elsewhere than its linearization: a pullback unflattened with other leaves."""
    args = [UndefinedPrimal(v.aval) for v in linear.jaxpr.invars]
    return backward_pass(linear.jaxpr, linear.consts, args, cotangents)


def linear_jaxpr_pruned(linearized: Linearized) -> ClosedJaxpr:
    """The linear jaxpr without dead equations (for display)."""
    return dce_jaxpr(linearized.linear_jaxpr).jaxpr
