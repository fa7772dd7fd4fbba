"""Control-flow primitives: `cond`, `while`, `scan`, and the host effects `debug_print`
and `debug_callback`.

Read `catalogue.py`'s `jit` first: it is the model. A higher-order primitive carries
its bodies as sub-jaxprs in its params, *without* constvars: anything a body closed
over (a constant array, a tracer of an enclosing trace) has been turned into an
explicit leading input by `staging.convert_constvars_to_invars`, and the equation
passes it in. So a body is a closed program and every pass can transform it alone.

    cond[branches=(b0, b1, ...)]  index, *operands
        Runs `branches[index]` on `operands` (the index is an int32 scalar, already
        clamped into range by `lax.switch`; `lax.cond` passes `int32(pred)`). Every
        branch takes the same inputs and returns the same output types.

    while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts]
            *cond_consts, *body_consts, *carry
        `while cond_jaxpr(cond_consts, carry): carry = body_jaxpr(body_consts, carry)`.
        `cond_jaxpr` returns one bool scalar; `body_jaxpr` returns the carry types.

    scan[jaxpr, num_consts, num_carry, length, reverse, unroll]  *consts, *init, *xs
        `jaxpr(consts, carry, x_slices) -> (carry, y_slices)`, run `length` times over
        the leading axis of every `xs` (backwards with `reverse`); the outputs are the
        final carry and the `ys`, stacked along a new leading axis of size `length`.

    debug_print[fmt, layout]  *values           -> ()   prints on the host
    debug_callback[callback]  *values           -> ()   calls `callback(*values)`
    pure_callback[callback, result_shapes, result_dtypes, vmap_method]
            *values -> results   calls `callback(*values)` on the host for its results;
        no effect: a pure function, so it may be dropped when unused or called again
    io_callback[callback, result_shapes, result_dtypes, ordered]
            *values -> results   the same call with the `Debug` effect: never dropped,
        never duplicated, run in program order (`ordered` only changes vmap, which
        refuses an ordered one, and what JAX is told when it is lowered)

Effects: a control-flow equation has the effects of its bodies -- a `debug.print` in
a loop body makes the whole loop an ordered, effectful equation, so no pass may drop
or duplicate it -- with each ref effect renumbered from the body's input position to
the equation's input position (the same idea as `_call_effects` for `jit`).
"""
from __future__ import annotations

import numpy as np

from .core import Jaxpr, REF_EFFECT_TYPES, DebugEffect
from .types import ShapedArray, RefType, is_bool
from .registry import Primitive, type_rules, effect_rules, _fail

__all__ = ["cond_p", "while_p", "scan_p", "debug_print_p", "debug_callback_p", "pure_callback_p",
           "io_callback_p", "VMAP_METHODS",
           "same_types", "types_text"]


def same_types(actual, expected) -> bool:
    """Whether two aval lists agree, ignoring weak types (a body's result that is weakly
    typed still fits a strongly typed slot, as in JAX)."""
    if len(actual) != len(expected):
        return False
    for a, b in zip(actual, expected):
        if isinstance(a, ShapedArray) and isinstance(b, ShapedArray):
            if a.strip_weak_type() != b.strip_weak_type():
                return False
        elif a != b:
            return False
    return True


def types_text(avals) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _body(prim_name, what, jaxpr):
    if not isinstance(jaxpr, Jaxpr) or jaxpr.constvars:
        _fail(prim_name, f"{what} must be a Jaxpr with its constants passed as inputs")
    return jaxpr


def _renumber(effects, position_in_equation):
    """The body's effects as effects of the equation: ref effects move from the body's
    input position `p` to the equation's input `position_in_equation(p)`."""
    out = set()
    for effect in effects:
        if isinstance(effect, REF_EFFECT_TYPES):
            out.add(type(effect)(position_in_equation(effect.input_index)))
        else:
            out.add(effect)
    return out


# -- cond -------------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True, has_ref_effects_of_body=True)


def _cond_rule(index, *operands, branches):
    if not isinstance(branches, tuple) or not branches:
        _fail("cond", "branches must be a non-empty tuple of jaxprs")
    if not isinstance(index, ShapedArray) or index.shape != () or index.dtype != np.int32:
        _fail("cond", f"the branch index must be an i32[] scalar, got {index}")
    for i, branch in enumerate(branches):
        _body("cond", f"branch {i}", branch)
        if not same_types(list(operands), branch.in_avals):
            _fail("cond", f"branch {i} takes {types_text(branch.in_avals)} but the "
                  f"operands are {types_text(operands)}")
        if not same_types(branch.out_avals, branches[0].out_avals):
            _fail("cond", f"branch {i} returns {types_text(branch.out_avals)} but branch "
                  f"0 returns {types_text(branches[0].out_avals)}")
    return _join_weak(*(b.out_avals for b in branches))


def _join_weak(*aval_lists):
    """Output types of several bodies: weak only where every body's result is weak."""
    out = []
    for avals in zip(*aval_lists):
        weak = all(getattr(a, "weak_type", False) for a in avals)
        first = avals[0]
        out.append(first.update(weak_type=weak) if isinstance(first, ShapedArray) else first)
    return out


def _cond_effects(index, *operands, branches):
    effects = set()
    for branch in branches:
        effects |= _renumber(branch.effects, lambda p: p + 1)   # input 0 is the index
    return frozenset(effects)


type_rules[cond_p] = _cond_rule
effect_rules[cond_p] = _cond_effects


# -- while ------------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True, has_ref_effects_of_body=True)


def _while_rule(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    _body("while", "cond_jaxpr", cond_jaxpr)
    _body("while", "body_jaxpr", body_jaxpr)
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    if not same_types(cond_consts + carry, cond_jaxpr.in_avals):
        _fail("while", f"cond_jaxpr takes {types_text(cond_jaxpr.in_avals)} but is given "
              f"{types_text(cond_consts + carry)}")
    out = cond_jaxpr.out_avals
    if len(out) != 1 or not isinstance(out[0], ShapedArray) or out[0].shape != () \
            or not is_bool(out[0].dtype):
        _fail("while", f"cond_jaxpr must return one bool[] scalar, got {types_text(out)}")
    if not same_types(body_consts + carry, body_jaxpr.in_avals):
        _fail("while", f"body_jaxpr takes {types_text(body_jaxpr.in_avals)} but is given "
              f"{types_text(body_consts + carry)}")
    if not same_types(body_jaxpr.out_avals, carry):
        _fail("while", f"body_jaxpr returns {types_text(body_jaxpr.out_avals)} but the "
              f"carry is {types_text(carry)}")
    # the body's output, as JAX types it (a weak initial carry the body makes strong)
    return list(body_jaxpr.out_avals)


def _while_effects(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    def from_cond(p):
        return p if p < cond_nconsts else p + body_nconsts

    def from_body(p):
        return cond_nconsts + p
    return frozenset(_renumber(cond_jaxpr.effects, from_cond)
                     | _renumber(body_jaxpr.effects, from_body))


type_rules[while_p] = _while_rule
effect_rules[while_p] = _while_effects


# -- scan -------------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True, has_ref_effects_of_body=True)


def _scan_rule(*args, jaxpr, num_consts, num_carry, length, reverse=False, unroll=1):
    _body("scan", "jaxpr", jaxpr)
    if not isinstance(length, (int, np.integer)) or length < 0:
        _fail("scan", f"length must be a non-negative int, got {length!r}")
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    x_slices = []
    for i, x in enumerate(xs):
        if not isinstance(x, ShapedArray) or x.ndim < 1 or x.shape[0] != length:
            _fail("scan", f"xs input {i} must be an array with leading axis of length "
                  f"{length}, got {x}")
        x_slices.append(x.update(shape=x.shape[1:]))
    if not same_types(consts + carry + x_slices, jaxpr.in_avals):
        _fail("scan", f"jaxpr takes {types_text(jaxpr.in_avals)} but is given "
              f"{types_text(consts + carry + x_slices)} (consts, carry, x slices)")
    carry_out = jaxpr.out_avals[:num_carry]
    if not same_types(carry_out, carry):
        _fail("scan", f"jaxpr returns the carry {types_text(carry_out)} but the carry "
              f"is {types_text(carry)}")
    ys = [y.update(shape=(length,) + y.shape) for y in jaxpr.out_avals[num_carry:]]
    # the body's carry out, as JAX types it (an imported program may pass a weak
    # initial carry that its body makes strong)
    return list(carry_out) + ys


def _scan_effects(*args, jaxpr, **params):
    return frozenset(_renumber(jaxpr.effects, lambda p: p))


type_rules[scan_p] = _scan_rule
effect_rules[scan_p] = _scan_effects


# -- host effects -------------------------------------------------------------------------

debug_print_p = Primitive("debug_print", multiple_results=True)
debug_callback_p = Primitive("debug_callback", multiple_results=True)


def _debug_print_rule(*values, fmt, layout):
    if not isinstance(fmt, str):
        _fail("debug_print", f"fmt must be a string, got {fmt!r}")
    for value in values:
        if isinstance(value, RefType):
            _fail("debug_print", "cannot print a ref; read it first (r[...])")
    return []


def _debug_callback_rule(*values, callback):
    if not callable(callback):
        _fail("debug_callback", f"callback must be callable, got {callback!r}")
    return []


type_rules[debug_print_p] = _debug_print_rule
type_rules[debug_callback_p] = _debug_callback_rule
effect_rules[debug_print_p] = lambda *values, **params: frozenset({DebugEffect()})
effect_rules[debug_callback_p] = lambda *values, **params: frozenset({DebugEffect()})


# -- pure host callbacks -------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback", multiple_results=True)
# How vmap calls a pure callback (transforms/callback_rules.py); None: it cannot.
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


def _pure_callback_rule(*values, callback, result_shapes, result_dtypes, vmap_method):
    if vmap_method not in VMAP_METHODS:
        _fail("pure_callback", f"vmap_method must be one of {VMAP_METHODS}, got "
                               f"{vmap_method!r}")
    return _callback_results("pure_callback", values, callback, result_shapes, result_dtypes)


def _callback_results(name, values, callback, result_shapes, result_dtypes):
    if not callable(callback):
        _fail(name, f"callback must be callable, got {callback!r}")
    if len(result_shapes) != len(result_dtypes):
        _fail(name, "result_shapes and result_dtypes differ in length")
    for value in values:
        if isinstance(value, RefType):
            _fail(name, "cannot pass a ref to a callback; read it first (r[...])")
    return [ShapedArray(tuple(shape), np.dtype(dtype))
            for shape, dtype in zip(result_shapes, result_dtypes)]


type_rules[pure_callback_p] = _pure_callback_rule

# An io_callback talks to the outside world. minijax keeps every host effect in program
# order, so an unordered one gets the same effect as an ordered one: a stronger promise
# than JAX's (which may reorder unordered calls), never a weaker one.
io_callback_p = Primitive("io_callback", multiple_results=True)


def _io_callback_rule(*values, callback, result_shapes, result_dtypes, ordered):
    if not isinstance(ordered, bool):
        _fail("io_callback", f"ordered must be a bool, got {ordered!r}")
    return _callback_results("io_callback", values, callback, result_shapes, result_dtypes)


type_rules[io_callback_p] = _io_callback_rule
effect_rules[io_callback_p] = lambda *values, **params: frozenset({DebugEffect()})


# -- what a debug_print does on the host ------------------------------------------------
#
# `debug.print` accepts pytrees of arrays (`x={x}` with `x` a dict, say). The params
# must print and parse, so the pytree's shape is kept as a `layout`: nested tuples of
# strings, `'*'` for an array leaf, `('tuple', ...)`, `('list', ...)`,
# `('dict', (key, sub), ...)` and `'None'`. The whole call is `('call', args, kwargs)`.

def layout_of(tree) -> object:
    """The printable layout of a pytree made of tuples, lists, dicts and leaves."""
    if tree is None:
        return "None"
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("tuple",) + tuple(layout_of(t) for t in tree)
    if isinstance(tree, list):
        return ("list",) + tuple(layout_of(t) for t in tree)
    if isinstance(tree, dict):
        if not all(isinstance(k, str) for k in tree):
            raise TypeError("debug.print: dict keys of printed values must be strings")
        return ("dict",) + tuple((k, layout_of(tree[k])) for k in sorted(tree))
    return "*"


def rebuild_from_layout(layout, leaves):
    """The pytree `layout` describes, its leaves taken in order from the iterator."""
    if layout == "*":
        return next(leaves)
    if layout == "None":
        return None
    kind, *items = layout
    if kind == "tuple":
        return tuple(rebuild_from_layout(item, leaves) for item in items)
    if kind == "list":
        return [rebuild_from_layout(item, leaves) for item in items]
    return {key: rebuild_from_layout(item, leaves) for key, item in items}


def format_debug_print(fmt: str, layout, values) -> str:
    """The text `debug_print[fmt, layout]` prints for these (host) values."""
    leaves = iter(values)     # as the backend hands them over (jax.Arrays from XLA)
    _, args_layout, kwargs_layout = layout
    args = rebuild_from_layout(args_layout, leaves)
    kwargs = rebuild_from_layout(kwargs_layout, leaves)
    return fmt.format(*args, **kwargs)
