"""`fwd_and_bwd`, and the pullback `vjp` returns as a pytree of its residuals
(minijax/frontend/vjp_function.py), against JAX on the same inputs."""
import contextlib

import jax
import jax.monitoring
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match

X = np.float32([[0.5, -1.0], [2.0, 0.25]])
W = np.float32([[1.5, 0.5], [-0.5, 1.0]])
CT = np.float32([[1.0, -2.0], [0.5, 3.0]])


def layer(lib):
    return lambda x, w: lib.numpy.tanh(x @ w) * lib.numpy.sin(w)


def layer_with_aux(lib):
    return lambda x, w: (layer(lib)(x, w), {"norm": lib.numpy.sum(w * w), "tag": 3})


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), [1]])
@pytest.mark.parametrize("jitted", [True, False])
def test_forward_and_backward_match_jax(argnums, jitted):
    results = []
    for lib in (minijax, jax):
        fwd, bwd = lib.fwd_and_bwd(layer(lib), argnums=argnums, jitted=jitted)
        out, residuals = fwd(X, W)
        results.append((out, bwd(residuals, CT)))
    assert_trees_match(results[0], results[1], rtol=1e-6, atol=1e-6)
    # an int argnums gives one cotangent, a sequence a tuple of them
    assert isinstance(results[0][1], tuple) == (not isinstance(argnums, int))


@pytest.mark.parametrize("jitted", [True, False])
def test_has_aux_returns_the_aux_third(jitted):
    results = []
    for lib in (minijax, jax):
        fwd, bwd = lib.fwd_and_bwd(layer_with_aux(lib), argnums=(0, 1), has_aux=True,
                                   jitted=jitted)
        out, residuals, aux = fwd(X, W)
        results.append((out, aux, bwd(residuals, CT)))
    assert_trees_match(results[0], results[1], rtol=1e-6, atol=1e-6)


@contextlib.contextmanager
def compile_requests():
    """Counts the programs handed to XLA (JAX's monitoring events) while open."""
    seen = []

    def listen(event, seconds, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            seen.append(event)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


@pytest.mark.parametrize("lib", [minijax, jax], ids=["minijax", "jax"])
def test_a_loop_compiles_fwd_and_bwd_once(lib):
    # The point of fwd_and_bwd: the pullback is an argument of a jitted bwd, and the
    # jitted fwd hands back the same structure every step, so bwd hits its cache.
    fwd, bwd = lib.fwd_and_bwd(layer(lib), argnums=1)
    w = W
    for step in range(3):
        with compile_requests() as compiled:
            out, residuals = fwd(X, w)
            w = w - 0.1 * bwd(residuals, CT)
        assert (len(compiled) > 0) == (step == 0), (step, len(compiled))
    expected = W
    for _ in range(3):
        expected = expected - 0.1 * jax.vjp(lambda w: layer(jax)(X, w), expected)[1](CT)[0]
    np.testing.assert_allclose(w, expected, rtol=1e-5, atol=1e-6)


def test_the_pullback_is_a_pytree_of_residuals():
    _, pullback = minijax.vjp(layer(minijax), X, W)
    leaves, tree = minijax.tree_util.tree_flatten(pullback)
    # the residuals: arrays (eagerly, the NumPy inputs themselves where they are saved)
    assert leaves and all(isinstance(leaf, (jax.Array, np.ndarray)) for leaf in leaves)
    assert any(leaf is X for leaf in leaves) and any(leaf is W for leaf in leaves)
    rebuilt = minijax.tree_util.tree_unflatten(tree, leaves)
    assert_trees_match(rebuilt(CT), pullback(CT), rtol=0, atol=0)
    # another vjp's pullback has another structure (its own linear jaxpr)
    _, other = minijax.vjp(layer(minijax), X, W)
    assert minijax.tree_util.tree_structure(other) != tree


def test_a_pullback_returned_from_jit_and_passed_into_jit_matches_jax():
    results = []
    for lib in (minijax, jax):
        out, pullback = lib.jit(lambda x, w: lib.vjp(layer(lib), x, w))(X, W)
        results.append((out, pullback(CT), lib.jit(lambda p, ct: p(ct))(pullback, CT)))
    assert_trees_match(results[0], results[1], rtol=1e-6, atol=1e-6)


def test_a_pullback_carried_through_scan_matches_jax():
    def program(lib):
        def body(pullback, ct):
            # the carry is the pullback: same structure in and out
            return pullback, pullback(ct)[0]
        _, pullback = lib.vjp(layer(lib), X, W)
        return lib.lax.scan(body, pullback, np.stack([CT, 2 * CT]))[1]
    assert_trees_match(program(minijax), program(jax), rtol=1e-6, atol=1e-6)


def test_bad_arguments_are_refused_as_by_jax():
    with pytest.raises(TypeError, match="callable"):
        minijax.fwd_and_bwd(3, 0)
    with pytest.raises(TypeError):
        jax.fwd_and_bwd(3, 0)
    for argnums in ("x", (0, "a"), True, 1.0):
        with pytest.raises(TypeError, match="argnums"):
            minijax.fwd_and_bwd(layer(minijax), argnums)
    fwd, _ = minijax.fwd_and_bwd(layer(minijax), 5, jitted=False)
    with pytest.raises(TypeError, match="argnums=5"):
        fwd(X, W)
    with pytest.raises(ValueError):
        jax.fwd_and_bwd(layer(jax), 5, jitted=False)[0](X, W)
    fwd, bwd = minijax.fwd_and_bwd(layer(minijax), 0)
    _, residuals = fwd(X, W)
    with pytest.raises(ValueError, match="cotangent of type float32\\[1,2\\]"):
        bwd(residuals, CT[:1])
