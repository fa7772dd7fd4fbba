"""The combining scatters against JAX: `x.at[idx].multiply/mul/divide/power/min/max`
and `lax.scatter_mul/min/max` -- under jit, in the reference evaluator, with repeated
and out-of-bounds indices, under jvp, grad, vmap (operand, updates, indices, all)
and grad-of-vmap."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax import lax as mlax
from minijax.backends.reference import eval_closed_jaxpr
from minijax.testing import assert_trees_match

RNG = np.random.default_rng(2)
TOL = dict(rtol=1e-5, atol=1e-5)
METHODS = ["multiply", "mul", "divide", "power", "min", "max"]
IDX = np.array([1, 3])


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def update(jnp, method, x, idx, values, **kwargs):
    x = jnp.asarray(x)
    if method == "power":
        x = jnp.abs(x) + 0.5           # a real power of a positive base
    # JAX differentiates scatter_mul only when told the indices are unique.
    unique = {"unique_indices": True} if method in ("multiply", "mul", "divide",
                                                    "power") else {}
    return getattr(x.at[idx], method)(values, **unique, **kwargs)


def both(fn):
    return (lambda *a: fn(mjnp, *a)), (lambda *a: fn(jjnp, *a))


def check_values(fn, *args, **tol):
    ours, theirs = both(fn)
    expected = jax.jit(theirs)(*args)
    assert_trees_match(minijax.jit(ours)(*args), expected, **(tol or TOL))
    closed = minijax.make_jaxpr(ours)(*args)
    assert_trees_match(list(eval_closed_jaxpr(closed, *args)),
                       [np.asarray(e) for e in jax.tree_util.tree_leaves(expected)],
                       check_weak_types=False, **(tol or TOL))


@pytest.mark.parametrize("method", METHODS)
def test_at_methods(method):
    x, v = randn(5, 3), randn(2, 3)
    fn = lambda jnp, x, v: update(jnp, method, x, IDX, v)  # noqa: E731
    check_values(fn, x, v)
    ours, theirs = both(fn)
    tx, tv = randn(5, 3), randn(2, 3)
    xs, vs = np.stack([x, 2 * x, x - 1]), np.stack([v, -v, 0.5 * v])

    def every_transform(api, f):
        """jvp, grad, and vmap and grad-of-vmap over each operand, as one program per
        library (a compile per transform costs more than the transforms)."""
        def run(x, v, tx, tv, xs, vs):
            results = {"jvp": api.jvp(f, (x, v), (tx, tv)),
                       "grad": api.grad(lambda *a: (f(*a) ** 2).sum(), (0, 1))(x, v)}
            for in_axes, args in (((0, None), (xs, v)), ((None, 0), (x, vs)),
                                  ((0, 0), (xs, vs))):
                mapped = api.vmap(f, in_axes)
                results[f"vmap{in_axes}"] = mapped(*args)
                results[f"grad(vmap{in_axes})"] = api.grad(
                    lambda *a: (mapped(*a) ** 2).sum(), (0, 1))(*args)
            return results
        return run
    args = (x, v, tx, tv, xs, vs)
    assert_trees_match(minijax.jit(every_transform(minijax, ours))(*args),
                       jax.jit(every_transform(jax, theirs))(*args), **TOL)


@pytest.mark.parametrize("method", ["multiply", "min", "max"])
def test_batched_indices(method):
    x, v = randn(5, 3), randn(2, 3)
    idx = np.array([[0, 2], [4, 4], [1, 3]])
    fn = lambda jnp, x, i, v: getattr(jnp.asarray(x).at[i], method)(v)  # noqa: E731
    ours, theirs = both(fn)
    for in_axes, args in (((None, 0, None), (x, idx, v)),
                          ((0, 0, None), (np.stack([x, -x, x]), idx, v))):
        assert_trees_match(minijax.jit(minijax.vmap(ours, in_axes))(*args),
                           jax.jit(jax.vmap(theirs, in_axes))(*args), **TOL)


@pytest.mark.parametrize("method", ["min", "max"])
def test_repeated_indices_and_ties_min_max(method):
    # Repeated indices and ties with the operand: JAX averages the tangents of every
    # contender that attains the result.
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    v = np.array([2.0, 5.0, 0.5, 2.0, 4.0], np.float32)
    idx = np.array([1, 1, 2, 1, 3])
    fn = lambda jnp, x, v: getattr(jnp.asarray(x).at[idx], method)(v)  # noqa: E731
    check_values(fn, x, v)
    ours, theirs = both(fn)
    weights = np.arange(1, 5, dtype=np.float32)
    assert_trees_match(minijax.grad(lambda x, v: (ours(x, v) * weights).sum(), (0, 1))(x, v),
                       jax.jit(jax.grad(lambda x, v: (theirs(x, v) * weights).sum(), (0, 1)))(
                           x, v))


def test_repeated_indices_multiply_gradient_is_exact():
    # JAX raises for this gradient (scatter_mul w.r.t. updates needs unique indices);
    # minijax's is compared with the same product applied one update at a time.
    x = randn(4, 2)
    v = randn(5, 2)
    v[0, 0] = 0.0                        # a zero among repeated updates ...
    v[1, 1] = v[3, 1] = 0.0              # ... and two zeros at one element
    idx = np.array([1, 1, 2, 1, 0])

    def one_at_a_time(x, v):
        for k, i in enumerate(idx):
            x = x.at[i].multiply(v[k])
        return x
    ours = lambda x, v: mjnp.asarray(x).at[idx].multiply(v)  # noqa: E731
    assert_trees_match(minijax.jit(ours)(x, v), one_at_a_time(jjnp.asarray(x), v), **TOL)
    loss = lambda f: lambda x, v: (f(x, v) ** 2).sum()  # noqa: E731
    assert_trees_match(minijax.jit(minijax.grad(loss(ours), (0, 1)))(x, v),
                       jax.jit(jax.grad(loss(one_at_a_time), (0, 1)))(x, v), **TOL)


@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_out_of_bounds_modes(mode):
    x, v = randn(4), randn(3)
    idx = np.array([0, 7, -1])
    # every method in one program per library (a compile each costs more than they do)
    check_values(lambda jnp, x, v: tuple(getattr(jnp.asarray(x).at[idx], method)(
        v, mode=mode) for method in ("multiply", "min", "max")), x, v)


def test_integer_dtypes_and_whole_array_updates():
    xi = np.arange(10, dtype=np.int32).reshape(5, 2)

    def updates(jnp, x):       # every case in one program per library
        x = jnp.asarray(x)
        out = [x.at[np.array([0, 0, 1])].multiply(np.array([2, 3, 4], np.int32)[:, None])]
        for method in ("multiply", "min", "max", "divide"):
            out += [getattr(x.at[1:3], method)(3), getattr(x.at[...], method)(4)]
        return tuple(out)
    check_values(updates, xi)


@pytest.mark.parametrize("name", ["scatter_mul", "scatter_min", "scatter_max"])
def test_lax_scatter_variants(name):
    operand, updates = randn(3, 4), randn(2, 4)
    indices = np.array([[2], [0]], np.int32)

    def fn(lax):
        dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,),
                                            inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
        return lambda o, u: getattr(lax, name)(o, indices, u, dnums)
    ours, theirs = fn(mlax), fn(jax.lax)
    assert_trees_match(minijax.jit(ours)(operand, updates), theirs(operand, updates))
    text = str(minijax.make_jaxpr(ours)(operand, updates))
    assert f"{name}[" in text


def test_scatter_mul_is_linear_in_the_operand():
    # linearize w.r.t. the operand alone stages one scatter_mul, which transposes.
    x, v = randn(5), randn(2)
    f = lambda x: mjnp.asarray(x).at[IDX].multiply(v)  # noqa: E731
    _, f_lin = minijax.linearize(f, x)
    t = randn(5)
    assert_trees_match(f_lin(t), jjnp.asarray(t).at[IDX].multiply(v), **TOL)
    ct = randn(5)
    assert_trees_match(minijax.vjp(f, x)[1](ct),
                       jax.vjp(lambda x: jjnp.asarray(x).at[IDX].multiply(v), x)[1](ct),
                       **TOL)


def test_apply_matches_jax():
    # Was refused (NotImplementedError); JAX applies the function once per update.
    x, idx = randn(3), np.array([0, 2, 0])
    assert_trees_match(minijax.jit(lambda x: x.at[idx].apply(lambda y: y + 1))(x),
                       jjnp.asarray(x).at[idx].apply(lambda y: y + 1), **TOL)


# -- lax.gather's fill_value, and the index hints gathers and scatters take ----------------

_ROWS = np.arange(12.).reshape(3, 4).astype(np.float32)
_STARTS = np.array([[0, 0], [2, 3], [1, 2], [-1, 0], [2, 2]], np.int32)  # two out of bounds


def _gather_pairs(lib, x, starts, **kwargs):
    d = lib.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                       start_index_map=(0, 1))
    return lib.lax.gather(x, starts, d, (1, 2), **kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(mode="fill", fill_value=-5.), dict(mode="fill"), dict(mode="clip", fill_value=-5.),
    dict(mode="fill", fill_value=2, indices_are_sorted=True, unique_indices=True)])
def test_gather_fill_value_and_hints_as_jax(kwargs):
    expected = _gather_pairs(jax, _ROWS, _STARTS, **kwargs)
    assert_trees_match(_gather_pairs(minijax, _ROWS, _STARTS, **kwargs), expected)
    assert_trees_match(minijax.jit(lambda x, i: _gather_pairs(minijax, x, i, **kwargs))(
        _ROWS, _STARTS), expected)
    assert_trees_match(minijax.vmap(lambda i: _gather_pairs(minijax, _ROWS, i, **kwargs))(
        _STARTS[None]), expected[None])
    if kwargs["mode"] == "fill":  # (clip: registered gather_gradient_drops_clamped_index)
        grad = lambda lib: lib.grad(lambda x: _gather_pairs(lib, x, _STARTS, **kwargs).sum())
        assert_trees_match(grad(minijax)(_ROWS), grad(jax)(_ROWS))


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_min",
                                  "scatter_max"])
def test_scatters_take_the_index_hints(name):
    def run(lib):
        d = lib.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
        return getattr(lib.lax, name)(_ROWS[0], np.array([[1], [3]]), np.array([5., 6.],
                                      np.float32), d, indices_are_sorted=True,
                                      unique_indices=True)
    assert_trees_match(run(minijax), run(jax))


@pytest.mark.parametrize("method", ["add", "set", "min", "max", "multiply"])
def test_dropped_updates_get_zero_cotangents(method):
    # An update written out of bounds is dropped, so its cotangent is 0; minijax's
    # transpose read it with a 'fill' gather, whose fill is NaN (JAX fills with 0).
    x, v = randn(5, 3), randn(3, 2)
    idx = np.array([1, 7, -9])              # 7 and -9 (after counting from the end) miss
    fn = lambda jnp, x, v: update(jnp, method, x, (idx, slice(1, 3)), v)  # noqa: E731
    ours, theirs = both(fn)
    weights = np.arange(15, dtype=np.float32).reshape(5, 3)
    grads = [lib.jit(lib.grad(lambda x, v: (f(x, v) * weights).sum(), (0, 1)))(x, v)
             for lib, f in ((minijax, ours), (jax, theirs))]
    assert_trees_match(*grads, **TOL)
    assert not np.isnan(np.asarray(grads[0][1])).any()
    batched = [lib.jit(lib.vmap(lib.grad(lambda x, v: f(x, v).sum(), 1), (None, 0)))(
        x, np.stack([v, 2 * v])) for lib, f in ((minijax, ours), (jax, theirs))]
    assert_trees_match(*batched, **TOL)
