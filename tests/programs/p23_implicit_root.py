"""Bisection in while_loop with an implicit-function derivative through custom_jvp."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


def f(x, a):
    return x ** 3 + a * x - 2.0


@partial(jax.custom_jvp, nondiff_argnums=(1,))
def solve(a, tol):
    def cond(state):
        lo, hi, it = state
        return (hi - lo > tol) & (it < 60)

    def body(state):
        lo, hi, it = state
        mid = 0.5 * (lo + hi)
        go_right = f(mid, a) < 0
        return jnp.where(go_right, mid, lo), jnp.where(go_right, hi, mid), it + 1

    lo, hi, _ = lax.while_loop(cond, body, (jnp.zeros_like(a), 2.0 + jnp.zeros_like(a), 0))
    return 0.5 * (lo + hi)


@solve.defjvp
def solve_jvp(tol, primals, tangents):
    (a,), (a_dot,) = primals, tangents
    x = solve(a, tol)
    df_dx = jax.grad(f, argnums=0)(x, a)
    df_da = jax.grad(f, argnums=1)(x, a)
    return x, -df_da / df_dx * a_dot


def main():
    a = jnp.array(1.5)
    root = solve(a, 1e-6)
    grad = jax.grad(solve)(a, 1e-6)
    batch = jnp.linspace(0.5, 3.0, 5)
    roots = jax.vmap(solve, in_axes=(0, None))(batch, 1e-6)
    grads = jax.jit(jax.vmap(jax.grad(solve), in_axes=(0, None)), static_argnums=1)(batch, 1e-6)
    second = jax.grad(lambda a: solve(a, 1e-6) ** 2)(a)
    _, tangent = jax.jvp(lambda a: solve(a, 1e-6), (a,), (jnp.array(2.0),))
    return {"root": root, "residual": f(root, a), "grad": grad, "roots": roots,
            "grads": grads, "second": second, "tangent": tangent}
