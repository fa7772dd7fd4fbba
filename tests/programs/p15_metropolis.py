"""Random-walk Metropolis in a jitted while_loop-free fori_loop, keys folded in per step."""
import jax
import jax.numpy as jnp
from jax import lax, random
from jax.scipy.stats import norm


def log_target(x):
    return jnp.logaddexp(norm.logpdf(x, -2.0, 0.7), norm.logpdf(x, 1.5, 1.0))


@jax.jit
def sample(key, x0, n=40):
    def body(i, state):
        x, chain = state
        k = random.fold_in(key, i)
        k_prop, k_acc = random.split(k)
        proposal = x + 0.8 * random.normal(k_prop)
        log_ratio = log_target(proposal) - log_target(x)
        accept = jnp.log(random.uniform(k_acc)) < log_ratio
        x = jnp.where(accept, proposal, x)
        return x, chain.at[i].set(x)

    return lax.fori_loop(0, n, body, (x0, jnp.zeros(n)))[1]


def main():
    chain = sample(random.key(0), 0.0)
    return {"chain": chain, "mean": jnp.mean(chain),
            "cdf": norm.cdf(jnp.array([-1.0, 0.0, 2.0]))}
