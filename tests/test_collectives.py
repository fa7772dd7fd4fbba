"""Collectives under `vmap(..., axis_name=...)`, against JAX on one device.

Each case is one collective written twice (minijax's lax, JAX's lax) and run through
both libraries' `vmap` with an axis name: eagerly, under `jit`, with `grad` inside and
outside the vmap, with `jvp`, and with another `vmap` on top. Values, dtypes and weak
types must agree. The checks of conftest.py verify and round-trip every traced jaxpr,
so the jaxprs that keep collectives (a `jit` inside the vmap) exercise the text form.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from tests.ad_helpers import assert_close

# JAX's side of a comparison (all to a tolerance) runs as one jax.jit program: eagerly
# it would compile a program per operation of the collective's batching rule.

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3)).astype(np.float32)        # 4 members, f32[3] each
SQUARE = rng.standard_normal((4, 4, 2)).astype(np.float32)  # f32[4,2]: splits by 4


def both(body):
    """`body(lax)` for minijax's lax and for JAX's."""
    return body(mlax), body(jax.lax)


CASES = {
    "psum": (lambda lax: lambda x: lax.psum(x, "i") * x, X),
    "psum_tree": (lambda lax: lambda x: lax.psum({"a": x, "b": 2 * x}, "i")["b"] * x, X),
    "psum_scalar_one": (lambda lax: lambda x: lax.psum(1, "i") * x, X),
    "pmean": (lambda lax: lambda x: lax.pmean(x, "i") * x, X),
    "pmax": (lambda lax: lambda x: lax.pmax(x, "i") + x, X),
    "pmin": (lambda lax: lambda x: lax.pmin(x, "i") - x, X),
    "all_gather": (lambda lax: lambda x: lax.all_gather(x, "i") * x, X),
    "all_gather_axis1": (lambda lax: lambda x: lax.all_gather(x, "i", axis=1), X),
    "all_gather_tiled": (lambda lax: lambda x: lax.all_gather(x, "i", tiled=True), X),
    "psum_scatter": (lambda lax: lambda x: lax.psum_scatter(x, "i"), SQUARE),
    "psum_scatter_tiled": (
        lambda lax: lambda x: lax.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
        SQUARE),
    "ppermute": (lambda lax: lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)])
                 * x, X),
    "all_to_all_tiled": (lambda lax: lambda x: lax.all_to_all(x, "i", 0, 1, tiled=True),
                         SQUARE),
    "all_to_all_untiled_forward": (lambda lax: lambda x: lax.all_to_all(x, "i", 0, 1), SQUARE),
    "pshuffle": (lambda lax: lambda x: lax.pshuffle(x, "i", [2, 0, 3, 1]) * x, X),
    "pswapaxes": (lambda lax: lambda x: lax.pswapaxes(x, "i", 0), SQUARE),
    # JAX's own pbroadcast fails under vmap (registered, pinned below): its side is the
    # psum of the masked value JAX documents it as
    "pbroadcast": (lambda lax: lambda x: _pbroadcast(lax, x, "i", 2) * x, X),
    "axis_index": (lambda lax: lambda x: lax.axis_index("i") * x, X),
    "axis_size": (lambda lax: lambda x: lax.axis_size("i") * x, X),
}
NOT_DIFFERENTIABLE = {"pmax", "pmin"}


def _pbroadcast(lax, x, axis_name, source):
    if lax is mlax:
        return lax.pbroadcast(x, axis_name, source)
    is_source = lax.axis_index(axis_name) == source
    return lax.psum(jax.numpy.where(is_source, x, jax.numpy.zeros_like(x)), axis_name)
# JAX's own transpose of untiled all_to_all under vmap fails on a cotangent of the wrong
# shape (registry entry "vmap_grad_of_untiled_all_to_all_wrong_cotangent"; pinned below).
JAX_GRAD_FAILS = {"all_to_all_untiled_forward"}


def _fns(name):
    make, x = CASES[name]
    ours, theirs = both(make)
    return ours, theirs, x


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_eager_and_jit(name):
    ours, theirs, x = _fns(name)
    expected = jax.jit(jax.vmap(theirs, axis_name="i"))(x)
    assert_close(minijax.vmap(ours, axis_name="i")(x), expected)
    assert_close(minijax.jit(minijax.vmap(ours, axis_name="i"))(x), expected)
    # a jit inside the vmap keeps the collective in its jaxpr (printed, parsed back)
    assert_close(minijax.vmap(minijax.jit(ours), axis_name="i")(x), expected)


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_DIFFERENTIABLE - JAX_GRAD_FAILS))
def test_grad_inside_and_outside(name):
    ours, theirs, x = _fns(name)

    def loss(f):
        return lambda x: (f(x) ** 2).sum()
    assert_close(minijax.vmap(minijax.grad(loss(ours)), axis_name="i")(x),
                 jax.jit(jax.vmap(jax.grad(loss(theirs)), axis_name="i"))(x), tol=1e-4)
    outside = minijax.grad(lambda x: (minijax.vmap(ours, axis_name="i")(x) ** 2).sum())
    expected = jax.jit(jax.grad(lambda x: (jax.vmap(theirs, axis_name="i")(x) ** 2).sum()))
    assert_close(outside(x), expected(x), tol=1e-4)


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_DIFFERENTIABLE))
def test_jvp(name):
    ours, theirs, x = _fns(name)
    t = np.ones_like(x)
    got = minijax.jvp(minijax.vmap(ours, axis_name="i"), (x,), (t,))
    want = jax.jit(lambda x, t: jax.jvp(jax.vmap(theirs, axis_name="i"), (x,), (t,)))(x, t)
    assert_close(got, want, tol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_on_top(name):
    ours, theirs, x = _fns(name)
    stacked = np.stack([x, 2 * x])
    assert_close(minijax.vmap(minijax.vmap(ours, axis_name="i"))(stacked),
                 jax.jit(jax.vmap(jax.vmap(theirs, axis_name="i")))(stacked))
    # the inner vmap names no axis: the collective belongs to the outer one
    moved = np.swapaxes(stacked, 0, 1)
    assert_close(minijax.vmap(minijax.vmap(ours), axis_name="i", in_axes=1)(stacked),
                 jax.jit(jax.vmap(jax.vmap(theirs), axis_name="i", in_axes=1))(stacked))
    del moved


def test_nested_names():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def body(lax):
        def f(x):
            both_axes = lax.psum(x, ("i", "j"))
            outer = lax.pmean(x, "i")
            return both_axes * lax.axis_index("j") + outer + lax.all_gather(x, "j")[0]
        return f
    ours, theirs = both(body)
    got = minijax.vmap(minijax.vmap(ours, axis_name="j"), axis_name="i")(x)
    want = jax.jit(jax.vmap(jax.vmap(theirs, axis_name="j"), axis_name="i"))(x)
    assert_close(got, want)
    grad_ours = minijax.grad(lambda x: minijax.vmap(minijax.vmap(ours, axis_name="j"),
                                                    axis_name="i")(x).sum())
    grad_theirs = jax.jit(jax.grad(lambda x: jax.vmap(jax.vmap(theirs, axis_name="j"),
                                                      axis_name="i")(x).sum()))
    assert_close(grad_ours(x), grad_theirs(x), tol=1e-4)


def test_jitted_function_reused_under_another_axis_size():
    f = minijax.jit(lambda x: mlax.all_gather(x, "i"))
    assert minijax.vmap(f, axis_name="i")(np.ones((4, 3), np.float32)).shape == (4, 4, 3)
    assert minijax.vmap(f, axis_name="i")(np.ones((2, 3), np.float32)).shape == (2, 2, 3)


def test_psum_transpose_is_psum_as_in_jax():
    """Differentiating per member: the cotangent of psum is summed over the axis."""
    ours = minijax.vmap(minijax.grad(lambda x: mlax.psum(x, "i")), axis_name="i")
    theirs = jax.vmap(jax.grad(lambda x: jax.lax.psum(x, "i")), axis_name="i")
    x = np.arange(3.0, dtype=np.float32)
    assert_close(ours(x), theirs(x))
    np.testing.assert_array_equal(ours(x), [3.0, 3.0, 3.0])


def test_results_shared_by_every_member_may_be_unmapped():
    x = np.arange(3.0, dtype=np.float32)
    f = minijax.vmap(lambda x: mlax.psum(x, "i"), axis_name="i", out_axes=None)
    g = jax.vmap(lambda x: jax.lax.psum(x, "i"), axis_name="i", out_axes=None)
    assert_close(f(x), g(x))


def test_weak_types_carry_through():
    f = minijax.vmap(lambda x: mlax.psum(2.0, "i") + x, axis_name="i")
    g = jax.vmap(lambda x: jax.lax.psum(2.0, "i") + x, axis_name="i")
    x = np.arange(3, dtype=np.int32)
    ours = minijax.make_jaxpr(f)(x).jaxpr.outvars[0].aval
    theirs = jax.make_jaxpr(g)(x).out_avals[0]
    assert ours.dtype == theirs.dtype and ours.weak_type == theirs.weak_type is True


def test_text_form_shows_axis_names():
    seen = []

    def f(x):
        closed = minijax.make_jaxpr(lambda y: mlax.psum(y, "i") + mlax.all_gather(y, "i")[0])(x)
        seen.append(str(closed))
        return x
    minijax.vmap(f, axis_name="i")(X)
    assert "psum[axes=('i',)]" in seen[0]
    assert "all_gather[axis=0 axis_name='i' axis_size=4 tiled=False]" in seen[0]


def test_import_of_jax_named_vmap_programs():
    """JAX's own vmap turns a named psum into one over integer axes; both import."""
    from minijax.interop import trace_with_jax
    from minijax.transforms import eval_jaxpr
    g = jax.vmap(lambda x: jax.lax.psum(x, "i") + 1.0, axis_name="i", out_axes=None)
    closed = trace_with_jax(g)(X)
    assert_close(eval_jaxpr(closed.jaxpr, closed.consts, [X])[0], g(X))


# -- mistakes --------------------------------------------------------------------------

def test_unbound_axis_name_is_a_name_error_as_in_jax():
    with pytest.raises(NameError):
        jax.vmap(lambda x: jax.lax.psum(x, "k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        minijax.vmap(lambda x: mlax.psum(x, "k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name"):
        mlax.axis_index("i")


def test_pmax_is_not_differentiable_as_in_jax():
    with pytest.raises(Exception):
        jax.vmap(jax.grad(lambda x: jax.lax.pmax(x, "i")), axis_name="i")(X[:, 0])
    with pytest.raises(TypeError, match="pmax is not differentiable"):
        minijax.vmap(minijax.grad(lambda x: mlax.pmax(x, "i")), axis_name="i")(X[:, 0])


def test_bad_shapes_are_type_errors():
    with pytest.raises(TypeError, match="must equal the axis size"):
        minijax.vmap(lambda x: mlax.psum_scatter(x, "i"), axis_name="i")(X)
    with pytest.raises(ValueError, match="outside the axis"):
        minijax.vmap(lambda x: mlax.ppermute(x, "i", [(0, 9)]), axis_name="i")(X)


# -- where JAX does otherwise than it intends (minijax/divergences/collectives.py) -------

def _jax_fails(fn) -> bool:
    try:
        fn()
    except Exception:
        return True
    return False


def _retire_if_fixed(name, fails):
    if not fails:
        from tests.test_divergences import seen_on_this_jax
        if seen_on_this_jax(name):
            pytest.fail(f"JAX now does this: retire the registry entry {name}")


def test_all_to_all_of_an_unmapped_value_under_vmap():
    # Registry entry "vmap_all_to_all_of_an_unmapped_value_has_the_wrong_shape"
    c = rng.standard_normal((4, 3)).astype(np.float32)
    members = np.zeros(4, np.float32)
    for concat_axis, jax_shape in ((0, (4, 4, 3, 4, 3)), (1, (4, 3, 4, 4, 3, 1))):
        def body(lax):
            return lambda a: lax.all_to_all(c, "i", 0, concat_axis)
        theirs = jax.vmap(body(jax.lax), axis_name="i")(members)
        if theirs.shape != jax_shape:       # JAX fixed it
            _retire_if_fixed("vmap_all_to_all_of_an_unmapped_value_has_the_wrong_shape",
                             False)
        ours = minijax.vmap(body(mlax), axis_name="i")(members)
        # as for a mapped copy of c, which JAX gets right
        mapped_copy = jax.vmap(lambda a: jax.lax.all_to_all(c + 0 * a, "i", 0, concat_axis),
                               axis_name="i")(members)
        assert ours.shape == mapped_copy.shape == ((4, 4, 3) if concat_axis == 0
                                                   else (4, 3, 4))
        np.testing.assert_array_equal(ours, mapped_copy)


def test_partial_permutation_under_vmap():
    # Registry entry "vmap_ppermute_partial_permutation_asserts"
    perm = [(0, 1), (1, 2)]
    _retire_if_fixed("vmap_ppermute_partial_permutation_asserts", _jax_fails(
        lambda: jax.vmap(lambda x: jax.lax.ppermute(x, "i", perm), axis_name="i")(X)))
    got = minijax.vmap(lambda x: mlax.ppermute(x, "i", perm), axis_name="i")(X)
    np.testing.assert_array_equal(got, np.stack([np.zeros(3), X[0], X[1], np.zeros(3)]))


def test_grad_of_untiled_all_to_all_under_vmap():
    # Registry entry "vmap_grad_of_untiled_all_to_all_wrong_cotangent"
    def loss(lax):
        return lambda x: (lax.all_to_all(x, "i", 0, 1) * W).sum()
    W = rng.standard_normal((2, 4)).astype(np.float32)   # the f32[2,4] result's weights
    _retire_if_fixed("vmap_grad_of_untiled_all_to_all_wrong_cotangent", _jax_fails(
        lambda: jax.vmap(jax.grad(loss(jax.lax)), axis_name="i")(SQUARE)))
    got = minijax.vmap(minijax.grad(loss(mlax)), axis_name="i")(SQUARE)
    # member k's x[j, a] lands in member j's result at [a, k]: its cotangent is W[a, k]
    want = np.broadcast_to(W.T[:, None, :], SQUARE.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pshuffle_refuses_what_is_not_a_permutation_as_jax():
    for lib in (minijax, jax):
        with pytest.raises(ValueError, match="permutation"):
            lib.vmap(lambda a: lib.lax.pshuffle(a, "i", [1, 1, 3, 0]), axis_name="i")(X)


def _collective_body(lax):
    return lambda a: (lax.psum(a, "i") * lax.axis_index("i")
                      + lax.pshuffle(a, "i", [1, 0, 3, 2])
                      + lax.pswapaxes(lax.all_gather(a, "i") * a, "i", 0).sum(0))


def test_make_jaxpr_axis_env_binds_names_as_in_jax():
    x = np.zeros(3, np.float32)
    for wrap in (lambda lib, f: f, lambda lib, f: lib.jit(f),
                 lambda lib, f: lib.grad(lambda a: f(a).sum())):
        ours = minijax.make_jaxpr(wrap(minijax, _collective_body(mlax)),
                                  axis_env=[("i", 4)])(x)
        theirs = jax.make_jaxpr(wrap(jax, _collective_body(jax.lax)),
                                axis_env=[("i", 4)])(x)
        # JAX's psum_scatter primitive is named reduce_scatter
        collectives = {"psum", "axis_index", "ppermute", "all_gather", "all_to_all",
                       "psum_scatter", "reduce_scatter"}

        def named(jaxpr):
            eqns = list(jaxpr.eqns)
            found = []
            while eqns:
                eqn = eqns.pop(0)
                if "jaxpr" in eqn.params:      # a jit: its body
                    inner = eqn.params["jaxpr"]
                    eqns[:0] = list(getattr(inner, "jaxpr", inner).eqns)
                if eqn.primitive.name in collectives:
                    found.append(eqn.primitive.name.replace("reduce_", "psum_"))
            return sorted(found)
        assert named(ours) == named(theirs)
    # the body, bound by a named vmap, gives JAX's values
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert_close(minijax.vmap(_collective_body(mlax), axis_name="i")(xs),
                 jax.vmap(_collective_body(jax.lax), axis_name="i")(xs))


def test_make_jaxpr_axis_env_errors():
    body = _collective_body(mlax)
    x = np.zeros(3, np.float32)
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        minijax.make_jaxpr(body, axis_env=[("j", 4)])(x)
    for bad in ({"i": 4}, [("i",)], [("i", 0)], [("i", 2.5)]):
        with pytest.raises(ValueError, match="axis_env"):
            minijax.make_jaxpr(body, axis_env=bad)(x)
    with pytest.raises(ValueError):            # JAX unpacks the dict's keys
        jax.make_jaxpr(_collective_body(jax.lax), axis_env={"i": 4})(x)


def test_pbroadcast_divergence_and_exactness():
    """Registered: "pbroadcast_vmap_and_transpose_fail" -- JAX's batching rule passes a
    list to `take`, and its transpose calls `full` with an array fill value."""
    f = lambda lib: lib.vmap(lambda v: lib.lax.pbroadcast(v, "i", 1), axis_name="i")  # noqa: E731
    with pytest.raises(TypeError, match="take requires ndarray or scalar"):
        f(jax)(jax.numpy.asarray(X))
    with pytest.raises(TypeError, match="take requires ndarray or scalar"):
        jax.jit(f(jax))(X)
    assert_close(f(jax)(X), np.broadcast_to(X[1], X.shape))    # NumPy's take takes a list
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    one = lambda lib: lib.shard_map(  # noqa: E731
        lambda a: lib.lax.pbroadcast(a, "x", 0), mesh=mesh, in_specs=jax.P("x"),
        out_specs=jax.P("x"))
    with pytest.raises(TypeError, match="full must be called with scalar fill_value"):
        jax.linear_transpose(one(jax), X[0])(X[0])
    assert_close(minijax.linear_transpose(one(minijax), X[0])(X[0]), (X[0],))
    # member 1's values on every member, bit for bit: no adds of the others' zeros
    odd = np.array([[1.0, 2.0], [-0.0, np.nan], [np.inf, 3.0]], np.float32)
    got = np.asarray(f(minijax)(odd))
    assert np.array_equal(got.view(np.uint32), np.broadcast_to(odd[1], (3, 2)).view(np.uint32))
    ints = np.arange(6, dtype=np.int32).reshape(3, 2)
    np.testing.assert_array_equal(f(minijax)(ints), np.broadcast_to(ints[1], (3, 2)))
    for source, error in ((3, ValueError), (1.0, TypeError)):
        with pytest.raises(error, match="source"):
            minijax.vmap(lambda v: mlax.pbroadcast(v, "i", source), axis_name="i")(odd)
