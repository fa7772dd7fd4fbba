"""Ridge regression solved matrix-free with conjugate gradients, its penalty tuned by
the gradient of a validation loss (implicit through the solve); then a Gaussian
maximum-likelihood fit with BFGS."""
import jax
import jax.numpy as jnp
from jax import random
from jax.scipy.optimize import minimize
from jax.scipy.sparse.linalg import cg


def ridge_weights(log_penalty, X, y):
    penalty = jnp.exp(log_penalty)

    def normal_matrix(w):          # (XᵀX + λI) w, never forming XᵀX
        return X.T @ (X @ w) + penalty * w
    w, _ = cg(normal_matrix, X.T @ y, tol=1e-6)
    return w


def validation_loss(log_penalty, X, y, X_val, y_val):
    w = ridge_weights(log_penalty, X, y)
    return jnp.mean((X_val @ w - y_val) ** 2)


def negative_log_likelihood(params, data):
    mean, log_std = params[0], params[1]
    z = (data - mean) / jnp.exp(log_std)
    return jnp.mean(0.5 * z ** 2 + log_std)


def main():
    k_x, k_noise, k_val, k_data = random.split(random.PRNGKey(0), 4)
    true_w = jnp.array([1.0, -2.0, 0.5, 0.0])
    X = random.normal(k_x, (12, 4))
    y = X @ true_w + 0.3 * random.normal(k_noise, (12,))
    X_val = random.normal(k_val, (6, 4))
    y_val = X_val @ true_w

    step = jax.jit(jax.value_and_grad(validation_loss))
    log_penalty = jnp.array(0.0)
    losses = []
    for _ in range(3):                 # a few steps of hyperparameter descent
        loss, slope = step(log_penalty, X, y, X_val, y_val)
        losses.append(loss)
        log_penalty = log_penalty - 0.5 * slope
    weights = ridge_weights(log_penalty, X, y)
    exact = jnp.linalg.solve(X.T @ X + jnp.exp(log_penalty) * jnp.eye(4), X.T @ y)

    data = 2.0 + 0.5 * random.normal(k_data, (40,))
    fit = jax.jit(lambda d: minimize(negative_log_likelihood, jnp.zeros(2), (d,),
                                     method="BFGS"))(data)
    return {"losses": jnp.stack(losses), "log_penalty": log_penalty, "weights": weights,
            "cg_error": jnp.max(jnp.abs(weights - exact)), "mle": fit.x,
            "mle_success": fit.success, "sample_mean": jnp.mean(data),
            "sample_log_std": jnp.log(jnp.std(data))}
