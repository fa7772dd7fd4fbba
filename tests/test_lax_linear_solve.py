"""`lax.custom_linear_solve` against JAX: the solution and its implicit derivatives
(jvp, grad w.r.t. b and w.r.t. what matvec closes over, jit, vmap with each operand
batched, has_aux, pytree b, symmetric), with a `solve` JAX could not differentiate
through (a `while_loop`); JAX's errors; the primitive through the interop bridge."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.interop import import_jaxpr, to_jax, to_python_source
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from tests.numpy_helpers import assert_values_close

A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)
A_BATCH = np.stack([A, A + np.eye(3, dtype=np.float32)])
B_BATCH = np.stack([B, 2 * B + 1])


def _programs(api, np_):
    lax = api.lax

    def jacobi(a):
        # Jacobi iterations to a tolerance: a while_loop, so only implicit AD works
        def run(matvec, b):
            return lax.while_loop(lambda x: np_.max(np_.abs(matvec(x) - b)) > 1e-6,
                                  lambda x: x + (b - matvec(x)) / np_.diag(a),
                                  np_.zeros_like(b))
        return run

    def solve(a, b):
        return lax.custom_linear_solve(lambda x: a @ x, b, jacobi(a),
                                       lambda vecmat, y: np_.linalg.solve(a.T, y))

    def solve_sym(a, b):
        a = (a + a.T) / 2
        return lax.custom_linear_solve(lambda x: a @ x, b, jacobi(a), symmetric=True)

    def with_aux(a, b):
        def counted(matvec, rhs):
            x = np_.linalg.solve(a, rhs)
            return x, np_.sum(x)
        return lax.custom_linear_solve(lambda x: a @ x, b, counted, counted, has_aux=True)

    def pytree(a, b):
        def matvec(x):
            return {"u": a @ x["u"] + x["v"], "v": x["v"] * 3.0}

        def tree_solve(mv, rhs):
            v = rhs["v"] / 3.0
            return {"u": np_.linalg.solve(a, rhs["u"] - v), "v": v}

        def tree_tsolve(vm, rhs):
            u = np_.linalg.solve(a.T, rhs["u"])
            return {"u": u, "v": (rhs["v"] - u) / 3.0}
        return lax.custom_linear_solve(matvec, {"u": b, "v": b * 2}, tree_solve, tree_tsolve)
    return solve, solve_sym, with_aux, pytree


def _run(api, np_):
    solve, solve_sym, with_aux, pytree = _programs(api, np_)
    loss = lambda f: lambda a, b: np_.sum(f(a, b) ** 2)  # noqa: E731
    both = dict(argnums=(0, 1))

    # Eagerly, then three jitted groups (one compile each; eager op-by-op programs
    # of while loops are what makes such a test slow).
    def derivatives(a, b):
        return (solve(a, b), api.grad(loss(solve), **both)(a, b),
                api.grad(loss(solve_sym), **both)(a, b),
                api.jvp(solve, (a, b), (np_.ones_like(a), b)),
                api.linearize(solve, a, b)[1](a, b),
                api.grad(loss(api.checkpoint(solve)), **both)(a, b))

    def batched(a_batch, b_batch, a, b):
        return (api.vmap(solve)(a_batch, b_batch), api.vmap(solve, (None, 0))(a, b_batch),
                api.vmap(solve_sym, (0, None))(a_batch, b),
                api.vmap(api.grad(loss(solve), **both), (0, None))(a_batch, b))

    def aux_and_trees(a, b, b_batch, a_batch):
        return (with_aux(a, b), api.grad(lambda a, b: with_aux(a, b)[0].sum(), **both)(a, b),
                api.vmap(with_aux, (None, 0))(a, b_batch),
                api.grad(lambda a, b: sum(v.sum() for v in pytree(a, b).values()),
                         **both)(a, b),
                api.vmap(pytree, (0, None))(a_batch, b))
    return (solve(A, B), pytree(A, B), api.grad(lambda b: with_aux(A, b)[0].sum())(B),
            api.jit(derivatives)(A, B), api.jit(batched)(A_BATCH, B_BATCH, A, B),
            api.jit(aux_and_trees)(A, B, B_BATCH, A_BATCH))


def test_custom_linear_solve_matches_jax():
    assert_values_close(_run(minijax, mnp), _run(jax, jnp), 2e-4, 2e-5)


def test_weak_b_gives_a_weak_solution_as_in_jax():
    def f(api):
        return api.lax.custom_linear_solve(lambda x: 2.0 * x, 3.0, lambda mv, b: b / 2.0,
                                           symmetric=True)
    assert_trees_match(f(minijax), f(jax))
    assert_trees_match(minijax.grad(lambda b: f_b(minijax, b))(3.0),
                       jax.grad(lambda b: f_b(jax, b))(3.0))


def f_b(api, b):
    return api.lax.custom_linear_solve(lambda x: 2.0 * x, b, lambda mv, r: r / 2.0,
                                       symmetric=True)


def _errors(api):
    lax = api.lax
    no_transpose = lambda b: lax.custom_linear_solve(  # noqa: E731
        lambda x: 2.0 * x, b, lambda mv, r: r / 2.0)
    cases = [
        (lambda: api.grad(no_transpose)(1.0), "transpose_solve required"),
        (lambda: lax.custom_linear_solve(lambda x: x[:2], B, lambda mv, r: r),
         r"matvec\(\) output shapes must match b"),
        (lambda: lax.custom_linear_solve(lambda x: x, B, lambda mv, r: (r, r)),
         "solve"),
    ]
    out = []
    for call, match in cases:
        try:
            call()
        except Exception as e:        # noqa: BLE001 -- the type is what is compared
            out.append((type(e), match))
            with pytest.raises(type(e), match=match):
                call()
        else:
            out.append((None, match))
    return out


def test_errors_are_jaxs():
    assert [t for t, _ in _errors(minijax)] == [t for t, _ in _errors(jax)]
    assert all(t is not None for t, _ in _errors(minijax))


def _jax_program(a, b):
    # jnp.linalg.solve is itself a custom_linear_solve in JAX
    x = jnp.linalg.solve(a, b)
    return jax.lax.custom_linear_solve(lambda v: a @ v, x * 2.0,
                                       lambda mv, r: jnp.linalg.solve(a, r), symmetric=True)


def test_jax_program_imports_and_differentiates_as_in_jax():
    closed = import_jaxpr(jax.make_jaxpr(_jax_program)(A, B))
    run = lambda a, b: eval_jaxpr(closed.jaxpr, closed.consts, [a, b])[0]  # noqa: E731
    assert_values_close(minijax.jit(run)(A, B), _jax_program(A, B), 1e-5, 1e-6)
    loss = lambda f: lambda a, b: (f(a, b) ** 2).sum()  # noqa: E731
    assert_values_close(minijax.jit(minijax.grad(loss(run), argnums=(0, 1)))(A, B),
                        jax.grad(loss(_jax_program), argnums=(0, 1))(A, B), 1e-4, 1e-5)


def test_export_and_python_source_keep_the_implicit_derivative():
    solve = _programs(minijax, mnp)[2]          # with_aux: a solve JAX differentiates too
    closed = minijax.make_jaxpr(solve)(A, B)
    exported = to_jax(closed)
    namespace: dict = {}
    exec(to_python_source(closed), namespace)
    expected = _programs(jax, jnp)[2]
    loss = lambda f: lambda a, b: f(a, b)[0].sum()  # noqa: E731
    want = jax.grad(loss(expected), argnums=(0, 1))(A, B)
    for program in (exported, namespace["program"]):
        assert_values_close(program(A, B), expected(A, B), 1e-5, 1e-6)
        assert_values_close(jax.grad(loss(program), argnums=(0, 1))(A, B), want, 1e-4, 1e-5)
    assert "custom_linear_solve" in str(jax.make_jaxpr(exported)(A, B))
