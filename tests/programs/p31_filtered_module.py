"""An equinox-style model: a registered dataclass with a static field, split into its
array leaves and the rest by isinstance(leaf, jax.Array) inside jit and grad."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import random


def is_array(leaf):
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic))


def partition(tree):
    arrays = jax.tree.map(lambda leaf: leaf if is_array(leaf) else None, tree)
    others = jax.tree.map(lambda leaf: None if is_array(leaf) else leaf, tree)
    return arrays, others


def combine(arrays, others):
    return jax.tree.map(lambda a, o: o if a is None else a, arrays, others,
                        is_leaf=lambda leaf: leaf is None)


@functools.partial(jax.tree_util.register_dataclass, data_fields=["w", "b", "scale"],
                   meta_fields=["activation"])
@dataclasses.dataclass
class Layer:
    w: jax.Array
    b: jax.Array
    scale: object          # a float hyperparameter: a leaf, but no array
    activation: str = "tanh"

    def __call__(self, x):
        return getattr(jnp, self.activation)(x @ self.w + self.b) * self.scale


def loss(model, x, y):
    for layer in model:
        x = layer(x)
    return jnp.mean((x - y) ** 2)


def filter_grad(fn):
    """The gradient with respect to the array leaves of the first argument only."""
    def wrapped(model, *args):
        arrays, others = partition(model)

        def of_arrays(arrays):
            counted = []    # which leaves were arrays while traced
            counted.append(sum(is_array(leaf) for leaf in jax.tree.leaves(arrays)))
            return fn(combine(arrays, others), *args), counted[0]
        return jax.grad(of_arrays, has_aux=True)(arrays)
    return wrapped


def main():
    k1, k2, k3 = random.split(random.key(7), 3)
    model = [Layer(random.normal(k1, (3, 4)) * 0.5, jnp.zeros(4), 1.5),
             Layer(random.normal(k2, (4, 2)) * 0.5, jnp.ones(2), 0.5, "sin")]
    x = random.normal(k3, (5, 3))
    y = jnp.cos(x[:, :2])

    @jax.jit
    def step(arrays, x, y):
        grads, n_arrays = filter_grad(loss)(combine(arrays, others), x, y)
        new = jax.tree.map(lambda p, g: None if p is None else p - 0.1 * g, arrays, grads,
                           is_leaf=lambda leaf: leaf is None)
        return new, n_arrays

    arrays, others = partition(model)
    losses = []
    for _ in range(3):
        arrays, n_arrays = step(arrays, x, y)
        losses.append(loss(combine(arrays, others), x, y))
    per_example = jax.vmap(lambda xi: xi.sum() * sum(is_array(leaf) for leaf in
                                                     jax.tree.leaves((xi, others))))(x)
    return losses, arrays, n_arrays, per_example
