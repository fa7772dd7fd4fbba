"""`pure_callback` against `jax.pure_callback`: values and pytrees, eagerly and under
jit, each `vmap_method` (what the callback is called with, and the results), the
derivative error and a `custom_jvp` around a callback, dead-code elimination, the
reference evaluator, importing JAX's equation, and the errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.backends.reference import eval_jaxpr as reference_eval
from minijax.testing import assert_trees_match

X = np.linspace(-1, 1, 3, dtype=np.float32)
SPEC = jax.ShapeDtypeStruct((3,), jnp.float32)


def _host_sin(x):
    return np.sin(x)


def _host_stats(tree, *, offset):
    return {"sum": np.sum(tree["a"]) + offset, "both": (tree["a"] * 2, tree["b"].astype(np.int32))}


def _stats_spec():
    return {"sum": jax.ShapeDtypeStruct((), jnp.float32),
            "both": (jax.ShapeDtypeStruct((3,), jnp.float32),
                     jax.ShapeDtypeStruct((2,), jnp.int32))}


def test_pure_callback_values_and_pytrees_as_jax():
    for wrap in (lambda f: f, minijax.jit):
        assert_trees_match(wrap(lambda x: minijax.pure_callback(_host_sin, SPEC, x) * 2.0)(X),
                           jax.jit(lambda x: jax.pure_callback(_host_sin, SPEC, x) * 2.0)(X))
    tree = {"a": X, "b": np.array([1.5, 2.5], np.float32)}
    assert_trees_match(minijax.jit(lambda t: minijax.pure_callback(
                           _host_stats, _stats_spec(), t, offset=1.0))(tree),
                       jax.jit(lambda t: jax.pure_callback(
                           _host_stats, _stats_spec(), t, offset=1.0))(tree))


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all", "legacy_vectorized"])
def test_pure_callback_under_vmap_calls_as_jax(method):
    def run(lib, np_lib):
        calls = []

        def host(x, y):
            calls.append((x.shape, y.shape))
            return (x * y + 1).astype(np.float32)

        def f(x, y):
            return lib.pure_callback(host, jax.ShapeDtypeStruct((3,), jnp.float32), x, y,
                                     vmap_method=method)
        xs = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = lib.vmap(f, (0, None))(xs, X)
        out_t = lib.vmap(f, (1, None), out_axes=1)(xs.T.copy(), X)   # batch axis elsewhere
        return out, out_t, calls
    ours, theirs = run(minijax, mnp), run(jax, jnp)
    assert_trees_match(ours[:2], theirs[:2])
    assert ours[2] == theirs[2]


def test_pure_callback_under_nested_vmap_and_jit():
    def f(lib):
        g = lambda x: lib.pure_callback(_host_sin, jax.ShapeDtypeStruct((), jnp.float32), x,  # noqa: E731
                                        vmap_method="expand_dims")
        return lib.jit(lib.vmap(lib.vmap(g)))
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_trees_match(f(minijax)(xs), f(jax)(xs))


def test_pure_callback_has_no_derivative_but_a_custom_jvp_gives_one():
    f_scalar = jax.ShapeDtypeStruct((), jnp.float32)
    for lib in (minijax, jax):
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            lib.grad(lambda x: lib.pure_callback(_host_sin, f_scalar, x))(1.0)

    def make(lib, np_lib):
        @lib.custom_jvp
        def host_sin(x):
            return lib.pure_callback(_host_sin, f_scalar, x, vmap_method="sequential")

        @host_sin.defjvp
        def _(primals, tangents):
            return host_sin(primals[0]), np_lib.cos(primals[0]) * tangents[0]
        return host_sin
    ours, theirs = make(minijax, mnp), make(jax, jnp)
    assert_trees_match(minijax.grad(ours)(0.5), jax.grad(theirs)(0.5))
    assert_trees_match(minijax.vmap(minijax.grad(ours))(X), jax.vmap(jax.grad(theirs))(X))


def test_an_unused_pure_callback_is_dropped_and_vmap_needs_a_method():
    calls = []

    def host(x):
        calls.append(1)
        return x
    out = minijax.jit(lambda x: (minijax.pure_callback(host, SPEC, x), x + 1.0)[1])(X)
    assert_trees_match(out, jnp.asarray(X) + 1.0)
    assert calls == []
    for lib in (minijax, jax):
        with pytest.raises(NotImplementedError, match="vmap_method=None"):
            lib.vmap(lambda x: lib.pure_callback(_host_sin, SPEC, x))(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
            lib.pure_callback(_host_sin, SPEC, X, vmap_method="parallel")


def test_reference_evaluator_and_text_form():
    closed = minijax.make_jaxpr(lambda x: minijax.pure_callback(_host_sin, SPEC, x) + 1.0)(X)
    assert "pure_callback[" in str(closed) and "result_shapes=((3,),)" in str(closed)
    assert_trees_match(reference_eval(closed.jaxpr, closed.consts, X)[0], np.sin(X) + 1.0,
                       check_weak_types=False, rtol=1e-6)
    bad = minijax.make_jaxpr(lambda x: minijax.pure_callback(lambda x: x[:2], SPEC, x))(X)
    with pytest.raises(ValueError, match="Incorrect output shape for return value 0"):
        reference_eval(bad.jaxpr, bad.consts, X)
    wrong_dtype = minijax.make_jaxpr(lambda x: minijax.pure_callback(
        lambda x: x.astype(np.int32), SPEC, x))(X)
    with pytest.raises(ValueError, match="Incorrect output dtype for return value 0"):
        reference_eval(wrong_dtype.jaxpr, wrong_dtype.consts, X)


def test_imported_jax_pure_callback_runs_in_minijax():
    imported = minijax.interop.trace_with_jax(
        lambda x: jax.pure_callback(_host_sin, SPEC, x, vmap_method="sequential") * 3.0)(X)
    assert "pure_callback" in str(imported)
    exported = minijax.interop.to_jax(imported)      # minijax's program, run by JAX
    assert_trees_match(jax.tree_util.tree_leaves(exported(X))[0],
                       jnp.sin(jnp.asarray(X)) * 3.0, rtol=1e-6)
    assert_trees_match(reference_eval(imported.jaxpr, imported.consts, X)[0],
                       np.sin(X) * 3.0, check_weak_types=False, rtol=1e-6)


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="expected a callable"):
        minijax.pure_callback(3, SPEC, X)
    with pytest.raises(TypeError, match="ShapeDtypeStructs or arrays"):
        minijax.pure_callback(_host_sin, [3], X)
    with pytest.raises(TypeError, match="cannot pass a ref"):
        minijax.pure_callback(_host_sin, SPEC, minijax.new_ref(mnp.ones(3)))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_a_64_bit_result_type_is_refused_as_by_jax(dtype):
    # With x64 off the result would silently be 32-bit: JAX's ValueError, in both
    # pure_callback and io_callback (minijax returned the 32-bit value).
    from jax.experimental import io_callback as jax_io
    from minijax.experimental import io_callback as mini_io
    spec = jax.ShapeDtypeStruct((), dtype)
    for lib, io in ((jax, jax_io), (minijax, mini_io)):
        with pytest.raises(ValueError, match="cannot specify 64-bit types"):
            lib.jit(lambda x: lib.pure_callback(lambda a: a, spec, x))(1.0)
        with pytest.raises(ValueError, match="cannot specify 64-bit types"):
            lib.jit(lambda x: io(lambda a: a, spec, x))(1.0)
