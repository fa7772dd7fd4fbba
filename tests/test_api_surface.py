"""The public names a JAX user reaches for (issue #12), each against JAX.

`jacobian`, `lax.Precision` and `precision=`, the device and placement names,
`block_until_ready`, `eval_shape`, `named_call`/`named_scope`, `typeof`; and the
error types of `jnp` functions given lists (JAX refuses them with TypeError) and of
contractions with mismatched shapes (TypeError, as JAX's dot_general).
"""
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match


NAMES = ["jacobian", "eval_shape", "disable_jit", "device_put", "devices", "local_devices",
         "device_count", "local_device_count", "default_backend", "block_until_ready",
         "named_call", "named_scope", "typeof", "clear_caches", "ShapeDtypeStruct",
         "device_get", "linear_transpose", "custom_gradient", "closure_convert",
         "pure_callback", "ensure_compile_time_eval", "enable_x64", "debug_nans",
         "debug_infs", "default_matmul_precision", "numpy_rank_promotion", "process_index",
         "process_count", "ds"]


@pytest.mark.parametrize("name", NAMES)
def test_name_exists_as_in_jax(name):
    assert hasattr(jax, name) and callable(getattr(minijax, name))


def test_jacobian_is_reverse_mode_as_in_jax():
    def f(lib, np_lib):
        return lambda x: np_lib.sin(x) * x[::-1]
    x = np.linspace(0.1, 1.0, 3, dtype=np.float32)
    assert_trees_match(minijax.jacobian(f(minijax, mnp))(x), jax.jacobian(f(jax, jnp))(x))
    assert_trees_match(minijax.jit(minijax.jacobian(f(minijax, mnp)))(x),
                       jax.jit(jax.jacobian(f(jax, jnp)))(x))


# -- precision ------------------------------------------------------------------------------

PRECISIONS = [None, "highest", "default", minijax.lax.Precision.HIGH,
              ("high", "highest"), (jax.lax.Precision.HIGHEST, jax.lax.Precision.DEFAULT)]


def _contractions(np_lib, lax, precision):
    return {
        "dot": lambda a, b: np_lib.dot(a, b, precision=precision),
        "matmul": lambda a, b: np_lib.matmul(a, b, precision=precision),
        "einsum": lambda a, b: np_lib.einsum("ij,jk->ik", a, b, precision=precision),
        "tensordot": lambda a, b: np_lib.tensordot(a, b, 1, precision=precision),
        "inner": lambda a, b: np_lib.inner(a, b.T, precision=precision),
        "lax.dot": lambda a, b: lax.dot(a, b, precision=precision),
        "lax.dot_general": lambda a, b: lax.dot_general(
            a, b, (((1,), (0,)), ((), ())), precision=precision),
    }


@pytest.mark.parametrize("precision", PRECISIONS, ids=str)
@pytest.mark.parametrize("name", list(_contractions(jnp, jax.lax, None)))
def test_precision_is_accepted_wherever_jax_takes_it(name, precision):
    mini = _contractions(mnp, minijax.lax, precision)[name]
    ref = _contractions(jnp, jax.lax, precision)[name]
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
    assert_trees_match(mini(a, b), ref(a, b))
    assert_trees_match(minijax.jit(mini)(a, b), jax.jit(ref)(a, b))
    grad_mini = minijax.grad(lambda a, b: mnp.sum(mini(a, b)), argnums=(0, 1))
    grad_ref = jax.grad(lambda a, b: jnp.sum(ref(a, b)), argnums=(0, 1))
    assert_trees_match(grad_mini(a, b), grad_ref(a, b))
    batched = np.stack([a, a + 1])
    assert_trees_match(minijax.vmap(mini, (0, None))(batched, b),
                       jax.vmap(ref, (0, None))(batched, b))


def test_precision_is_a_dot_general_param_in_the_text_form():
    closed = minijax.make_jaxpr(lambda a: mnp.dot(a, a.T, precision="highest"))(np.ones((2, 2)))
    assert "precision=('HIGHEST', 'HIGHEST')" in str(closed)
    assert minijax.ir.dumps(minijax.ir.loads(minijax.ir.dumps(closed))) == minijax.ir.dumps(closed)


@pytest.mark.parametrize("bad", ["fastestest", 3, ("high",), ("high", None)])
def test_a_bad_precision_is_a_value_error_as_in_jax(bad):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError):
        jnp.dot(a, a, precision=bad)
    with pytest.raises(ValueError, match="precision"):
        mnp.dot(a, a, precision=bad)


# -- devices and placement ------------------------------------------------------------------

def test_device_queries_answer_as_jax():
    assert minijax.devices() == jax.devices()
    assert minijax.local_devices() == jax.local_devices()
    assert minijax.device_count() == jax.device_count()
    assert minijax.local_device_count() == jax.local_device_count()
    assert minijax.default_backend() == jax.default_backend()
    assert minijax.process_index() == jax.process_index() == 0
    assert minijax.process_count() == jax.process_count() == 1


@pytest.mark.parametrize("value", [1.5, 3, np.float32(2.0), np.arange(3), {"a": [1.0, np.ones(2)]}],
                         ids=["float", "int", "np-scalar", "np-array", "pytree"])
def test_device_put_makes_arrays_as_jax(value):
    out, ref = minijax.device_put(value), jax.device_put(value)
    for leaf in jax.tree_util.tree_leaves(out):
        assert isinstance(leaf, jax.Array)
    assert_trees_match(out, ref)
    assert_trees_match(minijax.device_put(value, minijax.devices()[0]),
                       jax.device_put(value, jax.devices()[0]))


def test_device_put_under_transformations_is_the_identity():
    f_mini = lambda x: minijax.device_put(x) * 2.0    # noqa: E731
    f_ref = lambda x: jax.device_put(x) * 2.0         # noqa: E731
    assert_trees_match(minijax.jit(f_mini)(1.5), jax.jit(f_ref)(1.5))
    assert_trees_match(minijax.grad(f_mini)(1.5), jax.grad(f_ref)(1.5))
    xs = np.arange(3, dtype=np.float32)
    assert_trees_match(minijax.vmap(f_mini)(xs), jax.vmap(f_ref)(xs))
    box = minijax.new_ref(mnp.zeros(2))
    assert minijax.device_put(box) is box


def test_block_until_ready_function_and_method():
    out = minijax.jit(lambda x: {"y": x * 2.0, "n": x})(np.ones(2, np.float32))
    assert minijax.block_until_ready(out) is out
    assert out["y"].block_until_ready() is out["y"]
    assert minijax.block_until_ready((1.0, "text", None)) == (1.0, "text", None)
    grad = minijax.grad(lambda x: x)(3.0)
    assert grad.block_until_ready() is grad      # an array, not a Python float
    # Inside a trace it hands the tracer back, as JAX's does.
    assert_trees_match(minijax.jit(lambda x: minijax.block_until_ready(x) + 1.0)(1.0),
                       jax.jit(lambda x: jax.block_until_ready(x) + 1.0)(1.0))


def test_named_call_and_named_scope_change_nothing():
    def body(np_lib):
        return lambda x: np_lib.tanh(x) * 3.0
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    mini = minijax.named_call(body(mnp), name="layer")
    ref = jax.named_call(body(jnp), name="layer")
    assert_trees_match(mini(x), ref(x))
    assert_trees_match(minijax.grad(lambda x: mnp.sum(mini(x)))(x),
                       jax.grad(lambda x: jnp.sum(ref(x)))(x))

    def scoped(lib, np_lib):
        def f(x):
            with lib.named_scope("block"):
                return np_lib.sin(x)
        return f
    assert_trees_match(minijax.jit(scoped(minijax, mnp))(x), jax.jit(scoped(jax, jnp))(x))
    for lib in (minijax, jax):
        with pytest.raises(TypeError, match="string"):
            lib.named_scope(3)          # refused at the call, before any `with`


def _scoped_op_names(lib, np_lib):
    """The op names of the compiled program, without the top `jit(...)` (minijax's
    lowered program has its own name), that carry a scope."""
    double = lib.named_call(lambda a: np_lib.exp(a) * 2.0, name="double")

    @lib.named_scope("deco")            # JAX's named_scope is a decorator too
    def shifted(a):
        return a - 1.0

    def f(a):
        with lib.named_scope("inner"):
            b = np_lib.sin(a)
            with lib.named_scope("deeper"):
                b = b * 3.0
        return np_lib.cos(double(shifted(b)))
    text = lib.jit(f).lower(1.0).compile().as_text()
    names = {n.split("/", 1)[1] for n in re.findall(r'op_name="([^"]+)"', text) if "/" in n}
    return {n for n in names if "/" in n}


def test_named_scope_and_named_call_name_the_compiled_ops_as_jax():
    # JAX's profiles and HLO metadata show `jit(f)/inner/sin`; minijax's scopes
    # changed nothing (session 23).
    ours, theirs = _scoped_op_names(minijax, mnp), _scoped_op_names(jax, jnp)
    assert ours == theirs == {"inner/sin", "inner/deeper/mul", "double/exp", "double/mul",
                              "deco/sub"}


@pytest.mark.parametrize("make_copy", [
    lambda lib, x: lib.numpy.array(x), lambda lib, x: lib.numpy.copy(x),
    lambda lib, x: lib.numpy.asarray(x, copy=True),
    lambda lib, x: lib.numpy.array(x, dtype=np.float32)])
def test_a_copy_of_a_concrete_array_is_a_new_buffer_as_in_jax(make_copy):
    # Donating the copy must leave the original alive (minijax returned `x` itself).
    def outcome(lib):
        x = lib.numpy.arange(3.0)
        y = make_copy(lib, x)
        lib.jit(lambda a: a + 1, donate_argnums=0)(y)
        return y is x, x.is_deleted(), np.asarray(x)
    ours, theirs = outcome(minijax), outcome(jax)
    assert ours[:2] == theirs[:2] == (False, False)
    np.testing.assert_array_equal(ours[2], theirs[2])
    x = mnp.arange(3.0)
    assert mnp.asarray(x) is x and mnp.array(x, copy=False) is x     # no copy asked


def test_typeof_gives_the_aval():
    x = np.ones((2, 3), np.float32)
    assert str(minijax.typeof(x)) == str(jax.typeof(x)) == "float32[2,3]"
    assert minijax.typeof(1.0).weak_type
    assert jax.typeof(1.0).weak_type


# -- errors: lists and contractions ------------------------------------------------------------

LIST_REFUSED = [
    ("sum", lambda np_lib: np_lib.sum([1.0, 2.0])),
    ("sin", lambda np_lib: np_lib.sin([1.0, 2.0])),
    ("add", lambda np_lib: np_lib.add([1.0, 2.0], 1.0)),
    ("where", lambda np_lib: np_lib.where([True, False], 1.0, 2.0)),
    ("dot", lambda np_lib: np_lib.dot([1.0, 2.0], [1.0, 2.0])),
    ("reshape", lambda np_lib: np_lib.reshape([1.0, 2.0], (2, 1))),
    ("mean", lambda np_lib: np_lib.mean((1.0, 2.0))),
    ("zeros_like", lambda np_lib: np_lib.zeros_like([1.0])),
    ("concatenate element", lambda np_lib: np_lib.concatenate([[1.0], [2.0]])),
    ("maximum", lambda np_lib: np_lib.maximum([1.0], [2.0])),
]


@pytest.mark.parametrize("name,call", LIST_REFUSED, ids=[c[0] for c in LIST_REFUSED])
def test_lists_are_refused_with_type_error_as_in_jax(name, call):
    with pytest.raises(TypeError):
        call(jnp)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        call(mnp)


LIST_ACCEPTED = [
    ("array", lambda np_lib: np_lib.array([[1.0, 2.0]])),
    ("asarray", lambda np_lib: np_lib.asarray((1, 2))),
    ("array_equal", lambda np_lib: np_lib.array_equal([1, 2], [1, 2])),
    ("concatenate of arrays", lambda np_lib: np_lib.concatenate([np.ones(1), np.ones(2)])),
    ("stack of arrays", lambda np_lib: np_lib.stack((np.ones(2), np.ones(2)))),
]


@pytest.mark.parametrize("name,call", LIST_ACCEPTED, ids=[c[0] for c in LIST_ACCEPTED])
def test_the_functions_jax_lets_take_lists_take_them(name, call):
    assert_trees_match(call(mnp), call(jnp))


CONTRACTION_MISMATCHES = [
    ("dot", lambda np_lib, a, b: np_lib.dot(a, b)),
    ("matmul", lambda np_lib, a, b: np_lib.matmul(a, b)),
    ("vdot", lambda np_lib, a, b: np_lib.vdot(a, b)),
    ("inner", lambda np_lib, a, b: np_lib.inner(a, b)),
    ("tensordot", lambda np_lib, a, b: np_lib.tensordot(a, b, 1)),
]


@pytest.mark.parametrize("name,call", CONTRACTION_MISMATCHES,
                         ids=[c[0] for c in CONTRACTION_MISMATCHES])
def test_contraction_shape_mismatch_is_a_type_error_as_in_jax(name, call):
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(TypeError):
        call(jnp, a, b)
    with pytest.raises(TypeError, match=name):
        call(mnp, a, b)
    with pytest.raises(TypeError, match=name):
        minijax.jit(lambda a, b: call(mnp, a, b))(a, b)
    if name == "matmul":        # a traced operand's @ is matmul
        with pytest.raises(TypeError, match="matmul"):
            minijax.jit(lambda a, b: a @ b)(a, b)


@pytest.mark.parametrize("name,expected", [("shape", (1, 2)), ("ndim", 2), ("size", 2)])
def test_shape_queries_take_lists_with_jax_s_deprecation_warning(name, expected):
    # JAX 0.10 answers with a DeprecationWarning (lists will be refused); a later JAX
    # may refuse them with TypeError. minijax follows 0.10.
    with pytest.warns(DeprecationWarning, match="requires ndarray or scalar"):
        assert getattr(mnp, name)([[1.0, 2.0]]) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            jax_answer = getattr(jnp, name)([[1.0, 2.0]])
        except TypeError:
            return          # a JAX that has made the deprecation an error
    assert jax_answer == expected
