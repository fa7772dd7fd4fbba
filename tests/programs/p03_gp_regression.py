"""Gaussian-process regression: the log marginal likelihood, its gradient, predictions."""
import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve, cholesky, solve_triangular


def rbf(x1, x2, lengthscale, variance):
    d2 = jnp.sum((x1[:, None, :] - x2[None, :, :]) ** 2, axis=-1)
    return variance * jnp.exp(-0.5 * d2 / lengthscale ** 2)


def neg_log_marginal(log_params, x, y, noise=0.1):
    lengthscale, variance = jnp.exp(log_params)
    k = rbf(x, x, lengthscale, variance) + noise * jnp.eye(x.shape[0])
    chol = cholesky(k, lower=True)
    alpha = cho_solve((chol, True), y)
    return (0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(chol)))
            + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi))


def predict(log_params, x, y, x_new, noise=0.1):
    lengthscale, variance = jnp.exp(log_params)
    k = rbf(x, x, lengthscale, variance) + noise * jnp.eye(x.shape[0])
    chol = cholesky(k, lower=True)
    k_star = rbf(x, x_new, lengthscale, variance)
    v = solve_triangular(chol, k_star, lower=True)
    mean = k_star.T @ cho_solve((chol, True), y)
    var = variance - jnp.sum(v ** 2, axis=0)
    return mean, var


def main():
    x = jnp.linspace(-2.0, 2.0, 12)[:, None]
    y = jnp.sin(2.0 * x[:, 0]) + 0.1 * jnp.cos(7.0 * x[:, 0])
    log_params = jnp.array([0.0, 0.0])
    objective = jax.jit(jax.value_and_grad(neg_log_marginal))
    history = []
    for _ in range(10):
        value, grad = objective(log_params, x, y)
        log_params = log_params - 0.05 * grad
        history.append(value)
    mean, var = predict(log_params, x, y, jnp.array([[-1.0], [0.5], [1.5]]))
    return {"nlml": jnp.stack(history), "log_params": log_params, "mean": mean, "var": var}
