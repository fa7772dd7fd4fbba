"""Eager ops and traces on every kind of operand, against JAX (issue #18's speed work).

The eager dispatch cache (`backends/eager_dispatch.py`) keys a call on cheap signatures: jax
arrays, exact Python scalars, and NumPy arrays and scalars of a canonical dtype take
the fast path; anything else (np.float64, a float subclass but strongly typed) takes
the careful one. `lax`'s dtype check settles identical dtypes from `.dtype`. `jit` and
`make_jaxpr` trace with the avals that checking their input leaves computed. Each
case runs twice, so the second call goes through the cache the first one filled.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.lax as mlax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match

_X = np.linspace(-1, 1, 4, dtype=np.float32)

OPERANDS = {
    "jax array": lambda: jnp.asarray(_X),
    "numpy f32 array": lambda: _X.copy(),
    "numpy f64 array": lambda: _X.astype(np.float64),
    "numpy f32 scalar": lambda: np.float32(0.5),
    "numpy f64 scalar": lambda: np.float64(0.5),
    "python float": lambda: 0.5,
    "numpy int64 array": lambda: np.arange(4),
    "python int": lambda: 3,
}


@pytest.mark.parametrize("kind", OPERANDS)
def test_eager_unary_op_on_each_operand_kind(kind):
    # sin of an int is an error on both sides; neg takes every kind.
    for _ in range(2):
        assert_trees_match(mlax.neg(OPERANDS[kind]()), jax.lax.neg(OPERANDS[kind]()))
    if kind not in ("numpy int64 array", "python int"):
        for _ in range(2):
            assert_trees_match(mlax.sin(OPERANDS[kind]()), jax.lax.sin(OPERANDS[kind]()))


@pytest.mark.parametrize("kind", ["jax array", "numpy f32 array", "numpy f64 array",
                                  "numpy f32 scalar", "numpy f64 scalar", "python float"])
def test_eager_binary_op_with_an_f32_array(kind):
    x = jnp.asarray(_X)
    for _ in range(2):
        assert_trees_match(mlax.add(x, OPERANDS[kind]()), jax.lax.add(x, OPERANDS[kind]()))
        assert_trees_match(mlax.mul(OPERANDS[kind](), x), jax.lax.mul(OPERANDS[kind](), x))


@pytest.mark.parametrize("other", [np.arange(4, dtype=np.int32), 2, np.float16(2)])
def test_lax_dtype_check_still_refuses_mixed_dtypes(other):
    x = jnp.asarray(_X)
    with pytest.raises(TypeError) as ours:
        mlax.add(x, other)
    with pytest.raises(TypeError) as theirs:
        jax.lax.add(x, other)
    assert "requires arguments to have the same dtypes" in str(ours.value)
    assert "requires arguments to have the same dtypes" in str(theirs.value)


@pytest.mark.parametrize("kind", OPERANDS)
def test_jnp_multiply_on_each_operand_kind(kind):
    x = jnp.asarray(_X)
    for _ in range(2):
        assert_trees_match(mnp.multiply(x, OPERANDS[kind]()), jnp.multiply(x, OPERANDS[kind]()))
        assert_trees_match(mnp.add(OPERANDS[kind](), OPERANDS[kind]()),
                           jnp.add(OPERANDS[kind](), OPERANDS[kind]()))


@pytest.mark.parametrize("dimension_numbers", [
    (((1,), (0,)), ((), ())),
    ([[1], [0]], [[], []]),                               # lists: not hashable
    (((np.int64(1),), (np.int64(0),)), ((), ())),         # NumPy integers
])
def test_dot_general_dimension_numbers_in_any_form(dimension_numbers):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(2):
        ours = mlax.dot_general(a, b, dimension_numbers)
        assert_trees_match(ours, jax.lax.dot_general(a, b, (((1,), (0,)), ((), ()))))
    eqn = minijax.make_jaxpr(lambda a, b: mlax.dot_general(a, b, dimension_numbers))(
        a, b).jaxpr.eqns[0]
    assert eqn.params["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert all(type(i) is int for pair in eqn.params["dimension_numbers"]
               for axes in pair for i in axes)


def test_traced_inputs_have_the_avals_of_their_leaves():
    args = (np.ones((2, 3), np.float64), 1.5, jnp.ones(3, jnp.int32), np.float32(2))
    ours = minijax.make_jaxpr(lambda *xs: xs)(*args)
    theirs = jax.make_jaxpr(lambda *xs: xs)(*args)
    assert [(v.aval.shape, v.aval.dtype, v.aval.weak_type) for v in ours.jaxpr.invars] == \
        [(a.shape, a.dtype, a.weak_type) for a in theirs.in_avals]


@pytest.mark.parametrize("entry", ["make_jaxpr", "eval_shape"])
def test_an_invalid_leaf_is_named(entry):
    f = lambda a, b: a
    call = {"make_jaxpr": lambda: minijax.make_jaxpr(f)(np.ones(2), "text"),
            "eval_shape": lambda: minijax.eval_shape(f, np.ones(2), "text")}[entry]
    with pytest.raises(TypeError, match=r"input leaf 1 of type str is not a valid minijax"):
        call()
