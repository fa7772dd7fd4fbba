"""Top-level names added to the surface, each against JAX: `linear_transpose`,
`custom_gradient`, `closure_convert`, `ensure_compile_time_eval`, `device_get`, and
the `dtypes` and `typing` modules."""
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match


def _both(make):
    """`make(lib, np_lib)` for minijax and for JAX."""
    return make(minijax, mnp), make(jax, jnp)


# -- linear_transpose --------------------------------------------------------------------------

LINEAR = {
    "scale and sum": (lambda np_lib: lambda x, y: {"a": 2.0 * x + y.sum(), "b": x},
                      (1.0, np.ones(3, np.float32)), {"a": 1.0, "b": 2.0}),
    "matmul": (lambda np_lib: lambda w: np_lib.dot(np.arange(6, dtype=np.float32).reshape(2, 3), w),
               (np.ones((3, 2), np.float32),), np.ones((2, 2), np.float32)),
    "slice and pad": (lambda np_lib: lambda x: (x[1:], np_lib.concatenate([x, x])),
                      (np.ones(3, np.float32),),
                      (np.arange(2, dtype=np.float32), np.arange(6, dtype=np.float32))),
    "constant output": (lambda np_lib: lambda x: np_lib.zeros(2), (1.0,), np.ones(2, np.float32)),
    "complex": (lambda np_lib: lambda z: (1 + 2j) * z, (np.ones(2, np.complex64),),
                np.arange(2, dtype=np.complex64)),
}


@pytest.mark.parametrize("case", list(LINEAR))
def test_linear_transpose_matches_jax(case):
    make, primals, ct = LINEAR[case]
    ours = minijax.linear_transpose(make(mnp), *primals)
    theirs = jax.linear_transpose(make(jnp), *primals)
    assert_trees_match(ours(ct), theirs(ct))
    assert_trees_match(minijax.jit(ours)(ct), jax.jit(theirs)(ct))
    batched = jax.tree_util.tree_map(lambda c: np.stack([c, 2 * np.asarray(c)]), ct)
    assert_trees_match(minijax.vmap(ours)(batched), jax.vmap(theirs)(batched))


def test_linear_transpose_takes_shape_dtype_structs_and_is_differentiable():
    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    ours = minijax.linear_transpose(lambda x: x * 3.0, spec)
    theirs = jax.linear_transpose(lambda x: x * 3.0, spec)
    ct = np.array([1.0, 2.0], np.float32)
    assert_trees_match(ours(ct), theirs(ct))
    assert_trees_match(minijax.grad(lambda c: mnp.sum(ours(c)[0] ** 2))(ct),
                       jax.grad(lambda c: jnp.sum(theirs(c)[0] ** 2))(ct))


def test_linear_transpose_errors_are_type_errors_as_in_jax():
    for lib in (minijax, jax):
        transposed = lib.linear_transpose(lambda x: {"a": x, "b": x}, 1.0)
        with pytest.raises(TypeError, match="cotangent tree does not match"):
            transposed(1.0)
        with pytest.raises(TypeError, match="cotangent type does not match"):
            transposed({"a": np.ones(2, np.float32), "b": 1.0})
        with pytest.raises(TypeError, match="cotangent type does not match"):
            transposed({"a": 2, "b": 1.0})
        with pytest.raises(TypeError, match="linear_transpose only supports"):
            lib.linear_transpose(lambda x: x.astype(np.float32), 1)
    with pytest.raises(TypeError, match="mul of two linear values is not linear"):
        minijax.linear_transpose(lambda x: x * x, 1.0)(1.0)


# -- custom_gradient ----------------------------------------------------------------------------

def _clipped_sin(lib, np_lib):
    @lib.custom_gradient
    def f(x):
        y = np_lib.sin(x)
        return y, lambda ct: np_lib.clip(ct * np_lib.cos(x), -0.5, 0.5)
    return f


def _two_args(lib, np_lib):
    @lib.custom_gradient
    def f(x, y):
        return x * y, lambda ct: (ct * y * 3.0, ct * x)
    return f


def _pair(lib, np_lib):
    @lib.custom_gradient
    def f(x, y):
        out = {"p": x * y, "s": np_lib.sum(x)}
        return out, lambda ct: (ct["p"] * y + ct["s"], ct["p"] * x * 2.0)
    return f


def test_custom_gradient_of_one_argument_matches_jax():
    ours, theirs = _both(_clipped_sin)
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    assert_trees_match(ours(x), theirs(x))
    grad_ours = minijax.grad(lambda x: mnp.sum(ours(x) * 3.0))
    grad_theirs = jax.grad(lambda x: jnp.sum(theirs(x) * 3.0))
    assert_trees_match(grad_ours(x), grad_theirs(x))
    assert_trees_match(minijax.jit(grad_ours)(x), jax.jit(grad_theirs)(x))
    assert_trees_match(minijax.vmap(minijax.grad(ours))(x), jax.vmap(jax.grad(theirs))(x))


@pytest.mark.parametrize("make", [_two_args, _pair], ids=["two args", "pytree output"])
def test_custom_gradient_of_several_arguments_matches_jax(make):
    ours, theirs = _both(make)
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)
    loss = lambda f, np_lib: lambda x, y: np_lib.sum(                     # noqa: E731
        jax.tree_util.tree_leaves(f(x, y))[0] ** 2)
    assert_trees_match(minijax.grad(loss(ours, mnp), argnums=(0, 1))(x, y),
                       jax.grad(loss(theirs, jnp), argnums=(0, 1))(x, y))
    assert_trees_match(minijax.vjp(ours, x, y)[1](ours(x, y)),
                       jax.vjp(theirs, x, y)[1](theirs(x, y)))


def test_custom_gradient_needs_a_pair_with_a_rule():
    f = minijax.custom_gradient(lambda x: x * 2.0)
    with pytest.raises(TypeError, match="must return a pair"):
        f(1.0)


# -- closure_convert ----------------------------------------------------------------------------

def _closure_converted(lib, np_lib):
    def outer(x, scale):
        def inner(y):
            return np_lib.sin(y * x) * scale + 1.0
        converted, consts = lib.closure_convert(inner, x)
        return converted(x * 2.0, *consts), len(consts)
    return outer


def test_closure_convert_hoists_what_may_be_differentiated_as_jax():
    ours, theirs = _both(_closure_converted)
    x, scale = np.float32(0.7), np.float32(3.0)
    assert_trees_match(ours(x, scale), theirs(x, scale))
    # Under grad both closed-over floats are tracers: both are hoisted.
    count = {}

    def counting(f, np_lib, key):
        def g(x, scale):
            out, n = f(x, scale)
            count[key] = n
            return out
        return g
    assert_trees_match(minijax.grad(counting(ours, mnp, "ours"), argnums=(0, 1))(x, scale),
                       jax.grad(counting(theirs, jnp, "theirs"), argnums=(0, 1))(x, scale))
    assert count["ours"] == count["theirs"] == 2
    assert_trees_match(minijax.jit(lambda x: ours(x, scale)[0])(x),
                       jax.jit(lambda x: theirs(x, scale)[0])(x))


def test_closure_convert_refuses_other_argument_structures():
    converted, consts = minijax.closure_convert(lambda a, b: a + b, 1.0, 2.0)
    assert consts == []
    assert_trees_match(converted(1.0, 2.0), jnp.asarray(3.0))
    with pytest.raises(TypeError, match="structure"):
        converted((1.0, 2.0))


# -- ensure_compile_time_eval -------------------------------------------------------------------

def _branches_on_a_computed_constant(lib, np_lib):
    @lib.jit
    def f(x):
        with lib.ensure_compile_time_eval():
            table = np_lib.arange(4.0) ** 2
            pick = int(np_lib.argmax(table))       # concrete: Python may branch on it
            doubled = x * 2.0                       # a traced value stays traced
        return doubled + table[pick], pick
    return f


def test_ensure_compile_time_eval_runs_concrete_operations_now():
    ours, theirs = _both(_branches_on_a_computed_constant)
    assert_trees_match(ours(1.5), theirs(1.5))
    assert_trees_match(minijax.grad(lambda x: ours(x)[0])(1.5),
                       jax.grad(lambda x: theirs(x)[0])(1.5))
    assert_trees_match(minijax.vmap(lambda x: ours(x)[0])(np.ones(2, np.float32)),
                       jax.vmap(lambda x: theirs(x)[0])(np.ones(2, np.float32)))
    # At the root it changes nothing.
    with minijax.ensure_compile_time_eval():
        assert_trees_match(mnp.ones(2) * 3, jnp.ones(2) * 3)


def test_without_ensure_compile_time_eval_the_value_is_abstract():
    @minijax.jit
    def f(x):
        return int(mnp.argmax(mnp.arange(4.0)))
    with pytest.raises(minijax.errors.ConcretizationTypeError):
        f(1.0)


# -- device_get ---------------------------------------------------------------------------------

def test_device_get_copies_arrays_to_numpy_as_jax():
    tree = {"a": jnp.ones(2), "b": 1.0, "c": "text", "d": [minijax.jit(lambda: mnp.arange(3))()]}
    ours, theirs = minijax.device_get(tree), jax.device_get(tree)
    assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert type(a) is type(b)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    # Under a transformation a tracer is handed back, as JAX does.
    assert_trees_match(minijax.jit(lambda x: minijax.device_get(x) * 2.0)(1.0),
                       jax.jit(lambda x: jax.device_get(x) * 2.0)(1.0))
    with pytest.raises(minijax.RefError, match="Read its value first"):
        minijax.device_get(minijax.new_ref(mnp.ones(2)))


# -- dtypes and typing --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["canonicalize_dtype", "issubdtype", "result_type",
                                  "scalar_type_of", "itemsize_bits", "finfo", "iinfo",
                                  "bfloat16", "float0", "prng_key", "extended",
                                  "TypePromotionError"])
def test_dtypes_names_exist_as_in_jax(name):
    assert hasattr(jax.dtypes, name) and hasattr(minijax.dtypes, name)


@pytest.mark.parametrize("query", [
    ("canonicalize_dtype", ("float64",)), ("canonicalize_dtype", (int,)),
    ("canonicalize_dtype", (np.uint8,)), ("result_type", (1, 2.0)),
    ("result_type", (np.int8, 1.0)), ("result_type", (np.float16, np.int32)),
    ("scalar_type_of", (np.ones(2, np.int8),)), ("scalar_type_of", (1.5,)),
    ("scalar_type_of", (np.bool_(True),)), ("itemsize_bits", ("bfloat16",)),
    ("issubdtype", (jnp.bfloat16, np.floating)), ("issubdtype", (np.int32, np.inexact)),
    ("issubdtype", (jax.dtypes.float0, np.generic))], ids=str)
def test_dtypes_answers_as_jax(query):
    name, args = query
    assert getattr(minijax.dtypes, name)(*args) == getattr(jax.dtypes, name)(*args)


def test_dtypes_of_traced_values_and_keys():
    assert minijax.dtypes.result_type(1, 2.0, return_weak_type_flag=True) == \
        jax.dtypes.result_type(1, 2.0, return_weak_type_flag=True)
    key = minijax.random.key(0)
    for dtypes, k in ((minijax.dtypes, key), (jax.dtypes, jax.random.key(0))):
        assert dtypes.issubdtype(k.dtype, dtypes.prng_key)
        assert not dtypes.issubdtype(k.dtype, np.floating)
        with pytest.raises(ValueError, match="extended dtype"):
            dtypes.canonicalize_dtype(k.dtype)
    seen = []
    minijax.jit(lambda k, x: seen.append(
        (minijax.dtypes.issubdtype(k.dtype, minijax.dtypes.prng_key),
         minijax.dtypes.result_type(x, 1.0), minijax.dtypes.scalar_type_of(x))))(
        key, np.float16(1))
    assert seen == [(True, np.dtype(np.float16), float)]


def test_typing_names_as_jax():
    assert minijax.typing.DTypeLike is jax.typing.DTypeLike
    members = typing.get_args(minijax.typing.ArrayLike)
    assert set(typing.get_args(jax.typing.ArrayLike)) <= set(members)
    assert minijax.ir.Tracer in members
