"""`custom_root`: a root finder differentiated implicitly, as `jax.lax.custom_root`
is, instead of through the solver's own iterations.

`f` usually closes over the values being differentiated. It is first
*closure-converted*: traced once with `make_jaxpr`, whose constants are exactly what
it closes over (tracers of any enclosing transformation included), so it can be
re-run as `converted(consts, x)` with the constants as explicit, differentiable
arguments of a `custom_jvp` function. `solve` and `tangent_solve` are converted likewise. The root x* = solve(f, x0) satisfies
f(x*, consts) = 0, so by the implicit function theorem
∂f/∂x · ẋ* = -∂f/∂consts · ċonsts: the JVP solves that linear system with
`tangent_solve(g, y)`, g being the JVP of f in x at x*. Reverse mode transposes
that JVP, so `tangent_solve` must be linear in `y` (a division, a
`jnp.linalg.solve`), as in JAX. `solve`'s own operations are never differentiated.

(`custom_linear_solve` is not here yet: its reverse mode needs `transpose_solve` as
the transpose of a user's linear map, which wants a primitive of its own.)
"""
from __future__ import annotations

from typing import Callable

from jax import tree_util

from ..transforms.ad_util import eval_jaxpr
from ..transforms.custom_derivatives import custom_jvp
from .autodiff import jvp
from .tracing import make_jaxpr
from . import lax_ops as lax


def _closure_convert(fun, example):
    """`fun` as `converted(consts, x)` plus the `consts` it closes over."""
    leaves, in_tree = tree_util.tree_flatten(example)
    out_trees = []

    def flat(*xs):
        out_leaves, out_tree = tree_util.tree_flatten(fun(tree_util.tree_unflatten(in_tree, xs)))
        out_trees.append(out_tree)
        return out_leaves
    closed = make_jaxpr(flat)(*leaves)

    def converted(consts, x):
        out = eval_jaxpr(closed.jaxpr, list(consts), tree_util.tree_leaves(x))
        return tree_util.tree_unflatten(out_trees[0], out)
    return converted, list(closed.consts), out_trees[0]


def _zeros_like(x):
    return lax.full_like(x, 0)


def _neg(tree):
    return tree_util.tree_map(lax.neg, tree)


def _check_same_structure(what, tree, expected_tree):
    if tree != expected_tree:
        raise TypeError(f"{what} must have the same structure as its input, "
                        f"got {tree} and {expected_tree}")


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """The root `solve(f, initial_guess)` of `f`, differentiated implicitly through the
    values `f` closes over (`tangent_solve(g, y)` solves the linear system g(x) = y)."""
    guess = lax.stop_gradient(initial_guess)
    converted, consts, out_tree = _closure_convert(f, guess)
    _check_same_structure("f's output", out_tree, tree_util.tree_structure(guess))

    # `solve` and `tangent_solve` may close over traced values as well (a parameter of
    # a Newton step): converted too, their constants are explicit arguments below,
    # never tracers that the rule would find escaped.
    solve_converted, solve_consts, _ = _closure_convert(lambda x0: solve(f, x0), guess)

    def linearize_and_solve(point_and_rhs):
        point, rhs = point_and_rhs
        return tangent_solve(lambda y: jvp(f, (point,), (y,))[1], rhs)
    tangent_converted, tangent_consts, _ = _closure_convert(linearize_and_solve, (guess, guess))

    @custom_jvp
    def root(consts, solver_consts, start):
        return solve_converted(lax.stop_gradient(solver_consts[0]), start)

    @root.defjvp
    def root_jvp(primals, tangents):
        (consts, solver_consts, start), (consts_dot, _, _) = primals, tangents
        solve_consts, tangent_consts = lax.stop_gradient(solver_consts)
        out = solve_converted(solve_consts, start)
        solution, aux = out if has_aux else (out, None)
        _, rhs = jvp(lambda c: converted(c, solution), (consts,), (consts_dot,))
        solution_dot = _neg(tangent_converted(tangent_consts, (solution, rhs)))
        if has_aux:
            return out, (solution_dot, tree_util.tree_map(_zeros_like, aux))
        return solution, solution_dot
    return root(consts, [solve_consts, tangent_consts], guess)
