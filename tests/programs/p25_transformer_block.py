"""One pre-norm transformer block with einsum attention, rematerialised with a policy."""
import jax
import jax.numpy as jnp
from jax import random

VOCAB, D, HEADS, T = 7, 8, 2, 5


def init(key):
    ks = random.split(key, 6)
    glorot = jax.nn.initializers.glorot_uniform()
    return {"embed": random.normal(ks[0], (VOCAB, D)) * 0.3,
            "qkv": glorot(ks[1], (D, 3, HEADS, D // HEADS)),
            "out": glorot(ks[2], (HEADS, D // HEADS, D)),
            "mlp_in": jax.nn.initializers.he_normal()(ks[3], (D, 2 * D)),
            "mlp_out": jax.nn.initializers.lecun_uniform()(ks[4], (2 * D, D)),
            "ln_scale": jnp.ones(D), "ln_bias": jnp.zeros(D)}


def layer_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def block(params, x):
    h = layer_norm(x, params["ln_scale"], params["ln_bias"])
    q, k, v = jnp.einsum("btd,dchk->cbhtk", h, params["qkv"])
    logits = jnp.einsum("bhqk,bhsk->bhqs", q, k) / jnp.sqrt(D // HEADS)
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    logits = jnp.where(mask, logits, -1e9)
    attn = jax.nn.softmax(logits, axis=-1)
    mixed = jnp.einsum("bhqs,bhsk->bqhk", attn, v)
    x = x + jnp.einsum("bqhk,hkd->bqd", mixed, params["out"])
    h = layer_norm(x, params["ln_scale"], params["ln_bias"])
    return x + jax.nn.gelu(h @ params["mlp_in"], approximate=False) @ params["mlp_out"]


def loss(params, tokens):
    x = params["embed"][tokens[:, :-1]]
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
    block_fn = jax.checkpoint(block, policy=policy)
    x = block_fn(params, x)
    logits = x @ params["embed"].T
    targets = jax.nn.one_hot(tokens[:, 1:], VOCAB)
    return -jnp.mean(jnp.sum(targets * jax.nn.log_softmax(logits), axis=-1))


def main():
    kp, kt = random.split(random.PRNGKey(25))
    params = jax.jit(init)(kp)
    tokens = random.randint(kt, (3, T + 1), 0, VOCAB)
    step = jax.jit(lambda p: jax.tree_util.tree_map(
        lambda a, g: a - 0.3 * g, p, jax.grad(loss)(p, tokens)))
    evaluate = jax.jit(loss)
    start = evaluate(params, tokens)
    for _ in range(5):
        params = step(params)
    return {"start": start, "end": evaluate(params, tokens), "params": params}
