"""A Laplace approximation of a Bayesian logistic regression: Newton steps on the raveled
parameter pytree, the Gaussian it gives, and samples scored under it."""
import jax
import jax.numpy as jnp
from jax import lax, random
from jax.flatten_util import ravel_pytree
from jax.scipy.stats import multivariate_normal, norm


def log_joint(params, x, y):
    logits = x @ params["w"] + params["b"]
    log_lik = jnp.sum(y * jax.nn.log_sigmoid(logits) + (1 - y) * jax.nn.log_sigmoid(-logits))
    prior = sum(jnp.sum(norm.logpdf(p, 0.0, 2.0)) for p in jax.tree_util.tree_leaves(params))
    return log_lik + prior


@jax.jit
def laplace(params, x, y):
    flat, unravel = ravel_pytree(params)
    objective = lambda v: -log_joint(unravel(v), x, y)

    def newton(_, v):
        return v - jnp.linalg.solve(jax.hessian(objective)(v), jax.grad(objective)(v))

    mode = lax.fori_loop(0, 6, newton, flat)
    cov = jnp.linalg.inv(jax.hessian(objective)(mode))
    return mode, 0.5 * (cov + cov.T), unravel(mode)


@jax.jit
def make_data(key):
    kx, ky = random.split(key)
    x = random.normal(kx, (30, 2))
    y = random.bernoulli(ky, jax.nn.sigmoid(x @ jnp.array([1.5, -1.0]) + 0.3))
    return x, y.astype(jnp.float32)


def main():
    kd, ks = random.split(random.PRNGKey(29))
    x, y = make_data(kd)
    params = {"w": jnp.zeros(2), "b": jnp.zeros(())}
    mode, cov, map_params = laplace(params, x, y)

    @jax.jit
    def score(key):
        samples = random.multivariate_normal(key, mode, cov, shape=(5,))
        _, unravel = ravel_pytree(params)
        log_q = multivariate_normal.logpdf(samples, mode, cov)
        log_p = jax.vmap(lambda s: log_joint(unravel(s), x, y))(samples)
        return samples, log_p - log_q

    samples, log_weights = score(ks)
    return {"mode": mode, "cov": cov, "map": map_params, "samples": samples,
            "log_weights": log_weights,
            "density_at_mode": multivariate_normal.pdf(mode, mode, cov)}
