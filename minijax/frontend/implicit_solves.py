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

`custom_linear_solve(matvec, b, solve, transpose_solve)` cannot be built that way:
its reverse mode applies `transpose_solve` to Aᵀ, the transpose of the user's linear
map, which a `custom_jvp` rule has no way to name. So it binds a primitive of its own,
as JAX's `linear_solve` (`ir/linear_solve_primitive.py`, rules in
`transforms/linear_solve_rules.py`). `matvec`, `solve(matvec, ·)`, the transposed map
`vecmat` (`linear_transpose` of `matvec`, or `matvec` itself when `symmetric`) and
`transpose_solve(vecmat, ·)` are each traced at b's types into a body whose closed-over
values are leading operands of the equation, differentiable like any other.
"""
from __future__ import annotations

from typing import Callable

from jax import tree_util

from ..ir.linear_solve_primitive import linear_solve_p
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import bind
from ..transforms.ad_util import eval_jaxpr
from ..transforms.custom_derivatives import custom_jvp
from .autodiff import jvp
from .autodiff_more import linear_transpose
from .pytrees import checked_avals
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


def _trace_flat(fun, tree, avals):
    """`fun` of a pytree of `tree`'s structure, traced at `avals`: (body without
    constvars, its closed-over values, the output's structure)."""
    out_trees = []

    def flat(*leaves):
        out_leaves, out_tree = tree_util.tree_flatten(fun(tree_util.tree_unflatten(tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves
    closed = trace_to_jaxpr(flat, list(avals))
    return convert_constvars_to_invars(closed.jaxpr), list(closed.consts), out_trees[0]


def _check_shapes(name, out_avals, tree, b_avals, has_aux=False):
    """JAX's check, made before the structure's: the shapes of the result's leaves
    (of its first half with `has_aux`) are b's."""
    children = tree.children() if has_aux else []
    if len(children) == 2:
        out_avals = out_avals[:children[0].num_leaves]
    shapes = [tuple(a.shape) for a in out_avals]
    expected = [tuple(a.shape) for a in b_avals]
    if shapes != expected:
        raise ValueError(f"{name}() output shapes must match b, got {shapes} and {expected}")


def _check_result_tree(name, tree, b_tree, has_aux):
    if has_aux:
        children = tree.children()
        if len(children) != 2:
            raise ValueError(f"{name}() produced a pytree with structure {tree}, but a "
                             f"pytree tuple with auxiliary output was expected because "
                             f"has_aux was set to True.")
        tree = children[0]
    if tree != b_tree:
        raise TypeError(f"{name}() output pytree structure must match b, got {tree} "
                        f"and {b_tree}")


def custom_linear_solve(matvec: Callable, b, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric=False,
                        has_aux=False):
    """`solve(matvec, b)`, differentiated as the solution x of `matvec(x) == b`
    rather than through `solve`'s operations, as `jax.lax.custom_linear_solve`.
    `transpose_solve(vecmat, b)` solves the transposed system; reverse mode needs it
    (with `symmetric=True`, `solve` serves)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, b_tree = tree_util.tree_flatten(b)
    b_avals = checked_avals(b_leaves, "custom_linear_solve: b leaf")

    matvec_jaxpr, matvec_consts, tree = _trace_flat(matvec, b_tree, b_avals)
    _check_shapes("matvec", matvec_jaxpr.out_avals, tree, b_avals)
    _check_result_tree("matvec", tree, b_tree, False)
    solve_jaxpr, solve_consts, out_tree = _trace_flat(lambda x: solve(matvec, x), b_tree,
                                                      b_avals)
    _check_shapes("solve", solve_jaxpr.out_avals, out_tree, b_avals, has_aux)
    _check_result_tree("solve", out_tree, b_tree, has_aux)
    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts, tr_solve_consts = [], []
    else:
        if symmetric:
            vecmat = matvec
            vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        else:
            def vecmat(x):
                return linear_transpose(matvec, b)(x)[0]
            vecmat_jaxpr, vecmat_consts, _ = _trace_flat(vecmat, b_tree, b_avals)
        tr_solve_jaxpr, tr_solve_consts, tree = _trace_flat(
            lambda x: transpose_solve(vecmat, x), b_tree, b_avals)
        _check_shapes("transpose_solve", tr_solve_jaxpr.out_avals, tree, b_avals, has_aux)
        _check_result_tree("transpose_solve", tree, b_tree, has_aux)
    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    outs = bind(linear_solve_p, *[c for group in all_consts for c in group], *b_leaves,
                const_lengths=tuple(len(group) for group in all_consts),
                jaxprs=(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr))
    return tree_util.tree_unflatten(out_tree, outs)
