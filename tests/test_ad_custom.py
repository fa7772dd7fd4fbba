"""custom_jvp and custom_vjp against JAX: under grad, jvp, jit, higher order, with
nondiff_argnums, defjvps, and JAX's error for forward mode through custom_vjp."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from tests.ad_helpers import assert_close, randn, verify


def _log1pexp(api, lax):
    @api.custom_jvp
    def f(x):
        return lax.log1p(lax.exp(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), lax.mul(t, lax.logistic(x))
    return f


def _clip_gradient(api, lax):
    @api.custom_vjp
    def f(x, scale):
        return lax.mul(lax.sin(x), scale)

    def fwd(x, scale):
        return f(x, scale), (lax.cos(x), scale)

    def bwd(residuals, ct):
        cos_x, scale = residuals
        return lax.clamp(-0.5, lax.mul(lax.mul(cos_x, scale), ct), 0.5), lax.mul(ct, 2.0)
    f.defvjp(fwd, bwd)
    return f


def test_custom_jvp_under_grad_jvp_jit_and_higher_order():
    x = np.float32(0.8)
    for build in (lambda api, lax: api.grad(_log1pexp(api, lax)),
                  lambda api, lax: api.grad(api.grad(_log1pexp(api, lax))),
                  lambda api, lax: api.jit(api.grad(_log1pexp(api, lax))),
                  lambda api, lax: api.grad(api.jit(_log1pexp(api, lax))),
                  lambda api, lax: lambda x: api.jvp(_log1pexp(api, lax), (x,), (x,))):
        assert_close(build(minijax, mlax)(x), build(jax, jax.lax)(x), 1e-5)
    closed = verify(minijax.make_jaxpr(minijax.grad(_log1pexp(minijax, mlax)))(x))
    assert "logistic" in str(closed)            # the custom rule, not log1p's derivative


def test_custom_vjp_under_grad_and_jit():
    args = (randn(3), randn(3))
    loss = lambda api, lax: (lambda x, s: lax.reduce_sum(_clip_gradient(api, lax)(x, s), (0,)))
    for argnums in (0, (0, 1)):
        assert_close(minijax.grad(loss(minijax, mlax), argnums)(*args),
                     jax.grad(loss(jax, jax.lax), argnums)(*args))
    assert_close(minijax.grad(minijax.jit(loss(minijax, mlax)))(*args),
                 jax.grad(jax.jit(loss(jax, jax.lax)))(*args))
    verify(minijax.make_jaxpr(minijax.grad(loss(minijax, mlax)))(*args))


def test_custom_vjp_forward_mode_is_an_error():
    f = _clip_gradient(minijax, mlax)
    with pytest.raises(TypeError, match="forward-mode"):
        minijax.jvp(lambda x: f(x, np.float32(1)), (np.float32(1),), (np.float32(1),))


def test_custom_vjp_nondiff_argnums_and_second_order():
    def build(api, lax):
        @functools_partial(api.custom_vjp, nondiff_argnums=(0,))
        def f(power, x):
            return lax.integer_pow(x, power)

        def fwd(power, x):
            return f(power, x), x

        def bwd(power, x, ct):
            return (lax.mul(ct, lax.mul(float(power), lax.integer_pow(x, power - 1))),)
        f.defvjp(fwd, bwd)
        return f
    x = np.float32(1.3)
    assert_close(minijax.grad(lambda x: build(minijax, mlax)(3, x))(x),
                 jax.grad(lambda x: build(jax, jax.lax)(3, x))(x))
    assert_close(minijax.grad(minijax.grad(lambda x: build(minijax, mlax)(3, x)))(x),
                 jax.grad(jax.grad(lambda x: build(jax, jax.lax)(3, x)))(x), 1e-5)


def functools_partial(fn, **kwargs):
    return lambda f: fn(f, **kwargs)


def test_defjvps():
    def build(api, lax):
        @api.custom_jvp
        def f(x, y):
            return lax.mul(lax.sin(x), y)
        f.defjvps(lambda t, ans, x, y: lax.mul(lax.mul(lax.cos(x), y), t),
                  lambda t, ans, x, y: lax.mul(lax.sin(x), t))
        return f
    args = (np.float32(0.3), np.float32(2.0))
    assert_close(minijax.grad(build(minijax, mlax), (0, 1))(*args),
                 jax.grad(build(jax, jax.lax), (0, 1))(*args))
    assert_close(minijax.jvp(build(minijax, mlax), args, args),
                 jax.jvp(build(jax, jax.lax), args, args))


def test_custom_functions_run_plainly_outside_transformations():
    f = _log1pexp(minijax, mlax)
    assert_close(f(np.float32(0.5)), jax.numpy.log1p(jax.numpy.exp(np.float32(0.5))))
    assert_close(minijax.jit(f)(np.float32(0.5)),
                 jax.numpy.log1p(jax.numpy.exp(np.float32(0.5))))
