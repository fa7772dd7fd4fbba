"""The bit operations and `erf_inv` (ir/random_primitives.py) through minijax's public
surface (`minijax.lax`, `minijax.numpy`, operators), against real JAX: eagerly, under
`jit`, `vmap`, and differentiation. Primitive-level checks of every rule against
`jax.lax` are in test_reference.py and test_vmap_rules.py.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp_jax
import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import lax
from minijax.testing import assert_trees_match

from tests.test_divergences import pins

U32 = np.array([0, 1, 7, 0x80000000, 0xFFFFFFFF], np.uint32)
I32 = np.array([0, 1, -1, 7, -8, 2**31 - 1, -2**31], np.int32)


def _same(mj_fn, jax_fn, *args):
    """Eagerly, under jit, and under vmap over the leading axis."""
    assert_trees_match(mj_fn(*args), jax_fn(*args))
    assert_trees_match(minijax.jit(mj_fn)(*args), jax.jit(jax_fn)(*args))
    stacked = [np.stack([a, a[::-1]]) for a in args]
    assert_trees_match(minijax.vmap(mj_fn)(*stacked), jax.vmap(jax_fn)(*stacked))


@pytest.mark.parametrize("name", ["shift_left", "shift_right_logical",
                                  "shift_right_arithmetic"])
@pytest.mark.parametrize("x", [U32, I32[:5]], ids=["u32", "i32"])
def test_lax_shifts(name, x):
    amounts = np.array([0, 1, 31, 32, 3], x.dtype)
    _same(getattr(lax, name), getattr(jax.lax, name), x, amounts)


def test_lax_shift_by_a_python_scalar_needs_the_operand_dtype_as_in_jax():
    # lax wants equal dtypes, and a Python int is an int32: a typed amount works, a
    # bare int works only on int32 operands (minijax.lax once converted it silently).
    assert_trees_match(lax.shift_right_logical(U32, np.uint32(9)),
                       jax.lax.shift_right_logical(U32, np.uint32(9)))
    assert_trees_match(lax.shift_left(np.uint8(3), np.uint8(7)),
                       jax.lax.shift_left(np.uint8(3), np.uint8(7)))
    assert_trees_match(lax.shift_left(I32, 2), jax.lax.shift_left(I32, 2))
    for shift in (lax.shift_right_logical, jax.lax.shift_right_logical):
        with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
            shift(U32, 9)


def test_population_count():
    _same(lax.population_count, jax.lax.population_count, I32)
    _same(lax.population_count, jax.lax.population_count, U32)


@pytest.mark.parametrize("x, new_dtype", [
    (np.float32([1.0, -2.5, np.inf]), np.uint32),
    (np.uint32([0x3F800000, 0x7FC00000, 1]), np.float32),
    (np.float32([1.0, 3.0]), np.uint8),
    (np.arange(6, dtype=np.uint16).reshape(3, 2), np.float32),
    (np.float32([0.5, 2.0]), ml_dtypes.bfloat16),
], ids=["f32-u32", "u32-f32", "f32-u8", "u16-f32", "f32-bf16"])
def test_bitcast_convert_type(x, new_dtype):
    def f(lax_module):
        return lambda x: lax_module.bitcast_convert_type(x, new_dtype)
    _same(f(lax), f(jax.lax), x)


@pins("vmap_bitcast_to_wider_with_the_batch_axis_last")
def test_bitcast_under_vmap_with_the_batch_axis_last():
    x = np.arange(12, dtype=np.uint16).reshape(2, 3, 2)   # 3 examples of shape (2, 2)
    x_last = np.moveaxis(x, 1, 2)                           # batch axis 2 = the last
    f = lambda v: lax.bitcast_convert_type(v, np.uint32)
    g = lambda v: jax.lax.bitcast_convert_type(v, np.uint32)
    with pytest.raises(ValueError):
        jax.vmap(g, in_axes=2)(x_last)
    expected = np.stack([g(x_last[..., i]) for i in range(3)])
    assert_trees_match(minijax.vmap(f, in_axes=2)(x_last), expected)


def test_bitcast_errors_name_the_mistake():
    with pytest.raises(TypeError, match="last axis of size 2"):
        lax.bitcast_convert_type(np.uint16([1, 2, 3]), np.uint32)
    with pytest.raises(TypeError, match="bool or complex"):
        lax.bitcast_convert_type(np.array([True]), np.uint8)


def test_nextafter():
    x = np.float32([0.0, 1.0, -1.0, 3e38])
    y = np.float32([1.0, -np.inf, 0.0, np.inf])
    _same(lax.nextafter, jax.lax.nextafter, x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_erf_inv_values(dtype):
    x = np.array([-0.99, -0.5, 0.0, 0.3, 0.9], dtype)
    assert_trees_match(lax.erf_inv(x), jax.lax.erf_inv(x))
    assert_trees_match(minijax.jit(lax.erf_inv)(x), jax.jit(jax.lax.erf_inv)(x))


def test_erf_inv_derivatives():
    x = np.float32([-0.7, 0.1, 0.5])
    f = lambda m: (lambda x: m.numpy.sum(m.lax.erf_inv(x) ** 2))
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))
    assert_trees_match(minijax.jvp(lax.erf_inv, (x,), (np.ones_like(x),)),
                       jax.jvp(jax.lax.erf_inv, (x,), (np.ones_like(x),)))
    assert_trees_match(minijax.vmap(minijax.grad(lax.erf_inv))(x),
                       jax.vmap(jax.grad(jax.lax.erf_inv))(x))


def test_shift_tangents_are_float0():
    _, t = minijax.jvp(lambda x: lax.shift_left(x, 2), (I32,),
                       (np.zeros(I32.shape, jax.dtypes.float0),))
    _, t_jax = jax.jvp(lambda x: jax.lax.shift_left(x, 2), (I32,),
                       (np.zeros(I32.shape, jax.dtypes.float0),))
    assert t.dtype == t_jax.dtype == jax.dtypes.float0 and t.shape == t_jax.shape


def test_nextafter_of_a_differentiated_value_is_an_error_as_in_jax():
    with pytest.raises(NotImplementedError, match="nextafter"):
        minijax.grad(lambda x: lax.nextafter(x, np.float32(2)))(np.float32(1))
    # A constant operand (here through stop_gradient) needs no derivative.
    g = minijax.grad(lambda x: x * lax.nextafter(lax.stop_gradient(x), np.float32(2)))
    assert_trees_match(g(np.float32(1)), jax.grad(
        lambda x: x * jax.lax.nextafter(jax.lax.stop_gradient(x), np.float32(2)))(np.float32(1)))


def test_shift_rejects_floats():
    with pytest.raises(TypeError, match="shift_left"):
        lax.shift_left(np.float32(1), np.float32(2))


@pytest.mark.parametrize("name", ["left_shift", "right_shift", "bitwise_left_shift",
                                  "bitwise_right_shift"])
@pytest.mark.parametrize("x", [I32, U32, np.int8([-128, -1, 5])], ids=["i32", "u32", "i8"])
def test_jnp_shifts(name, x):
    _same(getattr(jnp, name), getattr(jnp_jax, name), x, np.full(x.shape, 3, x.dtype))
    assert_trees_match(getattr(jnp, name)(x, 2), getattr(jnp_jax, name)(x, 2))


def test_shift_operators_on_tracers():
    f = lambda x: (x << 3, x >> 2, 1 << x % 4)
    assert_trees_match(minijax.jit(f)(I32), jax.jit(f)(I32))


def test_jnp_bitwise_count():
    for x in (I32, U32, np.int8([-128, -1, 5])):
        assert_trees_match(jnp.bitwise_count(x), jnp_jax.bitwise_count(x))


def test_jnp_shift_rejects_floats():
    with pytest.raises(TypeError, match="left_shift"):
        jnp.left_shift(np.float32(1), 2)
