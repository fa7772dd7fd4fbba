"""`minijax.tree` and `minijax.tree_util` are JAX's pytree functions, importable the
way JAX programs import them, and they work on minijax values and under transforms."""
from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

import minijax
import minijax.numpy as jnp


def test_tree_util_is_a_module_with_jaxs_names():
    module = importlib.import_module("minijax.tree_util")
    assert minijax.tree_util is module
    from minijax.tree_util import (tree_map, tree_flatten, tree_unflatten,  # noqa: F401
                                   register_pytree_node, Partial, tree_leaves, keystr)
    for name in dir(jax.tree_util):
        if not name.startswith("_"):
            assert getattr(module, name) is getattr(jax.tree_util, name), name


@pytest.mark.parametrize("name", ["map", "leaves", "structure", "flatten", "unflatten",
                                  "transpose", "reduce", "all", "flatten_with_path",
                                  "map_with_path", "leaves_with_path"])
def test_tree_has_jaxs_short_names(name):
    assert getattr(minijax.tree, name) is getattr(jax.tree, name)


def test_tree_functions_on_minijax_values():
    tree = {"a": jnp.ones(2), "b": (jnp.zeros(3), 2.0)}
    doubled = minijax.tree.map(lambda x: x * 2, tree)
    np.testing.assert_array_equal(doubled["a"], [2.0, 2.0])
    leaves, treedef = minijax.tree.flatten(tree)
    assert len(leaves) == 3 and minijax.tree.unflatten(treedef, leaves)["b"][1] == 2.0
    assert minijax.tree.reduce(lambda a, b: a + b, [1, 2, 3]) == 6
    assert minijax.tree.all([True, 1, (True,)])
    outer = minijax.tree.structure([0, 0])
    inner = minijax.tree.structure((0, 0, 0))
    assert minijax.tree.transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == \
        ([1, 4], [2, 5], [3, 6])


def test_registered_class_and_partial_under_transforms():
    @minijax.tree_util.register_pytree_node_class
    class Pair:
        def __init__(self, first, second):
            self.first, self.second = first, second

        def tree_flatten(self):
            return (self.first, self.second), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    def loss(pair):
        return jnp.sum(pair.first * pair.second)

    grads = minijax.jit(minijax.grad(loss))(Pair(jnp.arange(3.0), jnp.ones(3)))
    assert isinstance(grads, Pair)
    np.testing.assert_array_equal(grads.first, np.ones(3))
    np.testing.assert_array_equal(grads.second, np.arange(3.0))
    scale = minijax.tree_util.Partial(jnp.multiply, 3.0)
    out = minijax.jit(lambda f, x: f(x))(scale, jnp.ones(2))
    np.testing.assert_array_equal(out, [3.0, 3.0])
    mapped = minijax.vmap(lambda t: minijax.tree.map(jnp.sin, t))({"x": jnp.ones((2, 3))})
    assert mapped["x"].shape == (2, 3)
