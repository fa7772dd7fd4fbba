"""`minijax.flatten_util.ravel_pytree` against `jax.flatten_util.ravel_pytree`: the
vector and the unraveled pytree (dtypes and weak types included) for one dtype, mixed
dtypes, Python scalars, empty trees; the unravel's dtype rules and errors; under jit,
grad and vmap (p29's Newton step on a parameter pytree is the program that needed it)."""
import jax
import jax.flatten_util
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.flatten_util
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match

TREES = {
    "one dtype": {"w": np.ones((2, 3), np.float32), "b": [np.arange(3.0, dtype=np.float32)]},
    "python float": {"a": 1.0},
    "mixed": {"x": np.float32(2.5), "n": 3, "flag": np.array([True, False])},
    "int8 and bool": [True, np.int8(3)],
    "half floats": (np.ones(2, jjnp.bfloat16), np.ones(1, np.float16)),
    "complex and real": [np.ones(2, np.complex64), 1.0],
    "scalars and empties": [np.zeros((0, 2), np.float32), np.float32(1)],
    "no leaves": {"nothing": (), "none": None},
}


@pytest.mark.parametrize("name", TREES)
def test_ravel_and_unravel_match_jax(name):
    tree = TREES[name]
    flat, unravel = minijax.flatten_util.ravel_pytree(tree)
    expected_flat, expected_unravel = jax.flatten_util.ravel_pytree(tree)
    assert_trees_match(flat, expected_flat, what=f"{name}: flat")
    assert_trees_match(unravel(flat), expected_unravel(expected_flat), what=f"{name}: tree")


def test_unravel_dtype_rules_and_errors():
    # one dtype: unravel keeps whatever dtype it is given (JAX's issue 7809)
    _, unravel = minijax.flatten_util.ravel_pytree([np.ones(2, np.float32)])
    _, expected = jax.flatten_util.ravel_pytree([np.ones(2, np.float32)])
    vector = np.arange(2, dtype=np.int32)
    assert_trees_match(unravel(vector), expected(vector))
    # mixed dtypes: only the promoted dtype is accepted
    tree = {"i": np.int32(1), "f": np.ones(2, np.float32)}
    _, unravel = minijax.flatten_util.ravel_pytree(tree)
    for lib, f in ((minijax, unravel), (jax, jax.flatten_util.ravel_pytree(tree)[1])):
        with pytest.raises(TypeError, match="expected dtype float32"):
            f(np.ones(3, np.int32))
        with pytest.raises((ValueError, TypeError)):
            f(np.ones(4, np.float32))               # the wrong length
    # unravels of equal trees are equal, so one can be a static argument
    assert minijax.flatten_util.ravel_pytree(tree)[1] == unravel
    assert hash(minijax.flatten_util.ravel_pytree(tree)[1]) == hash(unravel)
    assert minijax.flatten_util.ravel_pytree([1.0, 2.0])[1] != unravel


def test_under_transforms():
    params = {"w": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
              "b": np.array([0.5, -0.25, 1.0], np.float32)}

    def program(lib, ravel_pytree):
        def loss(p):
            return lib.numpy.sum(lib.numpy.tanh(p["w"] @ p["b"]) ** 2) + p["b"][0] ** 3

        def run(params, batch):
            flat, unravel = ravel_pytree(params)
            flat_loss = lambda v: loss(unravel(v))  # noqa: E731
            return {"flat": flat, "grad": lib.grad(flat_loss)(flat),
                    "hessian": lib.hessian(flat_loss)(flat),
                    "back": unravel(flat - 0.1 * lib.grad(flat_loss)(flat)),
                    "vmap": lib.vmap(lambda p: ravel_pytree(p)[0])(batch),
                    "grad_through": lib.grad(lambda p: ravel_pytree(p)[0].sum() ** 2)(params)}
        return run
    batch = jax.tree_util.tree_map(lambda a: np.stack([a, 2 * a]), params)
    ours = minijax.jit(program(minijax, minijax.flatten_util.ravel_pytree))(params, batch)
    theirs = jax.jit(program(jax, jax.flatten_util.ravel_pytree))(params, batch)
    assert_trees_match(ours, theirs, rtol=1e-6, atol=1e-6)
    # eager, on tracers' concrete counterparts: minijax arrays in, minijax arrays out
    flat, unravel = minijax.flatten_util.ravel_pytree(
        {"a": mjnp.ones(2), "b": mjnp.zeros((1, 1), np.int32)})
    assert_trees_match(unravel(flat), jax.flatten_util.ravel_pytree(
        {"a": jjnp.ones(2), "b": jjnp.zeros((1, 1), np.int32)})[1](flat))
