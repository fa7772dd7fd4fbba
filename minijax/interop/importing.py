"""Importing a real JAX program: a JAX `ClosedJaxpr` becomes a minijax `ClosedJaxpr`.

Read `minijax/ir/staging.py` first. Importing is *evaluation*: the JAX jaxpr is walked
equation by equation inside a minijax staging trace, and each JAX equation is replayed
as the `bind` of the minijax primitive that means the same thing. So the result is a
program minijax traced itself -- verified, printable, closed over its constants the
way minijax closes over them -- and the same walk also runs the JAX program eagerly on
minijax (outside any trace, every `bind` executes).

The table `import_rules` has one entry per JAX primitive name:

    import_rules["reduce_sum"] = ImportRule(reduce_sum_p, rule)
    rule(*minijax_values, **jax_params) -> list of minijax values

where the rule translates JAX's params into minijax's (JAX's `out_sharding`,
`accuracy`, ... are placement and precision hints minijax does not model; a rule
refuses a hint it cannot honour instead of dropping it). Higher-order equations
(`jit`, `cond`, `while`, `scan`, `remat2`, custom derivatives) import their bodies
with the same walk (`import_body`). The table is read only through JAX's public
surface: `jax.extend.core`'s `Literal`, the jaxpr's own fields, and the params'
own attributes. `jax.extend` is imported on first use (`_jax_core`), not with
minijax: importing it loads JAX's Pallas, which would cost every `import minijax`
tens of milliseconds.

A JAX primitive that minijax writes as several operations (`clz`, `split`,
`random_bits`, ...) is imported as one `jit` equation named after it (`as_one_call`),
so the imported program has an equation where JAX's has one, and an eager
evaluation of it runs one compiled program there, as JAX's does.

A program using a primitive minijax lacks is refused before anything is traced,
with *every* missing primitive named at once (`MissingPrimitivesError`).
"""
from __future__ import annotations

from typing import Callable

import jax
import numpy as np

from ..frontend.jit import jit
from ..ir import primitives as P
from ..ir.primitives import register_rule_table
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import MinijaxError, bind
from ..ir.types import ShapedArray, RefType, dtype_of_jax
from ..transforms.ad_util import eval_jaxpr

__all__ = ["import_jaxpr", "trace_with_jax", "import_rules", "ImportRule",
           "MissingPrimitivesError", "missing_primitives", "import_aval",
           "eval_jax_jaxpr", "import_body", "imported_primitives", "as_one_call"]


class MissingPrimitivesError(MinijaxError, NotImplementedError):
    """The JAX program uses primitives that minijax has no import rule for."""

    def __init__(self, names):
        self.names = sorted(names)
        super().__init__(
            f"cannot import this JAX program: minijax has no primitive for "
            f"{', '.join(self.names)} ({len(self.names)} missing)")


class ImportRule:
    """How one JAX primitive becomes minijax: the minijax primitive(s) it lands on
    (for the coverage table) and `rule(*values, **jax_params) -> list of values`."""
    __slots__ = ("targets", "rule")

    def __init__(self, targets, rule: Callable):
        self.targets = tuple(targets) if isinstance(targets, (tuple, list)) else (targets,)
        self.rule = rule


import_rules: dict[str, ImportRule] = {}
# minijax primitive -> the JAX primitive names imported onto it: the `import` column.
imported_primitives: dict = register_rule_table("import", {})


def register_import(jax_name: str, targets, rule: Callable):
    import_rules[jax_name] = ImportRule(targets, rule)
    for prim in import_rules[jax_name].targets:
        imported_primitives.setdefault(prim, []).append(jax_name)


# -- a JAX primitive that minijax writes as several operations ------------------------------

def _apply(*args, fn, params):
    return fn(*args, **dict(params))


# One trace per (rule, params, avals), in `minijax.jit`'s cache: `clear_caches` empties it.
_applied_once = jit(_apply, static_argnames=("fn", "params"))


def as_one_call(name: str, fn: Callable, *args, **params) -> list:
    """`fn(*args, **params)` (a list of values) as one `jit` equation named `name`.

    For a JAX primitive that minijax composes of several operations (`clz`, `split`,
    `random_bits`, ...): the imported program holds one equation where JAX's has one,
    so evaluating it eagerly runs one compiled program there, as JAX's eager
    primitive does, not one per operation of the composition. The body is traced once
    per (fn, params, input types) and the same body object is bound each time, so
    every import of it shares one compiled program. Params that cannot be hashed
    (none of the rules' so far) make the operations inline instead."""
    key = tuple(sorted(params.items()))
    try:
        hash(key)
    except TypeError:
        return list(fn(*args, **params))
    closed = _applied_once.trace(*args, fn=fn, params=key).jaxpr
    body = closed.jaxpr
    if closed.consts:
        body = convert_constvars_to_invars(body)
    return list(bind(P.jit_p, *closed.consts, *args, jaxpr=body, name=name))


# -- types and atoms ---------------------------------------------------------------------

def import_aval(aval):
    """A JAX aval as a minijax type (`ShapedArray`, or `RefType` for JAX's refs)."""
    inner = getattr(aval, "inner_aval", None)
    if inner is not None:
        return RefType(import_aval(inner))
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(f"cannot import a value of JAX type {aval}: minijax has arrays "
                        f"and refs only")
    return ShapedArray(tuple(shape), dtype_of_jax(dtype),
                       bool(getattr(aval, "weak_type", False)))


_PYTHON_SCALARS = {np.dtype("float32"): float, np.dtype("int32"): int,
                   np.dtype("bool"): bool, np.dtype("complex64"): complex}


def _literal_value(literal):
    """A JAX literal as a value minijax stages with the same type: a weak literal of a
    Python scalar's dtype becomes that Python scalar (so it stays weak)."""
    aval = literal.aval
    value = np.asarray(literal.val, dtype=aval.dtype)
    kind = _PYTHON_SCALARS.get(np.dtype(aval.dtype))
    if getattr(aval, "weak_type", False) and kind is not None and value.shape == ():
        return kind(value.item())
    return value


# -- walking a JAX jaxpr -------------------------------------------------------------------

def _jax_core():
    """`jax.extend.core`, imported on first use (see the module docstring)."""
    from jax.extend import core
    return core


def _subjaxprs(params):
    jax_core = _jax_core()
    for value in params.values():
        for item in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(item, jax_core.ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, jax_core.Jaxpr):
                yield item


def missing_primitives(jaxpr) -> set:
    """Names of the primitives of `jaxpr` (nested bodies included) with no import rule."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    missing = set()
    for eqn in jaxpr.eqns:
        if eqn.primitive.name not in import_rules:
            missing.add(eqn.primitive.name)
        for sub in _subjaxprs(eqn.params):
            missing |= missing_primitives(sub)
    return missing


def eval_jax_jaxpr(jaxpr, consts, args) -> list:
    """Run the JAX jaxpr `jaxpr` on minijax values (tracers or arrays) by binding the
    minijax primitive of each equation."""
    jax_core = _jax_core()
    env = {}

    def read(atom):
        if isinstance(atom, jax_core.Literal):
            return _literal_value(atom)
        return env[atom]

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        entry = import_rules.get(eqn.primitive.name)
        if entry is None:
            raise MissingPrimitivesError({eqn.primitive.name})
        outs = entry.rule(*map(read, eqn.invars), **eqn.params)
        if len(outs) != len(eqn.outvars):
            raise AssertionError(f"import rule of {eqn.primitive.name} returned "
                                 f"{len(outs)} values for {len(eqn.outvars)} outputs")
        for var, value in zip(eqn.outvars, outs):
            if not isinstance(var, jax_core.DropVar):
                env[var] = value
    return [read(v) for v in jaxpr.outvars]


def open_jaxpr(jaxpr_like):
    """(open jaxpr, consts) of a JAX `ClosedJaxpr` or `Jaxpr`."""
    if isinstance(jaxpr_like, _jax_core().ClosedJaxpr):
        return jaxpr_like.jaxpr, list(jaxpr_like.consts)
    return jaxpr_like, []


def import_bodies(bodies, in_avals_list=None):
    """Import the JAX bodies of one higher-order equation as minijax bodies without
    constvars. Constants any body needs are hoisted: every returned body takes *all*
    hoisted constants first (each uses only its own), then its own inputs. Returns
    (bodies, constant values) -- the values go in front of the equation's operands."""
    traced = []
    for i, body in enumerate(bodies):
        jaxpr, consts = open_jaxpr(body)
        avals = in_avals_list[i] if in_avals_list else [import_aval(v.aval) for v in jaxpr.invars]
        closed = trace_to_jaxpr(
            lambda *args, j=jaxpr, c=consts: eval_jax_jaxpr(j, c, args), avals)
        traced.append((closed, avals))
    all_consts = [c for closed, _ in traced for c in closed.consts]
    if not all_consts:
        return [closed.jaxpr for closed, _ in traced], []
    const_avals = [v.aval for closed, _ in traced for v in closed.jaxpr.constvars]
    out, start = [], 0
    for closed, avals in traced:
        n = len(closed.consts)
        mine = slice(start, start + n)
        start += n

        def with_all_consts(*args, closed=closed, mine=mine):
            consts, rest = args[:len(const_avals)], args[len(const_avals):]
            return eval_jaxpr(closed.jaxpr, consts[mine], rest)
        out.append(convert_constvars_to_invars(
            trace_to_jaxpr(with_all_consts, const_avals + list(avals)).jaxpr))
    return out, all_consts


def import_body(body, in_avals=None):
    """One body: (minijax jaxpr without constvars, hoisted constant values)."""
    bodies, consts = import_bodies([body], [in_avals] if in_avals is not None else None)
    return bodies[0], consts


# -- the entry points ------------------------------------------------------------------------

def import_jaxpr(closed_jaxpr):
    """The minijax `ClosedJaxpr` of a JAX `ClosedJaxpr` (from `jax.make_jaxpr`).

    Its inputs have the JAX program's types (weak types and refs included); JAX's
    constants become the minijax program's constants (rank-0 ones inline literals)."""
    if not isinstance(closed_jaxpr, _jax_core().ClosedJaxpr):
        raise TypeError(f"import_jaxpr expects a JAX ClosedJaxpr (from jax.make_jaxpr), "
                        f"got {type(closed_jaxpr).__name__}")
    missing = missing_primitives(closed_jaxpr.jaxpr)
    if missing:
        raise MissingPrimitivesError(missing)
    jaxpr, consts = closed_jaxpr.jaxpr, list(closed_jaxpr.consts)
    consts = [_import_const(c) for c in consts]
    avals = [import_aval(v.aval) for v in jaxpr.invars]
    return trace_to_jaxpr(lambda *args: eval_jax_jaxpr(jaxpr, consts, args), avals)


def _import_const(value):
    """A constant of a JAX program as a minijax value. A JAX ref the program closed
    over becomes a minijax ref holding a copy of its current contents: the imported
    program mutates its own state, never JAX's."""
    if type(value).__name__ == "Ref" and isinstance(import_aval(value.aval), RefType):
        from ..frontend.refs import new_ref
        return new_ref(np.array(value[...]))
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    return value


def trace_with_jax(fun: Callable, **make_jaxpr_kwargs) -> Callable:
    """`trace_with_jax(f)(*args)`: `jax.make_jaxpr(f)(*args)`, imported into minijax."""
    def traced(*args, **kwargs):
        return import_jaxpr(jax.make_jaxpr(fun, **make_jaxpr_kwargs)(*args, **kwargs))
    return traced

