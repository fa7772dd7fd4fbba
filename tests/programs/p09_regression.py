"""Linear regression three ways: normal equations, lstsq, and gradient descent."""
import jax
import jax.numpy as jnp
from jax import random


def main():
    kx, kn = random.split(random.PRNGKey(5))
    x = random.normal(kx, (20, 3))
    w_true = jnp.array([1.5, -2.0, 0.5])
    y = x @ w_true + 0.1 * random.normal(kn, (20,))
    w_normal = jnp.linalg.solve(x.T @ x, x.T @ y)
    w_lstsq, *_ = jnp.linalg.lstsq(x, y)

    loss = lambda w: jnp.mean((x @ w - y) ** 2)
    step = jax.jit(lambda w: w - 0.1 * jax.grad(loss)(w))
    w = jnp.zeros(3)
    for _ in range(50):
        w = step(w)
    return {"normal": w_normal, "lstsq": w_lstsq, "gd": w, "loss": loss(w),
            "residual_norm": jnp.linalg.norm(x @ w_normal - y)}
