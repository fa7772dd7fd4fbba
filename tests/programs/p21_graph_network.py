"""A message-passing graph network: gather along edges, segment_sum / segment_max back."""
import jax
import jax.numpy as jnp
from jax import random


def make_graph():
    senders = jnp.array([0, 1, 2, 3, 4, 0, 2, 5, 1, 3])
    receivers = jnp.array([1, 2, 3, 4, 5, 2, 0, 0, 5, 3])
    return senders, receivers, 6


def init(key, d=4):
    k1, k2, k3 = random.split(key, 3)
    return {"msg": 0.4 * random.normal(k1, (2 * d, d)),
            "upd": 0.4 * random.normal(k2, (2 * d, d)),
            "readout": 0.4 * random.normal(k3, (d,))}


def layer(params, nodes, senders, receivers, n_nodes):
    sent = jnp.take(nodes, senders, axis=0)
    received = nodes[receivers]
    messages = jax.nn.relu(jnp.concatenate([sent, received], axis=-1) @ params["msg"])
    summed = jax.ops.segment_sum(messages, receivers, num_segments=n_nodes)
    pooled = jax.ops.segment_max(messages, receivers, num_segments=n_nodes)
    pooled = jnp.where(jnp.isfinite(pooled), pooled, 0.0)
    degree = jax.ops.segment_sum(jnp.ones_like(receivers), receivers, num_segments=n_nodes)
    mean = summed / jnp.maximum(degree, 1)[:, None]
    return nodes + jnp.tanh(jnp.concatenate([mean, pooled], axis=-1) @ params["upd"])


def predict(params, nodes, graph):
    senders, receivers, n = graph
    for _ in range(2):
        nodes = layer(params, nodes, senders, receivers, n)
    return nodes @ params["readout"]


def main():
    graph = make_graph()
    kp, kx = random.split(random.PRNGKey(21))
    params = jax.jit(init)(kp)
    nodes = random.normal(kx, (graph[2], 4))
    target = jnp.zeros(graph[2]).at[jnp.array([0, 3])].set(1.0).at[5].add(-0.5)

    @jax.jit
    def step(params, nodes):
        def loss(p):
            return jnp.mean((predict(p, nodes, graph) - target) ** 2)
        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.2 * g, params, grads), value

    losses = []
    for _ in range(6):
        params, value = step(params, nodes)
        losses.append(value)
    @jax.jit
    def report(params, nodes):
        adjacency = jnp.zeros((graph[2], graph[2])).at[graph[0], graph[1]].add(1.0)
        return {"pred": predict(params, nodes, graph), "adjacency": adjacency,
                "input_grad": jax.grad(lambda x: predict(params, x, graph).sum())(nodes)}

    return {"losses": jnp.stack(losses), "params": params, **report(params, nodes)}
