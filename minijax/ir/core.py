"""The IR's data structures: variables, literals, equations and jaxprs.

A `Jaxpr` is a straight-line program in A-normal form:

    { lambda c1 c2 ; a b . let
        x = prim[param=...] a c1
        ...
      in (x, ...) }

* `Var` is a binder with a type (an aval from `types.py`). Variables are compared by
  identity; their printed names are chosen by the printer.
* `Literal` is an inline constant scalar with its type (`2.0:f32[]`).
* `Eqn` applies a primitive to inputs (vars or literals) with static `params` and
  binds fresh output vars. `effects` records what the equation does to refs or to
  the outside world (see `Effect`); it is computed by the primitive's effect rule.
  `source_info` says which line of the user's code it came from (`source_info.py`);
  it is not part of the program: not printed, not parsed, not compared. Whoever
  makes an equation passes it (a trace: the user's line it is staging; a pass: the
  equation it rewrites); an `Eqn` made without one has none.
* `Jaxpr` holds `constvars` (closed-over values, bound first), `invars`, `eqns` and
  `outvars`. `ClosedJaxpr` pairs a jaxpr with the values of its constvars.

Everything is immutable once built; passes build new jaxprs rather than edit old ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .types import ShapedArray, RefType, aval_of_value


class Var:
    __slots__ = ("aval", "suggested_name")

    def __init__(self, aval, suggested_name: str | None = None):
        # `type(...) is` first: one check per traced value, nearly always an array type.
        if type(aval) is not ShapedArray and not isinstance(aval, (ShapedArray, RefType)):
            raise TypeError(f"a Var needs an aval, got {aval!r}")
        self.aval = aval
        self.suggested_name = suggested_name

    def __repr__(self):
        return f"Var({self.aval.type_text()}@{id(self):x})"


class Literal:
    """An inline scalar constant. `value` is a NumPy scalar of the aval's dtype."""
    __slots__ = ("value", "aval")

    def __init__(self, value, aval: ShapedArray):
        self.aval = aval
        self.value = np.asarray(value, dtype=aval.dtype).reshape(aval.shape)

    @property
    def val(self):
        """JAX's name for `value` (a jaxpr interpreter written for JAX reads it)."""
        return self.value

    def __repr__(self):
        return f"Literal({self.value!r}:{self.aval.type_text()})"


Atom = Var | Literal


# -- effects ------------------------------------------------------------------------
#
# An effect names what an equation does beyond computing its outputs. Ref effects
# point at the equation input that is the ref (by position) so passes can follow the
# ref back to where it came from. `DebugEffect` marks ordered host I/O such as
# `debug.print` and `io_callback`, which must happen exactly once per evaluation in
# program order.

@dataclass(frozen=True)
class ReadEffect:
    input_index: int

    def __str__(self):
        return f"Read({self.input_index})"


@dataclass(frozen=True)
class WriteEffect:
    input_index: int

    def __str__(self):
        return f"Write({self.input_index})"


@dataclass(frozen=True)
class AccumEffect:
    input_index: int

    def __str__(self):
        return f"Accum({self.input_index})"


@dataclass(frozen=True)
class AllocEffect:
    """Creating a ref: invisible outside a function that also owns the ref."""

    def __str__(self):
        return "Alloc"


@dataclass(frozen=True)
class DebugEffect:
    def __str__(self):
        return "Debug"


REF_EFFECT_TYPES = (ReadEffect, WriteEffect, AccumEffect)
no_effects: frozenset = frozenset()


class Eqn:
    """One equation. `source_info` is the `SourceInfo` of the user's line that made
    it, or None; it is only ever what the maker passes."""
    __slots__ = ("primitive", "inputs", "params", "outputs", "effects", "source_info")

    def __init__(self, primitive, inputs, params, outputs, effects=no_effects,
                 source_info=None):
        # Built once per traced operation: skip copies of what is already immutable.
        # `params` is owned by the equation from here on (tracers pass a fresh dict).
        self.primitive = primitive
        self.inputs = inputs if type(inputs) is tuple else tuple(inputs)
        self.params = params
        self.outputs = outputs if type(outputs) is tuple else tuple(outputs)
        self.effects = effects if type(effects) is frozenset else frozenset(effects)
        self.source_info = source_info

    # JAX's names for `inputs` and `outputs`, read by jaxpr interpreters written for
    # JAX (`for eqn in jaxpr.eqns: ... eqn.invars ...`).
    @property
    def invars(self) -> tuple:
        return self.inputs

    @property
    def outvars(self) -> tuple:
        return self.outputs

    def replace(self, **changes) -> "Eqn":
        fields = {"primitive": self.primitive, "inputs": self.inputs,
                  "params": dict(self.params), "outputs": self.outputs,
                  "effects": self.effects, "source_info": self.source_info}
        fields.update(changes)
        return Eqn(**fields)

    def __repr__(self):
        return f"Eqn({self.primitive.name}, {len(self.inputs)} in, {len(self.outputs)} out)"


class Jaxpr:
    __slots__ = ("constvars", "invars", "eqns", "outvars", "_effects")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = tuple(constvars)
        self.invars = tuple(invars)
        self.eqns = tuple(eqns)
        self.outvars = tuple(outvars)
        self._effects = None

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    @property
    def effects(self) -> frozenset:
        """Effects visible from outside: those on refs the jaxpr did not create."""
        if self._effects is None:
            self._effects = visible_effects(self)
        return self._effects

    def __str__(self):
        from .printer import pp_jaxpr   # the printer imports this module
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""
    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts):
        consts = list(consts)
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(f"{len(jaxpr.constvars)} constvars but {len(consts)} consts")
        self.jaxpr = jaxpr
        self.consts = consts

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)

    def __str__(self):
        from .printer import pp_jaxpr   # the printer imports this module
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


def visible_effects(jaxpr: Jaxpr) -> frozenset:
    """The effects of `jaxpr` on refs it receives, plus debug effects.

    Ref effects are reported against the position in `constvars + invars` of the ref
    they touch (a ref passed straight through a view or sub-jaxpr is followed by the
    primitive that created it, which records the same input position). Effects on
    refs allocated inside the jaxpr are invisible from outside."""
    position = {id(v): i for i, v in enumerate(jaxpr.constvars + jaxpr.invars)}
    found = set()
    for eqn in jaxpr.eqns:
        for effect in eqn.effects:
            if isinstance(effect, REF_EFFECT_TYPES):
                ref = eqn.inputs[effect.input_index]
                if isinstance(ref, Var) and id(ref) in position:
                    found.add(type(effect)(position[id(ref)]))
            elif isinstance(effect, DebugEffect):
                found.add(effect)
    return frozenset(found)


def jaxprs_in_params(params: dict[str, Any]):
    """Sub-jaxprs held in an equation's params (directly or in a tuple)."""
    for value in params.values():
        if isinstance(value, (Jaxpr, ClosedJaxpr)):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, (Jaxpr, ClosedJaxpr)):
                    yield item


def eqns_nested(jaxpr):
    """Every equation of `jaxpr` (a Jaxpr or ClosedJaxpr) and of the sub-jaxprs in
    its equations' params, outer equations first."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jaxprs_in_params(eqn.params):
            yield from eqns_nested(sub)


def literal_value(literal: Literal):
    """The value a `Literal` stands for when a jaxpr is re-run through `bind`.

    A weakly typed literal whose dtype is the Python scalar default (f32, i32) comes
    back as a Python scalar so that it stays weak; everything else is a NumPy value."""
    aval = literal.aval
    if aval.weak_type:
        py = literal.value.item()
        if aval_of_value(py).dtype == aval.dtype:
            return py
    return literal.value
