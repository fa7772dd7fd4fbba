"""Small behaviours where minijax used to part from JAX: each is checked against JAX on
the same inputs (values, or the exception type)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.library_helpers import assert_same_outcome

I8 = np.array([1, 2], np.int8)
U8 = np.array([1, 2], np.uint8)
U32 = np.array([1], np.uint32)
F32 = np.ones(2, np.float32)


# A Python int meeting a narrower integer array wraps into its dtype; it must still
# fit the weak int32 it is passed to a jnp function as (u32 + 2**31 is refused too).
PYTHON_INT_OPERANDS = [
    lambda jax: jax.numpy.add(I8, 300),
    lambda jax: jax.numpy.asarray(I8) + 300,
    lambda jax: 300 - jax.numpy.asarray(U8),
    lambda jax: jax.numpy.multiply(I8, -200),
    lambda jax: jax.numpy.maximum(U8, -1),
    lambda jax: jax.numpy.where(I8 > 1, I8, 300),
    lambda jax: jax.numpy.clip(I8, 0, 300),
    lambda jax: jax.numpy.equal(I8, 300),
    lambda jax: jax.numpy.add(I8, 2**31 - 1),
    lambda jax: jax.numpy.add(I8, 2**31),
    lambda jax: jax.numpy.add(U32, 2**31),
    lambda jax: jax.numpy.add(F32, 2**40),
    lambda jax: jax.lax.add(I8, 300),
    lambda jax: jax.numpy.full_like(I8, 2**31),
    lambda jax: jax.numpy.pad(I8, 1, constant_values=300),
    # jnp.array converts Python ints with NumPy, which refuses what the dtype lacks.
    lambda jax: jax.numpy.array([1, 300], jax.numpy.int8),
    lambda jax: jax.numpy.asarray(-1, jax.numpy.uint8),
    lambda jax: jax.numpy.array(np.array([300]), jax.numpy.int8),
]


def test_python_int_operands_wrap_as_in_jax():
    for case in PYTHON_INT_OPERANDS:
        assert_same_outcome(case)


def test_python_int_operands_wrap_under_jit():
    def f(jax, x, u):
        return x + 300, x * 128, u - 1, jax.numpy.subtract(x, -2**31)

    assert_same_outcome(lambda jax: jax.jit(lambda x, u: f(jax, x, u))(I8, U8))
    assert_same_outcome(lambda jax: jax.jit(lambda u: u + 2**31)(U32))
