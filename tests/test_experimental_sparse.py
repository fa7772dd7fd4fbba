"""`minijax.experimental.sparse` (the BCOO core) against `jax.experimental.sparse` on
the same inputs: layouts from `fromdense` (default and padded nse, batch and dense
dimensions), the operations eagerly and under jit, grad through `data` (with and
without checkpoint), vmap over the dense arrays a BCOO is built from, and JAX's errors
for bad layouts and shapes."""
from __future__ import annotations

import jax
import jax.experimental.sparse as jsparse
import numpy as np
import pytest

import minijax
import minijax.experimental.sparse as msparse
from minijax.testing import assert_trees_match
from tests.library_helpers import assert_raises_as_jax

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
B = np.stack([M, 2 * M[::-1]])                       # two batches, different patterns
V = np.arange(4, dtype=np.float32)
W = np.arange(12, dtype=np.float32).reshape(4, 3)
# Unsorted indices with a duplicate ([0, 1] twice) and one out of bounds ([3, 4]).
IDX = np.array([[0, 1], [2, 2], [0, 1], [3, 4], [1, 0]], np.int32)
VALS = np.arange(1, 6, dtype=np.float32)


def _libs():
    return ((msparse, minijax), (jsparse, jax))


def _split(tree):
    """`tree` with each BCOO replaced by its two arrays (the libraries' classes differ),
    and the BCOOs' layouts in order."""
    layouts = []

    def parts(x):
        if type(x).__name__ != "BCOO":
            return x
        layouts.append((x.shape, x.nse, x.n_batch, x.n_sparse, x.n_dense,
                        np.dtype(x.dtype).name, x.indices_sorted, x.unique_indices))
        return (x.data, x.indices)
    return jax.tree_util.tree_map(parts, tree, is_leaf=lambda x: type(x).__name__ == "BCOO"), \
        layouts


def _match(fn, what):
    (ours, our_layouts), (theirs, their_layouts) = (_split(fn(s, j)) for s, j in _libs())
    assert our_layouts == their_layouts, what
    assert_trees_match(ours, theirs, what=what)


def test_fromdense_layouts_eagerly():
    # Without nse the nonzeros are counted, which needs concrete values: eager only.
    made = [(s.BCOO.fromdense(M), s.BCOO.fromdense(B, n_batch=1, n_dense=1)) for s, _ in _libs()]
    _match(lambda s, j: made[0] if s is msparse else made[1], "fromdense")
    assert repr(made[0][1]) == repr(made[1][1]) == \
        "BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)"


def test_operations_eagerly():
    # Without nse, fromdense and sum_duplicates count, which needs concrete values.
    def ops(s, j):
        sp = s.BCOO.fromdense(M)
        return sp @ V, sp.sum(), s.BCOO((VALS, IDX), shape=(3, 4)).sum_duplicates()
    _match(ops, "eager")


def test_operations_under_jit():
    def program(s, j):
        def f(m, b, v, w, dup):
            sp, spb = s.BCOO.fromdense(m, nse=6), s.BCOO.fromdense(b, n_batch=1, nse=4)
            made = (sp, spb, s.BCOO.fromdense(b, n_batch=1, n_dense=1, nse=3),
                    s.BCOO.fromdense(b, n_dense=1, nse=4), s.BCOO.fromdense(b, n_batch=3, nse=1),
                    s.BCOO.fromdense(m, nse=4, index_dtype=np.int8))
            return {
                "fromdense": made, "todense": [x.todense() for x in made],
                "transpose": (sp.T, s.bcoo_transpose(spb, permutation=(0, 2, 1))),
                "matmul": (sp @ w, w.T @ sp.T, s.bcoo_dot_general(
                    spb, j.numpy.ones((2, 4, 2)), dimension_numbers=(((2,), (1,)), ((0,), (0,))))),
                "sum": (sp.sum(0), sp.astype(np.int8).sum(axis=1),
                        s.bcoo_reduce_sum(spb, axes=(0, 2))),
                "mul": (sp * m, 2.0 * sp, s.bcoo_multiply_dense(spb, v),
                        s.bcoo_multiply_sparse(sp, s.BCOO.fromdense(m * (m > 1), nse=3))),
                "astype": sp.astype(np.int32),
                "duplicates": (dup.sort_indices(), dup.sum_duplicates(nse=6, remove_zeros=False),
                               s.bcoo_sum_duplicates(dup, nse=3)),
                "empty and eye": (s.empty((2, 3), nse=2), s.eye(3, 4, k=1),
                                  s.eye(3, 4, k=-1, n_batch=1)),
            }
        # A BCOO argument is a pytree of its data and indices.
        return j.jit(f)(M, B, V, W, s.BCOO((VALS, IDX), shape=(3, 4)))
    _match(program, "operations under jit")


def test_grad_through_data():
    def loss(s, j):
        def f(vals):
            sp = s.BCOO((vals, IDX), shape=(3, 4))
            return ((sp @ j.numpy.asarray(V)) ** 2).sum() + s.bcoo_multiply_dense(sp, M).sum() \
                + (sp.T.todense() ** 3).sum() + (s.bcoo_sum_duplicates(sp, nse=4).data * V).sum()
        return f
    # With and without remat, in one program.
    _match(lambda s, j: j.jit(lambda x: (j.grad(loss(s, j))(x),
                                         j.grad(j.checkpoint(loss(s, j)))(x)))(VALS),
           "grad under jit")


def test_vmap_over_the_dense_inputs():
    def program(s, j):
        def f(b, w, vals):
            from_rows = j.vmap(lambda m: s.BCOO.fromdense(m, nse=4) @ V)(b)
            over_rhs = j.vmap(lambda x: s.BCOO((vals, IDX), shape=(3, 4)) @ x)(w.T)
            over_data = j.vmap(lambda d: s.BCOO((d, IDX), shape=(3, 4)).sum(0).todense())(
                j.numpy.stack([vals, -vals]))
            return from_rows, over_rhs, over_data
        return j.jit(f)(B, W, VALS)
    _match(program, "vmap")


def test_bad_layouts_and_shapes_raise_as_jax():
    sp = lambda j: _mod(j).BCOO((VALS, IDX), shape=(3, 4))  # noqa: E731
    assert_raises_as_jax(lambda j: _mod(j).BCOO((VALS[:4], IDX), shape=(3, 4)))
    assert_raises_as_jax(lambda j: _mod(j).bcoo_transpose(sp(j), permutation=(0, 0)))
    assert_raises_as_jax(lambda j: _mod(j).bcoo_transpose(
        _mod(j).BCOO((VALS[None], IDX[None]), shape=(1, 3, 4)), permutation=(1, 0, 2)))
    assert_raises_as_jax(lambda j: _mod(j).bcoo_multiply_dense(sp(j), np.ones((2, 3, 4))))
    assert_raises_as_jax(lambda j: _mod(j).empty((2, 3), sparse_format="dense"))
    # The messages differ (each library words its own shape rule); the type is JAX's.
    assert_raises_as_jax(lambda j: _mod(j).bcoo_multiply_dense(sp(j), np.ones(3)),
                         same_message=False)
    assert_raises_as_jax(lambda j: _mod(j).bcoo_dot_general(
        sp(j), np.ones((3, 2), np.float32), dimension_numbers=(((1,), (0,)), ((), ()))),
        same_message=False)
    # Each library raises its own ConcretizationTypeError class.
    for lib in (minijax, jax):
        with pytest.raises(lib.errors.ConcretizationTypeError, match="nse argument of bcoo"):
            lib.jit(lambda m: _mod(lib).BCOO.fromdense(m).data)(M)


def _mod(lib):
    return msparse if lib is minijax else jsparse
