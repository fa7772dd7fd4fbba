"""Dropout and batch statistics in a stax network, with a fresh key every step."""
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers, stax


def main():
    init_fn, apply_fn = stax.serial(stax.Dense(12), stax.Tanh,
                                    stax.Dropout(0.8, mode="train"), stax.Dense(1))
    key = random.PRNGKey(21)
    k_init, k_data, k_train = random.split(key, 3)
    _, params = init_fn(k_init, (-1, 3))
    x = random.normal(k_data, (16, 3))
    y = jnp.sin(x[:, :1]) + x[:, 1:2] ** 2

    def loss(params, key):
        return jnp.mean((apply_fn(params, x, rng=key) - y) ** 2)

    opt_init, opt_update, get_params = optimizers.rmsprop(1e-2)
    state = opt_init(params)

    @jax.jit
    def step(i, state, key):
        value, g = jax.value_and_grad(loss)(get_params(state), key)
        return opt_update(i, g, state), value

    values = []
    for i, k in enumerate(random.split(k_train, 8)):
        state, value = step(i, state, k)
        values.append(value)
    return {"losses": jnp.stack(values), "params": get_params(state)}
