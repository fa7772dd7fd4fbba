"""The `rev` primitive (`lax.rev`, `jnp.flip`, negative-step slices) against JAX.

`rev` reverses the order of elements along some axes. It is linear and its own
transpose. JAX's jaxprs use it for `x[::-1]` and `jnp.flip`, so the bridge imports it.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from minijax.interop import import_jaxpr, trace_with_jax, to_jax, to_python_source
from minijax.ir import dumps
from minijax.testing import assert_cross_check, assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr

M = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7


def _primitive_names(closed):
    return [eqn.primitive.name for eqn in closed.jaxpr.eqns]


@pytest.mark.parametrize("dims", [(0,), (1, 2), (0, 1, 2), ()])
def test_rev_matches_jax_eagerly_under_jit_grad_and_vmap(dims):
    assert_trees_match(mlax.rev(M, dims), jax.lax.rev(M, dims))
    assert_trees_match(minijax.jit(lambda x: mlax.rev(x, dims))(M),
                       jax.jit(lambda x: jax.lax.rev(x, dims))(M))
    weights = np.linspace(-1, 1, M.size, dtype=np.float32).reshape(M.shape)
    assert_trees_match(minijax.grad(lambda x: mnp.sum(mlax.rev(x, dims) * weights))(M),
                       jax.grad(lambda x: jnp.sum(jax.lax.rev(x, dims) * weights))(M))
    for axis in range(3):
        assert_trees_match(minijax.vmap(lambda x: mlax.rev(x, dims[:1] and (0,)), axis)(M),
                           jax.vmap(lambda x: jax.lax.rev(x, dims[:1] and (0,)), axis)(M))


def test_rev_keeps_dtype_and_weak_type():
    for x in (np.arange(3, dtype=np.int8), np.array([True, False]), 2.5):
        assert_trees_match(mlax.rev(mnp.asarray(x), () if np.ndim(x) == 0 else (0,)),
                           jax.lax.rev(jnp.asarray(x), () if np.ndim(x) == 0 else (0,)))


def test_rev_is_its_own_transpose():
    f = lambda lax: (lambda x: lax.rev(x, (0, 2)))
    _, pull_back = minijax.vjp(f(mlax), M)
    closed = minijax.make_jaxpr(pull_back)(M)
    assert _primitive_names(closed) == ["rev"] and "dimensions=(0, 2)" in str(closed)
    assert_trees_match(pull_back(M), jax.vjp(f(jax.lax), M)[1](M))


def test_flip_and_negative_steps_trace_to_rev_as_in_jax():
    closed = minijax.make_jaxpr(lambda x: (mnp.flip(x, (0, 2)), x[::-1, :, ::-2]))(M)
    assert _primitive_names(closed) == ["rev", "slice", "rev"]
    assert "rev[dimensions=(0, 2)]" in str(closed)
    for fun in (lambda np_, x: np_.flip(x), lambda np_, x: np_.flip(x, -1),
                lambda np_, x: np_.fliplr(x[0]), lambda np_, x: np_.flipud(x[0]),
                lambda np_, x: x[::-1, 1::-1, ::3], lambda np_, x: x[:, ::-2][::-1]):
        assert_trees_match(fun(mnp, M), fun(jnp, M))
        assert_trees_match(minijax.jit(lambda x: fun(mnp, x))(M), jax.jit(lambda x: fun(jnp, x))(M))


def test_imported_jax_flip_runs_and_differentiates_like_jax():
    def program(x):
        return x[::-1] * 2.0, jnp.flip(x, (1, 2)), x[:, ::-2]
    assert_cross_check(program, M, transforms=["eager", "jit", "grad", "vmap"], shrink=False)


def test_rev_goes_to_jax_and_to_python_source():
    fun = lambda x: mlax.rev(mnp.sin(x), (0, 2))
    closed = minijax.make_jaxpr(fun)(M)
    back = import_jaxpr(jax.make_jaxpr(to_jax(closed))(M))
    assert dumps(back) == dumps(closed)
    namespace = {}
    exec(to_python_source(closed), namespace)
    assert_trees_match(namespace["program"](M)[0], fun(M))
    assert_trees_match(eval_jaxpr(back.jaxpr, back.consts, [M])[0], fun(M))
    assert "rev" in _primitive_names(trace_with_jax(lambda x: x[::-1])(M))


@pytest.mark.parametrize("dims, message", [((0, 0), "invalid"), ((3,), "invalid"),
                                           ((-1,), "invalid")])
def test_bad_dimensions_are_a_type_error_as_in_jax(dims, message):
    with pytest.raises(TypeError):
        jax.lax.rev(M, dims)
    with pytest.raises(TypeError, match=f"rev: axes .* {message}"):
        mlax.rev(M, dims)
    with pytest.raises(TypeError, match="rev"):
        minijax.make_jaxpr(lambda x: mlax.rev(x, dims))(M)
