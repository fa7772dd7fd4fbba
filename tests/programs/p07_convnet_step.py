"""A small convolutional network trained for a few SGD steps with stax."""
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers, stax


def main():
    key = random.PRNGKey(1)
    k_init, k_x, k_y = random.split(key, 3)
    init_fn, apply_fn = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(6, (3, 3)), stax.Relu,
        stax.Flatten, stax.Dense(3), stax.LogSoftmax)
    _, params = init_fn(k_init, (-1, 8, 8, 1))
    x = random.normal(k_x, (6, 8, 8, 1))
    y = jax.nn.one_hot(random.randint(k_y, (6,), 0, 3), 3)

    def loss(params):
        return -jnp.mean(jnp.sum(apply_fn(params, x) * y, axis=1))

    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)
    state = opt_init(params)
    update = jax.jit(lambda i, s: opt_update(i, jax.grad(loss)(get_params(s)), s))
    for i in range(4):
        state = update(i, state)
    return {"loss": loss(get_params(state)), "logits": apply_fn(get_params(state), x)}
