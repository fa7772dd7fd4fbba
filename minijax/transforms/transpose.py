"""Transposition: run a linear program backwards, from output cotangents to input ones.

Read `partial_eval.py` first: `linearize` produces a jaxpr that is linear in its
inputs (the tangents) given its residuals. If that jaxpr computes `y = A t`, its
transpose computes `t_bar = A^T y_bar` -- the vector-Jacobian product. This is how
reverse mode is built from forward mode: vjp = linearize + transpose.

`backward_pass(jaxpr, consts, args, cts_out)` interprets the jaxpr in two sweeps:

1. forward: inputs given as `UndefinedPrimal(aval)` are the linear ones. Every
   equation that reads a linear value is linear; the others (which only read
   residuals) are evaluated now, because the linear ones may need their results;
2. backward: the linear equations, last to first. Each output's cotangent is looked
   up, the primitive's transpose rule turns it into cotangents for the equation's
   linear inputs, and those are *added* into the cotangents of those variables --
   a value used twice (fan-out) receives the sum of both uses' cotangents.

Cotangents are symbolic `Zero`s until something contributes, so equations whose
outputs do not influence the requested cotangents are skipped: transposition does
its own dead-code elimination.

Transpose rules, in `transpose_rules.py`, share one signature:

    rule(cts_out: list, *inputs, **params) -> list with one cotangent per input

where linear inputs arrive as `UndefinedPrimal` and non-linear ones as values; the
result has `None` for non-linear inputs and may have `Zero` for linear ones.

`transpose_jaxpr(jaxpr, linear)` is the IR -> IR pass: the backward pass traced into a
jaxpr from `(non-linear inputs..., output cotangents...)` to the cotangents of the
linear inputs.
"""
from __future__ import annotations

import functools

from ..ir.core import Literal, Jaxpr, ClosedJaxpr
from ..ir.primitives import register_rule_table, GenericPath
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.source_info import source_info_from
from ..ir.trace import MinijaxError, current_trace, set_current_trace
from ..ir import primitives as P
from ..ir.trace import bind
from ..ir.types import RefType, ShapedArray
from ..ir.core import literal_value
from .ad_util import Zero, add_tangents, instantiate, fresh_root, zeros

transpose_rules: dict = register_rule_table(
    "transpose", {}, GenericPath(lambda prim: True, "not linear: never transposed"))


class UndefinedPrimal:
    """A linear input of a program being transposed: only its type is known."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


class NonLinearError(MinijaxError, TypeError):
    """A program being transposed applies a non-linear operation to a linear value."""


class UndefinedRef(UndefinedPrimal):
    """A linear (tangent) ref of a program being transposed. Its cotangent is not a
    value but a ref, `ct_ref`, shared by every equation that touches the tangent ref:
    their transpose rules (transforms/ref_rules.py) read and write it in reverse order."""
    __slots__ = ("ct_ref",)

    def __init__(self, aval, ct_ref):
        super().__init__(aval)
        self.ct_ref = ct_ref


def is_linear(x) -> bool:
    return isinstance(x, UndefinedPrimal)


def backward_pass(jaxpr: Jaxpr, consts, args, cts_out) -> list:
    """Cotangents of `jaxpr`'s invars (Zero where none), given output cotangents.

    `args[i]` is `UndefinedPrimal` for a linear input, else its value."""
    env = {}                   # non-linear var -> value
    linear_vars = set()
    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    cts = {}                   # linear var -> accumulated cotangent (a ref for a ref var)
    for var, value in zip(jaxpr.invars, args):
        if is_linear(value):
            linear_vars.add(var)
            if type(value) is UndefinedRef:
                cts[var] = value.ct_ref      # the caller's cotangent ref, written in place
        else:
            env[var] = value

    def read(atom):
        if type(atom) is Literal:
            return literal_value(atom)
        return UndefinedPrimal(atom.aval) if atom in linear_vars else env[atom]

    def read_linear(atom):
        # A linear ref's cotangent is a ref, made (zeros) at its last use, i.e. the
        # first time the backward sweep meets it, and shared by all its uses.
        if type(atom) is not Literal and atom in linear_vars and type(atom.aval) is RefType:
            if atom not in cts:
                cts[atom] = new_cotangent_ref(atom.aval)
            return UndefinedRef(atom.aval, cts[atom])
        return read(atom)

    linear_eqns = []
    trace = current_trace()
    for eqn in jaxpr.eqns:
        if eqn.primitive.allocates_ref:
            # A ref made in a linear program holds tangents even when its initial
            # value is a constant (zeros): it and every access to it are linear.
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outputs)
            continue
        for atom in eqn.inputs:      # (a Literal is never in the set: identity hashing)
            if atom in linear_vars:
                linear_eqns.append(eqn)
                linear_vars.update(eqn.outputs)
                break
        else:
            with source_info_from(eqn):
                outs = trace.process_primitive(eqn.primitive,
                                               [read(a) for a in eqn.inputs], eqn.params)
            env.update(zip(eqn.outputs, outs))

    def accumulate(var, ct):
        if type(ct) is Zero or ct is None or type(var.aval) is RefType:
            return
        previous = cts.get(var)
        cts[var] = ct if previous is None else add_tangents(previous, ct)

    for var, ct in zip(jaxpr.outvars, cts_out):
        if type(var) is not Literal and var in linear_vars:
            accumulate(var, ct)
    for eqn in reversed(linear_eqns):
        eqn_cts = [cts.pop(v, None) for v in eqn.outputs]
        if all(ct is None for ct in eqn_cts) and not _has_ref_effect(eqn):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise eqn.primitive.missing_rule_error("transpose", NonLinearError(
                f"cannot transpose '{eqn.primitive.name}': it has no transpose rule, so "
                f"it must not be applied to a linear (tangent) value"))
        eqn_cts = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outputs, eqn_cts)]
        with source_info_from(eqn):     # its transpose is from the same line
            cts_in = rule(eqn_cts, *[read_linear(a) for a in eqn.inputs], **eqn.params)
        for atom, ct in zip(eqn.inputs, cts_in):
            if type(atom) is not Literal and atom in linear_vars:
                accumulate(atom, ct)
    return [cts.get(v, Zero(v.aval)) if v in linear_vars else Zero(v.aval)
            for v in jaxpr.invars]


# Refs in a linear program (tangent refs; their rules are in transforms/ref_rules.py).


def new_cotangent_ref(aval: RefType):
    return bind(P.new_ref_p, zeros(aval.inner))


def _has_ref_effect(eqn) -> bool:
    # Writes to a tangent ref have no outputs but still have a transpose (a read of
    # the cotangent ref), so they are never skipped for lack of output cotangents.
    return any(type(a) is not Literal and type(a.aval) is RefType for a in eqn.inputs) \
        or any(type(v.aval) is RefType for v in eqn.outputs)


def transpose_jaxpr(jaxpr, linear=None):
    """The transpose of `jaxpr` with respect to its `linear` inputs (a bool per invar;
    default: all). The result takes `(non-linear inputs..., cotangent refs...,
    output cotangents...)` and returns the cotangents of the linear inputs, in order.
    A linear *ref* input (a tangent ref) has a cotangent ref instead, an input of the
    same type that the transpose reads and writes in place, and no output. A closed
    jaxpr's consts are non-linear and stay consts."""
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(
        convert_constvars_to_invars(jaxpr), [])
    out = _transpose_closed(closed, tuple(linear) if linear is not None
                            else (True,) * len(closed.jaxpr.invars))
    if isinstance(jaxpr, ClosedJaxpr):
        return out
    return convert_constvars_to_invars(out.jaxpr) if not out.consts else out


def _transpose_closed(closed: ClosedJaxpr, linear: tuple, cts_weak=None) -> ClosedJaxpr:
    """`cts_weak`: the weak type of each output cotangent the transpose will be given
    (default: the outputs' own). A cotangent's weak type is the caller's, not the
    output's: the cotangent of a weak tangent output may be a strong array (the 1.0
    seed of a strong loss), and the transposed body computes with what it is given,
    as eager code would (finding F62)."""
    jaxpr = closed.jaxpr
    ct_avals = list(jaxpr.out_avals)
    if cts_weak is not None:
        ct_avals = [a.update(weak_type=w) if isinstance(a, ShapedArray) else a
                    for a, w in zip(ct_avals, cts_weak)]
    nonlinear_avals = [v.aval for v, lin in zip(jaxpr.invars, linear) if not lin]
    ct_ref_avals = [v.aval for v, lin in zip(jaxpr.invars, linear)
                    if lin and type(v.aval) is RefType]
    n_nonlinear, n_inputs = len(nonlinear_avals), len(nonlinear_avals) + len(ct_ref_avals)

    def backward(*args):
        values, ct_refs = iter(args[:n_nonlinear]), iter(args[n_nonlinear:n_inputs])
        inputs = [(UndefinedRef(v.aval, next(ct_refs)) if type(v.aval) is RefType
                   else UndefinedPrimal(v.aval)) if lin else next(values)
                  for v, lin in zip(jaxpr.invars, linear)]
        cts_in = backward_pass(jaxpr, closed.consts, inputs, args[n_inputs:])
        return [instantiate(ct) for ct, v, lin in zip(cts_in, jaxpr.invars, linear)
                if lin and type(v.aval) is not RefType]
    return trace_to_jaxpr(backward, nonlinear_avals + ct_ref_avals + ct_avals)


@functools.lru_cache(maxsize=1024)
def transpose_jaxpr_for_call(jaxpr: Jaxpr, linear: tuple, cts_weak=None):
    """Cached transpose of a call's body (no constvars), for the `jit` rule. Returns
    `(jaxpr, consts)` with the consts to pass as leading inputs. `cts_weak`: the
    cotangents' weak types, one per output (default: the outputs')."""
    with set_current_trace(fresh_root()):
        out = _transpose_closed(ClosedJaxpr(jaxpr, []), linear, cts_weak)
    return convert_constvars_to_invars(out.jaxpr), list(out.consts)
