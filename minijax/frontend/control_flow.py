"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`.

Read `ir/control_flow_primitives.py` first (what the primitives mean). This module is
the user-facing side, with `jax.lax`'s names and signatures. Each function:

1. flattens its pytree arguments (carries, operands, xs) into leaves;
2. traces each Python body once into a jaxpr at the leaves' types
   (`_trace_body`); a value the body closes over -- a constant array, or a tracer of
   an enclosing transformation -- becomes a leading explicit input of the body, so
   the body is a closed program every pass can transform on its own;
3. checks that the bodies fit together (branches return the same types, a loop body
   returns its carry's types) and names both types when they do not;
4. binds one primitive, which every trace then interprets: eagerly it runs as one
   compiled XLA program; under jit it is one equation; under jvp/vmap/grad the
   pass's rule for it applies (minijax/transforms/cond.py, loops.py, scan.py).

Unlike Python `if`/`for`, these work on traced values, and they are *not unrolled*:
the lowered XLA program has one conditional or loop, whatever the trip count.

Refs: a body may read and write any ref it *closes over* (every pass handles that;
see `transforms/control_flow_common.py`). A ref may also be a `cond`/`switch`
operand, and `scan`/`map` may run over a ref as `xs`, as in JAX: iteration i gets
the view `r.at[i]` (the body closes over the ref; the iteration number is what is
scanned). A ref may not be threaded through a loop carry or returned from a body: a
ref is a place, not a value that flows from one iteration to the next. Each is a
`RefError` at trace time that names the ref and says to close over it instead.

Derived forms, as in JAX: `fori_loop` with static (Python int) bounds is a `scan`,
so it is reverse-differentiable; with traced bounds it is a `while_loop`, which is
differentiable in forward mode only. `map` is a `scan` with no carry, and with
`batch_size` a `scan` over chunks of a `vmap`, plus one `vmap` for the remainder.
"""
from __future__ import annotations

import builtins
from typing import Callable, Sequence

import numpy as np
from jax import tree_util

from .ref_checks import check_ref_arguments, check_staged_refs, check_returned_refs
from .pytrees import flatten_checked, fun_name
from ..ir import control_flow_primitives as CF
from ..ir.core import Jaxpr, Var
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import MinijaxError, Tracer, aval_of, bind
from ..ir.types import ShapedArray, is_bool, is_integer
from .vmap import vmap
from .refs import RefError, RefView, describe_ref, is_ref
from . import lax_ops as _lax
from ..transforms.control_flow_common import Body, merge_bodies

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]


class ControlFlowError(MinijaxError, TypeError):
    """A control-flow construct was called with bodies or operands that do not fit."""


class EmptyBranchesError(MinijaxError, ValueError):
    """`switch` given no branches (a ValueError in JAX, where the rest are TypeErrors)."""


class ScanLengthError(MinijaxError, ValueError):
    """A scan (or `lax.map`) whose xs leaves and `length=` disagree on the number of
    steps, or that has neither: a ValueError in JAX, like a bad size under vmap."""


class _Body:
    """One traced body: `jaxpr` takes `consts` (closed-over values) then the leaves."""
    __slots__ = ("jaxpr", "consts", "out_tree")

    def __init__(self, jaxpr, consts, out_tree):
        self.jaxpr, self.consts, self.out_tree = jaxpr, consts, out_tree

    @property
    def out_avals(self):
        return self.jaxpr.out_avals


_CLOSE_OVER = ("Close over the ref instead: use it inside the body by its name (read "
               "r[...], write r[...] = v) and leave it out of the {what}.")


_RETURNED_REF = ("a ref cannot leave a control-flow body, as a result or as a loop "
                 "carry. " + _CLOSE_OVER.format(what="outputs") +
                 " To return what it holds, return r[...].")


def _trace_body(fun: Callable, in_tree, in_avals, where: str, in_leaves=None) -> _Body:
    """Trace `fun(*args)`, where `in_tree` is the structure of the tuple `args`
    (whose leaves, when given as `in_leaves`, name the refs a body returns)."""
    out_tree_cell = []

    def flat_fun(*leaves):
        out_leaves, out_tree = tree_util.tree_flatten(
            fun(*tree_util.tree_unflatten(in_tree, leaves)))
        check_returned_refs(out_leaves, out_tree, leaves, in_leaves, where, _RETURNED_REF)
        out_tree_cell.append(out_tree)
        return out_leaves
    closed = trace_to_jaxpr(flat_fun, in_avals)
    return _Body(convert_constvars_to_invars(closed.jaxpr), list(closed.consts),
                 out_tree_cell[0])


def _reject_refs(tree, where: str, what: str):
    """Refs may not be loop carries or scanned-over values: name the first one."""
    if not any(is_ref(x) or isinstance(x, RefView) for x in tree_util.tree_leaves(tree)):
        return
    for path, leaf in tree_util.tree_flatten_with_path(tree)[0]:
        if is_ref(leaf) or isinstance(leaf, RefView):
            base = leaf._ref if isinstance(leaf, RefView) else leaf
            view = "a view of " if isinstance(leaf, RefView) else ""
            at = f" at {tree_util.keystr(path)}" if path else ""
            raise RefError(f"{where}: {view}{describe_ref(base)} is passed as the {what}"
                           f"{at}; a ref cannot be threaded through a loop. "
                           + _CLOSE_OVER.format(what=what))


def _flatten(tree, where: str):
    return flatten_checked(tree, f"{where} leaf")


def _types_differ_beyond_weakness(actual, expected) -> bool:
    return not CF.same_types(actual, expected)


class _Shown:
    """A leaf that prints as the given text, so a tree of types prints without quotes."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text

    __str__ = __repr__


def _show_tree(treedef, avals) -> str:
    return str(tree_util.tree_unflatten(treedef, [_Shown(str(a)) for a in avals]))


def _first_mismatch(treedef, expected, actual) -> tuple[str, object, object, str]:
    """Where two leaf-type lists of one tree first differ beyond weak types: the leaf's
    path (`[1]`, `['b']`, empty for a bare leaf), both types, and what differs. The
    messages show the types without weak marks (`str_short`), as JAX's do."""
    paths = [tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves))))[0]]
    for path, e, a in zip(paths, expected, actual):
        if not CF.same_types([a], [e]):
            what = ("shapes" if getattr(e, "shape", None) != getattr(a, "shape", None) else
                    "dtypes" if getattr(e, "dtype", None) != getattr(a, "dtype", None)
                    else "types")
            return path, e, a, what
    raise AssertionError("the types agree")


def _promote_weak_carries(leaves, avals, out_avals):
    """JAX's promotion of weakly typed initial carries (Python scalars, say) to what
    the body returns: a carry whose dtype differs from the body's output is converted
    to the dtype promotion gives the two (`fori_loop(..., 0)` whose body adds floats
    carries a float32), and one the body only makes strong starts strong. Returns
    `(changed, leaves, avals)`."""
    from ..numpy._promotion import result_type   # (jnp is built on this module)
    changed = False
    new_leaves, new_avals = [], []
    for leaf, aval, out in zip(leaves, avals, out_avals):
        if (isinstance(aval, ShapedArray) and aval.weak_type
                and isinstance(out, ShapedArray) and aval.dtype != out.dtype):
            dtype = result_type(leaf, out.dtype)
            leaf = _lax.convert_element_type(leaf, dtype, weak_type=False)
            aval = ShapedArray(aval.shape, dtype)
            changed = True
        new_leaves.append(leaf)
        new_avals.append(aval)
    return changed, new_leaves, new_avals


def _trace_loop_body(fun, in_tree, carry_leaves, carry_tree, carry_avals, extra_avals,
                     where, carry_of_output):
    """Trace a loop body whose output carry must match its input carry. Returns
    `(body, carry_leaves, carry_avals)` once the types agree: each retrace promotes
    weakly typed initial carries the body changes (`_promote_weak_carries`), and a
    promoted carry stays strong, so it takes at most one retrace per carry."""
    for _ in range(len(carry_avals) + 2):
        body = _trace_body(fun, in_tree, carry_avals + extra_avals, where)
        out_tree, out_avals = carry_of_output(body)
        if out_tree != carry_tree:
            raise ControlFlowError(
                f"{where} must return a carry with the same structure as its input "
                f"carry: the input carry is {carry_tree} but the body returns {out_tree}")
        changed, new_leaves, new_avals = _promote_weak_carries(carry_leaves, carry_avals,
                                                               out_avals)
        if not changed:
            if _types_differ_beyond_weakness(out_avals, carry_avals):
                path, expected, actual, what = _first_mismatch(carry_tree, carry_avals,
                                                               out_avals)
                component = f" component {path}" if path else ""
                raise ControlFlowError(
                    f"{where} must return a carry of the same types as its input carry: "
                    f"the input carry{component} has type {expected.str_short()} but the "
                    f"corresponding output carry component has type {actual.str_short()}, "
                    f"so the {what} do not match")
            return body, carry_leaves, carry_avals
        carry_leaves, carry_avals = new_leaves, new_avals
    raise AssertionError(f"{where}: the carry types did not settle")  # (each pass fixes one)


def scan_length(x_leaves, length, where: str) -> int:
    """The number of steps of a scan over `x_leaves`: the leading axis size they (and
    `length=`, if given) all share."""
    lengths = set()
    for i, x in enumerate(x_leaves):
        aval = aval_of(x)
        if not isinstance(aval, ShapedArray) or aval.ndim == 0:
            raise ControlFlowError(f"{where}: xs leaf {i} must be an array with a leading "
                                   f"axis to scan over, got {aval}")
        lengths.add(aval.shape[0])
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ScanLengthError(f"{where}: every xs leaf (and length=, if given) must have "
                               f"the same leading axis size, got sizes {sorted(lengths)}")
    if not lengths:
        raise ScanLengthError(f"{where}: with xs=None (or xs without leaves) pass length=")
    return lengths.pop()


def trace_scan_body(f, init_and_xs, carry_leaves, carry_tree, x_leaves, where: str):
    """`f(carry, x) -> (carry, y)` traced as a scan body on one slice of each xs leaf:
    `(body, carry_leaves, carry_avals)`, as `_trace_loop_body` returns them."""
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in x_leaves]
    num_carry = len(carry_leaves)

    def carry_of_output(body):
        children = body.out_tree.children() if body.out_tree.num_nodes > 1 else []
        if len(children) != 2:
            raise ControlFlowError(f"{where} must return a pair (carry, y), got "
                                   f"{body.out_tree}")
        return children[0], body.out_avals[:num_carry]
    return _trace_loop_body(f, tree_util.tree_structure(init_and_xs), carry_leaves,
                            carry_tree, [aval_of(x) for x in carry_leaves], x_avals, where,
                            carry_of_output)


# -- cond and switch -------------------------------------------------------------------

def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=None):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as `jax.lax.cond`.

    Both branches are traced (they must return the same types); only the one taken
    runs. Under `vmap` with a batched `pred`, both run and the results are selected
    per example, as in JAX."""
    if operand is not None:
        operands = operands + (operand,)
    if not callable(true_fun) or not callable(false_fun):
        raise ControlFlowError("cond: true_fun and false_fun must be callables")
    pred_aval = aval_of(pred)
    if not isinstance(pred_aval, ShapedArray) or pred_aval.shape != ():
        raise ControlFlowError(f"cond: the predicate must be a scalar, got {pred_aval}; "
                               f"for an elementwise choice use jnp.where or lax.select")
    if not is_bool(pred_aval.dtype):
        if not (is_integer(pred_aval.dtype) or np.issubdtype(pred_aval.dtype, np.floating)):
            raise ControlFlowError(f"cond: the predicate must be a bool or a number, got "
                                   f"{pred_aval}")
        pred = _lax.ne(pred, _lax.convert_element_type(0, pred_aval.dtype))
    index = _lax.convert_element_type(pred, np.int32)
    # JAX traces true_fun first: a branch's Python side effects come in JAX's order.
    return _bind_cond(index, (false_fun, true_fun), operands, "cond", trace_order=(1, 0))


def switch(index, branches: Sequence[Callable], *operands, operand=None):
    """`branches[index](*operands)`, as `jax.lax.switch`: `index` is clamped into
    `[0, len(branches) - 1]`."""
    if operand is not None:
        operands = operands + (operand,)
    branches = tuple(branches)
    if not all(callable(b) for b in branches):
        raise ControlFlowError("switch: branches must be a non-empty sequence of callables")
    index_aval = aval_of(index)
    if not isinstance(index_aval, ShapedArray) or index_aval.shape != ():
        raise ControlFlowError(f"switch: the branch index must be a scalar, got {index_aval}")
    if not is_integer(index_aval.dtype):
        raise ControlFlowError(f"switch: the branch index must be an integer, got "
                               f"{index_aval}")
    if not branches:        # a ValueError in JAX, checked after the index as there
        raise EmptyBranchesError("switch: branches must be a non-empty sequence of callables, "
                                 "got an empty one")
    if len(branches) == 1:      # no choice to make: call it, with the same ref checks
        where = f"switch branch {fun_name(branches[0])}"
        check_ref_arguments(operands, {}, tree_util.tree_leaves(operands), "switch operands")
        out = branches[0](*operands)
        check_returned_refs(*tree_util.tree_flatten(out), (), None, where, _RETURNED_REF)
        return out
    index = _lax.convert_element_type(index, np.int32)
    index = _lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _bind_cond(index, branches, operands, "switch")


def _bind_cond(index, branches, operands, where, trace_order=None):
    check_ref_arguments(operands, {}, tree_util.tree_leaves(operands), f"{where} operands")
    leaves, in_tree = _flatten(tuple(operands), f"{where} operand")
    avals = [aval_of(x) for x in leaves]
    traced = {}
    for i in trace_order or range(len(branches)):
        traced[i] = _trace_body(branches[i], in_tree, avals,
                                f"{where} branch {fun_name(branches[i])}", leaves)
    bodies = [traced[i] for i in range(len(branches))]
    _check_branches_agree(bodies, branches, where)
    if any(is_ref(x) for x in leaves):
        for b in bodies:
            check_staged_refs(b, leaves, f"{where} branch")
        bodies, leaves = _refs_as_closures(bodies, leaves)
    # Every branch takes every branch's closed-over values, so one equation can pass
    # the same inputs whichever branch runs.
    jaxprs, all_consts = merge_bodies([Body(b.jaxpr, b.consts) for b in bodies])
    inputs = [*all_consts, *leaves]
    # (a concrete input is not forwarded: eagerly, a result is an array the cond made)
    forwarded = [f if f is None or isinstance(inputs[f], Tracer) else None
                 for f in _forwarded_inputs(jaxprs)]
    jaxprs = [Jaxpr(j.constvars, j.invars, j.eqns,
                    [v for v, f in zip(j.outvars, forwarded) if f is None]) for j in jaxprs]
    outs = iter(bind(CF.cond_p, index, *inputs, branches=tuple(jaxprs)))
    outs = [next(outs) if f is None else inputs[f] for f in forwarded]
    return tree_util.tree_unflatten(bodies[0].out_tree, outs)


def _forwarded_inputs(jaxprs) -> list:
    """Per output of the branches: the position of the input every branch returns
    there unchanged, or None. Such an output is that input whichever branch runs, so
    it is taken from outside the `cond`, as JAX's `cond` does: otherwise every pass
    would treat it as chosen by the index (a checkpoint would save the index for the
    tangent of a value no branch changes)."""
    positions = [{v: i for i, v in enumerate(j.invars)} for j in jaxprs]
    forwarded = []
    for k in range(len(jaxprs[0].outvars)):
        found = {where.get(j.outvars[k], -1) if isinstance(j.outvars[k], Var) else -1
                 for j, where in zip(jaxprs, positions)}
        forwarded.append(found.pop() if len(found) == 1 and -1 not in found else None)
    return forwarded


def _refs_as_closures(bodies, leaves):
    """Ref operands become closed-over values of every branch: only its inputs change
    places (the ref moves to the branch's consts), so every pass sees a ref operand
    exactly as a ref the branch closed over, which is what it means."""
    refs = [k for k, x in enumerate(leaves) if is_ref(x)]
    others = [k for k, x in enumerate(leaves) if not is_ref(x)]
    new_bodies = []
    for b in bodies:
        n = len(b.consts)
        invars = b.jaxpr.invars
        jaxpr = Jaxpr((), [*invars[:n], *(invars[n + k] for k in refs),
                           *(invars[n + k] for k in others)], b.jaxpr.eqns, b.jaxpr.outvars)
        new_bodies.append(_Body(jaxpr, b.consts + [leaves[k] for k in refs], b.out_tree))
    return new_bodies, [leaves[k] for k in others]


def _check_branches_agree(bodies, branches, where):
    first = bodies[0]
    names = ["false_fun", "true_fun"] if where == "cond" else \
        [f"branch {i}" for i in range(len(branches))]
    for i, body in enumerate(bodies[1:], 1):
        if body.out_tree != first.out_tree:
            raise ControlFlowError(
                f"{where}: the branches must return the same types, but {names[0]} "
                f"({fun_name(branches[0])}) returns "
                f"{_show_tree(first.out_tree, first.out_avals)} and {names[i]} "
                f"({fun_name(branches[i])}) returns "
                f"{_show_tree(body.out_tree, body.out_avals)}")
        if _types_differ_beyond_weakness(body.out_avals, first.out_avals):
            # cond names true_fun first, as JAX's message does
            j, k = (i, 0) if where == "cond" else (0, i)
            path, expected, actual, what = _first_mismatch(
                first.out_tree, bodies[j].out_avals, bodies[k].out_avals)
            at = f" at path {path}" if path else ""
            raise ControlFlowError(
                f"{where}: the branches must return the same types: the output of "
                f"{names[j]} ({fun_name(branches[j])}){at} has type {expected.str_short()} "
                f"but the corresponding output of {names[k]} ({fun_name(branches[k])}) has "
                f"type {actual.str_short()}, so the {what} do not match")


# -- while_loop and fori_loop --------------------------------------------------------------

def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """`while cond_fun(val): val = body_fun(val)`, as `jax.lax.while_loop`.

    Differentiable in forward mode (jvp) only: the number of iterations is not known
    ahead of time, so there is nowhere to store per-iteration residuals for reverse
    mode. Use `scan`, or `fori_loop` with static bounds, to differentiate in reverse."""
    _reject_refs(init_val, "while_loop", "loop carry (init_val)")
    carry_leaves, carry_tree = _flatten(init_val, "while_loop init_val")
    carry_avals = [aval_of(x) for x in carry_leaves]
    # cond_fun first, as JAX traces them (so Python side effects come in JAX's order);
    # again if the body changed the carry's types (a weak carry promoted).
    def trace_cond(avals):
        return _trace_body(cond_fun, tree_util.tree_structure((init_val,)), avals,
                           f"while_loop cond_fun ({fun_name(cond_fun)})")
    initial_avals = carry_avals
    cond_body = trace_cond(carry_avals)
    body, carry_leaves, carry_avals = _trace_loop_body(
        body_fun, tree_util.tree_structure((init_val,)), carry_leaves, carry_tree,
        carry_avals, [], f"while_loop body_fun ({fun_name(body_fun)})",
        lambda body: (body.out_tree, body.out_avals))
    if list(carry_avals) != list(initial_avals):
        cond_body = trace_cond(carry_avals)
    out = cond_body.out_avals
    if len(out) != 1 or not isinstance(out[0], ShapedArray) or out[0].shape != () \
            or not is_bool(out[0].dtype):
        raise ControlFlowError(
            f"while_loop: cond_fun ({fun_name(cond_fun)}) must return a boolean scalar, "
            f"got {_show_tree(cond_body.out_tree, out)}")
    outs = bind(CF.while_p, *cond_body.consts, *body.consts, *carry_leaves,
                cond_jaxpr=cond_body.jaxpr, body_jaxpr=body.jaxpr,
                cond_nconsts=len(cond_body.consts), body_nconsts=len(body.consts))
    return tree_util.tree_unflatten(carry_tree, outs)


def _static_int(x):
    """`x` as a Python int if it is known at trace time, else None."""
    if isinstance(x, Tracer):
        return None
    if isinstance(x, (int, np.integer)) or (np.ndim(x) == 0 and is_integer(aval_of(x).dtype)):
        return int(x)
    return None


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`, as `jax.lax.fori_loop`.

    With static bounds (Python ints) this is a `scan` of `upper - lower` steps, so it
    is differentiable in reverse mode; with traced bounds it is a `while_loop`
    (forward mode only)."""
    _reject_refs(init_val, "fori_loop", "loop carry (init_val)")
    for name, bound in (("lower", lower), ("upper", upper)):
        aval = aval_of(bound)
        if not isinstance(aval, ShapedArray) or aval.shape != () or not is_integer(aval.dtype):
            raise ControlFlowError(f"fori_loop: {name} must be an integer scalar, got {aval}")
    lower_aval, upper_aval = aval_of(lower), aval_of(upper)
    if lower_aval.weak_type and not upper_aval.weak_type:
        lower = _lax.convert_element_type(lower, upper_aval.dtype)
    elif upper_aval.weak_type and not lower_aval.weak_type:
        upper = _lax.convert_element_type(upper, lower_aval.dtype)
    elif lower_aval.dtype != upper_aval.dtype:
        raise ControlFlowError(f"fori_loop: lower and upper must have the same dtype, got "
                               f"{lower_aval} and {upper_aval}")
    static_lower, static_upper = _static_int(lower), _static_int(upper)
    if static_lower is not None and static_upper is not None:
        def scan_body(carry, _):
            i, val = carry
            return (_lax.add(*_lax._match_scalars(i, 1)), body_fun(i, val)), None
        length = builtins.max(static_upper - static_lower, 0)
        if unroll is None:
            unroll = 1
        (_, result), _ = scan(_named(scan_body, body_fun), (lower, init_val), None,
                              length=length, unroll=unroll)
        return result
    if unroll not in (None, 1, False):
        raise ControlFlowError("fori_loop: unroll needs static (Python int) bounds")

    def while_cond(carry):
        i, stop, _ = carry
        return _lax.lt(i, stop)

    def while_body(carry):
        i, stop, val = carry
        return _lax.add(*_lax._match_scalars(i, 1)), stop, body_fun(i, val)
    _, _, result = while_loop(while_cond, _named(while_body, body_fun), (lower, upper, init_val))
    return result


def _named(wrapper, fun):
    wrapper.__name__ = fun_name(fun)
    return wrapper


# -- scan and map ----------------------------------------------------------------------------

def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1, _split_transpose: bool = False):
    """Loop `carry, y = f(carry, x)` over the leading axis of `xs`, as `jax.lax.scan`.

    Returns `(final_carry, ys)` with the `y`s stacked along a new leading axis.
    `xs=None` with `length` runs `length` steps with `x=None`; `reverse` runs from the
    last slice to the first (and stacks `ys` in the original order). Reverse-mode
    differentiable: residuals are saved per iteration, O(length) memory."""
    _reject_refs(init, "scan", "loop carry (init)")
    if _holds_refs(xs):
        return _scan_over_refs(f, init, xs, length, reverse, unroll)
    carry_leaves, carry_tree = _flatten(init, "scan init")
    x_leaves, _ = _flatten(xs, "scan xs")
    length = scan_length(x_leaves, length, "scan")
    body, carry_leaves, _ = trace_scan_body(f, (init, xs), carry_leaves, carry_tree,
                                            x_leaves, f"scan body ({fun_name(f)})")
    if unroll is True:
        unroll = builtins.max(length, 1)
    elif unroll is False:
        unroll = 1
    final_carry, ys = _bind_scan(body.jaxpr, body.consts, carry_leaves, x_leaves, length,
                                 bool(reverse), int(unroll))
    _, y_tree = body.out_tree.children()
    return (tree_util.tree_unflatten(carry_tree, final_carry),
            tree_util.tree_unflatten(y_tree, ys))


def _holds_refs(tree) -> bool:
    return any(is_ref(x) or isinstance(x, RefView) for x in tree_util.tree_leaves(tree))


def _scan_over_refs(f, init, xs, length, reverse, unroll):
    """`scan` over xs with refs (or views) among the leaves, as JAX allows: iteration
    i sees the view `r.at[i]` of each ref, the other leaves sliced as usual, and
    writes through it land in row i. Spelled in the form every pass handles: the
    body closes over the refs, and the iteration number is scanned over with the
    array leaves."""
    leaves, tree = tree_util.tree_flatten(xs)
    places = [is_ref(x) or isinstance(x, RefView) for x in leaves]
    sizes = {len(x) if place or aval_of(x).ndim else None
             for x, place in zip(leaves, places)}
    if length is not None:
        sizes.add(int(length))
    if len(sizes) != 1 or None in sizes:
        raise ScanLengthError(f"scan: every xs leaf (refs included, and length=, if given) "
                               f"must have the same leading axis size, got sizes "
                               f"{sorted(sizes, key=str)}")
    n = sizes.pop()
    arrays = [x for x, place in zip(leaves, places) if not place]

    def body(carry, step):
        i, sliced = step
        sliced = iter(sliced)
        x = [leaf.at[i] if place else next(sliced) for leaf, place in zip(leaves, places)]
        return f(carry, tree_util.tree_unflatten(tree, x))
    body.__name__ = fun_name(f)
    return scan(body, init, (np.arange(n, dtype=np.int32), arrays), length=n,
                reverse=reverse, unroll=unroll)


def _bind_scan(jaxpr: Jaxpr, consts, carry, xs, length, reverse, unroll):
    """Bind `scan`, first turning carries the body passes through unchanged into consts.

    A value that rides in the carry without changing (a weight threaded through an
    RNN's carry) is loop-invariant. As a carry, every pass would treat it as loop
    state -- partial evaluation would save it once per iteration as a residual; as a
    const it is saved once. Returns (final carry values, ys)."""
    n_consts, num_carry = len(consts), len(carry)
    carry_in = jaxpr.invars[n_consts:n_consts + num_carry]
    forwarded = [jaxpr.outvars[k] is carry_in[k] for k in range(num_carry)]
    hoisted = [k for k in range(num_carry) if forwarded[k]]
    kept = [k for k in range(num_carry) if not forwarded[k]]
    if hoisted:
        jaxpr = Jaxpr((), [*jaxpr.invars[:n_consts], *(carry_in[k] for k in hoisted),
                           *(carry_in[k] for k in kept), *jaxpr.invars[n_consts + num_carry:]],
                      jaxpr.eqns, [*(jaxpr.outvars[k] for k in kept),
                                   *jaxpr.outvars[num_carry:]])
    outs = bind(CF.scan_p, *consts, *(carry[k] for k in hoisted), *(carry[k] for k in kept),
                *xs, jaxpr=jaxpr, num_consts=n_consts + len(hoisted), num_carry=len(kept),
                length=length, reverse=reverse, unroll=unroll)
    new_carry = iter(outs[:len(kept)])
    final_carry = [carry[k] if forwarded[k] else next(new_carry) for k in range(num_carry)]
    return final_carry, outs[len(kept):]


def map(f: Callable, xs, *, batch_size: int | None = None):
    """`[f(x) for x in xs]` over the leading axis, stacked, as `jax.lax.map`.

    A `scan` with no carry. With `batch_size`, the leading axis is cut into chunks of
    `batch_size` examples: a `scan` runs `vmap(f)` on each full chunk and one more
    `vmap(f)` handles the remainder, so at most `batch_size` examples are in flight."""
    if batch_size is None:
        _, ys = scan(lambda carry, x: ((), f(x)), (), xs)
        return ys
    # Chunks of a ref would be views batched by vmap; JAX has no batch_size for them
    # either. Mapping over a ref without batch_size is a scan over it (above).
    _reject_refs(xs, "map", "mapped-over values (xs) with batch_size")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ControlFlowError(f"map: batch_size must be a positive int, got {batch_size!r}")
    x_leaves, x_tree = _flatten(xs, "map xs")
    if not x_leaves:
        raise ControlFlowError("map: xs must have at least one array leaf")
    n = aval_of(x_leaves[0]).shape[0]
    if n == 0:      # no chunk and no remainder: the plain scan makes the empty outputs
        return map(f, xs)
    num_batches, remainder = divmod(n, batch_size)
    outs = []
    if num_batches or not remainder:     # an empty xs maps to empty outputs, as in JAX
        chunks = [_lax.reshape(_lax.slice_in_dim(x, 0, num_batches * batch_size),
                               (num_batches, batch_size) + aval_of(x).shape[1:])
                  for x in x_leaves]
        _, ys = scan(lambda carry, chunk: ((), vmap(f)(chunk)), (),
                     tree_util.tree_unflatten(x_tree, chunks))
        outs.append(tree_util.tree_map(
            lambda y: _lax.reshape(y, (num_batches * batch_size,) + aval_of(y).shape[2:]), ys))
    if remainder:
        rest = [_lax.slice_in_dim(x, num_batches * batch_size, n) for x in x_leaves]
        outs.append(vmap(f)(tree_util.tree_unflatten(x_tree, rest)))
    if len(outs) == 1:
        return outs[0]
    return tree_util.tree_map(lambda a, b: _lax.concatenate([a, b], 0), *outs)
