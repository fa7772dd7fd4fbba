"""Edge cases of jacrev / jacfwd / grad, and the weak types of bool results, each run
through minijax and JAX on the same inputs.

* `allow_int=True` with an integer input: jacrev casts each Jacobian block to its
  input's dtype (integer zeros of shape output + input), grad gives float0 zeros.
* Outputs a transform cannot pull back from: jacrev and grad refuse integer, bool and
  (without holomorphic=True) complex outputs with a TypeError; with holomorphic=True
  jacrev and jacfwd refuse real outputs.
* Comparisons of weakly typed operands give weak bools; weak bools promoted together
  (jnp's `&`, `==`, stacking, `any`) give strong ones, as JAX's lattice has no weak bool.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing.comparison import assert_trees_match
from tests.test_divergences import pins

X3 = np.array([0.5, -1.0, 2.0], np.float32)
I2 = np.array([1, 2], np.int32)
C2 = np.array([1 + 2j, 3 - 1j], np.complex64)


def _libs():
    return ((minijax, mnp), (jax, jnp))


# -- allow_int: integer inputs ------------------------------------------------------------

def _mixed(np_):
    return lambda x, i: x * 2.0 + np_.sum(i) * x


@pytest.mark.parametrize("argnums", [(0, 1), 1])
def test_jacrev_allow_int_blocks_are_zeros_of_the_inputs_dtype(argnums):
    ours, theirs = (lib.jacrev(_mixed(np_), argnums=argnums, allow_int=True)
                    for lib, np_ in _libs())
    expected = jax.jit(theirs)(X3, I2)
    assert_trees_match(ours(X3, I2), expected)
    assert_trees_match(minijax.jit(ours)(X3, I2), expected)
    int_block = expected[1] if argnums == (0, 1) else expected
    assert int_block.shape == (3, 2) and int_block.dtype == np.int32


def test_jacrev_allow_int_of_a_pytree_with_integer_leaves():
    def program(np_):
        return lambda tree: {"y": tree["x"] * np_.sum(tree["n"]), "z": np_.sum(tree["x"])}
    args = {"x": X3, "n": np.ones((2, 2), np.int32)}
    ours = minijax.jacrev(program(mnp), allow_int=True)(args)
    theirs = jax.jit(jax.jacrev(program(jnp), allow_int=True))(args)
    assert_trees_match(ours, theirs)
    assert ours["y"]["n"].shape == (3, 2, 2) and ours["z"]["n"].shape == (2, 2)


@pytest.mark.parametrize("argnums", [(0, 1), 1])
def test_grad_allow_int_gives_float0_zeros(argnums):
    # float0 is not an XLA type: JAX's side runs eagerly here.
    def program(np_):
        return lambda x, i: np_.sum(x * 2.0) + np_.sum(i)
    ours = minijax.grad(program(mnp), argnums=argnums, allow_int=True)(X3, I2)
    theirs = jax.grad(program(jnp), argnums=argnums, allow_int=True)(X3, I2)
    ours_int, theirs_int = (g[1] if argnums == (0, 1) else g for g in (ours, theirs))
    assert theirs_int.dtype == jax.dtypes.float0
    assert np.asarray(ours_int).dtype == theirs_int.dtype
    assert np.shape(ours_int) == np.shape(theirs_int) == (2,)
    if argnums == (0, 1):
        assert_trees_match(ours[0], theirs[0])


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "grad"])
def test_integer_input_without_allow_int_is_a_type_error(transform):
    for lib in (minijax, jax):
        with pytest.raises(TypeError, match="int32"):
            getattr(lib, transform)(lambda i: i * 2.0)(I2)


@pins("jacobian_block_of_a_bool_leaf_crashes")
def test_bool_leaf_jacobian_block_is_false_where_jax_crashes():
    flags = np.array([True, False])
    with pytest.raises(TypeError, match="bytes-like"):
        jax.jacrev(lambda x, b: x * b, argnums=(0, 1), allow_int=True)(X3[:2], flags)
    with pytest.raises(TypeError, match="bytes-like"):
        jax.jacfwd(lambda x: x > 0)(X3)
    ours = minijax.jacrev(lambda x, b: x * b, argnums=(0, 1), allow_int=True)(
        X3[:2], flags)
    assert ours[1].dtype == np.bool_ and ours[1].shape == (2, 2) and not ours[1].any()
    assert_trees_match(ours[0], jax.jacrev(lambda x: x * flags)(X3[:2]))
    jac = minijax.jacfwd(lambda x: x > 0)(X3)
    assert jac.dtype == np.bool_ and jac.shape == (3, 3) and not np.asarray(jac).any()


# -- outputs a transform cannot pull back from -------------------------------------------

_REFUSED_BY_JACREV = {
    "int output": (lambda np_: lambda x: (x * 2).astype(np_.int32), X3, False, "int32"),
    "bool output": (lambda np_: lambda x: x > 0, X3, False, "bool"),
    "int beside float": (lambda np_: lambda x: (x, np_.zeros(2, np_.int32)), X3, False,
                         "int32"),
    "complex output": (lambda np_: lambda x: x * (1 + 1j), X3, False, "complex64"),
    "complex to complex": (lambda np_: lambda z: z * z, C2, False, "complex64"),
    "holomorphic real output": (lambda np_: lambda z: np_.abs(z), C2, True, "float32"),
}


@pytest.mark.parametrize("case", _REFUSED_BY_JACREV)
def test_jacrev_refuses_outputs_it_cannot_pull_back(case):
    program, arg, holomorphic, dtype_name = _REFUSED_BY_JACREV[case]
    for lib, np_ in _libs():
        with pytest.raises(TypeError, match=dtype_name) as error:
            lib.jacrev(program(np_), holomorphic=holomorphic)(arg)
        assert "output" in str(error.value)


@pytest.mark.parametrize("program, dtype_name", [
    (lambda np_: lambda x: np_.sum(x).astype(np_.int32), "int32"),
    (lambda np_: lambda x: np_.sum(x) * 1j, "complex64"),
])
def test_grad_refuses_integer_and_complex_outputs(program, dtype_name):
    for lib, np_ in _libs():
        with pytest.raises(TypeError, match=dtype_name):
            lib.grad(program(np_))(X3)


def test_jacfwd_with_holomorphic_refuses_a_real_output():
    for lib, np_ in _libs():
        with pytest.raises(TypeError, match="float32"):
            lib.jacfwd(lambda z: np_.abs(z), holomorphic=True)(C2)


def test_jacfwd_of_an_integer_output_is_zeros_of_its_dtype():
    ours, theirs = (lib.jacfwd(lambda x, np_=np_: ((x * 2).astype(np_.int32), x * 3))
                    for lib, np_ in _libs())
    assert_trees_match(ours(X3), jax.jit(theirs)(X3))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_holomorphic_jacobians_match_jax(transform):
    ours, theirs = (getattr(lib, transform)(lambda z: z * z + 3j * z, holomorphic=True)
                    for lib in (minijax, jax))
    expected = jax.jit(theirs)(C2)
    assert_trees_match(ours(C2), expected, rtol=1e-6)
    assert_trees_match(minijax.jit(ours)(C2), expected, rtol=1e-6)


def test_jacrev_of_a_real_function_of_complex_inputs_matches_jax():
    ours, theirs = (lib.jacrev(lambda z, np_=np_: np_.abs(z) ** 2)
                    for lib, np_ in _libs())
    assert_trees_match(ours(C2), jax.jit(theirs)(C2), rtol=1e-6)


# -- weak bools ----------------------------------------------------------------------------

_BOOL_PROGRAMS = {
    "==": lambda L, np_: lambda a, b: a == b,
    "!=": lambda L, np_: lambda a, b: a != b,
    "<": lambda L, np_: lambda a, b: a < b,
    "== True": lambda L, np_: lambda a, b: (a == b) == True,  # noqa: E712
    "cmp & cmp": lambda L, np_: lambda a, b: (a == b) & (a < b),
    "cmp | True": lambda L, np_: lambda a, b: (a < b) | True,
    "cmp ^ cmp": lambda L, np_: lambda a, b: (a == b) ^ (a < b),
    "~cmp": lambda L, np_: lambda a, b: ~(a == b),
    "array(True) & cmp": lambda L, np_: lambda a, b: np_.array(True) & (a == b),
    "logical_and": lambda L, np_: lambda a, b: np_.logical_and(a, b),
    "logical_or True": lambda L, np_: lambda a, b: np_.logical_or(True, a),
    "logical_xor": lambda L, np_: lambda a, b: np_.logical_xor(a, b),
    "logical_not": lambda L, np_: lambda a, b: np_.logical_not(a),
    "where bools": lambda L, np_: lambda a, b: np_.where(a == b, a < b, True),
    "where numbers": lambda L, np_: lambda a, b: np_.where(a == b, 1, 2),
    "select": lambda L, np_: lambda a, b: L.lax.select(a == b, a < b, a > b),
    "any": lambda L, np_: lambda a, b: np_.any(a == b),
    "stack": lambda L, np_: lambda a, b: np_.stack([a == b, a < b]),
    "maximum": lambda L, np_: lambda a, b: np_.maximum(a == b, a < b),
    "cmp + 1": lambda L, np_: lambda a, b: (a == b) + 1,
    "isfinite": lambda L, np_: lambda a, b: np_.isfinite(a),
    "isnan": lambda L, np_: lambda a, b: np_.isnan(a),
}

_BOOL_ARGS = {
    "python floats": (1.0, 2.0),
    "python ints": (1, 2),
    "python bool and int": (True, 1),
    "python bools": (True, False),
    "weak and strong": (1.0, np.float32(2.0)),
    "arrays": (X3[:2], np.array([0.5, 3.0], np.float32)),
}


def _out_types(avals):
    return [(np.dtype(a.dtype).name, bool(a.weak_type)) for a in avals]


@pytest.mark.parametrize("args", _BOOL_ARGS)
@pytest.mark.parametrize("name", _BOOL_PROGRAMS)
def test_make_jaxpr_weak_flags_of_bool_results_match_jax(name, args):
    program, operands = _BOOL_PROGRAMS[name], _BOOL_ARGS[args]
    outcomes = []
    for lib, np_ in _libs():
        try:
            closed = lib.make_jaxpr(program(lib, np_))(*operands)
        except TypeError as error:      # the same refusals (bitwise ops of floats)
            outcomes.append(type(error))
            continue
        avals = (closed.out_avals if lib is minijax
                 else [v.aval for v in closed.jaxpr.outvars])
        outcomes.append(_out_types(avals))
    assert outcomes[0] == outcomes[1], outcomes


@pytest.mark.parametrize("name", ["cmp & cmp", "logical_and", "where bools", "any",
                                  "isfinite", "cmp + 1"])
def test_bool_results_match_jax_eagerly_and_under_jit(name):
    program = _BOOL_PROGRAMS[name]
    a, b = jnp.float32(1.0), 2.0      # a strong and a weak scalar
    weak_a = jnp.asarray(1.0)          # weak scalar array
    for operands in [(a, b), (weak_a, b), (weak_a, weak_a)]:
        expected = jax.jit(program(jax, jnp))(*operands)
        assert_trees_match(program(minijax, mnp)(*operands), expected, what=name)
        assert_trees_match(minijax.jit(program(minijax, mnp))(*operands), expected,
                           what=name)
