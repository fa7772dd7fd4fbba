"""JAX's sharding in types as libraries use it, against JAX: `jax.typeof(x).sharding`
of an unsharded array (a `NamedSharding` on the empty mesh), passed on as
`out_sharding=` to the jnp, lax and random functions that take it (optax's
`tree_random_like`, `tree_vdot`), and a real placement on a one-device mesh."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match
from tests.test_divergences import pins

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
CALLS = {
    "zeros": lambda lib, s: lib.numpy.zeros(3, out_sharding=s),
    "ones_like": lambda lib, s: lib.numpy.ones_like(X, out_sharding=s),
    "full": lambda lib, s: lib.numpy.full((2,), 1.5, out_sharding=s),
    "arange": lambda lib, s: lib.numpy.arange(4, out_sharding=s),
    "asarray": lambda lib, s: lib.numpy.asarray(X, out_sharding=s),
    "dot": lambda lib, s: lib.numpy.dot(X, X.T, out_sharding=s),
    "matmul": lambda lib, s: lib.numpy.matmul(X, X.T, out_sharding=s),
    "einsum": lambda lib, s: lib.numpy.einsum("ij,kj->ik", X, X, out_sharding=s),
    "tensordot": lambda lib, s: lib.numpy.tensordot(X, X, 2, out_sharding=s),
    "reshape": lambda lib, s: lib.numpy.reshape(X, 6, out_sharding=s),
    "dot_general": lambda lib, s: lib.lax.dot_general(
        X, X.T, (((1,), (0,)), ((), ())), out_sharding=s),
    "broadcast_in_dim": lambda lib, s: lib.lax.broadcast_in_dim(1.0, (2,), (), out_sharding=s),
    # lax.empty's contents are unspecified (on a GPU, whatever the buffer last held),
    # so only its shape, dtype and weak type are compared
    "lax.empty": lambda lib, s: lib.numpy.zeros_like(
        lib.lax.empty((2,), np.float32, out_sharding=s)),
    "normal": lambda lib, s: lib.random.normal(lib.random.key(0), (3,), out_sharding=s),
    "randint": lambda lib, s: lib.random.randint(lib.random.key(1), (2,), 0, 9, out_sharding=s),
    "bits": lambda lib, s: lib.random.bits(lib.random.key(2), (2,), out_sharding=s),
}


def _unsharded(lib, ndim=1):
    return lib.typeof(lib.numpy.ones((1,) * ndim)).sharding


def test_the_type_of_an_unsharded_array_has_jaxs_sharding():
    for ndim in (0, 1, 3):
        assert _unsharded(minijax, ndim) == _unsharded(jax, ndim)
    seen = []
    minijax.jit(lambda x: seen.append(minijax.typeof(x).sharding) or x)(X)
    assert seen == [jax.typeof(jnp.asarray(X)).sharding]


@pytest.mark.parametrize("name", CALLS)
def test_out_sharding_of_the_unsharded_type_asks_for_nothing(name):
    call = CALLS[name]
    expected = call(jax, _unsharded(jax))
    assert_trees_match(call(minijax, _unsharded(minijax)), expected)
    assert_trees_match(minijax.jit(lambda: call(minijax, _unsharded(minijax)))(), expected)
    assert_trees_match(call(minijax, None), expected)


def test_methods_take_out_sharding_under_jit():
    def f(np_module, lib):
        def g(x):
            s = lib.typeof(x).sharding
            return (x.reshape(6, out_sharding=s), x.ravel(out_sharding=s),
                    x.flatten(out_sharding=s))
        return lib.jit(g)(np_module.asarray(X))
    assert_trees_match(f(mnp, minijax), f(jnp, jax))


def test_out_sharding_places_on_a_mesh_and_refuses_what_jax_refuses():
    mesh = jax.make_mesh((1,), ("x",))
    placed = NamedSharding(mesh, P("x"))
    out = minijax.numpy.zeros(4, out_sharding=placed)
    assert out.sharding.is_equivalent_to(jnp.zeros(4, out_sharding=placed).sharding, 1)
    for lib in (jax, minijax):
        with pytest.raises(TypeError, match="out_sharding"):
            lib.random.normal(lib.random.key(0), (2,), out_sharding="x")
        with pytest.raises(TypeError, match="out_sharding"):
            lib.numpy.zeros(2, out_sharding=3)


@pins("repeat_out_sharding_of_an_unsharded_type_fails")
def test_repeat_out_sharding_divergence():
    """Registered: JAX's repeat reads the mesh of the None its own canonicalization
    made of an empty-mesh sharding; minijax repeats, as with out_sharding=None."""
    function = lambda lib, np_, s: np_.repeat(np_.asarray(X), 2, axis=0, out_sharding=s)
    method = lambda lib, np_, s: lib.jit(
        lambda x: x.repeat(2, out_sharding=lib.typeof(x).sharding))(np_.asarray(X))
    for call, expected in ((function, jnp.repeat(X, 2, axis=0)), (method, jnp.repeat(X, 2))):
        with pytest.raises(AttributeError):
            call(jax, jnp, _unsharded(jax))
        assert_trees_match(call(minijax, mnp, _unsharded(minijax)), expected)
