"""vmap composed with autodiff and jit, against JAX: per-example gradients, grad of
vmap, jvp of vmap, vmap of jvp, and the same with jit in between.

Programs take a `lax` module argument so the same program runs on both sides; the
`minijax.numpy` MLP runs when the numpy layer provides what it needs.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.ir.verify import verify_jaxpr

rng = np.random.default_rng(1)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def assert_close(ours, theirs, tol=2e-5):
    ours_leaves, ours_tree = jax.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
    assert ours_tree == theirs_tree
    for a, b in zip(ours_leaves, theirs_leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def loss(lax, params, x, y):
    """Squared error of a two-layer MLP on one example."""
    (w1, b1), (w2, b2) = params
    h = lax.tanh(lax.add(lax.dot(x, w1), b1))
    d = lax.sub(lax.add(lax.dot(h, w2), b2), y)
    return lax.reduce_sum(lax.mul(d, d), axes=(0,))


PARAMS = [(randn(4, 8), randn(8)), (randn(8, 2), randn(2))]
XS, YS = randn(5, 4), randn(5, 2)


def ours_and_theirs(build, jit=True):
    """`build(api, lax)` -> a function, built with minijax and with jax. Under `jit`
    by default: one XLA compile per side instead of one per eager op keeps the
    suite fast (the transforms under test are the same either way)."""
    if not jit:
        return build(minijax, mlax), build(jax, jax.lax)
    return minijax.jit(build(minijax, mlax)), jax.jit(build(jax, jax.lax))


def test_per_example_gradients_of_an_mlp():
    def build(api, lax):
        per_example = api.grad(lambda p, x, y: loss(lax, p, x, y))
        return api.vmap(per_example, in_axes=(None, 0, 0))
    ours, theirs = ours_and_theirs(build, jit=False)
    assert_close(ours(PARAMS, XS, YS), theirs(PARAMS, XS, YS))
    jaxpr = minijax.make_jaxpr(ours)(PARAMS, XS, YS)
    verify_jaxpr(jaxpr)
    jax_jaxpr = jax.make_jaxpr(theirs)(PARAMS, XS, YS)
    assert len(jaxpr.eqns) <= len(jax_jaxpr.eqns)


def test_per_example_gradients_under_jit_and_with_batch_axis_last():
    def build(api, lax):
        per_example = api.jit(api.grad(lambda p, x, y: loss(lax, p, x, y)))
        return api.jit(api.vmap(per_example, in_axes=(None, 1, 1), out_axes=-1))
    ours, theirs = ours_and_theirs(build)
    assert_close(ours(PARAMS, XS.T, YS.T), theirs(PARAMS, XS.T, YS.T))


def test_grad_of_vmap():
    def build(api, lax):
        def total(p):
            losses = api.vmap(lambda x, y: loss(lax, p, x, y))(XS, YS)
            return lax.reduce_sum(losses, axes=(0,))
        return api.grad(total)
    ours, theirs = ours_and_theirs(build)
    assert_close(ours(PARAMS), theirs(PARAMS))
    verify_jaxpr(minijax.make_jaxpr(ours)(PARAMS))


def test_grad_of_vmap_of_jit_with_params_batched():
    stacked = jax.tree_util.tree_map(lambda a: np.stack([a, 2 * a, -a]), PARAMS)

    def build(api, lax):
        f = api.jit(lambda p, x, y: loss(lax, p, x, y))
        return api.grad(lambda p: lax.reduce_sum(
            api.vmap(f, in_axes=(0, None, None))(p, XS[0], YS[0]), axes=(0,)))
    ours, theirs = ours_and_theirs(build)
    assert_close(ours(stacked), theirs(stacked))


def test_jvp_of_vmap_and_vmap_of_jvp():
    tangents = jax.tree_util.tree_map(lambda a: np.ones_like(a), PARAMS)

    def jvp_of_vmap(api, lax):
        batched = api.vmap(lambda p, x, y: loss(lax, p, x, y), in_axes=(None, 0, 0))
        return lambda p, t: api.jvp(lambda q: batched(q, XS, YS), (p,), (t,))
    ours, theirs = ours_and_theirs(jvp_of_vmap)
    assert_close(ours(PARAMS, tangents), theirs(PARAMS, tangents))

    def vmap_of_jvp(api, lax):
        def one(x, dx):
            return api.jvp(lambda x: loss(lax, PARAMS, x, YS[0]), (x,), (dx,))
        return api.vmap(one, in_axes=(0, 1))
    ours, theirs = ours_and_theirs(vmap_of_jvp)
    dxs = randn(4, 5)
    assert_close(ours(XS, dxs), theirs(XS, dxs))
    verify_jaxpr(minijax.make_jaxpr(ours)(XS, dxs))


def test_vmap_of_value_and_grad_and_nested_vmap_of_grad():
    def build(api, lax):
        f = api.value_and_grad(lambda x, w: lax.reduce_sum(lax.sin(lax.mul(x, w)), (0,)))
        return api.vmap(api.vmap(f, in_axes=(0, None)), in_axes=(None, 0))
    ours, theirs = ours_and_theirs(build)
    x, w = randn(3, 4), randn(2, 4)
    assert_close(ours(x, w), theirs(x, w))


def test_vmap_of_indexing_under_grad():
    # Batched gather and its transpose (scatter-add) both go through batching rules.
    table = randn(6, 3)

    def build(api, lax):
        def f(t, i):
            row = lax.dynamic_index_in_dim(t, i, 0, keepdims=False)
            return lax.reduce_sum(lax.mul(row, row), (0,))
        return api.vmap(api.grad(f), in_axes=(None, 0))
    ours, theirs = ours_and_theirs(build)
    idx = np.array([0, 5, 2, 2], np.int32)
    assert_close(ours(table, idx), theirs(table, idx))


def test_mlp_per_example_gradients_with_minijax_numpy():
    jnp = pytest.importorskip("minijax.numpy")
    if not all(hasattr(jnp, name) for name in ("tanh", "dot", "sum", "mean")):
        pytest.skip("minijax.numpy does not provide tanh/dot/sum/mean yet")

    def build(api, np_):
        def mlp_loss(params, x, y):
            for w, b in params[:-1]:
                x = np_.tanh(np_.dot(x, w) + b)
            w, b = params[-1]
            return np_.mean((np_.dot(x, w) + b - y) ** 2)
        return api.vmap(api.grad(mlp_loss), in_axes=(None, 0, 0))
    ours = minijax.jit(build(minijax, jnp))
    theirs = jax.jit(build(jax, jax.numpy))
    assert_close(ours(PARAMS, XS, YS), theirs(PARAMS, XS, YS))
    verify_jaxpr(minijax.make_jaxpr(ours)(PARAMS, XS, YS))


def _custom_functions(api, lax):
    @api.custom_jvp
    def f(x, y):
        return lax.mul(lax.sin(x), y)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        return f(x, y), lax.add(lax.mul(lax.mul(lax.cos(x), dx), y), lax.mul(lax.sin(x), dy))

    @api.custom_vjp
    def g(x, w):
        return lax.mul(lax.exp(x), w)

    def g_fwd(x, w):
        return g(x, w), (lax.exp(x), w)

    def g_bwd(residuals, ct):
        e, w = residuals
        return lax.mul(lax.mul(e, w), ct), lax.mul(e, ct)
    g.defvjp(g_fwd, g_bwd)
    return f, g


@pytest.mark.parametrize("which", ["custom_jvp", "custom_vjp"])
def test_custom_derivative_functions_under_vmap(which):
    x = np.linspace(0.1, 1, 6, dtype=np.float32).reshape(3, 2)
    y = np.array([1.5, -0.5], np.float32)

    def total(api, lax, fn, in_axes):
        return lambda x, y: lax.reduce_sum(lax.reduce_sum(
            api.vmap(fn, in_axes)(x, y), (0,)), (0,))

    results = []
    for api, lax in [(minijax, mlax), (jax, jax.lax)]:
        f, g = _custom_functions(api, lax)
        fn = f if which == "custom_jvp" else g

        def everything(x, y):
            out = [
                api.vmap(fn, (0, None))(x, y),
                api.vmap(fn, (1, None), out_axes=1)(x.T, y),
                api.grad(total(api, lax, fn, (0, None)), argnums=(0, 1))(x, y),
                api.grad(total(api, lax, api.jit(fn), (0, 0)), argnums=(0, 1))(x, x[::-1] + y),
                api.vmap(api.grad(lambda a, b: lax.reduce_sum(fn(a, b), (0,))), (0, None))(x, y),
            ]
            if which == "custom_jvp":
                out.append(api.jvp(lambda y: api.vmap(fn, (0, None))(x, y), (y,), (y,)))
            return out
        results.append(api.jit(everything)(x, y))
    assert_close(results[0], results[1])
    f, g = _custom_functions(minijax, mlax)
    fn = f if which == "custom_jvp" else g
    verify_jaxpr(minijax.make_jaxpr(minijax.grad(total(minijax, mlax, fn, (0, None)),
                                                 argnums=(0, 1)))(x, y))
