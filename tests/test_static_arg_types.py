"""Static arguments that compare equal but differ in type get traces of their own.

`0 == 0.0 == False` and `1 == True == np.int32(1)`, with equal hashes, so a cache
keyed on the values alone hands a call the program traced for another type. JAX's
`jit` keys a static argument by its type too (on 0.10.2, 0.11.2 and 0.12.0.1 alike):
after `f(x, 1)`, `f(x, 1.0)` traces again, and `jnp.sum(x, axis=0.0)` is a TypeError
even after `jnp.sum(x, axis=0)`. Inside a tuple JAX compares values only, and so
does minijax (`frontend/pytrees.py`, `StaticValue`). Each test makes its calls in
one order on a fresh function or cache, in both libraries, and compares each call.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match
from tests.library_helpers import outcome

XI = np.arange(3, dtype=np.int32)
M = np.ones((2, 3), np.float32)


def _assert_same_sequence(make_calls):
    """`make_calls(lib)` -> the calls to make in order; each call's outcome in
    minijax must be JAX's (a value with its dtype and weak type, or the error type)."""
    expected = [outcome(c) for c in make_calls(jax)]
    got = [outcome(c) for c in make_calls(minijax)]
    for i, (e, g) in enumerate(zip(expected, got)):
        if isinstance(e, type):
            assert g is e, f"call {i}: JAX raised {e.__name__}, minijax gave {g!r}"
        else:
            assert not isinstance(g, type), f"call {i}: minijax raised {g.__name__}"
            assert_trees_match(g, e)


@pytest.mark.parametrize("by", ["argnums", "argnames"])
def test_jit_traces_again_for_an_equal_static_value_of_another_type(by):
    traces = {jax: [], minijax: []}

    def make_calls(lib):
        def f(x, n):
            traces[lib].append(type(n).__name__)
            return x * n          # int32 * 1.0 is float32, * True stays int32
        options = dict(static_argnums=1) if by == "argnums" else dict(static_argnames="n")
        g = lib.jit(f, **options)
        return [lambda n=n: g(XI, n=n) if by == "argnames" else g(XI, n)
                for n in (1, 1.0, True, np.int32(1), 1, 1.0)]
    _assert_same_sequence(make_calls)
    assert traces[minijax] == traces[jax] == ["int", "float", "bool", "int32"]


def test_a_tuple_static_argument_is_compared_by_value_as_in_jax():
    traces = {jax: [], minijax: []}

    def make_calls(lib):
        def f(x, shape):
            traces[lib].append(tuple(type(d).__name__ for d in shape))
            return x
        g = lib.jit(f, static_argnums=1)
        return [lambda s=s: g(XI, s) for s in ((1, 2), (1.0, 2), (True, 2))]
    _assert_same_sequence(make_calls)
    assert traces[minijax] == traces[jax] == [("int", "int")]


def test_eager_jnp_axis_of_another_type_is_checked_again():
    # `axis=0.0` and `np.float32(0)` are TypeErrors though `axis=0` ran before them;
    # `np.int32(0)` and `True` (axis 1) are axes.
    def make_calls(lib):
        x = lib.numpy.asarray(M)
        return [lambda a=a: lib.numpy.sum(x, axis=a)
                for a in (0, 0.0, np.float32(0), np.int32(0), 1, True, 0)]
    _assert_same_sequence(make_calls)


def test_eager_jnp_keepdims_and_bool_static_arguments():
    def make_calls(lib):
        x = lib.numpy.asarray(XI)
        return [lambda k=k: lib.numpy.sum(x, axis=0, keepdims=k) for k in (True, 1)] + [
            lambda: lib.numpy.cumsum(x, 0), lambda: lib.numpy.cumsum(x, 0.0)]
    _assert_same_sequence(make_calls)


def test_eager_transformation_keys_static_arguments_by_type():
    # Under an eager `grad`, a jnp function's call is staged from minijax's own cache.
    def make_calls(lib):
        x = lib.numpy.asarray(M)

        def grad_sum(axis):
            return lib.grad(lambda v: lib.numpy.sum(v, axis=axis).sum())(x)
        return [lambda: grad_sum(0), lambda: grad_sum(0.0)]
    _assert_same_sequence(make_calls)


def test_checkpoint_static_argument_of_another_type():
    traces = {jax: [], minijax: []}

    def make_calls(lib):
        def f(x, n):
            traces[lib].append(type(n).__name__)
            return lib.numpy.sin(x) * n
        g = lib.checkpoint(f, static_argnums=(1,))
        x = np.float32(0.5)
        return [lambda n=n: lib.grad(g)(x, n) for n in (2, 2.0)]
    _assert_same_sequence(make_calls)
    assert traces[minijax][:1] == ["int"] and "float" in traces[minijax]


@pytest.mark.parametrize("name, make", [
    ("squeeze", lambda L, d: L.lax.squeeze(L.numpy.ones((1, 2)), (d,))),
    ("expand_dims", lambda L, d: L.lax.expand_dims(L.numpy.ones(2), (d,))),
    ("full", lambda L, d: L.lax.full((d + 1,), 1.0)),
])
def test_eager_lax_integer_parameters_refuse_floats_after_ints(name, make):
    # Eager dispatch caches a primitive's program by its params; these check before.
    _assert_same_sequence(lambda L: [lambda: make(L, 0), lambda: make(L, 0.0)])


def test_an_int_shape_of_full():
    assert_trees_match(minijax.lax.full(3, 1.0), jax.lax.full(3, 1.0))


def test_cache_miss_explanation_names_a_static_argument_of_another_type(caplog):
    def f(x, n):
        return x * n
    g = minijax.jit(f, static_argnums=1)
    g(M, 1)
    with caplog.at_level("WARNING"), minijax.explain_cache_misses(True):
        g(M, 1.0)
    assert "different static arguments:\n  * at n (by position), now 1.0 and before 1" \
        in caplog.text
    assert mnp.sum(M, axis=np.int32(1)).shape == (2,)
