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
  must not print a second time;
* `jvp_through_discharge` / `partial_eval_through_discharge` -- the autodiff rules
  for an equation whose bodies use refs (see "Refs under autodiff" below).

Refs under autodiff
-------------------
A body that reads and writes a closed-over ref receives the ref as one of the
equation's inputs. Rather than teaching every loop and branch rule about refs
(tangent refs beside primal refs, which of them are known, how a carry of ref
contents transposes), the autodiff rules hand such an equation to discharge
(`transforms/discharge_control_flow.py`) first: the same construct on plain values,
whose written refs' final values are extra outputs (a loop carries them). The rule
then reads each ref's current contents, applies the pass to that pure construct with
the construct's own rule, and writes the final contents back:

    cond[...] i r x        ==>     a <- r[...]
                                   y, a' = cond[discharged] i a x
                                   r[...] <- a'

The reads and writes are ordinary ref operations, so the ref rules of
`transforms/ref_rules.py` carry the tangent refs along (jvp), split known from unknown
refs (partial evaluation) and transpose them (reverse mode), exactly as for a ref
used outside any body.

One kind of body is not discharged: one calling a `custom_jvp`/`custom_vjp`
function that takes a ref (`custom_rules_take_refs`), whose user-written rules need
the ref itself. There the rules transform the body with its refs as refs: `jvp_body`
gives a ref with a tangent ref that tangent ref as the body's tangent input, a ref
residual is always a ref the body was given (passed to the staged `cond` as an
operand by `cond_refs.py`, to the staged `scan` as an invariant const), and the
transposed branch writes cotangent refs in place.
"""
from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.core import Jaxpr, ClosedJaxpr, Eqn, Var, jaxprs_in_params
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p, custom_lin_p
from ..ir.primitives import effects_of, out_avals_of
from ..ir.source_info import pass_source_info
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import bind, current_trace, set_current_trace, aval_of
from ..ir.types import RefType
from .ad_util import (Zero, tangent_aval, is_differentiable, eval_jaxpr, fresh_root,
                      zeros, instantiate)
from .discharge import discharge_jaxpr
from .jvp import jvp_flat, JvpResult, has_tangent_input
from .ref_rules import _external_write_error as external_write_error


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
    nonzeros = [bool(nz) and has_tangent_input(v.aval) for v, nz in zip(jaxpr.invars, nonzeros)]
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
    outputs, every one batched along axis 0.

    A batched ref cannot be sliced into a scan (a ref is never a scanned-over value):
    see `_examples_on_ref_rows`."""
    groups: dict = {}               # id(ref) -> (ref, its batch dim, its positions)
    for k, (v, d) in enumerate(zip(values, dims)):
        if d is not not_mapped and isinstance(aval_of(v), RefType):
            groups.setdefault(id(v), (v, d, []))[2].append(k)
    if groups:
        return _examples_on_ref_rows(list(groups.values()), apply_one, axis_size, values,
                                     dims, not_mapped, moveaxis)
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


def _examples_on_ref_rows(groups, apply_one, axis_size, values, dims, not_mapped, moveaxis):
    """`map_examples_one_at_a_time` with batched refs among `values`: the scan slices
    each ref's contents instead, each example runs on a fresh ref holding its own row,
    and the rows' final contents, stacked by the scan, are written back."""
    values, dims = list(values), list(dims)
    for ref, d, positions in groups:
        rows = moveaxis(bind(P.get_p, ref), d, 0)
        for k in positions:
            values[k], dims[k] = rows, 0

    def one_example(*inputs):
        inputs, lanes = list(inputs), []
        for _, _, positions in groups:
            lanes.append(bind(P.new_ref_p, inputs[positions[0]]))
            for k in positions:
                inputs[k] = lanes[-1]
        return list(apply_one(*inputs)) + [bind(P.get_p, lane) for lane in lanes]
    outs = map_examples_one_at_a_time(one_example, axis_size, values, dims, not_mapped,
                                      moveaxis)
    n = len(outs) - len(groups)
    for (ref, d, _), final in zip(groups, outs[n:]):
        bind(P.swap_p, ref, moveaxis(final, 0, d))
    return outs[:n]


# -- refs under autodiff: discharge first -------------------------------------------------

def has_ref_inputs(args) -> bool:
    return any(isinstance(aval_of(x), RefType) for x in args)


class _Discharged(NamedTuple):
    """One application of a primitive, on values. `jaxpr` takes `args` with each ref
    replaced by its contents and returns the primitive's `num_outputs` outputs, then
    the final contents of the refs at `written` (positions in `args`)."""
    jaxpr: Jaxpr
    args: list
    firsts: list          # for each of `args`, its position in the original inputs
    written: tuple
    num_outputs: int


def _discharge_application(prim, args, params) -> _Discharged:
    # One box passed twice (a ref closed over by two branches) is one variable, as
    # discharge tracks refs by variable.
    var_of_ref: dict = {}
    invars, unique, firsts, inputs = [], [], [], []
    for k, x in enumerate(args):
        aval = aval_of(x)
        var = var_of_ref.get(id(x)) if isinstance(aval, RefType) else None
        if var is None:
            var = Var(aval)
            if isinstance(aval, RefType):
                var_of_ref[id(x)] = var
            invars.append(var)
            unique.append(x)
            firsts.append(k)
        inputs.append(var)
    in_avals = [v.aval for v in inputs]
    outputs = [Var(a) for a in out_avals_of(prim, in_avals, params)]
    # The application being processed: the user's operation, or a pass's equation.
    eqn = Eqn(prim, inputs, params, outputs, effects_of(prim, in_avals, params),
              pass_source_info())
    result = discharge_jaxpr(Jaxpr((), invars, [eqn], outputs))
    return _Discharged(result.jaxpr, unique, firsts, result.info.written, len(outputs))


def _contents(x):
    return bind(P.get_p, x) if isinstance(aval_of(x), RefType) else x


def jvp_through_discharge(prim, primals, tangents, params) -> JvpResult:
    """The jvp rule for `prim` applied to inputs some of which are refs (see "Refs
    under autodiff" above). A ref without a tangent ref (one from outside the
    differentiated function) may only be written with values that have no tangent."""
    d = _discharge_application(prim, primals, params)
    in_tangents = []
    for x, k in zip(d.args, d.firsts):
        t = tangents[k]
        if isinstance(aval_of(x), RefType):
            t = Zero(tangent_aval(aval_of(x).inner)) if type(t) is Zero else _contents(t)
        in_tangents.append(t)
    result = jvp_flat(lambda *xs: eval_jaxpr(d.jaxpr, (), xs),
                      [_contents(x) for x in d.args], in_tangents, current_trace())
    n = d.num_outputs
    finals = list(zip(d.written, result.primals_out[n:], result.tangents_out[n:]))
    for position, _, tangent in finals:        # check everything before writing
        if type(tangents[d.firsts[position]]) is Zero and type(tangent) is not Zero:
            raise external_write_error(prim.name, d.args[position])
    for position, value, tangent in finals:
        bind(P.swap_p, d.args[position], value)
        tangent_ref = tangents[d.firsts[position]]
        if type(tangent_ref) is not Zero:
            bind(P.swap_p, tangent_ref, instantiate(tangent))
    return JvpResult(result.primals_out[:n], result.tangents_out[:n])


def partial_eval_through_discharge(trace, prim, args, params) -> list:
    """The partial-evaluation rule for `prim` applied to inputs some of which are refs:
    reads, the pure construct and writes each go through `trace` on their own, so a
    known ref stays known and a staged (tangent) ref is staged."""
    d = _discharge_application(prim, args, params)
    with set_current_trace(trace):
        outs = eval_jaxpr(d.jaxpr, (), [_contents(x) for x in d.args])
        for position, value in zip(d.written, outs[d.num_outputs:]):
            bind(P.swap_p, d.args[position], value)
    return outs[:d.num_outputs]



# -- custom derivative rules that take refs --------------------------------------------------

def custom_rules_take_refs(*jaxprs: Jaxpr) -> bool:
    """Whether a `custom_jvp`/`custom_vjp` call in one of `jaxprs` (or a body inside
    one) takes a ref. Its user-written rules need the ref itself, so such a construct
    must not be discharged before it is differentiated: its autodiff rules then pass
    the refs into the transformed bodies as refs (with tangent refs beside them)."""
    return any(_custom_rules_take_refs(j) for j in jaxprs)


# `custom_lin` is what a `custom_vjp` call becomes once jvp'd: its `bwd` still to run.
_CUSTOM_RULE_PRIMITIVES = (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p)


@functools.lru_cache(maxsize=1024)
def _custom_rules_take_refs(jaxpr: Jaxpr) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive in _CUSTOM_RULE_PRIMITIVES and any(
                isinstance(x.aval, RefType) for x in eqn.inputs):
            return True
        for sub in jaxprs_in_params(eqn.params):
            if _custom_rules_take_refs(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub):
                return True
    return False


def unrolled_scan(jaxpr: Jaxpr, num_consts, num_carry, length, reverse):
    """A function running a `scan` as `length` copies of its body, in line (in the
    current trace). For `partial_eval_unrolled_scan`; exact, but the program grows
    with `length`."""
    def unrolled(*args):
        consts, carry, xs = split_list(args, [num_consts, num_carry])
        ys = []
        for i in (range(length - 1, -1, -1) if reverse else range(length)):
            x_i = [_index(x, i) for x in xs]
            outs = eval_jaxpr(jaxpr, (), list(consts) + list(carry) + x_i)
            carry, y = outs[:num_carry], outs[num_carry:]
            ys.append(y)
        if reverse:
            ys.reverse()
        n_ys = len(jaxpr.outvars) - num_carry
        return list(carry) + [_stack([y[k] for y in ys], jaxpr.outvars[num_carry + k].aval)
                              for k in range(n_ys)]
    return unrolled


def partial_eval_unrolled_scan(trace, args, *, jaxpr, num_consts, num_carry, length,
                               reverse, **params) -> list:
    """Partial evaluation of a `scan` whose body runs a custom rule on refs (a
    `custom_lin` whose `bwd` writes a ref) *and* writes tangent refs: the staged
    scan would need its tangent refs transposed as loop consts, which the scan's
    transpose does not do, so the iterations are split one after another instead."""
    with set_current_trace(trace):
        return unrolled_scan(jaxpr, num_consts, num_carry, length, reverse)(*args)


def _index(x, i):
    shape = aval_of(x).shape
    piece = bind(P.slice_p, x, start_indices=(i,) + (0,) * (len(shape) - 1),
                 limit_indices=(i + 1,) + tuple(shape[1:]), strides=None)
    return bind(P.reshape_p, piece, new_sizes=tuple(shape[1:]), dimensions=None)


def _stack(values, aval):
    if not values:
        return zeros(aval.update(shape=(0,) + aval.shape))
    rows = [bind(P.broadcast_in_dim_p, v, shape=(1,) + aval.shape,
                 broadcast_dimensions=tuple(range(1, 1 + len(aval.shape))))
            for v in values]
    return rows[0] if len(rows) == 1 else bind(P.concatenate_p, *rows, dimension=0)
