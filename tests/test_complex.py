"""Complex numbers against JAX: `lax.real/imag/conj/complex`, `jnp.real/imag/conj/angle`,
complex64 arithmetic, and their derivatives with JAX's conventions (`grad` of a real
loss of complex inputs is the conjugate-direction gradient; complex outputs need
`holomorphic=True`)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from tests.numpy_helpers import check, assert_values_close

rng = np.random.default_rng(3)
Z = (rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))).astype(np.complex64)
W = (rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))).astype(np.complex64)
X = rng.normal(size=(2, 3)).astype(np.float32)
Y = rng.normal(size=(2, 3)).astype(np.float32)


def _lax(np_):
    return jax.lax if np_ is jnp else mlax


VALUE_CASES = {
    "parts": (lambda np_, z: (np_.real(z), np_.imag(z), np_.conj(z), np_.conjugate(z),
                              np_.angle(z), np_.angle(z, deg=True), np_.abs(z)), (Z,)),
    "parts_of_reals": (lambda np_, x: (np_.real(x), np_.imag(x), np_.conj(x), np_.angle(x)),
                       (X,)),
    "parts_of_scalars": (lambda np_, x: (np_.real(x), np_.imag(x), np_.angle(x)), (2.5,)),
    # a float16 array keeps its type; a real scalar of any precision, and an integer or
    # boolean array, give float32 (minijax raised on float16: a Python 0.0 beside it)
    "angle_of_reals": (lambda np_, h, i: (np_.angle(h), np_.angle(h[0]), np_.angle(i),
                                          np_.angle(i > 1, deg=True), np_.angle(h * 2.0)),
                       (X.astype(np.float16), np.array([-2, 0, 3], np.int8))),
    "lax": (lambda np_, z, x, y: (_lax(np_).real(z), _lax(np_).imag(z), _lax(np_).conj(z),
                                  _lax(np_).complex(x, y), _lax(np_).complex(x, 1.0),
                                  _lax(np_).conj(x)), (Z, X, Y)),
    "arithmetic": (lambda np_, z, w: (z * w + 1, z / w, z - 2j, np_.exp(z), np_.log(w),
                                      np_.sum(z * np_.conj(w))), (Z, W)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_jax(name):
    fn, args = VALUE_CASES[name]
    check(fn, *args, rtol=1e-5, atol=1e-5, eager=True)


def test_iscomplexobj():
    for v in (Z, X, 1j, 1.0, 3):
        assert mnp.iscomplexobj(v) == jnp.iscomplexobj(v)


REAL_LOSSES = {
    "real_imag": lambda np_, z: np_.sum(np_.real(z) ** 2 * np_.imag(z)),
    "abs": lambda np_, z: np_.sum(np_.abs(z)),
    "abs_at_zero": lambda np_, z: np_.sum(np_.abs(z * np_.array([1, 0, 1], np_.complex64))),
    "conj_product": lambda np_, z: np_.sum(np_.real(np_.conj(z) * z * (1 + 2j))),
    "angle": lambda np_, z: np_.sum(np_.angle(z)),
    "exp": lambda np_, z: np_.sum(np_.imag(np_.exp(z))),
}


@pytest.mark.parametrize("name", sorted(REAL_LOSSES))
def test_grad_of_real_losses_matches_jax(name):
    loss = REAL_LOSSES[name]
    expected = jax.grad(lambda z: loss(jnp, z))(Z)
    assert_values_close(minijax.grad(lambda z: loss(mnp, z))(Z), expected, 1e-4, 1e-4)
    assert_values_close(minijax.jit(minijax.grad(lambda z: loss(mnp, z)))(Z), expected,
                        1e-4, 1e-4)
    t = W
    assert_values_close(minijax.jvp(lambda z: loss(mnp, z), (Z,), (t,)),
                        jax.jvp(lambda z: loss(jnp, z), (Z,), (t,)), 1e-4, 1e-4)


def test_grad_through_complex_construction_matches_jax():
    def loss(lax, x, y):
        z = lax.complex(x, y)
        return (lax.abs(z * z) + lax.real(z) * lax.imag(lax.conj(z))).sum()
    ours = minijax.grad(lambda x, y: loss(mlax, x, y), argnums=(0, 1))(X, Y)
    theirs = jax.grad(lambda x, y: loss(jax.lax, x, y), argnums=(0, 1))(X, Y)
    assert_values_close(ours, theirs, 1e-4, 1e-4)


def test_holomorphic_grad_matches_jax():
    f = lambda np_, z: np_.sum(z * z + np_.exp(z))  # noqa: E731
    ours = minijax.grad(lambda z: f(mnp, z), holomorphic=True)(Z)
    theirs = jax.grad(lambda z: f(jnp, z), holomorphic=True)(Z)
    assert_values_close(ours, theirs, 1e-4, 1e-4)


def test_grad_of_a_complex_output_needs_holomorphic():
    with pytest.raises(TypeError):
        jax.grad(lambda z: jnp.sum(z * z))(Z)
    with pytest.raises(TypeError, match="holomorphic"):
        minijax.grad(lambda z: mnp.sum(z * z))(Z)


def test_vmap_and_vjp_match_jax():
    f = lambda lax, x, y: lax.conj(lax.complex(x, y)) * 2  # noqa: E731
    assert_values_close(minijax.vmap(lambda x, y: f(mlax, x, y), in_axes=(1, None))(X, Y[:, 0]),
                        jax.vmap(lambda x, y: f(jax.lax, x, y), in_axes=(1, None))(X, Y[:, 0]))
    ct = W
    _, ours = minijax.vjp(lambda x, y: f(mlax, x, y), X, Y)
    _, theirs = jax.vjp(lambda x, y: f(jax.lax, x, y), X, Y)
    assert_values_close(ours(ct), theirs(ct), 1e-5, 1e-5)
    _, ours = minijax.vjp(lambda z: (mlax.real(z), mlax.imag(z)), Z)
    _, theirs = jax.vjp(lambda z: (jax.lax.real(z), jax.lax.imag(z)), Z)
    assert_values_close(ours((X, Y)), theirs((X, Y)), 1e-6, 1e-6)


@pytest.mark.parametrize("call", [lambda: mlax.real(X), lambda: mlax.complex(X, Z),
                                  lambda: mlax.complex(X, Y.astype(np.float16))])
def test_bad_operands_raise_type_errors(call):
    with pytest.raises(TypeError):
        call()
