"""`minijax.numpy` shape functions and array creation against `jax.numpy`.

Variants of one function are batched into one traced program (see
`numpy_helpers.check`), which also runs under `minijax.jit`; a final test runs the
functions eagerly.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import check, count_eqns, jax_traced, rand, traced
from tests.test_divergences import pins

A = rand((2, 3, 4))
M = rand((3, 4))
V = rand((4,))

SHAPE_CASES = {
    "reshape": lambda m, a: [m.reshape(a, (6, 4)), m.reshape(a, (-1,)), m.reshape(a, (4, -1, 2)),
                             m.reshape(a, 24), a.reshape(2, 12), m.reshape(a, (2, 3, 4))],
    "ravel": lambda m, a: [m.ravel(a), m.ravel(a[0])],
    "transpose": lambda m, a: [m.transpose(a), m.transpose(a, (1, 0, 2)),
                               m.transpose(a, (-1, 0, 1)),
                               m.permute_dims(a, (2, 1, 0)), m.matrix_transpose(a)],
    "swap_move": lambda m, a: [m.swapaxes(a, 0, -1), m.moveaxis(a, 0, -1), m.moveaxis(a, -1, 0),
                               m.moveaxis(a, (0, 1), (-1, -2)), m.moveaxis(a, [2], [1])],
    "squeeze_expand": lambda m, a: [m.squeeze(a[:1, :, :1]), m.squeeze(a[:1], 0),
                                    m.squeeze(a[:, :1, :1], (1, 2)), m.expand_dims(a, 0),
                                    m.expand_dims(a, -1), m.expand_dims(a, (0, 2)),
                                    m.expand_dims(a, (-1, 1))],
    "broadcast": lambda m, a: [m.broadcast_to(a[0, 0], (3, 4)),
                               m.broadcast_to(a[:, :1], (5, 2, 3, 4)),
                               m.broadcast_to(2.0, (2,)), *m.broadcast_arrays(a, a[0, :, :1], 1)],
    "concatenate": lambda m, a: [m.concatenate([a, a], axis=0), m.concatenate([a, a[:, :1]], 1),
                                 m.concatenate([a, a], axis=-1), m.concatenate([a, a], axis=None),
                                 m.concatenate([a[0], a[1].astype(m.int32)], 0),
                                 m.concatenate([a])],
    "stack": lambda m, a: [m.stack([a, a]), m.stack([a[0], a[1]], axis=1), m.stack([a, a], -1),
                           m.vstack([a[0], a[1]]), m.vstack([a[0, 0], a[1, 0]]),
                           m.hstack([a[0], a[1]]), m.hstack([a[0, 0], a[0, 1]]),
                           m.dstack([a[0], a[1]]), m.column_stack([a[0, 0], a[1, 0]]),
                           m.stack([a[0, 0, 0], 2.0])],
    "split": lambda m, a: [*m.split(a, 2), *m.split(a, [1, 3], axis=2), *m.split(a, 3, axis=1),
                           *m.array_split(a, 3, axis=2), *m.hsplit(a, [1]), *m.vsplit(a, 2)],
    "flip": lambda m, a: [m.flip(a), m.flip(a, 0), m.flip(a, (0, 2)), m.fliplr(a), m.flipud(a),
                          m.rot90(a[0]), m.rot90(a, 2, (1, 2)), m.rot90(a[0], 3)],
    "roll": lambda m, a: [m.roll(a, 1), m.roll(a, -2, axis=2), m.roll(a, (1, 2), axis=(0, 1)),
                          m.roll(a, 7, axis=-1)],
    "tile_repeat": lambda m, a: [m.tile(a, 2), m.tile(a[0], (2, 1, 3)), m.tile(a[0, 0], (1, 1)),
                                 m.repeat(a, 2), m.repeat(a, 3, axis=1),
                                 m.repeat(a[0, 0], np.array([1, 0, 2, 1]), axis=0),
                                 m.repeat(a, 2, axis=-1)],
    "pad": lambda m, a: [m.pad(a, 1), m.pad(a, ((0, 1), (2, 0), (1, 1))), m.pad(a, (1, 2)),
                         m.pad(a, 1, constant_values=-1.5), m.pad(a, ((1, 1),), mode="edge"),
                         m.pad(a, 2, mode="wrap"), m.pad(a, 1, mode="reflect"),
                         m.pad(a, 2, mode="symmetric"),
                         m.pad(a.astype(m.int32), 1, constant_values=7)],
    "atleast": lambda m, a: [m.atleast_1d(a[0, 0, 0]), m.atleast_2d(a[0, 0]),
                             m.atleast_3d(a[0, 0]),
                             m.atleast_3d(a[0]), *m.atleast_1d(a, 2.0), m.atleast_2d(a)],
    "diagonal": lambda m, a: [m.diagonal(a[0]), m.diagonal(a[0], 1), m.diagonal(a[0], -1),
                              m.diagonal(a, 0, 1, 2), m.trace(a[0]), m.trace(a, 1, 1, 2),
                              m.diag(a[0, 0]), m.diag(a[0, 0], -2), m.diag(a[0], 1)],
    "tri": lambda m, a: [m.tril(a), m.triu(a[0], 1), m.tril(a[0], -1), m.triu(a, -2),
                         # a boolean matrix stays boolean (a Python 0 made it int32)
                         m.tril(a[0] > 0), m.triu(a > 0, 1)],
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_shape_functions(name):
    check(SHAPE_CASES[name], A)


def test_shape_functions_eagerly():
    """A sample run op by op on concrete arrays (each eager primitive compiles once, so
    the full table above runs only traced and under jit)."""
    def fn(m, a):
        return [m.reshape(a, (4, -1)), m.transpose(a, (1, 0, 2)), m.squeeze(a[:1]),
                m.expand_dims(a, 1), m.broadcast_to(a[0, 0], (3, 4)), m.concatenate([a, a], 1),
                m.stack([a, a], -1), *m.split(a, [1, 3], axis=2), m.flip(a, 0), m.roll(a, 2),
                m.tile(a[0], 2), m.repeat(a, 2, axis=1), m.pad(a, 1), m.pad(a, 1, mode="edge"),
                m.diagonal(a[0]), m.tril(a[0]), m.atleast_2d(a[0, 0])]
    got = fn(mnp, mnp.asarray(A))
    assert all(isinstance(g, jax.Array) for g in got)
    from tests.numpy_helpers import assert_values_close
    assert_values_close(got, jax.jit(lambda a: fn(jnp, a))(A))


def test_dynamic_roll():
    check(lambda m, a, s: [m.roll(a, s, axis=1), m.roll(a, -s, axis=2)], A, np.int32(5))


def test_shape_queries_accept_any_array_like():
    for m in (mnp, jnp):
        assert m.shape(np.ones((1, 3))) == (1, 3) and m.ndim(2.0) == 0 and m.size(A, -1) == 4
    assert mnp.shape([[1, 2, 3]]) == (1, 3)
    assert mnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert isinstance(mnp.transpose(2.0), jax.Array)


@pins("jnp_reshape_of_a_numpy_array_returns_a_numpy_array")
def test_reshape_of_a_numpy_array_divergence():
    x = np.arange(6, dtype=np.float32)
    theirs, ours = jnp.reshape(x, (2, 3)), mnp.reshape(x, (2, 3))
    assert type(theirs) is np.ndarray and isinstance(ours, jax.Array)
    assert isinstance(jnp.reshape(jnp.asarray(x), (2, 3)), jax.Array)
    np.testing.assert_array_equal(ours, theirs)
    assert float(ours.at[0, 1].get()) == 1.0


# -- creation ---------------------------------------------------------------------------------

CREATION_CASES = {
    "zeros_ones": lambda m: [m.zeros(3), m.zeros((2, 3), m.int32), m.ones((2,)), m.ones((), bool),
                             # `empty`'s contents are unspecified (a GPU's: what memory held)
                             m.zeros_like(m.empty((2, 2))), m.zeros([]),
                             m.ones(2, dtype=jnp.bfloat16)],
    "full": lambda m: [m.full((2, 3), 2.5), m.full(3, 7), m.full((2,), True),
                       m.full((2, 3), 1, m.float16),
                       m.full((2, 3), np.arange(3, dtype=np.float32)),
                       m.full((2,), np.float32(1.5))],
    "arange": lambda m: [m.arange(5), m.arange(2, 7), m.arange(1, 10, 3), m.arange(5.0),
                         m.arange(0, 2, 0.3), m.arange(5, dtype=m.float32), m.arange(10, 0, -3),
                         m.arange(3, dtype=m.float16), m.arange(0, 1, 0.1, dtype=jnp.bfloat16),
                         m.arange(0), m.arange(5, 2)],
    "linspace": lambda m: [m.linspace(0, 1, 5), m.linspace(0, 1, 5, endpoint=False),
                           m.linspace(-2, 3, 1), m.linspace(0, 10, 4, dtype=m.int32),
                           m.linspace(np.zeros(2), np.ones(2), 3), m.linspace(0, 1, 0),
                           m.linspace(np.zeros(2), np.arange(2.0), 4, axis=-1),
                           *m.linspace(0, 1, 5, retstep=True)],
    "eye": lambda m: [m.eye(3), m.eye(2, 4), m.eye(4, 3, k=1), m.eye(3, k=-2, dtype=m.int32),
                      m.identity(2), m.tri(3), m.tri(3, 4, k=1, dtype=m.int32)],
    "meshgrid": lambda m: [*m.meshgrid(np.arange(3.0), np.arange(2.0)),
                           *m.meshgrid(np.arange(3.0), np.arange(2.0), indexing="ij"),
                           *m.meshgrid(np.arange(3.0), np.arange(2.0), np.arange(4.0),
                                       sparse=True)],
}


@pytest.mark.parametrize("name", sorted(CREATION_CASES))
def test_creation(name):
    check(CREATION_CASES[name], rtol=1e-6, atol=1e-6,
          eager=name in ("zeros_ones", "full", "arange"))


def test_like_functions():
    x32, xi = rand((2, 3)), rand((2, 3), np.int32)
    # `empty_like`'s contents are unspecified (a GPU's: what memory held): its type only
    check(lambda m, a, i, w: [m.zeros_like(a), m.ones_like(i), m.full_like(a, 3),
                              m.zeros_like(m.empty_like(i)),
                              m.zeros_like(a, dtype=m.int8), m.full_like(i, 2.7),
                              m.ones_like(a, shape=(4,)), m.zeros_like(w), m.full_like(w, 2),
                              m.full_like(a, np.arange(3, dtype=np.float32))],
          x32, xi, 2.0, eager=True)


def test_creation_under_jit_makes_lean_programs():
    """A filled array is one broadcast of a literal; arange(n) one iota."""
    for fn in (lambda m: m.zeros((2, 3)), lambda m: m.ones(4, m.int32), lambda m: m.arange(5),
               lambda m: m.full((2,), 3.0)):
        ours, theirs = traced(fn), jax_traced(fn)
        assert count_eqns(ours) <= count_eqns(theirs) and len(ours.jaxpr.constvars) == 0
    closed = traced(lambda m, x: x + m.asarray([1.0, 2.0, 3.0]), V[:3])
    assert len(closed.eqns) == 1 and len(closed.jaxpr.constvars) == 1  # a closed-over constant


def test_repeat_with_a_total_length_takes_traced_counts_as_jax():
    # JAX's error for traced repeats names this fix; minijax refused it and ignored
    # total_repeat_length. Cut, padded with the last element, zero counts, axes.
    counts = np.array([2, 0, 3], np.int32)

    def f(m, a, c):
        return [m.repeat(a[0], c, total_repeat_length=5),
                m.repeat(a[0], c, total_repeat_length=3),
                m.repeat(a[0], c, total_repeat_length=8),
                m.repeat(a, c, axis=1, total_repeat_length=4),
                m.repeat(a, c[:2], axis=0, total_repeat_length=3),
                m.repeat(a, c[0], total_repeat_length=13),
                m.repeat(a, c, axis=1, total_repeat_length=0)]
    check(f, rand((2, 3)), counts, eager=True)
    grads = [lib.grad(lambda a: lib.numpy.repeat(a, counts, total_repeat_length=4).sum())(
        np.ones(3, np.float32)) for lib in (minijax, jax)]
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("fname", ["shape", "ndim", "size"])
def test_shape_functions_of_a_list_warn_under_their_own_name_as_jax(fname):
    # ndim and size warned under shape's name, at a line inside minijax
    messages = []
    for np_ in (jnp, mnp):
        with pytest.warns(DeprecationWarning) as record:
            value = getattr(np_, fname)([[1, 2]])
        messages.append((value, str(record[0].message), record[0].filename))
    assert messages[0] == messages[1]
    assert messages[1][1].startswith(f"{fname} requires ndarray or scalar arguments")


@pytest.mark.parametrize("data", [None, [1, None], [[1.0], [None]]])
def test_none_in_array_data_is_jax_value_error(data):
    for np_ in (jnp, mnp):
        with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
            np_.array(data)


@pytest.mark.parametrize("fname,kind", [("sort", "stable"), ("argsort", "quicksort")])
def test_numpys_kind_argument_to_sorting_is_refused_as_in_jax(fname, kind):
    # minijax took and ignored it; JAX's TypeError points at stable=
    for np_ in (jnp, mnp):
        with pytest.raises(TypeError, match="'kind' argument to .* not supported"):
            getattr(np_, fname)(np.array([2.0, 1.0]), kind=kind)
        getattr(np_, fname)(np.array([2.0, 1.0]), kind=None)


def test_reshape_has_no_newshape_keyword_as_jax():
    for np_ in (jnp, mnp):
        with pytest.raises(TypeError, match="newshape"):
            np_.reshape(np.ones(2), newshape=(2,))
        assert np_.reshape(np.ones(2), shape=(2, 1)).shape == (2, 1)


def test_split_by_a_traced_count_is_a_concretization_error_as_jax():
    # minijax's was "iteration over a 0-d array"; a concrete 0-d array counts sections
    for lib, np_ in ((jax, jnp), (minijax, mnp)):
        with pytest.raises(lib.errors.ConcretizationTypeError):
            lib.jit(lambda a, n: np_.split(a, n))(np.arange(4), 2)
        parts = np_.split(np_.arange(4), np_.array(2))
        assert [p.tolist() for p in parts] == [[0, 1], [2, 3]]
