"""Minibatch SGD with shuffling in scan, and sampling with categorical and choice(p=)."""
import jax
import jax.numpy as jnp
from jax import lax, random


def make_data(key, n=24):
    kx, kn = random.split(key)
    x = random.normal(kx, (n, 2))
    logits = jnp.stack([x[:, 0] - x[:, 1], x[:, 1], -x[:, 0]], axis=1)
    labels = random.categorical(kn, logits)
    return x, labels


def loss(w, x, labels):
    logits = x @ w["w"] + w["b"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))


@jax.jit
def train(key, w, x, labels, batch=6):
    def epoch(carry, key):
        w = carry
        perm = random.permutation(key, x.shape[0])
        xb = x[perm].reshape(-1, batch, 2)
        lb = labels[perm].reshape(-1, batch)

        def step(w, b):
            g = jax.grad(loss)(w, *b)
            return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, w, g), None

        w, _ = lax.scan(step, w, (xb, lb))
        return w, loss(w, x, labels)

    return lax.scan(epoch, w, random.split(key, 4))


def main():
    kd, kt, ks, kc = random.split(random.key(27), 4)
    x, labels = jax.jit(make_data)(kd)
    w = {"w": jnp.zeros((2, 3)), "b": jnp.zeros(3)}
    w, losses = train(kt, w, x, labels)
    return {"w": w, "losses": losses, "labels": labels, **sample(ks, kc, w, x[:3])}


@jax.jit
def sample(ks, kc, w, x):
    probs = jax.nn.softmax(x @ w["w"] + w["b"])
    samples = jax.vmap(lambda k, p: random.choice(k, 3, (5,), p=p))(random.split(ks, 3), probs)
    no_replace = random.choice(kc, jnp.arange(10) * 2, (4,), replace=False)
    sampled_logits = random.categorical(kc, jnp.log(probs), axis=-1, shape=(6, 3))
    return {"samples": samples, "no_replace": no_replace, "sampled": sampled_logits,
            "key_data": random.key_data(random.fold_in(kc, 3))}
