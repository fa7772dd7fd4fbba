"""Results are `jax.Array`s with JAX's dtype and weak type, whatever the function.

Regression tests for issue #12: a gradient that is the seed itself or a constant
(`grad(lambda x: x)(3.2)`) came back as a Python float, a gradient at a NumPy input
as a NumPy array, and a custom_jvp/custom_vjp function on Python scalars returned
its Python result. JAX returns arrays in every case, and programs call array
methods on them (`.block_until_ready()`, `.at`, `.astype`). Also: custom_jvp and
custom_vjp run their rules on concrete values under jvp/grad, so Python control
flow on values works there, as in JAX.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match


def _jax_side(leaf):
    # JAX 0.10.2 hands back its internal TypedFloat (a float subclass carrying a
    # dtype) for a few outputs that are a Python-scalar input itself (the value of
    # value_and_grad(lambda x: x)(3.2)), and a custom function's eager result as the
    # function returned it; a Python float stands for a weak float32 value, which is
    # the array minijax returns.
    if isinstance(leaf, float):
        return jnp.asarray(float(leaf))
    return leaf


def _assert_arrays_like_jax(actual, expected):
    """Every minijax leaf a `jax.Array`, with JAX's dtype, weak type and value."""
    for leaf in jax.tree_util.tree_leaves(actual):
        assert isinstance(leaf, jax.Array), f"{leaf!r} is a {type(leaf).__name__}"
    assert_trees_match(actual, jax.tree_util.tree_map(_jax_side, expected))


# Each case: (name, f(lib) -> function of x). The gradients are the seed itself,
# constants, or unused arguments: nothing is computed on the way.
GRAD_CASES = [
    ("identity", lambda lib: lambda x: x),
    ("constant", lambda lib: lambda x: 2.0),
    ("unused argument", lambda lib: lambda x, y: y * 1.0),
    ("sum of identity", lambda lib: lambda x, y: x + y),
]


@pytest.mark.parametrize("name,make", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
@pytest.mark.parametrize("x", [3.2, np.float32(3.2), np.asarray(3.2, np.float32),
                               jnp.float32(3.2)], ids=["python", "np-scalar", "np-array",
                                                       "jax-array"])
def test_grad_results_are_arrays(name, make, x):
    n_args = make(jax).__code__.co_argcount
    args = (x,) * n_args
    _assert_arrays_like_jax(minijax.grad(make(minijax))(*args), jax.grad(make(jax))(*args))
    # value_and_grad's value is the function's own output, handed back as it is
    # (here a Python float or the input itself) by both; the gradient is an array.
    _assert_arrays_like_jax(minijax.value_and_grad(make(minijax))(*args)[1],
                            jax.value_and_grad(make(jax))(*args)[1])
    _assert_arrays_like_jax(minijax.jit(minijax.grad(make(minijax)))(*args),
                            jax.jit(jax.grad(make(jax)))(*args))


def test_grad_under_vmap_and_of_pytrees():
    xs = np.arange(3, dtype=np.float32)
    _assert_arrays_like_jax(minijax.vmap(minijax.grad(lambda x: x))(xs),
                            jax.vmap(jax.grad(lambda x: x))(xs))
    tree = {"a": 1.0, "b": 2.0}
    _assert_arrays_like_jax(minijax.grad(lambda t: t["a"] + t["b"])(tree),
                            jax.grad(lambda t: t["a"] + t["b"])(tree))


@pytest.mark.parametrize("fun", [lambda x: x, lambda x: 2.0, lambda x: x * 0.0],
                         ids=["identity", "constant", "times-zero"])
@pytest.mark.parametrize("x", [3.2, np.float32(3.2)], ids=["python", "np-scalar"])
def test_derivative_outputs_match_jax(fun, x):
    # JAX hands back a primal output, and a tangent or cotangent the function passes
    # straight through, as they are (a Python float stays one); what it computes --
    # zeros, gradients, Jacobians -- is an array. minijax does the same.
    def same(actual, expected):
        for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)):
            assert isinstance(a, jax.Array) == isinstance(e, jax.Array), (a, e)
        assert_trees_match(actual, jax.tree_util.tree_map(_jax_side, expected),
                           check_dtypes=False)
    same(minijax.jvp(fun, (x,), (1.0,))[1], jax.jvp(fun, (x,), (1.0,))[1])
    same(minijax.vjp(fun, x)[1](1.0), jax.vjp(fun, x)[1](1.0))
    for mini, ref in [(minijax.jacfwd, jax.jacfwd), (minijax.jacrev, jax.jacrev),
                      (minijax.jacobian, jax.jacobian), (minijax.hessian, jax.hessian)]:
        _assert_arrays_like_jax(mini(fun)(x), ref(fun)(x))


def test_a_constant_gradient_under_jit_is_staged_as_a_literal():
    # Inside a trace a constant result stays a constant of that trace, as in JAX.
    closed = minijax.make_jaxpr(minijax.grad(lambda x: x))(1.0)
    assert not closed.consts
    assert "1.0" in str(closed)


def _custom_jvp(lib, np_lib):
    @lib.custom_jvp
    def clip_positive(x):
        if x > 0:            # Python control flow on the value, as in JAX's docs
            return x
        return 0.0 * x

    @clip_positive.defjvp
    def clip_positive_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        if x > 0:
            return clip_positive(x), t * 2.0
        return clip_positive(x), 0.0 * t
    return clip_positive


def _custom_vjp(lib, np_lib):
    @lib.custom_vjp
    def double_if_negative(x):
        return x if x > 0 else 2.0 * x

    def fwd(x):
        return double_if_negative(x), x

    def bwd(x, ct):
        return (ct * 3.0 if x > 0 else ct * 2.0,)
    double_if_negative.defvjp(fwd, bwd)
    return double_if_negative


@pytest.mark.parametrize("x", [1.5, -1.5, np.float32(1.5)])
def test_custom_jvp_branches_on_values_eagerly_and_under_grad_and_jvp(x):
    f, g = _custom_jvp(minijax, mnp), _custom_jvp(jax, jnp)
    _assert_arrays_like_jax(f(x), g(x))
    _assert_arrays_like_jax(minijax.grad(f)(x), jax.grad(g)(x))
    # jvp hands back what the rule returned (here a Python float tangent), as JAX.
    assert_trees_match(jax.tree_util.tree_map(_jax_side, minijax.jvp(f, (x,), (1.0,))),
                       jax.tree_util.tree_map(_jax_side, jax.jvp(g, (x,), (1.0,))))
    _assert_arrays_like_jax(minijax.grad(minijax.grad(f))(x), jax.grad(jax.grad(g))(x))
    _assert_arrays_like_jax(minijax.value_and_grad(lambda y: f(y) * y)(x),
                            jax.value_and_grad(lambda y: g(y) * y)(x))


@pytest.mark.parametrize("x", [1.5, -1.5])
def test_custom_vjp_branches_on_values_eagerly_and_under_grad(x):
    f, g = _custom_vjp(minijax, mnp), _custom_vjp(jax, jnp)
    out = f(x)
    # JAX 0.10.2 returns its internal TypedFloat here; minijax an array of the same
    # dtype, weak type and value (the array is what a function's result is).
    assert isinstance(out, jax.Array) and out.weak_type and out.dtype == np.float32
    assert float(out) == float(g(x))
    _assert_arrays_like_jax(minijax.grad(f)(x), jax.grad(g)(x))
    _assert_arrays_like_jax(minijax.grad(lambda y: f(y) * y)(x),
                            jax.grad(lambda y: g(y) * y)(x))


def test_custom_rules_that_branch_on_values_fail_under_jit_as_in_jax():
    f, g = _custom_jvp(minijax, mnp), _custom_jvp(jax, jnp)
    with pytest.raises(TypeError):
        jax.jit(jax.grad(g))(1.5)
    with pytest.raises(minijax.errors.ConcretizationTypeError):
        minijax.jit(minijax.grad(f))(1.5)


def test_custom_jvp_without_branches_still_stages_one_call_under_jit():
    @minijax.custom_jvp
    def f(x):
        return mnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), mnp.cos(p[0]) * t[0] * 2.0))

    @jax.custom_jvp
    def g(x):
        return jnp.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), jnp.cos(p[0]) * t[0] * 2.0))
    assert "custom_jvp_call" in str(minijax.make_jaxpr(f)(1.0))
    _assert_arrays_like_jax(minijax.grad(minijax.jit(f))(0.5), jax.grad(jax.jit(g))(0.5))
    _assert_arrays_like_jax(minijax.jit(minijax.grad(f))(0.5), jax.jit(jax.grad(g))(0.5))
    xs = np.linspace(0, 1, 3, dtype=np.float32)
    _assert_arrays_like_jax(minijax.vmap(minijax.grad(f))(xs), jax.vmap(jax.grad(g))(xs))


def test_custom_jvp_rule_with_a_wrong_tangent_is_named():
    @minijax.custom_jvp
    def f(x):
        return x
    f.defjvp(lambda p, t: (p[0], mnp.ones(3)))
    with pytest.raises(minijax.transforms.custom_derivatives.CustomDerivativeError,
                       match="JVP rule of f"):
        minijax.jvp(f, (1.0,), (1.0,))


def test_custom_jvp_with_a_function_as_nondiff_argument():
    def make(lib, np_lib):
        @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
        def apply(f, x):
            return f(x) if x > 0 else x     # branches on the value
        apply.defjvp(lambda f, p, t: (apply(f, p[0]), t[0] * 3.0))
        return lambda x: apply(np_lib.sin, x)
    for x in (0.5, -0.5):
        _assert_arrays_like_jax(minijax.grad(make(minijax, mnp))(x), jax.grad(make(jax, jnp))(x))


@pytest.mark.parametrize("value", [np.arange(3, dtype=np.float32), np.int32(7), 2.5])
def test_convert_element_type_to_the_type_a_value_has(value):
    # A NumPy or Python value comes back a jax.Array eagerly (minijax handed a NumPy
    # array back as it was); in a trace the constant itself is the result, with no
    # equation, as JAX forwards it.
    dtype = np.result_type(value) if not isinstance(value, float) else np.float32
    ours = minijax.lax.convert_element_type(value, dtype)
    theirs = jax.lax.convert_element_type(value, dtype)
    assert isinstance(ours, jax.Array) and isinstance(theirs, jax.Array)
    assert_trees_match(ours, theirs)

    def traced(lax):
        return lambda x: x + lax.convert_element_type(value, dtype)
    x = np.ones(3, dtype)
    ours = minijax.make_jaxpr(traced(minijax.lax))(x).jaxpr
    theirs = jax.make_jaxpr(traced(jax.lax))(x).jaxpr
    assert [e.primitive.name for e in ours.eqns] == [e.primitive.name for e in theirs.eqns]
