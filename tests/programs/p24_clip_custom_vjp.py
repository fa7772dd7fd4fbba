"""Gradient clipping by custom_vjp inside a training step, a stop_gradient target network."""
import jax
import jax.numpy as jnp
from jax import random


@jax.custom_vjp
def clip_gradient(x, bound):
    return x


def clip_fwd(x, bound):
    return x, bound


def clip_bwd(bound, g):
    return jnp.clip(g, -bound, bound), None


clip_gradient.defvjp(clip_fwd, clip_bwd)


def q_values(params, obs):
    h = jax.nn.softplus(obs @ params["w1"] + params["b1"])
    h = clip_gradient(h, 0.05)
    return h @ params["w2"]


def td_loss(params, target_params, obs, actions, rewards, next_obs):
    q = jnp.take_along_axis(q_values(params, obs), actions[:, None], axis=1)[:, 0]
    next_q = q_values(target_params, next_obs).max(axis=1)
    target = jax.lax.stop_gradient(rewards + 0.9 * next_q)
    return jnp.mean(jnp.square(q - target))


def main():
    keys = random.split(random.PRNGKey(24), 6)
    params = {"w1": 0.5 * random.normal(keys[0], (3, 8)), "b1": jnp.zeros(8),
              "w2": 0.5 * random.normal(keys[1], (8, 2))}
    obs = random.normal(keys[2], (10, 3))
    next_obs = random.normal(keys[3], (10, 3))
    actions = random.randint(keys[4], (10,), 0, 2)
    rewards = random.uniform(keys[5], (10,))

    @jax.jit
    def step(params, target_params):
        loss, grads = jax.value_and_grad(td_loss)(params, target_params, obs, actions,
                                                  rewards, next_obs)
        norm = jnp.sqrt(sum(jnp.vdot(g, g) for g in jax.tree_util.tree_leaves(grads)))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        params = jax.tree_util.tree_map(lambda p, g: p - 0.3 * scale * g, params, grads)
        return params, loss, norm

    target_params = params
    history = []
    for i in range(8):
        params, loss, norm = step(params, target_params)
        history.append(jnp.stack([loss, norm]))
        if i % 4 == 3:
            target_params = params
    clipped = jax.grad(lambda x: jnp.sum(clip_gradient(x, 0.5) ** 2))(jnp.array([-2.0, 0.1, 3.0]))
    stopped = jax.grad(lambda x: x * jax.lax.stop_gradient(x) + x)(jnp.array(3.0))
    return {"params": params, "history": jnp.stack(history), "clipped": clipped,
            "stopped": stopped}
