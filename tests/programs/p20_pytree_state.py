"""Model state as NamedTuples, a registered class and a registered dataclass; paths named."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import random
from jax.tree_util import (keystr, register_pytree_node_class, tree_flatten,
                           tree_flatten_with_path, tree_map, tree_structure,
                           tree_unflatten)


class Linear(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


@register_pytree_node_class
class Scaler:
    def __init__(self, log_scale, name="scaler"):
        self.log_scale = log_scale
        self.name = name

    def __call__(self, x):
        return x * jnp.exp(self.log_scale)

    def tree_flatten(self):
        return (self.log_scale,), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(*children, name=name)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class TrainState:
    layers: list
    scaler: Scaler
    step: jnp.ndarray
    momentum: float = dataclasses.field(metadata=dict(static=True), default=0.9)


def forward(state, x):
    for layer in state.layers[:-1]:
        x = jax.nn.relu(x @ layer.w + layer.b)
    last = state.layers[-1]
    return state.scaler(x @ last.w + last.b)


def loss(state, x, y):
    return jnp.mean((forward(state, x) - y) ** 2)


@jax.jit
def sgd_step(state, velocity, x, y):
    def trainable_loss(trainable):
        layers, scaler = trainable
        return loss(dataclasses.replace(state, layers=layers, scaler=scaler), x, y)

    trainable = (state.layers, state.scaler)
    grads = jax.grad(trainable_loss)(trainable)
    velocity = tree_map(lambda v, g: state.momentum * v + g, velocity, grads)
    layers, scaler = tree_map(lambda p, v: p - 0.05 * v, trainable, velocity)
    return (dataclasses.replace(state, layers=layers, scaler=scaler, step=state.step + 1),
            velocity)


def main():
    keys = random.split(random.PRNGKey(20), 4)
    sizes = [(2, 5), (5, 5), (5, 1)]
    layers = [Linear(0.5 * random.normal(k, s), jnp.zeros(s[1])) for k, s in zip(keys, sizes)]
    state = TrainState(layers=layers, scaler=Scaler(jnp.array(0.1)), step=jnp.array(0))
    x = random.normal(keys[3], (12, 2))
    y = (x[:, :1] * x[:, 1:]) + 0.1
    velocity = tree_map(jnp.zeros_like, (state.layers, state.scaler))
    for _ in range(8):
        state, velocity = sgd_step(state, velocity, x, y)
    paths = tree_flatten_with_path(state)[0]
    named = {keystr(path): leaf for path, leaf in paths}
    leaves, treedef = tree_flatten(state)
    rebuilt = tree_unflatten(treedef, [2 * leaf for leaf in leaves])
    return {"named": named, "n_leaves": jnp.array(treedef.num_leaves),
            "same_structure": jnp.array(tree_structure(rebuilt) == treedef),
            "rebuilt_scale": rebuilt.scaler.log_scale, "step": state.step,
            "loss": loss(state, x, y), "momentum": jnp.array(state.momentum)}
