"""`lax.custom_root` against JAX: the root's value and its implicit derivatives
(grad, jvp, jit, vmap, pytrees of parameters, `has_aux`), with `solve`s that JAX
could not differentiate through directly (fixed Newton loops)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close

A = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
C = np.array([0.5, 2.0], np.float32)


def _programs(api, np_):
    lax = api.lax

    def newton(f, x0):
        return lax.fori_loop(0, 20, lambda i, x: x - f(x) / api.grad(f)(x), x0)

    def sqrt_root(a):
        return lax.custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))

    def vector_root(A, c):
        f = lambda x: A @ x + np_.tanh(x) * c - 1.0  # noqa: E731

        def solve(f, x0):
            step = lambda i, x: x - np_.linalg.solve(api.jacfwd(f)(x), f(x))  # noqa: E731
            return lax.fori_loop(0, 30, step, x0)

        def tangent_solve(g, y):
            return np_.linalg.solve(api.jacfwd(g)(y), y)
        return lax.custom_root(f, np_.zeros(2, np_.float32), solve, tangent_solve)

    def root_with_aux(a):
        return lax.custom_root(lambda x: x * x - a, 1.0,
                               lambda f, x0: (newton(f, x0), x0 * 2),
                               lambda g, y: y / g(1.0), has_aux=True)

    def pytree_root(params):
        f = lambda x: {"u": x["u"] ** 3 - params["p"], "v": x["v"] * params["q"] - 1.0}  # noqa: E731
        return lax.custom_root(
            f, {"u": 1.0, "v": 1.0},
            lambda f, x0: lax.fori_loop(0, 30, lambda i, x: {
                "u": x["u"] - f(x)["u"] / (3 * x["u"] ** 2),
                "v": x["v"] - f(x)["v"] / params["q"]}, x0),
            lambda g, y: {"u": y["u"] / g({"u": 1.0, "v": 0.0})["u"],
                          "v": y["v"] / g({"u": 0.0, "v": 1.0})["v"]})
    return sqrt_root, vector_root, root_with_aux, pytree_root


def _run(api, np_):
    sqrt_root, vector_root, root_with_aux, pytree_root = _programs(api, np_)
    params = {"p": np.float32(8.0), "q": np.float32(4.0)}
    batch = np.array([1.0, 4.0, 9.0], np.float32)
    return (sqrt_root(2.0), api.grad(sqrt_root)(2.0), api.jit(api.grad(sqrt_root))(2.0),
            api.vmap(sqrt_root)(batch), api.vmap(api.grad(sqrt_root))(batch),
            vector_root(A, C), api.grad(lambda A, c: vector_root(A, c).sum(),
                                        argnums=(0, 1))(A, C),
            api.jvp(lambda c: vector_root(A, c), (C,), (np.ones_like(C),)),
            root_with_aux(3.0), api.grad(lambda a: root_with_aux(a)[0])(3.0),
            pytree_root(params), api.grad(lambda p: pytree_root(p)["u"] + pytree_root(p)["v"])(
                params))


def test_custom_root_matches_jax():
    assert_values_close(_run(minijax, mnp), _run(jax, jnp), 1e-4, 1e-5)


def test_custom_root_refuses_a_mismatched_f():
    with pytest.raises(TypeError, match="same structure"):
        minijax.lax.custom_root(lambda x: (x, x), 1.0, lambda f, x0: x0,
                                lambda g, y: y)
