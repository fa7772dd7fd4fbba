"""Derivative rules minijax takes from the newest JAX (docs/autodiff.md, section 2).

`one_minus_square`, 1 - x**2 as (1 + x) * (1 - x) with derivative -2x: JAX's primitive
since 0.11, which its derivatives of tanh, atanh, asin and acos use. Against JAX where it
has the primitive; against the formula JAX lowers it to before that. And asinh's
derivative, scaled against overflow as JAX 0.12's."""
import jax
import numpy as np
import pytest

import minijax
from minijax.interop import import_jaxpr, to_jax, to_python_source
from minijax.testing import JAX_VERSION, assert_trees_match

X = np.array([-3.0, -1.0, -0.9999999, -0.3, 0.0, 1e-30, 0.5, 0.99999994, 2.5], np.float32)
I = np.array([-7, -1, 0, 1, 3, 46341], np.int32)       # 46341**2 wraps around int32

newer_jax = pytest.mark.skipif(JAX_VERSION < (0, 11),
                               reason="jax.lax.one_minus_square is new in JAX 0.11")


def _formula(x):
    """What JAX 0.11 lowers its primitive to, in the operand's type."""
    one = np.ones_like(x)
    with np.errstate(over="ignore"):
        return (one + x) * (one - x)


@pytest.mark.parametrize("x", [X, I], ids=["f32", "i32"])
def test_values_are_the_formula_eagerly_and_under_jit(x):
    for result in (minijax.lax.one_minus_square(x), minijax.jit(minijax.lax.one_minus_square)(x),
                   minijax.vmap(minijax.lax.one_minus_square)(x)):
        np.testing.assert_array_equal(np.asarray(result), _formula(x))
        assert result.dtype == x.dtype


def test_near_one_it_keeps_the_bits_that_one_minus_x_times_x_loses():
    x = np.array([0.9999, 0.999, -0.9999999], np.float32)
    exact = ((1 + x.astype(np.float64)) * (1 - x.astype(np.float64))).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(minijax.lax.one_minus_square(x)), exact)
    assert np.all(np.float32(1) - x * x != exact)


def test_derivative_is_minus_two_x_without_cancellation():
    grad = minijax.grad(lambda x: minijax.numpy.sum(minijax.lax.one_minus_square(x)))(X)
    np.testing.assert_array_equal(np.asarray(grad), -2 * X)
    # the product rule's (1 - x) - (1 + x) would give 0 at 1e-30
    assert np.asarray(grad)[5] == np.float32(-2e-30)


@newer_jax
def test_matches_jax_eager_jit_grad_vmap_and_weak_types():
    for x in (X, I, 0.5, np.float32(0.25)):
        assert_trees_match(minijax.lax.one_minus_square(x), jax.lax.one_minus_square(x),
                           rtol=0, atol=0)
        assert_trees_match(minijax.jit(minijax.lax.one_minus_square)(x),
                           jax.jit(jax.lax.one_minus_square)(x), rtol=0, atol=0)
    for x in (X, 0.5):
        assert_trees_match(
            minijax.grad(lambda x: minijax.numpy.sum(minijax.lax.one_minus_square(x)))(x),
            jax.grad(lambda x: jax.numpy.sum(jax.lax.one_minus_square(x)))(x), rtol=0, atol=0)
    assert_trees_match(minijax.vmap(minijax.grad(minijax.lax.one_minus_square))(X),
                       jax.vmap(jax.grad(jax.lax.one_minus_square))(X), rtol=0, atol=0)


@newer_jax
def test_a_jax_program_with_it_imports_and_exports_back():
    program = import_jaxpr(jax.make_jaxpr(lambda x: jax.lax.one_minus_square(jax.lax.tanh(x)))(X))
    assert [e.primitive.name for e in program.jaxpr.eqns] == ["tanh", "one_minus_square"]
    exported = jax.make_jaxpr(to_jax(program))(X)
    assert [e.primitive.name for e in exported.jaxpr.eqns] == ["tanh", "one_minus_square"]
    np.testing.assert_array_equal(np.asarray(to_jax(program)(X)[0]),
                                  np.asarray(jax.lax.one_minus_square(jax.lax.tanh(X))))


def test_python_source_runs_on_the_installed_jax():
    program = minijax.make_jaxpr(minijax.lax.one_minus_square)(X)
    source = to_python_source(program)
    # JAX before 0.11 has no lax.one_minus_square: the source spells the formula
    assert ("lax.one_minus_square(" in source) == (JAX_VERSION >= (0, 11))
    namespace = {}
    exec(compile(source, "<one_minus_square>", "exec"), namespace)
    np.testing.assert_array_equal(np.asarray(namespace["program"](X)[0]), _formula(X))


def test_asinh_derivative_does_not_overflow_for_a_huge_argument():
    x = np.array([-0.25, 0.5, 3.0, 4.6e18, 3e19, -1e30, 1e37], np.float32)
    f = {api: (lambda x, api=api: api.numpy.sum(api.lax.asinh(x))) for api in (minijax, jax)}
    mini = np.asarray(minijax.grad(f[minijax])(x))
    exact = 1 / np.sqrt(x.astype(np.float64) ** 2 + 1)
    np.testing.assert_allclose(mini, exact, rtol=2e-7)     # 1/|x| where x**2 overflows
    theirs = np.asarray(jax.grad(f[jax])(x))
    if JAX_VERSION >= (0, 12):           # the same operations as JAX 0.12's rule
        np.testing.assert_array_equal(mini, theirs)
        assert_trees_match(minijax.hessian(f[minijax])(x[:3]), jax.hessian(f[jax])(x[:3]),
                           rtol=0, atol=0)
    else:           # JAX before 0.12: rsqrt(x**2 + 1), 0 once x**2 overflows, else equal
        big = np.abs(x) > 2.0 ** 64
        np.testing.assert_array_equal(theirs[big], 0)
        np.testing.assert_array_equal(mini[~big], theirs[~big])
