"""`minijax.ds` on arrays: `x[ds(i, 3)]`, `x[ds(i, 3, 2)]`, `x.at[ds(i, 2)].set(v)`,
differential against JAX 0.10.2 (`jax.ds`): values, dtypes and weak types, under
`jit`, eagerly, under `vmap`, `grad`, `jvp` and `vjp`.

What JAX does with the start (minijax/numpy/_ds_indexing.py says it at length):
reads wrap a negative unit-stride start once and clamp the window, but only when the
rest of the index is basic -- beside an integer array or a strided slice or ds the
start is clamped without the wrap; strided positions are clamped one by one; writes
never wrap and drop what does not fit. Static starts follow the same rules.

The starts are traced arguments, so each group is one program per library however
many starts it is run with.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.numpy._indexing import getitem, _IndexUpdateHelper
from minijax.testing import JAX_VERSION, assert_trees_match, check_jaxpr
from tests.devices import on_cpu
from tests.test_divergences import pins

X = np.arange(8, dtype=np.float32)
XI = np.arange(8, dtype=np.int32)
M = np.arange(20, dtype=np.float32).reshape(4, 5)
T = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
A = np.array([0, 2])
STARTS = [-10, -3, -1, 0, 2, 5, 6, 7, 20]


class _Lib:
    def __init__(self, lib, np_mod):
        self.lib, self.np, self.ds = lib, np_mod, lib.ds


MJ, JX = _Lib(minijax, mnp), _Lib(jax, jnp)


def _one_dim(L, x, xi, i):
    """Every read and update of a 1-D array at ds(i, ...)."""
    ds = L.ds
    return dict(
        reads=(x[ds(i, 3)], x[ds(i, 3, 2)], x[ds(i, 1, 2)], x[ds(i, 0)], x[ds(i, 8)],
               x[ds(i, 5, 2)], xi[ds(i, 3)]),
        gets=(x.at[ds(i, 2)].get(), x.at[ds(i, 2)].get(mode="clip"),
              x.at[ds(i, 3, 2)].get(mode="clip"),
              x.at[ds(i, 2)].get(mode="promise_in_bounds"),
              x.at[ds(i, 2)].get(mode="fill", fill_value=-5.0),
              x.at[ds(i, 3, 2)].get(mode="fill", fill_value=-5.0)),
        writes=(x.at[ds(i, 2)].set(-1.0), x.at[ds(i, 3, 2)].set(-1.0),
                x.at[ds(i, 2)].set(-1.0, mode="clip"), x.at[ds(i, 3, 2)].set(-1.0, mode="clip"),
                x.at[ds(i, 2)].add(L.np.array([10.0, 20.0])), x.at[ds(i, 3, 2)].add(1.0),
                x.at[ds(i, 2)].mul(2.0), x.at[ds(i, 2)].min(-1.0), x.at[ds(i, 2)].max(100.0),
                x.at[ds(i, 2)].subtract(2.0), x.at[ds(i, 2)].divide(2.0),
                x.at[ds(i, 2)].power(2.0), x.at[ds(i, 2)].apply(L.np.sin),
                xi.at[ds(i, 2)].set(7), xi.at[ds(i, 3, 2)].add(1)))


def _mixed(L, m, t, i, j):
    """ds beside ints, static and strided slices, None, `...`, integer arrays and masks.
    Beside `:`, `::-1`, ints, None and `...` a unit start wraps (JAX's dynamic_slice
    route); beside `::2`, arrays, masks or a strided ds it does not (its gather route)."""
    ds = L.ds
    return (m[:, ds(i, 2)], m[1, ds(i, 2)], m[7, ds(i, 2)], m[j, ds(i, 2)], m[None, ds(i, 2)],
            m[..., ds(i, 2)], m[::-1, ds(i, 2)], m[ds(j, 2), ds(i, 2)],
            m[::2, ds(i, 2)], m[A, ds(i, 2)], m[ds(i, 2), A], m[A, ds(i, 2, 2)],
            m[ds(i, 2, 2), A], m[np.array([True, False, True, False]), ds(i, 2)],
            m[ds(j, 2, 2), ds(i, 2)], m[ds(i, 2), None, ::2],
            # NumPy's layout: arrays split by a ds put their axes first, as a slice would
            t[A, ds(i, 2), A], t[A, ds(i, 2, 2), A], t[A, :, ds(i, 3, 2)],
            t[None, 1, ds(i, 2, 2)], t[j, ds(i, 2), ::2], t[ds(i, 2), ds(i, 2, 2), ds(i, 3)],
            t[0, 2:0:-1, ds(i, 2)], t[0, ::-2, ds(i, 2)],
            m.at[A, ds(i, 2)].set(-1.0), m.at[ds(i, 2), A].add(1.0),
            m.at[:, ds(i, 2, 2)].set(-1.0), t.at[A, ds(i, 2), A].set(-1.0),
            m.at[A, ds(i, 2)].get(mode="fill", fill_value=-1.0),
            m.at[:, ds(i, 2)].get(mode="clip"), m.at[::2, ds(i, 2)].get(mode="clip"))


def test_one_dim_traced_starts_match_jax():
    ours = minijax.jit(lambda x, xi, i: _one_dim(MJ, x, xi, i))
    theirs = jax.jit(lambda x, xi, i: _one_dim(JX, x, xi, i))
    for i in STARTS:
        assert_trees_match(ours(X, XI, i), theirs(X, XI, i), what=f"start {i}")


@pytest.mark.skipif(JAX_VERSION >= (0, 11), reason="from JAX 0.11 a static ds start reads a Python slice (registered: jnp_indexing_with_a_static_ds_start_reads_a_python_slice)")
def test_static_starts_match_jax():
    """A Python int start is taken as a traced one would be (nothing is cut short:
    ds(6, 3) of 8 elements reads 5, 6, 7), all starts in one program."""
    def starts(L):
        return lambda x, xi: [_one_dim(L, x, xi, i) for i in (-10, -1, 2, 6, 20)]
    assert_trees_match(minijax.jit(starts(MJ))(X, XI), jax.jit(starts(JX))(X, XI))


@pytest.mark.skipif(JAX_VERSION >= (0, 11), reason="from JAX 0.11 a static ds start reads a Python slice (registered: jnp_indexing_with_a_static_ds_start_reads_a_python_slice)")
def test_mixed_index_items_match_jax():
    ours = minijax.jit(lambda m, t, i, j: _mixed(MJ, m, t, i, j))
    theirs = jax.jit(lambda m, t, i, j: _mixed(JX, m, t, i, j))
    for i, j in [(-7, 1), (-2, -1), (1, 0), (3, 2), (9, -5)]:
        assert_trees_match(ours(M, T, i, j), theirs(M, T, i, j), what=f"starts {i}, {j}")
    static = [(i, j) for i in (-2, 9) for j in (1,)]
    assert_trees_match(
        minijax.jit(lambda m, t: [_mixed(MJ, m, t, i, j) for i, j in static])(M, T),
        jax.jit(lambda m, t: [_mixed(JX, m, t, i, j) for i, j in static])(M, T))


def _text(fn, *args):
    return str(check_jaxpr(minijax.make_jaxpr(fn)(*args)))


def test_static_start_in_range_is_the_static_slice():
    ds = minijax.ds
    pairs = [(lambda x: x[ds(2, 3)], lambda x: x[2:5]),
             (lambda x: x[ds(-3, 3)], lambda x: x[5:8]),
             (lambda x: x[ds(1, 3, 2)], lambda x: x[1:6:2]),
             (lambda x: x.at[ds(2, 3)].set(0.0), lambda x: x.at[2:5].set(0.0)),
             (lambda x: x.at[ds(1, 3, 3)].add(1.0), lambda x: x.at[1:8:3].add(1.0)),
             (lambda x: x.reshape(2, 4)[A[:1], ds(1, 2)],
              lambda x: x.reshape(2, 4)[A[:1], 1:3])]
    for with_ds, with_slice in pairs:
        assert _text(with_ds, X) == _text(with_slice, X)
    # Out of range, a static start is clamped now as a traced one would be at run time.
    assert "slice[limit_indices=(8,) start_indices=(5,)" in _text(lambda x: x[ds(6, 3)], X)


@pytest.mark.skipif(JAX_VERSION >= (0, 11), reason="from JAX 0.11 a static ds start reads a Python slice (registered: jnp_indexing_with_a_static_ds_start_reads_a_python_slice)")
def test_eager_matches_jax():
    """Eagerly, minijax's getitem and `.at` (what a minijax tracer's methods call) and
    `x[minijax.ds(...)]` on a jax.Array, which is JAX's own indexing: a minijax ds is a
    jax.ds object too. Starts are a jax array, a NumPy scalar and a Python int."""
    x = jnp.asarray(X)
    def cases(L, index, at):
        ds = L.ds
        return (index(x, ds(jnp.int32(6), 3)), index(x, ds(np.int32(-2), 3)),
                index(x, ds(2, 3, 2)), at(x)[ds(jnp.int32(7), 2)].set(-1.0),
                at(x)[ds(6, 3, 2)].add(1.0))
    theirs = cases(JX, lambda x, i: x[i], lambda x: x.at)
    assert_trees_match(cases(MJ, getitem, _IndexUpdateHelper), theirs)
    assert_trees_match(cases(MJ, lambda x, i: x[i], lambda x: x.at), theirs)


def test_vmap_matches_jax():
    """A batched start, a batched array, and both."""
    def batched(L, in_axes):
        def one(x, i):
            ds = L.ds
            return (x[ds(i, 3)], x[ds(i, 3, 2)], x.reshape(2, 4)[:, ds(i, 2)],
                    x.reshape(2, 4)[A[:1], ds(i, 2)], x.at[ds(i, 2)].set(-1.0),
                    x.at[ds(i, 3, 2)].add(1.0), x.at[ds(i, 2)].get(mode="fill", fill_value=-5.0))
        return L.lib.jit(L.lib.vmap(one, in_axes=in_axes))
    xs, starts = np.stack([X, -X, X * 2]), np.array([-3, 2, 7], np.int32)
    for in_axes, args in [((None, 0), (X, starts)), ((0, None), (xs, np.int32(-3))),
                          ((0, 0), (xs, starts))]:
        assert_trees_match(batched(MJ, in_axes)(*args), batched(JX, in_axes)(*args),
                           what=f"in_axes {in_axes}")


def _loss(L, x, i, clipped=False):
    """A sum of reads and updates at ds(i, ...). `clipped`: the gathered reads clip
    what is out of range -- the ds beside an array by `.at[...].get(mode='clip')`, the
    strided ds by reading its positions clipped one by one (JAX's clipped strided ds
    promises XLA unique positions that clipping makes collide: the registered
    divergence strided_ds_in_clip_mode_claims_unique_indices)."""
    ds = L.ds
    w = L.np.arange(1.0, 4.0)
    y = x.at[ds(i, 2)].mul(3.0).at[ds(i, 3, 2)].set(0.0)
    if clipped:
        strided = x[L.np.clip(i + 2 * L.np.arange(3), 0, x.shape[0] - 1)]
        beside = x.reshape(2, 4).at[A[:1], ds(i, 2)].get(mode="clip")
    else:
        strided, beside = x[ds(i, 3, 2)], x.reshape(2, 4)[A[:1], ds(i, 2)]
    return ((x[ds(i, 3)] * w).sum() + (y * y).sum()
            + (x.reshape(2, 4)[:, ds(i, 2)] ** 3).sum()
            + (strided ** 2).sum() + (beside ** 2).sum())


def test_grad_jvp_vjp_match_jax():
    """In range, against JAX's `x[...]`. Out of range, the gathered reads (strided
    ds, ds beside an array) are clamped, but JAX's gradient drops the clamped
    positions (the registered divergence gather_gradient_drops_clamped_index):
    there minijax matches JAX's clipped reads of the same positions (`_loss`), the
    gradient of what was read. The dynamic_slice reads match JAX's `x[...]` at every start."""
    grad_ours = minijax.jit(minijax.grad(lambda x, i: _loss(MJ, x, i)))
    jvp_ours = minijax.jit(lambda x, i, t: minijax.jvp(lambda x: _loss(MJ, x, i), (x,), (t,)))
    theirs = {}
    for clipped in (False, True):
        theirs[clipped] = (
            jax.jit(jax.grad(lambda x, i: _loss(JX, x, i, clipped))),
            jax.jit(lambda x, i, t: jax.jvp(lambda x: _loss(JX, x, i, clipped), (x,), (t,))))
    for i in (-3, 1, 2, 7):
        grad_theirs, jvp_theirs = theirs[not 0 <= i <= 2]
        assert_trees_match(grad_ours(X, i), grad_theirs(X, i), what=f"grad at {i}")
        assert_trees_match(jvp_ours(X, i, X + 1), jvp_theirs(X, i, X + 1), what=f"jvp at {i}")

    def pulled(L):
        def fn(x, i):
            y, pull = L.lib.vjp(lambda x: (x[L.ds(i, 3)], x.at[L.ds(i, 3, 2)].set(1.0)), x)
            return y, pull((L.np.ones(3), L.np.arange(8.0)))
        return L.lib.jit(fn)
    for i in (-3, 2, 7):
        assert_trees_match(pulled(MJ)(X, i), pulled(JX)(X, i), what=f"vjp at {i}")


@pins("strided_ds_in_clip_mode_claims_unique_indices")
def test_clipped_strided_ds_unique_indices_divergence():
    """Registered: JAX marks a clipped strided ds gather/scatter unique_indices=True;
    clipping ds(7, 3, 2) reads x[7] three times, and JAX's gradient keeps one."""
    loss = lambda L: lambda x, i: (x.at[L.ds(i, 3, 2)].get(mode="clip") ** 2).sum()  # noqa: E731
    for staged in (jax.make_jaxpr(jax.grad(loss(JX)))(X, 7),
                   jax.make_jaxpr(lambda x, i: x.at[jax.ds(i, 3, 2)].add(1.0, mode="clip"))(X, 7)):
        claims = [e.params["unique_indices"] for e in staged.eqns if "unique_indices" in e.params]
        assert claims and all(claims)
    intended = np.zeros(8, np.float32)
    intended[7] = 42.0       # three reads of x[7] = 7, each adding 2 * 7
    with on_cpu():
        eager = jax.grad(loss(JX))(X, 7)
    assert_trees_match(eager, intended / 3 if JAX_VERSION >= (0, 11) else intended)
    through_an_index_array = jax.grad(
        lambda x, i: (x.at[i + 2 * jnp.arange(3)].get(mode="clip") ** 2).sum())(X, 7)
    assert_trees_match(through_an_index_array, intended)
    assert_trees_match(minijax.grad(loss(MJ))(X, 7), intended)
    assert_trees_match(minijax.jit(minijax.grad(loss(MJ)))(X, 7), intended)
    assert not any("unique_indices" in str(e.params)
                   for e in minijax.make_jaxpr(minijax.grad(loss(MJ)))(X, 7).eqns)
    # minijax's scatter adds all three on every backend (JAX's adds one on a GPU)
    added = minijax.jit(lambda x, i: x.at[minijax.ds(i, 3, 2)].add(1.0, mode="clip"))
    assert_trees_match(added(np.zeros(8, np.float32), 7), np.eye(8, dtype=np.float32)[7] * 3)


ERRORS = {
    "traced size": lambda L: lambda x, i: x[L.ds(1, i)],
    "traced size, .at": lambda L: lambda x, i: x.at[L.ds(1, i)].set(0.0),
    "float size": lambda L: lambda x, i: x[L.ds(i, 2.0)],
    "negative size": lambda L: lambda x, i: x[L.ds(i, -1)],
    "size beyond the axis": lambda L: lambda x, i: x[L.ds(i, 9)],
    "size beyond the axis, .at": lambda L: lambda x, i: x.at[L.ds(i, 9)].add(1.0),
    "float start": lambda L: lambda x, i: x[L.ds(i * 1.5, 2)],
    "static float start": lambda L: lambda x, i: x[L.ds(1.5, 2)],
    "bool start": lambda L: lambda x, i: x[L.ds(i > 0, 2)],
    "array start": lambda L: lambda x, i: x[L.ds(L.np.array([i, i]), 2)],
}


def test_a_ds_that_jax_built_is_taken_as_minijaxs():
    """`x[jax.ds(i, 3)]` and `x.at[jax.ds(i, 2)]` with JAX's own ds object, under
    minijax's jit, vmap and grad, against JAX."""
    def f(lib, np_lib):
        def g(x, i):
            return (x[jax.ds(i, 3)], x.at[jax.ds(i, 2)].add(1.0),
                    lib.grad(lambda x: np_lib.sum(x[jax.ds(i, 2)] ** 2))(x), x[jax.ds(i, 2, 2)])
        return g
    for i in (1, 6, -1):
        assert_trees_match(minijax.jit(f(minijax, mnp))(X, i), jax.jit(f(jax, jnp))(X, i))
    starts, xs = np.array([0, 3, 7], np.int32), jnp.asarray(X)  # a closed-over jax.Array
    assert_trees_match(minijax.vmap(lambda i: xs[jax.ds(i, 3)])(starts),
                       jax.vmap(lambda i: xs[jax.ds(i, 3)])(starts))


def test_errors_are_jaxs_type():
    for name, fn in ERRORS.items():
        for L in (JX, MJ):
            with pytest.raises(TypeError):
                L.lib.make_jaxpr(fn(L))(X, 1)
                pytest.fail(f"{L.lib.__name__}: no error for {name}")


def test_float_start_in_an_update_is_refused():
    """JAX's `.at[ds(1.5, 2)].set(v)` truncates the start to 1 where its x[...]
    refuses a float start; minijax refuses both (a start is a position)."""
    assert np.asarray(jax.jit(lambda x: x.at[jax.ds(1.5, 2)].set(-1.0))(X))[1] == -1.0
    for fn in (lambda x: x.at[minijax.ds(1.5, 2)].set(-1.0),
               lambda x: x.at[minijax.ds(x[0] + 1.5, 2, 2)].add(1.0)):
        with pytest.raises(TypeError, match="start of minijax.ds must be an integer"):
            minijax.make_jaxpr(fn)(X)


@pins("jnp_indexing_with_a_static_ds_start_reads_a_python_slice")
def test_a_static_ds_start_on_newer_jax():
    x = jnp.asarray(X)
    theirs = jax.jit(lambda x: (x[jax.ds(6, 3)], x[jax.ds(-2, 3)], x[jax.ds(2, 3, 2)]))(x)
    if JAX_VERSION >= (0, 11):
        assert [len(part) for part in theirs] == [2, 0, 2]
        with pytest.raises(AssertionError):
            x[jax.ds(jnp.int32(6), 3)]
    else:
        assert_trees_match(theirs, (X[5:], X[5:], X[2:7:2]))
    # JAX's traced start reads `size` elements on every version, as minijax does
    assert_trees_match(jax.jit(lambda x, i: x[jax.ds(i, 3)])(x, 6), X[5:])
    ours = minijax.jit(lambda x: (x[minijax.ds(6, 3)], x[minijax.ds(-2, 3)],
                                  x[minijax.ds(2, 3, 2)]))(x)
    assert_trees_match(ours, (X[5:], X[5:], X[2:7:2]))


def test_the_array_hook_leaves_jax_its_own_ds_indexing():
    """With minijax imported, an eager jax.Array indexed by a ds minijax refuses (JAX's
    stride 0) is still JAX's to index: the hook only looks for tracers inside it."""
    from minijax.numpy._array_interop import _holds_tracer
    assert not _holds_tracer((jax.ds(1, 3, 0),))
    if JAX_VERSION < (0, 11):    # later JAX reads a static ds as a Python slice (registered)
        np.testing.assert_array_equal(jnp.asarray(X)[jax.ds(1, 3, 0)], [1, 1, 1])


def test_a_closed_over_jax_array_takes_a_traced_ds():
    """`xs[ds(i, 3)]` of a concrete jax.Array closed over by a traced body reaches
    minijax's indexing (the hook of `_array_interop.py`), as `xs[i]` does."""
    xs = jnp.asarray(X)

    def program(L):
        def window(i):
            return L.np.sum(xs[L.ds(i, 3)] ** 2) + xs.at[L.ds(i, 2)].add(1.0)[i]

        def loop(n):
            return L.lib.lax.fori_loop(0, n, lambda k, c: c + xs[L.ds(k, 2)], xs[:2] * 0)
        return lambda starts: (L.lib.vmap(window)(starts), loop(starts[0] + 4))
    starts = np.array([0, 2, 7], np.int32)
    assert_trees_match(minijax.jit(program(MJ))(starts), jax.jit(program(JX))(starts))
