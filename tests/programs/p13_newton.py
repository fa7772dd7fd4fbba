"""Newton's method on the Rosenbrock function with the Hessian and a linear solve."""
import jax
import jax.numpy as jnp


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def main():
    x = jnp.array([-1.2, 1.0, 0.8])
    grad = jax.jit(jax.grad(rosenbrock))
    hess = jax.jit(jax.hessian(rosenbrock))
    values = []
    for _ in range(8):
        x = x - jnp.linalg.solve(hess(x), grad(x))
        values.append(rosenbrock(x))
    jac = jax.jacfwd(lambda x: jnp.stack([rosenbrock(x), jnp.sum(jnp.sin(x))]))(x)
    return {"x": x, "values": jnp.stack(values), "jacobian": jac,
            "jacrev": jax.jacrev(jnp.tanh)(x)}
