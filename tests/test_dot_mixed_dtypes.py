"""`dot_general` of operands of two dtypes, and the dtype of its transpose.

JAX's `lax.dot_general` takes operands of different dtypes (XLA's rule: the result
has the dtype it ranks higher: complex over real, then exponent range, mantissa,
width, signed over unsigned), and `preferred_element_type` may not narrow an integer
result. Its transpose multiplies the cotangent at the forward `preferred_element_type`
and converts only the product to the operand's dtype, so a bf16 weight multiplied
with float32 accumulation gets its gradient from the float32 cotangent. Each case
runs through minijax and JAX on the same inputs."""
import itertools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match

MATMUL = (((1,), (0,)), ((), ()))
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16, ml_dtypes.bfloat16,
          np.float32, np.complex64]
PREFERRED = [None, np.int8, np.int32, np.float32, np.complex64]


def _outcome(lib, lhs, rhs, preferred):
    """The traced result dtype, or the exception type (tracing only: no compile)."""
    try:
        closed = lib.make_jaxpr(lambda l, r: lib.lax.dot_general(
            l, r, MATMUL, preferred_element_type=preferred))(lhs, rhs)
    except TypeError:
        return TypeError
    return np.dtype(closed.out_avals[0].dtype)


def test_result_dtype_of_every_operand_pair_as_jax():
    for a, b, preferred in itertools.product(DTYPES, DTYPES, PREFERRED):
        lhs, rhs = np.ones((2, 3), a), np.ones((3, 2), b)
        assert _outcome(minijax, lhs, rhs, preferred) == _outcome(jax, lhs, rhs, preferred), \
            (np.dtype(a).name, np.dtype(b).name, preferred)


def test_narrowing_preferred_type_is_jax_type_error():
    x = np.ones((2, 2), np.int32)
    with pytest.raises(TypeError, match="must not be narrower"):
        minijax.lax.dot_general(x, x, MATMUL, preferred_element_type=np.int8)
    with pytest.raises(TypeError):
        jax.lax.dot_general(x, x, MATMUL, preferred_element_type=np.int8)


rng = np.random.default_rng(0)
F32 = rng.normal(size=(4, 8)).astype(np.float32)
BF16 = rng.normal(size=(8, 3)).astype(ml_dtypes.bfloat16)
I8 = rng.integers(-5, 5, (4, 8)).astype(np.int8)
W32 = rng.normal(size=(8, 3)).astype(np.float32)


@pytest.mark.parametrize("lhs, rhs", [(F32, BF16), (I8, W32), (BF16.T.copy(), F32.T.copy())],
                         ids=["f32.bf16", "i8.f32", "bf16.f32"])
def test_mixed_operands_eager_jit_and_vmap_as_jax(lhs, rhs):
    def f(lib):
        return lambda l, r: lib.lax.dot_general(l, r, MATMUL)
    assert_trees_match(f(minijax)(lhs, rhs), f(jax)(lhs, rhs))
    assert_trees_match(minijax.jit(f(minijax))(lhs, rhs), jax.jit(f(jax))(lhs, rhs))
    assert_trees_match(minijax.vmap(f(minijax), (None, 1))(lhs, rhs[:, None]),
                       jax.vmap(f(jax), (None, 1))(lhs, rhs[:, None]))


def _mixed_precision_loss(lib, cotangent):
    def loss(x, w):
        out = lib.lax.dot_general(x, w, MATMUL, preferred_element_type=np.float32)
        return (out * cotangent).sum()
    return loss


def test_gradient_of_bf16_product_keeps_float32_accumulation_as_jax():
    x = rng.normal(size=(4, 8)).astype(ml_dtypes.bfloat16)
    # cotangents bf16 cannot hold: rounding them before the product changes the result
    cotangent = (1 + rng.uniform(0, 2 ** -8, size=(4, 3))).astype(np.float32) / 3
    ours = minijax.grad(_mixed_precision_loss(minijax, cotangent), (0, 1))(x, BF16)
    theirs = jax.grad(_mixed_precision_loss(jax, cotangent), (0, 1))(x, BF16)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
    jaxpr = str(minijax.make_jaxpr(minijax.grad(_mixed_precision_loss(minijax, cotangent),
                                                (0, 1)))(x, BF16))
    assert jaxpr.count("preferred_element_type=float32") == 3


def test_gradient_of_mixed_operands_as_jax():
    def loss(lib):
        return lambda x, w: lib.lax.dot_general(x, w, MATMUL).sum()
    ours = minijax.grad(loss(minijax), (0, 1))(F32, BF16)
    theirs = jax.grad(loss(jax), (0, 1))(F32, BF16)
    assert_trees_match(ours, theirs)
    assert [a.dtype for a in ours] == [np.float32, ml_dtypes.bfloat16]
