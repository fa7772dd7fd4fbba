"""An optax-style optimizer written as current libraries write it: noise drawn per
leaf with out_sharding=jax.typeof(leaf).sharding, inner products by tensordot with an
out_sharding, clipping by global norm, Adam with bias correction, run in a scan."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import random


class AdamState(NamedTuple):
    count: jax.Array
    mu: dict
    nu: dict


def tree_random_like(key, tree, sampler=random.normal):
    leaves, treedef = jax.tree.flatten(tree)
    keys = random.split(key, len(leaves))
    return jax.tree.unflatten(treedef, [
        sampler(k, leaf.shape, leaf.dtype, out_sharding=jax.typeof(leaf).sharding)
        for k, leaf in zip(keys, leaves)])


def tree_vdot(a, b):
    def vdot(x, y):
        mesh = jax.typeof(x).sharding.mesh
        sharding = (jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
                    if not mesh.empty and mesh.are_all_axes_explicit else None)
        return jnp.tensordot(x, y, x.ndim, out_sharding=sharding)
    return sum(jax.tree.leaves(jax.tree.map(vdot, a, b)))


def clip_by_global_norm(updates, max_norm):
    norm = jnp.sqrt(tree_vdot(updates, updates))
    scale = jnp.where(norm < max_norm, 1.0, max_norm / norm)
    return jax.tree.map(lambda u: u * scale, updates)


def adam_update(grads, state, lr=0.05, b1=0.9, b2=0.99, eps=1e-8):
    count = state.count + 1
    mu = jax.tree.map(lambda g, m: b1 * m + (1 - b1) * g, grads, state.mu)
    nu = jax.tree.map(lambda g, v: b2 * v + (1 - b2) * g * g, grads, state.nu)
    step = jax.tree.map(
        lambda m, v: -lr * (m / (1 - b1 ** count)) / (jnp.sqrt(v / (1 - b2 ** count)) + eps),
        mu, nu)
    return step, AdamState(count, mu, nu)


def main():
    key = random.key(11)
    kw, kx, kn = random.split(key, 3)
    params = {"w": random.normal(kw, (4, 2)), "b": jnp.zeros(2),
              "scale": jnp.ones((), jnp.float32)}
    x = random.normal(kx, (16, 4))
    y = jnp.tanh(x[:, :2] * 2.0)

    def loss(p):
        out = x.reshape(16, 4, out_sharding=jax.typeof(x).sharding) @ p["w"] + p["b"]
        return jnp.mean((jnp.tanh(out) * p["scale"] - y) ** 2)

    state = AdamState(jnp.zeros((), jnp.int32), jax.tree.map(jnp.zeros_like, params),
                      jax.tree.map(jnp.zeros_like, params))

    def step(carry, k):
        p, s = carry
        l, g = jax.value_and_grad(loss)(p)
        noise = tree_random_like(k, g)
        g = jax.tree.map(lambda a, n: a + 0.01 * n, g, noise)
        u, s = adam_update(clip_by_global_norm(g, 1.0), s)
        return (jax.tree.map(jnp.add, p, u), s), (l, tree_vdot(u, u))

    (params, state), (losses, sizes) = jax.lax.scan(step, (params, state),
                                                    random.split(kn, 6))
    zeros = jnp.zeros(3, out_sharding=jax.typeof(params["b"]).sharding)
    return losses, sizes, params, state.count, zeros
