"""`linear_transpose`, `custom_gradient` and `closure_convert`, as JAX has them.

All three trace a Python function into a jaxpr and then work on that jaxpr:

* `linear_transpose(f, *primals)` traces `f` at the primals' types and hands back a
  function from an output cotangent to the input cotangents: minijax's own
  transposition pass (`transforms/transpose.py`, `backward_pass`) run with every
  input linear -- the backward half of `vjp` without the linearization.
* `custom_gradient(f)`: `f(*args)` returns `(value, vjp_rule)`. It is a `custom_vjp`
  whose forward rule traces `vjp_rule` (a closure over the forward values) into a
  jaxpr; what the closure captured becomes that jaxpr's constants, carried to the
  backward rule as the residuals, which evaluates it on the output cotangent.
* `closure_convert(f, *example_args)` traces `f` and hands back `(g, consts)`, where
  `g(*args, *consts)` computes `f(*args)`: the values `f` closed over that may carry
  derivatives (floating-point tracers of an enclosing transformation) become explicit
  arguments, as `custom_vjp` needs for functions passed to it.
"""
from __future__ import annotations

import functools
from typing import Callable

import jax
from jax import tree_util

from .pytrees import FlatFun, fun_name
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import Tracer, aval_of
from ..ir.types import ShapedArray, canonical_dtype, is_inexact, is_integer
from ..transforms.ad_util import Zero, as_results, eval_jaxpr, tangent_aval, zeros
from ..transforms.custom_derivatives import custom_vjp
from ..transforms.transpose import UndefinedPrimal, backward_pass


def _aval_of_example(leaf) -> ShapedArray:
    """The type an example argument stands for (an array, a scalar or a
    `ShapeDtypeStruct`)."""
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return ShapedArray(tuple(leaf.shape), canonical_dtype(leaf.dtype),
                           bool(leaf.weak_type))
    return aval_of(leaf)


def _trace(fun, args, where):
    leaves, in_tree = tree_util.tree_flatten(args)
    flat_fun = FlatFun(fun, in_tree, where=where)
    closed = trace_to_jaxpr(flat_fun, [_aval_of_example(leaf) for leaf in leaves])
    return closed, in_tree, flat_fun.out_tree


# -- linear_transpose -----------------------------------------------------------------------

def linear_transpose(fun: Callable, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, traced at the types of `primals`
    (arrays, scalars or `ShapeDtypeStruct`s): `linear_transpose(f, *primals)(ct)` is
    the tuple of input cotangents for output cotangent `ct`, as `jax.linear_transpose`."""
    where = f"linear_transpose({fun_name(fun)})"
    closed, in_tree, out_tree = _trace(fun, primals, where)
    in_avals = [v.aval for v in closed.jaxpr.invars]
    out_avals = closed.out_avals
    dtypes = [a.dtype for a in in_avals + list(out_avals)]
    if not (all(map(is_inexact, dtypes)) or all(map(is_integer, dtypes))):
        raise TypeError(
            f"linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got "
            f"{[str(a.dtype) for a in in_avals]} -> {[str(a.dtype) for a in out_avals]}.")

    def transposed(out_cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        ct_avals = [aval_of(leaf) for leaf in ct_leaves]
        if any(ct.shape != out.shape or ct.dtype != out.dtype
               for ct, out in zip(ct_avals, out_avals)):
            raise TypeError(f"cotangent type does not match function output, expected "
                            f"{tuple(out_avals)} but got {ct_avals}")
        cts = backward_pass(closed.jaxpr, closed.consts,
                            [UndefinedPrimal(a) for a in in_avals], ct_leaves)
        cts = [zeros(a) if type(ct) is Zero else ct for ct, a in zip(cts, in_avals)]
        return tuple(as_results(tree_util.tree_unflatten(in_tree, cts)))
    return transposed


# -- custom_gradient ------------------------------------------------------------------------

@tree_util.register_pytree_node_class
class _TracedRule:
    """A `custom_gradient` function's vjp rule, traced: the jaxpr is the static part,
    the values it closed over (the residuals) the leaves."""

    def __init__(self, jaxpr, out_tree, consts):
        self.jaxpr, self.out_tree, self.consts = jaxpr, out_tree, list(consts)

    def tree_flatten(self):
        return self.consts, (self.jaxpr, self.out_tree)

    @classmethod
    def tree_unflatten(cls, static, consts):
        return cls(*static, consts)


def custom_gradient(fun: Callable):
    """`fun(*args)` returns `(value, vjp_rule)` where `vjp_rule(ct)` gives one
    cotangent per argument (a single one alone when `fun` takes one argument): a
    function whose reverse-mode derivative is that rule, as `jax.custom_gradient`."""
    where = f"custom_gradient({fun_name(fun)})"

    def split(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
            raise TypeError(f"{where}: the function must return a pair (value, vjp_rule) "
                            f"with vjp_rule callable, got {type(out).__name__}")
        return out

    @custom_vjp
    def wrapped(*args):
        return split(fun(*args))[0]

    def fwd(*args):
        value, rule = split(fun(*args))
        out_leaves, _ = tree_util.tree_flatten(value)
        _, ct_tree = tree_util.tree_flatten((value,))
        flat_rule = FlatFun(rule, ct_tree, where=f"the vjp rule of {where}")
        closed = trace_to_jaxpr(flat_rule, [tangent_aval(aval_of(x)) for x in out_leaves])
        return value, _TracedRule(closed.jaxpr, flat_rule.out_tree, closed.consts)

    def bwd(traced, out_cotangent):
        ct_leaves = tree_util.tree_leaves((out_cotangent,))
        cts = tree_util.tree_unflatten(
            traced.out_tree, eval_jaxpr(traced.jaxpr, traced.consts, ct_leaves))
        return (cts,) if tree_util.treedef_is_leaf(traced.out_tree) else tuple(cts)

    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(lambda *args: wrapped(*args))


# -- closure_convert ------------------------------------------------------------------------

def _may_carry_derivatives(value) -> bool:
    return isinstance(value, Tracer) and is_inexact(value.aval.dtype)


def closure_convert(fun: Callable, *example_args):
    """`(converted, consts)` with `converted(*args, *consts) == fun(*args)` for
    arguments of the examples' types: the floating-point tracers `fun` closes over
    (values an enclosing transformation may differentiate) become the trailing
    arguments `consts`, as `jax.closure_convert`."""
    where = f"closure_convert({fun_name(fun)})"
    closed, in_tree, out_tree = _trace(fun, example_args, where)
    hoisted = [c for c in closed.consts if _may_carry_derivatives(c)]

    def converted(*args_and_consts):
        n_args = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:n_args], iter(args_and_consts[n_args:])
        leaves, tree = tree_util.tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"{where}: the converted function takes arguments of structure "
                            f"{in_tree} and then {len(hoisted)} constants, got {tree}")
        consts = [next(given) if _may_carry_derivatives(c) else c for c in closed.consts]
        outs = eval_jaxpr(closed.jaxpr, consts, leaves)
        return as_results(tree_util.tree_unflatten(out_tree, outs))
    return converted, hoisted
