"""Ref discharge: a program with refs -> the same program on plain values.

Read `ir/ref_indexing.py` and the ref ops in `ir/catalogue.py` first.

A ref is a box whose contents change over time. Within one jaxpr every access to a
ref is an equation, and equations run in program order, so at each equation the box
holds exactly one value that we can name. Discharge walks the equations once,
tracking "the current value of each ref" (a `RefSlot` per ref variable), and
replaces every ref op by pure array equations on that value:

    x <- r[...]            x is the slot's current value (no equation at all)
    r[1:3] <- v            slot = dynamic_update_slice(slot, v, 1)
    y, r[i] <- r[i], v     y = dynamic_slice(slot, clamp(i)); slot = dynamic_update_slice(...)
    r[idx] += v            slot = scatter_add(slot, idx, v)  (or a slice and an add)
    r = new_ref x          slot = x
    x = freeze r           x is the slot's current value

Refs are tracked by *variable*: the verifier guarantees that a ref variable is one
box, and aliasing (one box under two variables) is rejected when tracing. Refs the
jaxpr creates simply disappear. Refs it *receives* (ref inputs) become array inputs,
and the final value of each ref input the jaxpr writes is returned as an extra
output after the original ones, so the caller can put it back in the box:

    { lambda ; a:f32[] b:Ref{f32[]}. let        { lambda ; a:f32[] b:f32[]. let
        c:f32[] <- b[...]                 ==>       d:f32[] = mul a b
        d:f32[] = mul a c                         in (d, d) }
        b[...] <- d
      in (d,) }

`discharge_jaxpr(jaxpr)` returns `(jaxpr, info)` where `info.ref_inputs` lists the
positions (in constvars + invars) that were refs and `info.written` those whose final
values are appended, in that order. Discharge is how refs reach XLA: the backend
never sees a ref. The effects are gone from the result, which is the point: a
discharged program is pure, and its order of evaluation is only data dependence.

Equations holding sub-jaxprs (`jit`, and the control-flow primitives) discharge
their bodies recursively and thread the touched ref values in and out. Each
primitive that can meet a ref has an entry in `discharge_rules`:

    discharge_rules[prim](b: JaxprBuilder, eqn: Eqn, inputs: list) -> list of outputs

where `inputs[k]` is the equation's k-th input in the new jaxpr -- an atom, or a
`RefSlot` for a ref, whose `.value` the rule reads and assigns. Equations without
refs are copied unchanged (the same `Eqn` object when nothing was renamed).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..ir import primitives as P
from ..ir.core import (Var, Literal, Eqn, Jaxpr, ClosedJaxpr, jaxprs_in_params,
                       WriteEffect, AccumEffect)
from ..ir.primitives import effects_of, out_avals_of, register_rule_table, GenericPath
from ..ir.source_info import source_info_from
from ..ir.trace import MinijaxError
from ..ir.types import RefType, ShapedArray
from .discharge_indexing import read_path, update_path

__all__ = ["discharge_jaxpr", "DischargeResult", "DischargeInfo", "discharge_rules",
           "RefSlot", "JaxprBuilder", "mentions_refs", "DischargeError",
           "discharge_with_finals", "written_inputs"]

discharge_rules: dict = register_rule_table(
    "discharge", {}, GenericPath(lambda prim: not prim.ref_op,
                                 "touches no ref: copied unchanged"))


class DischargeError(MinijaxError):
    """A program whose refs cannot be turned into values (say, one returning a ref)."""


class DischargeInfo(NamedTuple):
    ref_inputs: tuple       # positions in constvars + invars that were refs
    written: tuple          # of those, the ones whose final values are extra outputs
    num_outputs: int        # the original jaxpr's outputs (they come first)


class DischargeResult(NamedTuple):
    jaxpr: Jaxpr
    info: DischargeInfo


class RefSlot:
    """The current value of one ref while discharging: an atom of the new jaxpr."""
    __slots__ = ("value", "aval")

    def __init__(self, value, aval: RefType):
        self.value = value
        self.aval = aval

    def __repr__(self):
        return f"RefSlot({self.aval})"


class JaxprBuilder:
    """Appends equations to the jaxpr being built; computes types and effects.

    Reading `r[i]` and then writing `r[i]` spells the same index arithmetic twice
    (clamping `i`, say); `emit` reuses an identical earlier equation of its own
    instead (common-subexpression elimination for the pure equations it makes),
    so the discharged program reads like the one a person would write."""

    def __init__(self, used=frozenset()):
        self.eqns: list[Eqn] = []
        self.used = used                  # ids of the original vars anything reads
        self._emitted: dict = {}          # (prim, inputs, params) -> outputs
        # The source info of the equation being discharged, which every equation
        # emitted for it carries (set by the pass's loop).
        self.source_info = None

    def emit_eqn(self, prim, inputs, params) -> list[Var]:
        key = _cse_key(prim, inputs, params)
        known = self._emitted.get(key) if key is not None else None
        if known is not None:
            return known
        in_avals = [a.aval for a in inputs]
        outputs = [Var(aval) for aval in out_avals_of(prim, in_avals, params)]
        self.eqns.append(Eqn(prim, inputs, params, outputs,
                             effects_of(prim, in_avals, params), self.source_info))
        if key is not None:
            self._emitted[key] = outputs
        return outputs

    def emit(self, prim, *inputs, **params):
        """One equation; its single output (or the list, for multi-result prims)."""
        outputs = self.emit_eqn(prim, inputs, params)
        return outputs if prim.multiple_results else outputs[0]

    @staticmethod
    def literal(value, dtype) -> Literal:
        return Literal(np.asarray(value, dtype), ShapedArray((), dtype))

    def strong(self, atom):
        """`atom` without a weak type: what a ref holds (new_ref strips weak types)."""
        if not atom.aval.weak_type:
            return atom
        return self.emit(P.convert_element_type_p, atom, new_dtype=atom.aval.dtype,
                         weak_type=False)


def _cse_key(prim, inputs, params):
    """A hashable key for an equation, or None if it must not be shared."""
    if prim is P.jit_p or prim.ref_op:
        return None
    atoms = tuple(("lit", a.value.item(), a.aval) if isinstance(a, Literal) else id(a)
                  for a in inputs)
    try:
        return hash((prim, atoms, tuple(sorted(params.items())))) and (
            prim, atoms, tuple(sorted(params.items())))
    except TypeError:
        return None


# -- which jaxprs need it -------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def mentions_refs(jaxpr: Jaxpr) -> bool:
    """Whether discharge would change `jaxpr` (cached by identity: jaxprs are immutable)."""
    if any(isinstance(v.aval, RefType) for v in jaxpr.constvars + jaxpr.invars):
        return True
    for eqn in jaxpr.eqns:
        if eqn.primitive.ref_op:
            return True
        for sub in jaxprs_in_params(eqn.params):
            if mentions_refs(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub):
                return True
    return False


# -- the pass ---------------------------------------------------------------------------

def discharge_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> DischargeResult:
    """`jaxpr` with its refs turned into values (see the module docstring).

    For a `ClosedJaxpr` the result's jaxpr is a `ClosedJaxpr` with the same consts:
    a const that is a ref must then be replaced by its contents by the caller."""
    if isinstance(jaxpr, ClosedJaxpr):
        result = _discharge(jaxpr.jaxpr)
        return DischargeResult(ClosedJaxpr(result.jaxpr, jaxpr.consts), result.info)
    return _discharge(jaxpr)


def discharge_with_finals(jaxpr: Jaxpr, finals: tuple) -> DischargeResult:
    """`discharge_jaxpr`, but returning the final values of the ref inputs at
    `finals` (positions in constvars + invars), written or not. Control-flow rules
    use it so that every branch of a `cond` returns the same refs' values."""
    return _discharge(jaxpr, tuple(finals))


@functools.lru_cache(maxsize=4096)
def _discharge(jaxpr: Jaxpr, finals: tuple | None = None) -> DischargeResult:
    binders = jaxpr.constvars + jaxpr.invars
    if not mentions_refs(jaxpr):
        return DischargeResult(jaxpr, DischargeInfo((), (), len(jaxpr.outvars)))
    env: dict = {}
    new_binders, slots = [], []
    for position, var in enumerate(binders):
        if isinstance(var.aval, RefType):
            value_var = Var(var.aval.inner)
            env[var] = RefSlot(value_var, var.aval)
            slots.append(position)
            new_binders.append(value_var)
        else:
            env[var] = var
            new_binders.append(var)
    written = _written_inputs(jaxpr, slots) if finals is None else list(finals)
    used = {id(a) for eqn in jaxpr.eqns for a in eqn.inputs}
    used.update(id(a) for a in jaxpr.outvars)
    b = JaxprBuilder(used)
    for eqn in jaxpr.eqns:
        inputs = [a if isinstance(a, Literal) else env[a] for a in eqn.inputs]
        rule = discharge_rules.get(eqn.primitive)
        # The value ops it becomes are from its line: those the builder emits, and
        # those a rule traces (a control-flow body).
        b.source_info = eqn.source_info
        with source_info_from(eqn):
            outputs = _copy_eqn(b, eqn, inputs) if rule is None else rule(b, eqn, inputs)
        for var, value in zip(eqn.outputs, outputs):
            env[var] = value
    outvars = []
    for k, atom in enumerate(jaxpr.outvars):
        value = atom if isinstance(atom, Literal) else env[atom]
        if isinstance(value, RefSlot):
            raise DischargeError(f"output {k} of the program is a ref ({value.aval}); a "
                                 f"ref cannot leave the function that uses it: return "
                                 f"its value r[...] instead")
        outvars.append(value)
    outvars += [env[binders[position]].value for position in written]
    n_consts = len(jaxpr.constvars)
    new_jaxpr = Jaxpr(new_binders[:n_consts], new_binders[n_consts:], b.eqns, outvars)
    return DischargeResult(new_jaxpr, DischargeInfo(tuple(slots), tuple(written),
                                                    len(jaxpr.outvars)))


def written_inputs(jaxpr: Jaxpr) -> list:
    """Positions (in constvars + invars) of the ref inputs `jaxpr` writes."""
    binders = jaxpr.constvars + jaxpr.invars
    return _written_inputs(jaxpr, [k for k, v in enumerate(binders)
                                   if isinstance(v.aval, RefType)])


def _written_inputs(jaxpr: Jaxpr, ref_positions) -> list:
    """Ref inputs the jaxpr writes (their final values are returned), in order."""
    touched = {e.input_index for e in jaxpr.effects
               if isinstance(e, (WriteEffect, AccumEffect))}
    return [p for p in ref_positions if p in touched]


def _copy_eqn(b: JaxprBuilder, eqn: Eqn, inputs) -> list:
    if any(isinstance(x, RefSlot) for x in inputs):
        raise DischargeError(f"cannot discharge refs passed to {eqn.primitive.name}: it "
                             f"has no rule in minijax.transforms.discharge.discharge_rules")
    if all(new is old for new, old in zip(inputs, eqn.inputs)):
        b.eqns.append(eqn)          # nothing renamed: keep the very same equation
        return list(eqn.outputs)
    if any(mentions_refs(s.jaxpr if isinstance(s, ClosedJaxpr) else s)
           for s in jaxprs_in_params(eqn.params)):
        raise DischargeError(f"cannot discharge the refs inside {eqn.primitive.name}: it "
                             f"has no rule in minijax.transforms.discharge.discharge_rules")
    b.eqns.append(eqn.replace(inputs=tuple(inputs)))
    return list(eqn.outputs)


# -- rules for the ref ops ------------------------------------------------------------------

def _indexer_parts(eqn, inputs, fixed):
    return eqn.params.get("indexer"), inputs[fixed:]


def _new_ref(b, eqn, inputs):
    return [RefSlot(b.strong(inputs[0]), eqn.outputs[0].aval)]


def _empty_ref(b, eqn, inputs):
    # An empty ref's contents are unspecified until written; zeros are reproducible.
    aval = eqn.outputs[0].aval
    zero = b.literal(0, aval.dtype)
    value = zero if not aval.shape else b.emit(
        P.broadcast_in_dim_p, zero, shape=aval.shape, broadcast_dimensions=())
    return [RefSlot(value, aval)]


def _get(b, eqn, inputs):
    slot = inputs[0]
    indexer, dynamic = _indexer_parts(eqn, inputs, 1)
    return [read_path(b, slot.value, indexer, dynamic)]


def _swap(b, eqn, inputs):
    slot, value = inputs[0], b.strong(inputs[1])
    indexer, dynamic = _indexer_parts(eqn, inputs, 2)
    # The old value costs equations; `r[idx] <- v` (the common case) never reads it.
    old = read_path(b, slot.value, indexer, dynamic) if id(eqn.outputs[0]) in b.used \
        else None
    slot.value = update_path(b, slot.value, indexer, dynamic, value, accumulate=False)
    return [old]


def _addupdate(b, eqn, inputs):
    slot, value = inputs[0], b.strong(inputs[1])
    indexer, dynamic = _indexer_parts(eqn, inputs, 2)
    slot.value = update_path(b, slot.value, indexer, dynamic, value, accumulate=True)
    return []


def _freeze(b, eqn, inputs):
    return [inputs[0].value]


def _free_ref(b, eqn, inputs):
    return []


discharge_rules.update({
    P.new_ref_p: _new_ref, P.empty_ref_p: _empty_ref, P.get_p: _get, P.swap_p: _swap,
    P.addupdate_p: _addupdate, P.freeze_p: _freeze, P.free_ref_p: _free_ref})


# -- calls --------------------------------------------------------------------------------

def thread_refs_through(b: JaxprBuilder, inputs, body: Jaxpr):
    """For a rule of a call-like primitive: discharge `body` and say how to call it.

    Returns `(result, args)`: the discharged body and its arguments (ref slots replaced
    by their current values). After binding, call `write_back(inputs, result, outs)`."""
    result = _discharge(body)
    args = [x.value if isinstance(x, RefSlot) else x for x in inputs]
    return result, args


def write_back(inputs, result: DischargeResult, outs) -> list:
    """Store a discharged call's final ref values in the caller's slots; return the
    call's original outputs."""
    n = result.info.num_outputs
    for position, final in zip(result.info.written, outs[n:]):
        inputs[position].value = final
    return list(outs[:n])
