"""The rest of `jax.lax` against JAX: top_k and optimization_barrier (primitives), and
associative_scan, cumlogsumexp, reduce, split, tile, stack, ... (compositions) --
values, dtypes and weak types eagerly and under jit, grad/jvp where differentiable,
vmap, and JAX's errors for bad input."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.numpy_helpers import check, assert_values_close
from tests.test_divergences import pins

rng = np.random.default_rng(11)
X = rng.normal(size=(3, 5)).astype(np.float32)
V = rng.normal(size=(7,)).astype(np.float32)
TIES = np.array([[1.0, np.nan, 3.0, -np.inf, np.nan, 3.0],
                 [0.0, -0.0, 0.0, 2.0, 2.0, -1.0]], np.float32)
INTS = rng.integers(-50, 50, size=(4, 3)).astype(np.int32)
U32 = np.array([0, 1, 2**31, 2**32 - 1, 123456789, 987654321], np.uint32)


def _lax(np_):
    return jax.lax if np_ is jnp else mlax


VALUE_CASES = {
    "top_k": (lambda np_, x, t, i: (_lax(np_).top_k(x, 2), _lax(np_).top_k(x, 3, axis=0),
                                    _lax(np_).top_k(t, 4), _lax(np_).top_k(i, 2, axis=-2),
                                    _lax(np_).top_k(x, 0)), (X, TIES, INTS)),
    "approx_k": (lambda np_, x: (_lax(np_).approx_max_k(x, 2),
                                 _lax(np_).approx_min_k(x, 3, reduction_dimension=0),
                                 _lax(np_).approx_min_k(x, 1, recall_target=0.5)), (X,)),
    "barrier": (lambda np_, x, v: _lax(np_).optimization_barrier((x, {"v": v * 2}, 3.0)),
                (X, V)),
    "associative_scan": (lambda np_, x, v: (
        _lax(np_).associative_scan(_lax(np_).add, v),
        _lax(np_).associative_scan(_lax(np_).mul, x, axis=1),
        _lax(np_).associative_scan(_lax(np_).max, x, reverse=True, axis=1),
        _lax(np_).associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (v, v),
                                   reverse=True)), (X, V)),
    "cumlogsumexp": (lambda np_, x, v: (
        _lax(np_).cumlogsumexp(x), _lax(np_).cumlogsumexp(x, axis=1, reverse=True),
        _lax(np_).cumlogsumexp(np_.array([-np.inf, -np.inf, 0.0, np.inf, 1.0], np.float32))),
        (X, V)),
    "reduce_monoids": (lambda np_, x, i: (
        _lax(np_).reduce(x, 0.0, _lax(np_).add, (0,)),
        _lax(np_).reduce(x, np.float32(1), _lax(np_).mul, (1,)),
        _lax(np_).reduce(x, -np.inf, _lax(np_).max, (0, 1)),
        _lax(np_).reduce(i, np.int32(2**31 - 1), _lax(np_).min, (1,)),
        _lax(np_).reduce(i, np.int32(0), _lax(np_).bitwise_or, (0,)),
        _lax(np_).reduce(i, np.int32(-1), _lax(np_).bitwise_and, (0,)),
        _lax(np_).reduce(i > 0, True, _lax(np_).bitwise_and, (1,))), (X, INTS)),
    "reduce_generic": (lambda np_, x, v: (
        _lax(np_).reduce(x, 1.0, _lax(np_).add, (0,)),
        _lax(np_).reduce(v, 0.0, lambda a, b: _lax(np_).max(a, b) + 0.0 * b, (0,)),
        _lax(np_).reduce((x, x * 2), (0.0, -np.inf),
                         lambda a, b: (a[0] + b[0], _lax(np_).max(a[1], b[1])), (1,)),
        _lax(np_).reduce(x[:0], 0.5, lambda a, b: a * b, (0,))), (X, V)),
    "reduce_xor": (lambda np_, i: (_lax(np_).reduce_xor(i, (0,)),
                                   _lax(np_).reduce_xor(i > 0, (0, 1))), (INTS,)),
    "split_tile_stack": (lambda np_, x: (
        _lax(np_).split(x, [1, 0, 2], axis=0), _lax(np_).split(x, [4, 1], axis=-1),
        _lax(np_).tile(x, (2, 3)), _lax(np_).tile(x, (1, 0)),
        _lax(np_).stack([x, 2 * x, x]), _lax(np_).stack([x, x], axis=-1),
        _lax(np_).unstack(x), _lax(np_).unstack(x, axis=1)), (X,)),
    "shapes": (lambda np_, x: (
        _lax(np_).collapse(x[None], 0, 2), _lax(np_).collapse(x, 0),
        _lax(np_).collapse(x[None, :, :, None], 1, -1),
        _lax(np_).broadcast_to_rank(x, 4), _lax(np_).broadcast_to_rank(x, 2),
        _lax(np_).broadcast_like(x, np.zeros((2, 3, 5))), _lax(np_).broadcast_like(x, x),
        _lax(np_).broadcast_like(x[:1], np.zeros((4, 3, 5), np.int8)),
        _lax(np_).batch_matmul(np_.stack([x, x]), np_.stack([x.T, 2 * x.T]))), (X,)),
    "index_take": (lambda np_, x, i: (
        _lax(np_).index_take(x, (np.array([0, 2, -1], np.int32),), (0,)),
        _lax(np_).index_take(x, (np.array([0, 2, -1]), np.array([1, 7, 4])), (0, 1)),
        _lax(np_).index_take(i, (np.array([5, 1], np.int32),), (1,))), (X, INTS)),
    "scatter_sub_apply": (lambda np_, x: (
        _lax(np_).scatter_sub(x, np.array([[0], [2], [0]]), np.ones((3, 5), np.float32),
                              _lax(np_).ScatterDimensionNumbers((1,), (0,), (0,))),
        _lax(np_).scatter_apply(x, np.array([[1], [2]]), lambda v: v * 10,
                                _lax(np_).ScatterDimensionNumbers((1,), (0,), (0,)),
                                update_shape=(2, 5))), (X,)),
    "bits_and_empty": (lambda np_, i: (
        _lax(np_).clz(i), _lax(np_).clz(np.array([0, 1, 255, 128], np.uint8)),
        _lax(np_).clz(np.array([0, 1, 2**31 - 1], np.int32)),
        _lax(np_).clz(np.array([1, 2**16], np.uint32)),
        # `empty`'s contents are unspecified (on a GPU, what the memory held): its type only
        np_.zeros_like(_lax(np_).empty((2, 3), np.float32)), _lax(np_).empty((0,), np.int32)),
        (INTS,)),
    "reduce_precision": (lambda np_, x: (
        _lax(np_).reduce_precision(x * 1000, 5, 10), _lax(np_).reduce_precision(x, 8, 7),
        _lax(np_).reduce_precision(x * 1e5, 4, 2), _lax(np_).reduce_precision(2.3, 5, 2),
        _lax(np_).reduce_precision(x.astype(np.float16), 4, 3)), (X,)),
    "mulhi": (lambda np_, i, u: (
        _lax(np_).mulhi(i, i[::-1] * 40000000), _lax(np_).mulhi(u, u[::-1]),
        _lax(np_).mulhi(i.astype(np.int8), (i * 3).astype(np.int8)),
        _lax(np_).mulhi(u.astype(np.uint16), np.uint16(65535))), (INTS, U32)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_jax(name):
    fn, args = VALUE_CASES[name]
    check(fn, *args, eager=True, rtol=1e-5, atol=1e-6)


def test_weak_types_of_python_scalar_operands():
    def fn(np_, s):
        row = _lax(np_).broadcast(s, (3,))
        return (_lax(np_).reduce(row, 0.0, _lax(np_).add, (0,)),
                _lax(np_).reduce(row, 1.0, lambda a, b: a * b + 0.0, (0,)),
                _lax(np_).optimization_barrier(s), _lax(np_).top_k(row, 1),
                _lax(np_).broadcast_like(s, row), _lax(np_).broadcast_like(s, 1.0),
                _lax(np_).associative_scan(_lax(np_).add, row))
    check(fn, 2.5, eager=True)


def test_names_and_broadcast_shapes_match_jax():
    assert mlax.GatherScatterMode.FILL_OR_DROP is jax.lax.GatherScatterMode.FILL_OR_DROP
    assert mlax.DotDimensionNumbers == jax.lax.DotDimensionNumbers
    for shapes in [((2, 1), (3,)), ((), (4, 1, 2)), ((5,),), ((0, 1), (1, 3))]:
        assert mlax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)
    for lax in (jax.lax, mlax):
        with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
            lax.broadcast_shapes((2,), (3,))
    x = mnp.arange(6.0)
    assert_values_close(x.at[np.array([7])].get(mode=mlax.GatherScatterMode.FILL_OR_DROP,
                                               fill_value=-1.0),
                        jnp.arange(6.0).at[np.array([7])].get(
                            mode=jax.lax.GatherScatterMode.FILL_OR_DROP, fill_value=-1.0))


GRAD_CASES = {
    "top_k": lambda np_, x: np_.sum(_lax(np_).top_k(x, 2)[0] ** 2),
    "top_k_axis0_ties": lambda np_, x: np_.sum(
        _lax(np_).top_k(np_.round(x), 2, axis=0)[0] * np_.arange(5.0)),
    "approx_min_k": lambda np_, x: np_.sum(np_.sin(_lax(np_).approx_min_k(x, 2)[0])),
    "barrier": lambda np_, x: np_.sum(_lax(np_).optimization_barrier((np_.sin(x), x))[0] * x),
    "associative_scan": lambda np_, x: np_.sum(
        _lax(np_).associative_scan(_lax(np_).mul, x, axis=1) ** 2),
    "cumlogsumexp": lambda np_, x: np_.sum(
        _lax(np_).cumlogsumexp(x, axis=1, reverse=True) * np_.arange(5.0)),
    "reduce_monoid": lambda np_, x: np_.sum(_lax(np_).reduce(x, -np.inf, _lax(np_).max, (1,))),
    "reduce_generic": lambda np_, x: np_.sum(
        _lax(np_).reduce(x, 1.0, _lax(np_).mul, (0,)) * 0.0
        + _lax(np_).reduce(x, 0.0, _lax(np_).add, (0, 1))),
    "split_tile_stack": lambda np_, x: np_.sum(
        _lax(np_).split(x, [2, 3], 1)[1] ** 2) + np_.sum(_lax(np_).tile(x, (2, 1)) * 3)
    + np_.sum(_lax(np_).stack([x, x * x], 1)) + _lax(np_).unstack(x)[1][2],
    "shapes": lambda np_, x: np_.sum(_lax(np_).batch_matmul(x[None], x.T[None]))
    + np_.sum(_lax(np_).collapse(x, 0) ** 3) + np_.sum(_lax(np_).broadcast_to_rank(x, 3)),
    "reduce_precision": lambda np_, x: np_.sum(
        _lax(np_).reduce_precision(np_.sin(x) * 3, 5, 3) ** 2),
    "index_take": lambda np_, x: np_.sum(
        _lax(np_).index_take(x, (np.array([0, 0, -1]), np.array([1, 1, 2])), (0, 1)) ** 2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_jax(name):
    loss = GRAD_CASES[name]
    t = np.cos(X)
    # JAX's side as one jitted program (the comparisons have a tolerance): eagerly it
    # compiled a program per operation of its grad and jvp.
    expected, expected_jvp = jax.jit(lambda x, t: (
        jax.grad(lambda x: loss(jnp, x))(x), jax.jvp(lambda x: loss(jnp, x), (x,), (t,))))(X, t)
    assert_values_close(minijax.grad(lambda x: loss(mnp, x))(X), expected, 1e-4, 1e-5)
    assert_values_close(minijax.jit(minijax.grad(lambda x: loss(mnp, x)))(X), expected,
                        1e-4, 1e-5)
    assert_values_close(minijax.jvp(lambda x: loss(mnp, x), (X,), (t,)), expected_jvp,
                        1e-4, 1e-5)


def test_vmap_matches_jax():
    def run(api, lax):
        return (api.vmap(lambda x: lax.top_k(x, 2), in_axes=1)(X),
                api.vmap(lambda x: lax.top_k(x, 1, axis=0), in_axes=0)(X[:, :, None]),
                api.vmap(lambda x: lax.optimization_barrier((x, 1.0)), in_axes=1)(X),
                api.vmap(lambda x: lax.cumlogsumexp(x), in_axes=1)(X),
                api.vmap(lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (0,)))(X),
                api.vmap(lambda x: lax.split(x, [2, 1]))(X[:, :3]),
                api.vmap(lambda x: lax.tile(x, (3,)), in_axes=1)(X),
                api.vmap(lambda x: lax.index_take(x, (np.array([1, 0]),), (0,)))(X),
                api.vmap(lambda x: lax.reduce_precision(x * 7, 4, 2), in_axes=1)(X),
                api.vmap(api.grad(lambda x: lax.top_k(x, 2)[0].sum() * 2))(X))
    # JAX's side as one jitted program (compared to a tolerance)
    assert_values_close(run(minijax, mlax), jax.jit(lambda: run(jax, jax.lax))(), 1e-5, 1e-6)


def test_barrier_in_a_linearized_program_is_linear():
    f = lambda lax, x: lax.optimization_barrier(x * x)  # noqa: E731
    out, pullback = minijax.vjp(lambda x: f(mlax, x), X)
    expected_out, jax_pullback = jax.vjp(lambda x: f(jax.lax, x), X)
    assert_values_close((out, pullback(X)), (expected_out, jax_pullback(X)), 1e-5, 1e-6)
    assert "optimization_barrier" in str(minijax.make_jaxpr(
        minijax.grad(lambda x: mnp.sum(f(mlax, x))))(X))


@pytest.mark.parametrize("is_stable", [True, False])
def test_top_k_prints_and_reference_runs(is_stable):
    f = lambda lax, x: lax.top_k(x, 2, axis=0, is_stable=is_stable)  # noqa: E731
    closed = minijax.make_jaxpr(lambda x: f(mlax, x))(X)
    # minijax prints the param JAX 0.11 added, as that JAX does (jax 0.10 has no is_stable)
    assert f"top_k[axis=0 is_stable={is_stable} k=2]" in str(closed)
    if JAX_VERSION >= (0, 11):
        assert f"top_k[axis=0 is_stable={is_stable} k=2]" in str(
            jax.make_jaxpr(lambda x: f(jax.lax, x))(X))
    from minijax.backends.reference import eval_closed_jaxpr
    expected = jax.lax.top_k(X, 2, axis=0)  # X has no ties, so stable or not agree
    assert_values_close(eval_closed_jaxpr(closed, X), expected)
    assert_values_close(minijax.jit(lambda x: f(mlax, x))(X), expected)


@pytest.mark.parametrize("call, error, message", [
    (lambda lax: lax.top_k(X, 6), ValueError, "no larger than size along axis"),
    (lambda lax: lax.top_k(X, -1), ValueError, "must be nonnegative"),
    (lambda lax: lax.top_k(X.astype(np.complex64), 1), ValueError, "complex"),
    (lambda lax: lax.top_k(X, 1, axis=2), ValueError, "out of bounds"),
    (lambda lax: lax.associative_scan(3, X), TypeError, "should be callable"),
    (lambda lax: lax.associative_scan(lax.add, (X, V)), ValueError, "same first dimension"),
    (lambda lax: lax.reduce((X, X), (0.0,), lax.add, (0,)), ValueError, "tree structure"),
    (lambda lax: lax.reduce(X, np.int32(0), lambda a, b: a * b, (0,)), TypeError,
     "should match corresponding initial value dtypes"),
    (lambda lax: lax.reduce_xor(X, (0,)), TypeError, "float32"),
    (lambda lax: lax.split(X, [1, 1]), ValueError, "Sum of sizes 2"),
    (lambda lax: lax.split(X, [-1, 4]), ValueError, "must be nonnegative"),
    (lambda lax: lax.tile(X, (2,)), TypeError, "reps length"),
    (lambda lax: lax.stack([X, X[:2]]), ValueError, "same shape"),
    (lambda lax: lax.unstack(X, 2), ValueError, "out of bounds"),
    (lambda lax: lax.collapse(X, 1, 0), ValueError, "Invalid dimension range"),
    (lambda lax: lax.broadcast_like(X, V), ValueError, "fewer dimensions"),
    (lambda lax: lax.broadcast_like(X, np.zeros((2, 3, 4))), ValueError,
     r"input type=float32\[3,5\] and requested type=float32\[2,3,4\]"),
    (lambda lax: lax.batch_matmul(X, X[None]), ValueError, "same ndim"),
    (lambda lax: lax.batch_matmul(V, V), ValueError, "at least 2D"),
    (lambda lax: lax.clz(X), TypeError, "clz does not accept dtype float32"),
    (lambda lax: lax.reduce_precision(X, 0, 3), ValueError, "exponent_bits must be positive"),
    (lambda lax: lax.reduce_precision(X, 3, -1), ValueError, "must be non-negative"),
    (lambda lax: lax.reduce_precision(INTS, 3, 1), TypeError, "Accepted dtypes are subtypes"),
    (lambda lax: lax.mulhi(INTS[0], U32[:3]), TypeError, "same dtypes"),
    (lambda lax: lax.mulhi(X, X), TypeError, "mulhi does not accept dtype float32"),
])
def test_errors_match_jax(call, error, message):
    for lax in (jax.lax, mlax):
        with pytest.raises(error, match=message):
            call(lax)


def test_cumlogsumexp_of_integers_is_refused():
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        mlax.cumlogsumexp(INTS)


# -- the special functions zeta, bessel_i0e, bessel_i1e (ir/special_primitives.py) ----------

ZETA_X = np.array([1.5, 2.0, 3.5, 7.0], np.float32)
ZETA_Q = np.array([0.3, 1.0, 2.5, 40.0], np.float32)
BESSEL_X = np.array([-30.0, -2.0, -1e-3, 0.0, 0.5, 3.0, 12.0, 600.0], np.float32)


def test_special_functions_match_jax():
    check(lambda np_, x, q, b: (_lax(np_).zeta(x, q), _lax(np_).zeta(x, 2.0),
                                _lax(np_).bessel_i0e(b), _lax(np_).bessel_i1e(b)),
          ZETA_X, ZETA_Q, BESSEL_X, eager=True, rtol=2e-6, atol=1e-7)


def test_special_function_derivatives_match_jax():
    for name in ("bessel_i0e", "bessel_i1e"):
        ours = minijax.vmap(minijax.grad(getattr(mlax, name)))(BESSEL_X)
        # JAX's side in one program, not one per operation (compared to a tolerance)
        assert_values_close(ours, jax.jit(jax.vmap(jax.grad(getattr(jax.lax, name))))(BESSEL_X),
                            1e-5, 1e-7)
        assert_values_close(minijax.jit(minijax.grad(getattr(mlax, name)))(np.float32(0)),
                            jax.grad(getattr(jax.lax, name))(np.float32(0)))
    # JAX has no derivative of zeta; in q it is -x zeta(x + 1, q), checked against a
    # central difference of JAX's zeta in float32.
    eps = 1e-2
    numeric = (jax.lax.zeta(ZETA_X, ZETA_Q + eps) - jax.lax.zeta(ZETA_X, ZETA_Q - eps)) / (2 * eps)
    ours = minijax.vmap(minijax.grad(mlax.zeta, argnums=1))(ZETA_X, ZETA_Q)
    np.testing.assert_allclose(ours, numeric, rtol=2e-3)
    with pytest.raises(ValueError, match="zeta gradient with respect to x"):
        minijax.grad(mlax.zeta)(np.float32(2.5), np.float32(1.5))


# -- divergences: where jax.lax does otherwise than intended (minijax/divergences/) ----------

@pins("clz_of_a_negative_constant_under_jit")
def test_clz_of_a_negative_constant_under_jit():
    constant = np.array([-1, 5], np.int32)
    # fixed in 0.11: jit gives the eager counts
    assert list(jax.jit(lambda: jax.lax.clz(constant))()) == ([0, 29] if JAX_VERSION >= (0, 11)
                                                              else [-32, 29])
    assert list(jax.lax.clz(constant)) == [0, 29]
    assert list(minijax.jit(lambda: mlax.clz(constant))()) == [0, 29]
    assert list(mlax.clz(constant)) == [0, 29]


@pins("associative_scan_reverse_with_negative_axis_raises")
def test_associative_scan_reverse_with_negative_axis():
    with pytest.raises(TypeError, match="nonnegative"):
        jax.lax.associative_scan(jax.lax.add, X, reverse=True, axis=-1)
    assert_values_close(mlax.associative_scan(mlax.add, X, reverse=True, axis=-1),
                        jax.lax.associative_scan(jax.lax.add, X, reverse=True, axis=1))


@pytest.mark.parametrize("fn, args, kwargs", [
    (mlax.cumlogsumexp, (X,), {"axis": 1, "reverse": True}),
    (mlax.reduce_xor, (INTS,), {"axes": (0,)}), (mlax.clz, (INTS,), {}),
    (mlax.mulhi, (INTS, INTS), {})], ids=["cumlogsumexp", "reduce_xor", "clz", "mulhi"])
def test_one_primitive_in_jax_runs_eagerly_as_one_program(fn, args, kwargs):
    # JAX's eager call compiles its one primitive; minijax's composition runs as one
    # cached program too, not an eager dispatch per operation. Traced, it is inline.
    expected = getattr(jax.lax, fn.__name__)(*args, **kwargs)
    assert_values_close(fn(*args, **kwargs), expected, 1e-5, 1e-6)
    assert fn.eager_jit.call_cache().fast is not None
    assert_values_close(fn(*args, **kwargs), expected, 1e-5, 1e-6)
    names = [e.primitive.name for e in minijax.make_jaxpr(
        lambda *a: fn(*a, **kwargs))(*args).jaxpr.eqns]
    assert "jit" not in names


def test_a_python_int_is_a_one_axis_shape_as_in_jax():
    # JAX's canonicalize_shape takes `6` for `(6,)` wherever lax reads a shape.
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for call in (lambda lax: lax.reshape(x, 6), lambda lax: lax.full(3, 1.5),
                 lambda lax: lax.broadcasted_iota(np.int32, 4, 0),
                 lambda lax: lax.full_like(x, 2.0, shape=5)):
        assert_trees_match(call(minijax.lax), call(jax.lax))
        assert_trees_match(minijax.jit(lambda: call(minijax.lax))(), call(jax.lax))
    with pytest.raises(TypeError):
        minijax.lax.reshape(x, np.int32(6))
    with pytest.raises(TypeError):
        jax.lax.reshape(x, np.int32(6))


def test_stage_lifts_a_value_into_the_trace_as_jax():
    """`lax.stage`: the identity, whose result is a tracer under a staging trace (a
    Python branch on it fails there as in JAX) and a jax.Array outside, weak types kept."""
    for value in (3.0, 2, np.int8(3), np.ones(2, np.float32), jnp.arange(3)):
        assert_trees_match(mlax.stage(value), jax.lax.stage(value))
        assert_trees_match(minijax.jit(lambda: mlax.stage(value))(),
                           jax.jit(lambda: jax.lax.stage(value))())
    assert_trees_match(minijax.grad(lambda x: mlax.stage(x) * 2.0)(1.5),
                       jax.grad(lambda x: jax.lax.stage(x) * 2.0)(1.5))
    assert str(minijax.make_jaxpr(lambda: mlax.stage(np.ones(2, np.float32)) * 2)()) \
        .count("mul") == 1
    for lib in (jax, minijax):
        with pytest.raises(lib.errors.TracerBoolConversionError):
            lib.jit(lambda: bool(lib.lax.stage(2) > 1))()
        with pytest.raises(TypeError, match="Error interpreting argument to stage"):
            lib.lax.stage([1.0, 2.0])
