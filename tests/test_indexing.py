"""NumPy indexing in `minijax.numpy` against `jax.numpy`: `x[idx]`, `x.at[idx]`,
`take`, `take_along_axis`, with static, traced and array indices.

Each batch of index expressions is one program, checked traced (verified, with
JAX's types), under `minijax.jit` and eagerly. Eager `x[idx]` on a concrete
jax.Array is JAX's own indexing, so the eager runs call minijax's `getitem` (what
tracers use) directly.
"""
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.numpy._indexing import getitem, _IndexUpdateHelper
from tests.numpy_helpers import check, count_eqns, jax_traced, rand, traced

X = rand((3, 4, 5))


def index(m, x, idx):
    """`x[idx]`, through minijax's indexing whenever `m` is minijax.numpy."""
    return x[idx] if m is jnp else getitem(x, idx)


def at(m, x):
    return jnp.asarray(x).at if m is jnp else _IndexUpdateHelper(x)


BASIC = [
    0, -1, 2, (1, 2), (-1, -2, -3), (0, 1, 2), slice(1, 3), slice(None, None, 2),
    slice(None, None, -1), slice(3, 0, -2), slice(-2, None), slice(1, 1), slice(10, None),
    None, (None, 1), Ellipsis, (Ellipsis, 0), (0, Ellipsis, None), (slice(None), None, 1),
    (), (slice(None), slice(None, None, -2), 1), (slice(None, None, -1), slice(None, None, -1)),
    (None, Ellipsis, None), (1, slice(1, -1), slice(None, None, 3)),
    (np.int64(1), np.int32(-1)), np.array(2),
]

ADVANCED = [
    np.array([0, 2]), np.array([[0, 1], [1, 2]]), ([0, 1], [1, 2]), (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]), ([0, 1], None, [0, 1]), (None, [0, 1], slice(None), [0, 1]),
    (slice(None), np.array([[0], [1]]), np.array([1, 2, 3])), np.array([-1, 0]),
    (Ellipsis, [0, 2]), (1, [0, 2], slice(None, None, 2)), ([0, 2], slice(None, None, -1), [1, 2]),
    np.array([7, -9]), (slice(1, 3), [3, 0, 1]), ([[0]], [[1, 2]], [[3], [4]]),
    ([], slice(None)), (np.array([True, False, True]),),
    (np.array([[True, False, True, False]] * 3), 1), (slice(None), [1, 1], None),
    (np.array([0, 1])[:, None], slice(2, 4), np.array([0, 2, 4])),
]


def _ids(indices):
    return [repr(i)[:40] for i in indices]


def test_basic_indexing():
    check(lambda m, x: [index(m, x, idx) for idx in BASIC], X)


def test_advanced_indexing():
    check(lambda m, x: [index(m, x, idx) for idx in ADVANCED], X)


def test_indexing_eagerly():
    """A sample of the index expressions above, on concrete arrays."""
    sample = ([BASIC[i] for i in (0, 3, 6, 9, 14, 20, 24)]
              + [ADVANCED[i] for i in (0, 3, 5, 11, 16)])
    check(lambda m, x: [index(m, x, idx) for idx in sample], X, eager=True)
    check(lambda m, x: [getattr(at(m, x)[idx], kind)(v) for idx, v in UPDATES[::3]
                        for kind in ("set", "add")], X, eager=True)


def test_indexing_other_dtypes_and_ranks():
    check(lambda m, a, b, s: [index(m, a, (1, [0, 2])), index(m, b, slice(None, None, -1)),
                              index(m, s, None), index(m, s, ()), index(m, s, Ellipsis)],
          rand((3, 4), np.int32), rand((5,), bool), 2.0)


def test_traced_integer_indices():
    """Traced scalar indices: dynamic_slice, clamped into bounds, negatives wrapped."""
    def fn(m, x, i, j):
        return [x[i], x[i, 1:3], x[:, j], x[i, j], x[-i], x[i, [0, 2]], x[..., j],
                x[i, None, ::-1], x[j, i, i]]
    for i, j in [(1, 2), (-1, -4), (7, -9)]:
        check(fn, X, np.int32(i), np.int32(j))
    check(lambda m, x, i: x[i], X, np.uint8(2))
    check(lambda m, x, idx: [x[idx], x[:, idx], x[idx, idx]], X, np.array([0, -1, 2], np.int32))


def test_traced_index_program_is_lean():
    for fn in (lambda m, x, i: x[i], lambda m, x, i: x[1], lambda m, x, i: x[1:3, ::2],
               lambda m, x, i: x[np.array([0, 2])], lambda m, x, i: x[::-1],
               lambda m, x, i: x[i, 1:3],
               lambda m, x, i: x[None, 0], lambda m, x, i: x.at[1].set(2.0),
               lambda m, x, i: x.at[i, 1:3].add(1.0)):
        ours = traced(fn, X, np.int32(1))
        theirs = jax_traced(fn, X, np.int32(1))
        assert count_eqns(ours) <= count_eqns(theirs), f"{ours}\nJAX:\n{theirs}"


UPDATES = [
    (1, 2.0), (-1, np.arange(5, dtype=np.float32)), ((0, 1), -1.0), (slice(1, 3), 0.5),
    ((slice(None), slice(None, None, 2)), 9.0), ((1, slice(None, None, -1), 2), 3.0),
    (np.array([0, 2]), 7.0), (np.array([0, 0, 2]), 1.0),
    ((slice(None), [1, 3], 0), np.ones((3, 2))),
    ((0, slice(None), [1, 2]), np.ones((2, 4))), ((Ellipsis, 1), 4.0), ((None, 0), 2.0),
    ((slice(None), np.array([[0], [1]]), np.array([1, 2])), 5.0), (10, 1.0),
    (np.array([5, -1]), 3.0), (slice(None), 1.0), ((), 0.0),
]


@pytest.mark.parametrize("kind", ["set", "add"])
def test_at_updates(kind):
    def fn(m, x):
        return [getattr(at(m, x)[idx], kind)(v) for idx, v in UPDATES]
    check(fn, X)


@pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")
def test_at_updates_traced_and_other_dtypes():
    def fn(m, x, xi, i, v):
        return [x.at[i].set(v), x.at[i, :, 1].add(1.0), x.at[-i].add(v),
                xi.at[0].set(2.7), xi.at[np.array([0, 1])].add(3),
                x.at[np.array([1, 1])].add(1.0),
                x.at[i].get(), x.at[1].subtract(v), xi.at[1, 1].set(True)]
    check(fn, X, rand((3, 4), np.int32), np.int32(2), rand((4, 5)))
    check(lambda m, x, w: at(m, x)[0].set(w), rand((3,)), 2.0)  # a weak value into a strong x
    # a sequence of traced values is an array, as JAX's .at takes it
    check(lambda m, x, a, b: [at(m, x)[1:3].set((a, b)), at(m, x)[:2].add([a, 2.0])],
          rand((4,)), np.float32(1.5), np.float32(-2.0))


def test_take():
    def fn(m, x, idx):
        return [m.take(x, idx), m.take(x, idx, axis=1),
                m.take(x, np.array([[0, 4], [-1, 9]]), axis=-1),
                m.take(x, 2, axis=0), m.take(x, idx, axis=2, mode="clip"),
                m.take(x, idx, axis=1, mode="wrap"),
                m.take(x, np.array([7, -1]), axis=1, fill_value=-1.0),
                m.take(x, idx, axis=0, mode="fill")]
    check(fn, X, np.array([0, 2, -1, 5], np.int32))


def test_take_along_axis():
    def fn(m, x, order, small):
        return [m.take_along_axis(x, order, axis=-1), m.take_along_axis(x, small, axis=1),
                m.take_along_axis(x, order[:, :, :2], axis=2),
                m.take_along_axis(x[0], np.array([[0], [-1], [9], [2]]), axis=1),
                m.take_along_axis(x, small, axis=1, mode="clip"),
                m.take_along_axis(x.reshape(-1), order.reshape(-1), axis=None)[:4]]
    order = np.argsort(X, axis=-1).astype(np.int32)
    small = np.zeros((3, 1, 5), np.int32)
    check(fn, X, order, small)
    check(lambda m, x, i: m.take_along_axis(x, i, axis=0), rand((3, 4)),
          np.array([[0, 1, 2, 0]], np.int32))


def test_take_along_axis_defaults_and_negative_indices():
    # axis defaults to the last, as in JAX and NumPy 2; wrap_negative_indices=False makes
    # a negative index out of range (NaN by default, `mode` otherwise)
    def fn(m, x, i):
        return [m.take_along_axis(x, i), m.take_along_axis(x, i, wrap_negative_indices=False),
                m.take_along_axis(x, i, 1, mode="clip", wrap_negative_indices=False),
                m.take_along_axis(x, i, 1, mode="fill", fill_value=-7.,
                                  wrap_negative_indices=False),
                m.take_along_axis(x, i[0], axis=None, wrap_negative_indices=False)]
    check(fn, rand((2, 3)), np.array([[-1, 0, 2], [1, -3, 5]], np.int32), eager=True)
    for m in (minijax.numpy, jnp):  # NumPy's and JAX's rule: a flattened arr takes 1-d indices
        with pytest.raises(ValueError, match="1-?[dD]"):
            m.take_along_axis(X, np.zeros((2, 2), np.int32), axis=None)


# A static int out of range (x[10], x[0, -5]) is clamped, as JAX clamps it unless its
# jax_check_static_indices flag is on: tests/test_eager_leftovers.py pins both.
@pytest.mark.parametrize("idx,error,pattern", [
    ((0, 0, 0, 0), IndexError, "too many indices"),
    (1.5, TypeError, "invalid index"),
    (np.array([1.0]), IndexError, "integers"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    ("a", TypeError, "invalid index"),
    ([0, 1], TypeError, "non-tuple sequence"),
    (True, IndexError, "boolean scalar"),
    (np.array([True, False]), IndexError, "does not match"),
])
def test_index_errors(idx, error, pattern):
    with pytest.raises(error, match=pattern):
        minijax.make_jaxpr(lambda x: x[idx])(X)


def test_traced_slice_bounds_and_masks_need_concrete_values():
    with pytest.raises(IndexError, match="slice"):
        minijax.make_jaxpr(lambda x, i: x[i:i + 2])(X, np.int32(0))
    with pytest.raises(minijax.errors.NonConcreteBooleanIndexError, match="boolean mask"):
        minijax.make_jaxpr(lambda x: x[x > 0])(X)
    # x.at[i].apply traces now (it was a NotImplementedError; see test_numpy_jax_gaps)
    minijax.make_jaxpr(lambda x: x.at[0].apply(lambda v: v + 1))(X)


# -- random index expressions, against NumPy -------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def index_expressions(draw, shape=X.shape):
    """In-bounds NumPy index tuples mixing ints, slices, None, ... and int arrays
    (where NumPy's answer is JAX's)."""
    items, axis = [], 0
    use_ellipsis = draw(st.booleans())
    n_axes = draw(st.integers(0, len(shape)))
    while axis < n_axes:
        n = shape[axis]
        kind = draw(st.sampled_from(["int", "slice", "none", "array"]))
        if kind == "none":
            items.append(None)
            continue
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2])))
            items.append(slice(draw(bound), draw(bound), step))
        else:
            size = draw(st.sampled_from([(2,), (1,), (2, 1), (3,)]))
            items.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(
                np.prod(size)), max_size=int(np.prod(size))))).reshape(size))
        axis += 1
    if use_ellipsis:
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


@settings(max_examples=25, deadline=None)
@given(index_expressions())
def test_random_indices_match_numpy(idx):
    try:
        expected = X[idx]
    except IndexError:  # e.g. arrays whose shapes do not broadcast
        with pytest.raises((IndexError, ValueError)):
            getitem(X, idx)
        return
    np.testing.assert_array_equal(np.asarray(getitem(X, idx)), expected)
    closed = traced(lambda m, x: x[idx], X)
    assert closed.out_avals[0].shape == expected.shape


# -- a concrete jax.Array indexed by a tracer (minijax/numpy/_array_interop.py) -------------

CLOSED_OVER = [
    ("fori_loop_sum", lambda m, xs: m.lax.fori_loop(0, 4, lambda i, c: c + xs[i, 2], 0.0)),
    ("jit_gather", lambda m, xs: m.jit(lambda i: xs[i] * 2.0)(2)),
    ("jit_slice_of_row", lambda m, xs: m.jit(lambda i: xs[i, 1:])(np.int32(1))),
    ("at_set_traced_index", lambda m, xs: m.jit(lambda i: xs.at[i].set(9.0))(1)),
    ("at_add_traced_value", lambda m, xs: m.jit(lambda v: xs.at[2].add(v))(5.0)),
    ("vmap_gather", lambda m, xs: m.vmap(lambda i: xs[i])(np.array([3, 0, 1], np.int32))),
    ("grad_through_gather", lambda m, xs: m.grad(
        lambda s: m.lax.fori_loop(0, 3, lambda i, c: c + xs[i, 0] * s, 0.0))(2.0)),
]


@pytest.mark.parametrize("name", [n for n, _ in CLOSED_OVER])
def test_closed_over_array_indexed_by_a_tracer(name):
    import jax
    program = dict(CLOSED_OVER)[name]
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    ours = program(minijax, minijax.numpy.asarray(table))
    theirs = program(jax, jnp.asarray(table))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))


def test_concrete_indexing_is_still_jaxs_own():
    # Outside minijax's transformations jax.Array keeps its own methods; the hook
    # exists only while a minijax trace runs (tests/test_oracle_integrity.py).
    from minijax.numpy import _array_interop
    table = minijax.numpy.arange(4.0)
    assert float(table[1]) == 1.0 and table.at[0].set(5.0)[0] == 5.0
    assert "_array_interop" not in type(table).__getitem__.__module__
    seen = []
    minijax.jit(lambda i: seen.append(type(table).__getitem__) or table[i])(1)
    assert seen == [_array_interop._getitem]
    assert "_array_interop" not in type(table).__getitem__.__module__


# An `...` standing for no axes still separates the advanced indices around it: NumPy
# then puts their axes first (found by test_random_indices_match_numpy).
EMPTY_ELLIPSIS = [(slice(None), None, np.array([0, 0]), Ellipsis, 0),
                  (slice(None), np.array([2, 0]), Ellipsis, 1),
                  (np.array([0, 1]), Ellipsis, 0, 0), (0, Ellipsis, np.array([1, 1]), 3)]


@pytest.mark.parametrize("idx", EMPTY_ELLIPSIS, ids=str)
def test_empty_ellipsis_between_advanced_indices(idx):
    np.testing.assert_array_equal(np.asarray(getitem(X, idx)), X[idx])
    assert traced(lambda m, x: x[idx], X).out_avals[0].shape == X[idx].shape


def test_refs_refuse_an_empty_ellipsis_that_would_move_array_axes():
    ref = minijax.new_ref(X)
    for idx in EMPTY_ELLIPSIS[2:]:      # the array axes come first either way
        np.testing.assert_array_equal(np.asarray(ref[idx]), X[idx])
    for idx in EMPTY_ELLIPSIS[:2]:
        with pytest.raises(IndexError, match=r"separated only by an empty `\.\.\.`"):
            ref[idx]
        with pytest.raises(IndexError, match="empty"):
            minijax.jit(lambda r: r[idx])(ref)


def test_a_static_index_out_of_range_is_a_dynamic_slice_as_in_jax():
    # JAX reads x[5] of a length-3 axis with a dynamic_slice of constant start 5 (the
    # primitive clamps it); beside other ints and unit-step slices, or a traced index,
    # one dynamic_slice covers the whole operand. (Beside a strided slice JAX gathers;
    # minijax slices, then takes the dynamic_slice: only the values are compared.)
    import jax
    import jax.numpy as jnp
    import minijax
    import minijax.numpy as mnp
    x = np.arange(12., dtype=np.float32).reshape(3, 4)
    cases = [(lambda x, i: x[5], False), (lambda x, i: x[-5], False),
             (lambda x, i: x[1:3, 7], False), (lambda x, i: x[1, i], False),
             (lambda x, i: x[i, 1:3], False), (lambda x, i: x[::2, 9], True)]
    for f, strided in cases:
        mine = minijax.make_jaxpr(f)(x, np.int32(2))
        theirs = jax.make_jaxpr(f)(x, np.int32(2))
        prims = lambda closed: [str(e.primitive) for e in closed.jaxpr.eqns
                                if "slice" in str(e.primitive) or "gather" in str(e.primitive)]
        if not strided:
            assert prims(mine) == prims(theirs), (prims(mine), prims(theirs))
        np.testing.assert_array_equal(minijax.jit(f)(mnp.asarray(x), 2), f(jnp.asarray(x), 2))
        ours = minijax.grad(lambda x: mnp.sum(f(x, 2)))(x)
        jaxs = jax.grad(lambda x: jnp.sum(f(x, 2)))(x)
        if strided:
            # JAX's gather clamps the read, its transposed scatter drops the position:
            # the registered divergence gather_gradient_drops_clamped_index.
            from minijax.divergences import DIVERGENCES_BY_NAME
            assert "gather_gradient_drops_clamped_index" in DIVERGENCES_BY_NAME
            assert not np.any(jaxs)
            jaxs = np.zeros_like(x)
            jaxs[::2, 3] = 1
        np.testing.assert_array_equal(ours, jaxs)
