"""`custom_derivatives.linear_call`: a function linear in some arguments, with the
transpose its author gives.

`linear_call(fun, fun_transpose, residual_args, linear_args)` is
`fun(residual_args, linear_args)`, where `fun` is linear in `linear_args` and
`fun_transpose(residual_args, cotangent)` is its transpose. It is a `custom_vjp`
whose bwd calls `fun_transpose` and whose tangent map (for forward mode, which a
plain `custom_vjp` refuses) is `fun` itself on the tangents of `linear_args`. As in
JAX, the residual arguments cannot be differentiated (`fun` need not be linear in
them: JAX's own example divides by one): minijax says so with a TypeError, where JAX
0.10-0.12 fail an internal assertion.
"""
from __future__ import annotations

from jax import tree_util

from ..ir.trace import aval_of
from ..transforms.ad_util import SymbolicZero, is_differentiable, zeros, tangent_aval
from ..transforms.custom_derivatives import custom_vjp, custom_vjp_primal_tree_values

__all__ = ["linear_call"]


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """`fun(residual_args, linear_args)`, transposed by `fun_transpose`."""
    res_leaves, res_tree = tree_util.tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_util.tree_flatten(linear_args)
    n_res_float = sum(is_differentiable(aval_of(x)) for x in res_leaves)
    lin_avals = [aval_of(x) for x in lin_leaves]

    def call(res, lin):
        return fun(res, lin)

    def fwd(res, lin):
        # symbolic_zeros: to see which arguments are differentiated.
        if any(record.perturbed for record in tree_util.tree_leaves(res)):
            raise TypeError(f"linear_call of {call.__name__}: its residual_args cannot "
                            f"be differentiated, only its linear_args (fun need not be "
                            f"linear in the residuals)")
        res, lin = custom_vjp_primal_tree_values((res, lin))
        return fun(res, lin), res

    def bwd(res, ct):
        ct = tree_util.tree_map(lambda c: zeros(c.aval) if type(c) is SymbolicZero else c,
                                ct)
        return None, fun_transpose(res, ct)

    def tangent_map(res, float_tangents):
        # The tangents come for the differentiable leaves of (residuals, linear args);
        # only the linear arguments' count.
        lin_tangents = iter(float_tangents[n_res_float:])
        leaves = [next(lin_tangents) if is_differentiable(a) else zeros(tangent_aval(a))
                  for a in lin_avals]
        out = fun(res, tree_util.tree_unflatten(lin_tree, leaves))
        return tree_util.tree_leaves(out)

    call.__name__ = getattr(fun, "__name__", "linear_call")
    wrapped = custom_vjp(call)
    wrapped.defvjp(fwd, bwd, symbolic_zeros=True)
    wrapped._linear_forward = tangent_map
    return wrapped(tree_util.tree_unflatten(res_tree, res_leaves), linear_args)
