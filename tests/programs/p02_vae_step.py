"""One training step of a small variational autoencoder (reparametrization trick)."""
import jax
import jax.numpy as jnp
from jax import random
from jax.nn import initializers, relu, sigmoid


def init_params(key, data_dim=8, hidden=16, latent=2):
    keys = random.split(key, 4)
    glorot = initializers.glorot_normal()
    return {
        "enc": glorot(keys[0], (data_dim, hidden)),
        "mu": glorot(keys[1], (hidden, latent)),
        "logvar": glorot(keys[2], (hidden, latent)),
        "dec": glorot(keys[3], (latent, data_dim)),
    }


def elbo(params, key, x):
    h = relu(x @ params["enc"])
    mu, logvar = h @ params["mu"], h @ params["logvar"]
    eps = random.normal(key, mu.shape)
    z = mu + jnp.exp(0.5 * logvar) * eps
    logits = z @ params["dec"]
    recon = jnp.sum(x * jax.nn.log_sigmoid(logits) + (1 - x) * jax.nn.log_sigmoid(-logits))
    kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar))
    return (recon - kl) / x.shape[0]


def main():
    key = random.key(42)
    pkey, dkey, skey = random.split(key, 3)
    params = init_params(pkey)
    x = (random.uniform(dkey, (10, 8)) > 0.5).astype(jnp.float32)

    @jax.jit
    def step(params, key):
        value, grads = jax.value_and_grad(elbo)(params, key, x)
        return jax.tree_util.tree_map(lambda p, g: p + 0.05 * g, params, grads), value

    values = []
    for k in random.split(skey, 5):
        params, value = step(params, k)
        values.append(value)
    return {"elbo": jnp.stack(values), "params": params,
            "decoded": sigmoid(params["dec"])}
