"""Helpers shared by the control-flow rules in `cond.py`, `loops.py` and `scan.py`.

Read `ir/control_flow_primitives.py` first. Every rule for a control-flow primitive
does the same three things: transform each *body* with the pass's own
jaxpr -> jaxpr function, rearrange the body's inputs and outputs into the
primitive's calling convention (consts, carry, xs), and bind the primitive again.
This module holds the pieces for that:

* `jvp_body` -- the JVP of a body, with per-output control over which tangent
  outputs are materialised (loops need a tangent for exactly the carries that
  have one going in, whatever the body does);
* `merge_bodies` -- several bodies, each with its own closed-over values, turned into
  bodies that all take *every* body's values, so one `cond` equation can pass the
  same inputs whichever branch runs;
* `reorder` -- the same jaxpr with its inputs/outputs permuted (no equation changes);
* `trace_body` -- trace a Python function into a body (no constvars) plus the values
  it closed over, under a fresh root trace so nothing leaks in from outside;
* `strip_debug_effects` -- a body without its prints, for a recomputation that
  must not print a second time.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

from ..ir import control_flow_primitives as CF
from ..ir.core import Jaxpr, Eqn, Var, jaxprs_in_params
from ..ir.primitives import effects_of
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import current_trace, set_current_trace, aval_of
from .ad_util import (Zero, tangent_aval, is_differentiable, eval_jaxpr, fresh_root,
                      zeros)
from .jvp import jvp_flat


class Body(NamedTuple):
    """A traced body: `jaxpr` (no constvars) takes `consts` first, then its inputs."""
    jaxpr: Jaxpr
    consts: list


def trace_body(fun, in_avals) -> Body:
    """Trace `fun(*args) -> list` at `in_avals` into a closed body."""
    with set_current_trace(fresh_root()):
        closed = trace_to_jaxpr(fun, list(in_avals))
    return Body(convert_constvars_to_invars(closed.jaxpr), list(closed.consts))


def run_body(jaxpr: Jaxpr, args) -> list:
    """Evaluate a body inline in the current trace."""
    return eval_jaxpr(jaxpr, (), list(args))


# -- jvp ------------------------------------------------------------------------------

class JvpBody(NamedTuple):
    """`jaxpr` takes `consts, primals, tangents (where nonzeros)` and returns
    `primals_out, tangents_out (where out_nonzeros)`."""
    jaxpr: Jaxpr
    consts: list
    out_nonzeros: tuple


def jvp_body(jaxpr: Jaxpr, nonzeros: Sequence[bool], instantiate: Sequence[bool]) -> JvpBody:
    """The JVP of a body. `nonzeros[i]`: input i has a tangent input. `instantiate[j]`:
    output j gets a tangent output even if it is provably zero (unless it is not
    differentiable: integer outputs never have one)."""
    nonzeros = [bool(nz) and is_differentiable(v.aval) for v, nz in zip(jaxpr.invars, nonzeros)]
    n = len(jaxpr.invars)
    found: list = []

    def fun(*args):
        tangent_args = iter(args[n:])
        tangents = [next(tangent_args) if nz else Zero(tangent_aval(v.aval))
                    for v, nz in zip(jaxpr.invars, nonzeros)]
        result = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, (), xs), args[:n], tangents,
                          current_trace())
        out_tangents, out_nonzeros = [], []
        for var, t, inst in zip(jaxpr.outvars, result.tangents_out, instantiate):
            if not is_differentiable(var.aval):
                out_nonzeros.append(False)
                continue
            if type(t) is Zero and inst:
                t = zeros(t.aval)
            out_nonzeros.append(type(t) is not Zero)
            if type(t) is not Zero:
                out_tangents.append(t)
        found[:] = out_nonzeros
        return list(result.primals_out) + out_tangents

    in_avals = [v.aval for v in jaxpr.invars] + [
        tangent_aval(v.aval) for v, nz in zip(jaxpr.invars, nonzeros) if nz]
    body = trace_body(fun, in_avals)
    return JvpBody(body.jaxpr, body.consts, tuple(found))


def tangent_or_zero_list(tangents):
    return [t for t in tangents if type(t) is not Zero]


# -- rearranging bodies ---------------------------------------------------------------

def reorder(jaxpr: Jaxpr, in_order: Sequence[int] | None = None,
            out_order: Sequence[int] | None = None) -> Jaxpr:
    """`jaxpr` whose i-th input is the old input `in_order[i]` (likewise outputs)."""
    invars = jaxpr.invars if in_order is None else [jaxpr.invars[i] for i in in_order]
    outvars = jaxpr.outvars if out_order is None else [jaxpr.outvars[i] for i in out_order]
    return Jaxpr((), invars, jaxpr.eqns, outvars)


def with_unused_inputs(jaxpr: Jaxpr, position: int, avals) -> Jaxpr:
    """`jaxpr` with unused inputs of `avals` inserted before input `position`."""
    if not avals:
        return jaxpr
    invars = list(jaxpr.invars)
    return Jaxpr((), invars[:position] + [Var(a) for a in avals] + invars[position:],
                 jaxpr.eqns, jaxpr.outvars)


def merge_bodies(bodies: Sequence[Body]) -> tuple[list, list]:
    """Bodies with different closed-over values -> `(jaxprs, all_consts)` where every
    jaxpr takes all bodies' consts first (unused ones ignored), then its own inputs."""
    all_consts = [c for body in bodies for c in body.consts]
    const_avals = [aval_of(c) for c in all_consts]
    jaxprs, start = [], 0
    for body in bodies:
        n = len(body.consts)
        jaxpr = with_unused_inputs(body.jaxpr, 0, const_avals[:start])
        jaxpr = with_unused_inputs(jaxpr, start + n, const_avals[start + n:])
        jaxprs.append(jaxpr)
        start += n
    return jaxprs, all_consts


def split_list(items, sizes) -> list:
    """`items` cut into consecutive pieces of the given sizes (the rest last)."""
    items = list(items)
    pieces, start = [], 0
    for size in sizes:
        pieces.append(items[start:start + size])
        start += size
    pieces.append(items[start:])
    return pieces


# -- prints must not run twice ----------------------------------------------------------

_DEBUG_PRIMITIVES = (CF.debug_print_p, CF.debug_callback_p)


def strip_debug_effects(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` without its `debug_print`/`debug_callback` equations, nested bodies
    included. Used where a pass re-runs a computation whose prints already happened."""
    eqns, changed = [], False
    for eqn in jaxpr.eqns:
        if eqn.primitive in _DEBUG_PRIMITIVES:
            changed = True
            continue
        if any(True for _ in jaxprs_in_params(eqn.params)):
            params = {k: _strip_param(v) for k, v in eqn.params.items()}
            if any(params[k] is not eqn.params[k] for k in params):
                changed = True
                eqn = Eqn(eqn.primitive, eqn.inputs, params, eqn.outputs,
                          effects_of(eqn.primitive, [a.aval for a in eqn.inputs], params),
                          eqn.source_info)
        eqns.append(eqn)
    if not changed:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _strip_param(value):
    if isinstance(value, Jaxpr):
        return strip_debug_effects(value)
    if isinstance(value, tuple) and any(isinstance(v, Jaxpr) for v in value):
        stripped = tuple(_strip_param(v) for v in value)
        return value if all(a is b for a, b in zip(stripped, value)) else stripped
    return value


def map_examples_one_at_a_time(apply_one, axis_size, values, dims, not_mapped, moveaxis):
    """vmap by a `scan` over the examples, each running `apply_one(*inputs)` on its
    own slice: for effectful branches and loop bodies, whose effects must happen only
    for the examples (and iterations) that really run them. Returns the stacked
    outputs, every one batched along axis 0."""
    mapped = [d is not not_mapped for d in dims]
    shared = [v for v, m in zip(values, mapped) if not m]
    stacked = [moveaxis(v, d, 0) for v, d, m in zip(values, dims, mapped) if m]
    n_shared = len(shared)

    def one_example(*args):
        shared_args, example = iter(args[:n_shared]), iter(args[n_shared:])
        return apply_one(*[next(example) if m else next(shared_args) for m in mapped])
    example_avals = [aval_of(v) for v in shared] + [
        aval_of(v).update(shape=aval_of(v).shape[1:]) for v in stacked]
    body = trace_body(one_example, example_avals)
    return list(CF.scan_p.bind(*body.consts, *shared, *stacked, jaxpr=body.jaxpr,
                               num_consts=len(body.consts) + n_shared, num_carry=0,
                               length=axis_size, reverse=False, unroll=1))
