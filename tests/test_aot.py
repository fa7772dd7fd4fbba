"""Ahead-of-time executables, `jit(f).lower(...).compile()`, called as JAX's are:
with `f`'s own pytrees and keywords, without the static arguments, taking a weak
type other than the one lowered, refusing other shapes, dtypes, structures and refs
with minijax's own TypeError, and never under a transformation. Each case runs the
same program through JAX's AOT path as well, on every JAX version the suite runs on
(0.10.2, 0.11.2 and 0.12.0.1 behave alike here). Refs and donation of a ref:
tests/test_refs_jit_surface.py and tests/test_refs_donation.py."""
import functools
import re
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.frontend import aot
from minijax.testing import assert_trees_match

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def _both(make):
    """`make(lib, numpy_of_lib)` for minijax and for JAX."""
    return make(minijax, mnp), make(jax, jnp)


def _combine(np_lib):
    def combine(params, x, *, scale, bias=None):
        out = {"y": np_lib.tanh(x @ params["w"]) * scale, "n": params["n"]}
        return out if bias is None else (out, bias + 1.0)
    return combine


PARAMS = {"w": np.ones((3, 4), np.float32), "n": np.float32(2.0)}


def test_pytrees_and_keywords_as_jax():
    def make(lib, np_lib):
        compiled = lib.jit(_combine(np_lib)).lower(PARAMS, X, scale=0.5,
                                                   bias=X[0]).compile()
        return compiled(PARAMS, X, scale=0.5, bias=X[0])
    ours, theirs = _both(make)
    assert_trees_match(ours, theirs)


def test_static_arguments_are_left_out_of_the_call_as_in_jax():
    def make(lib, np_lib):
        jitted = lib.jit(_combine(np_lib), static_argnames="scale")
        compiled = jitted.lower(PARAMS, X, scale=3.0).compile()
        with pytest.raises(TypeError):
            compiled(PARAMS, X, scale=3.0)
        return compiled(PARAMS, X)
    ours, theirs = _both(make)
    assert_trees_match(ours, theirs)
    by_position = minijax.jit(lambda x, n: x * n, static_argnums=1).lower(X, 4).compile()
    with pytest.raises(TypeError, match="called without its static arguments"):
        by_position(X, 4)
    np.testing.assert_array_equal(np.asarray(by_position(X)), X * 4)


@pytest.mark.parametrize("lowered_with,called_with", [
    (1.0, np.float32(2.0)),                 # weak lowered, strong given
    (np.float32(1.0), 2.0),                 # strong lowered, weak given
])
def test_a_weak_type_other_than_lowered_is_taken_as_by_jax(lowered_with, called_with):
    def make(lib, np_lib):
        def f(s, x):
            return s * x, s * 2
        return lib.jit(f).lower(lowered_with, X).compile()(called_with, X)
    ours, theirs = _both(make)
    # The outputs' weak types are those lowered, on both sides.
    assert_trees_match(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda c: c(np.ones((3, 2), np.float32), 1.0),          # another shape
    lambda c: c(X.astype(np.int32), 1.0),                   # another dtype
    lambda c: c(X, 1),                                      # an int for a float
    lambda c: c((X,), 1.0),                                 # another structure
    lambda c: c(X),                                         # an argument missing
    lambda c: c(X, s=1.0),                                  # by keyword
])
def test_other_argument_types_are_refused_as_by_jax(call):
    def f(x, s):
        return x * s
    with pytest.raises(TypeError):
        call(jax.jit(f).lower(X, 1.0).compile())
    with pytest.raises(TypeError, match="compiled for arguments of other types"):
        call(minijax.jit(f).lower(X, 1.0).compile())


def test_a_value_minijax_cannot_take_is_named():
    compiled = minijax.jit(lambda x: x + 1).lower(X).compile()
    with pytest.raises(TypeError, match="input leaf 0 of type str"):
        compiled("X")


def test_a_ref_where_an_array_was_lowered_is_refused_untouched():
    compiled = minijax.jit(lambda x: x * 2).lower(X).compile()
    r = minijax.new_ref(X)
    with pytest.raises(TypeError, match="compiled for arguments of other types"):
        compiled(r)
    np.testing.assert_array_equal(np.asarray(r[...]), X)


def test_no_call_under_a_transformation_as_in_jax():
    def f(x):
        return jnp.sin(x)
    theirs = jax.jit(f).lower(X[0]).compile()
    with pytest.raises(TypeError, match="Cannot apply JAX transformations"):
        jax.vmap(theirs)(X)
    ours = minijax.jit(mnp.sin).lower(X[0]).compile()
    with pytest.raises(TypeError, match="runs outside every transformation"):
        minijax.vmap(ours)(X)
    with pytest.raises(TypeError, match="runs outside every transformation"):
        minijax.jit(ours)(X[0])
    with pytest.raises(TypeError, match="runs outside every transformation"):
        minijax.grad(lambda x: ours(x).sum())(X[0])


def test_donation_by_name_and_beside_a_static_argument_as_in_jax():
    deleted = []
    for lib in (minijax, jax):
        def f(n, x, *, y):
            return x * n + y, y - x
        jitted = lib.jit(f, static_argnums=0, donate_argnums=1, donate_argnames="y")
        compiled = jitted.lower(2.0, jnp.ones(3), y=jnp.ones(3)).compile()
        x, y = jnp.ones(3), jnp.full(3, 5.0)
        expected = (np.full(3, 7.0, np.float32), np.full(3, 4.0, np.float32))
        assert_trees_match(compiled(x, y=y), expected)
        deleted.append((x.is_deleted(), y.is_deleted()))
    assert deleted == [(True, True)] * 2


def test_a_well_typed_call_is_jax_s_alone(monkeypatch):
    """A call that JAX's executable takes never reaches minijax's Python checks (the
    cost that made a call 6x JAX's); only a refused one does."""
    compiled = minijax.jit(lambda d: d["a"] * d["b"]).lower({"a": X, "b": X}).compile()

    def looked_at(*args):
        raise AssertionError("a well-typed call was checked in Python")
    monkeypatch.setattr(aot, "flatten_call_inputs", looked_at)
    np.testing.assert_array_equal(np.asarray(compiled({"a": X, "b": X})), X * X)
    with pytest.raises(AssertionError, match="checked in Python"):
        compiled({"a": X, "b": X[0]})


def test_a_ref_program_with_a_static_argument():
    def bump(r, x, n):
        r[...] += x * n
        return r[...].sum()
    r = minijax.new_ref(np.zeros(3, np.float32))
    compiled = minijax.jit(bump, static_argnums=2).lower(r, X[0], 2.0).compile()
    for _ in range(2):
        compiled(r, X[0])
    np.testing.assert_allclose(np.asarray(r[...]), X[0] * 4)
    with pytest.raises(TypeError, match="called without its static arguments"):
        compiled(r, X[0], 2.0)
    other = minijax.new_ref(np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="compiled for arguments of other types"):
        compiled(other, X[0])


def test_jitted_eval_shape_takes_static_arguments_as_values():
    # jit(f, static_argnames=...).eval_shape(x, n=2): the static argument is a value,
    # not traced (it was traced, and refused as unhashable).
    def calls(lib, np_):
        g = lib.jit(lambda x, n: x * n, static_argnames="n")
        h = lib.jit(lambda x, n, d: {"a": x[:n] * d, "b": 1.0}, static_argnums=(1,))
        return [g.eval_shape(np_.ones(3), n=2), h.eval_shape(np_.ones(3), 2, 2.0),
                h.eval_shape(lib.ShapeDtypeStruct((4,), np.float16), 1, np.int32(2)),
                lib.jit(lambda x: x.sum() + 1).eval_shape(np.ones(2, np.int32))]
    assert repr(calls(minijax, mnp)) == repr(calls(jax, jnp))


def test_a_call_of_other_types_names_the_argument_and_both_types():
    # JAX's message names the argument and its two types; minijax's says the same.
    def f(x, y):
        return 2 * x + y
    theirs = jax.jit(f).lower(3, 4).compile()
    ours = minijax.jit(f).lower(3, 4).compile()
    for args, named in [((1.0, 2), "argument x compiled with int32[] and called with "
                                   "float32[]"),
                        ((1, X), "argument y compiled with int32[] and called with "
                                 "float32[2,3]")]:
        with pytest.raises(TypeError):
            theirs(*args)
        with pytest.raises(TypeError, match=re.escape(named)):
            ours(*args)
    with pytest.raises(TypeError, match=r"arguments of the structure .* compiled for"):
        ours(1)


def test_a_mismatch_in_a_pytree_argument_names_its_path():
    def f(d):
        return d["a"] + d["b"]
    compiled = minijax.jit(f).lower({"a": X, "b": X}).compile()
    with pytest.raises(TypeError, match=re.escape("argument d['b'] compiled with "
                                                  "float32[2,3] and called with int32[2,3]")):
        compiled({"a": X, "b": X.astype(np.int32)})
    # With static arguments left out, positions no longer match the signature.
    compiled = minijax.jit(lambda n, x: x * n, static_argnums=0).lower(2, X).compile()
    with pytest.raises(TypeError, match=re.escape("args[0] compiled with float32[2,3]")):
        compiled(X[0])


@pytest.mark.parametrize("make", [
    lambda np_lib: (lambda x: np_lib.sin(x)),
    lambda np_lib: functools.partial(lambda x, y: x * y, y=2.0)])
def test_the_lowered_module_is_named_after_the_function_as_by_jax(make):
    # `module @jit_<name>` and the ops' `jit(<name>)/...` (it was jit_minijax_program)
    def names(lib, np_lib):
        lowered = lib.jit(make(np_lib)).lower(1.0)
        return (re.findall(r"module @(\S+)", lowered.as_text()),
                lowered.compile().as_text().splitlines()[0].split(",")[0])
    assert names(minijax, mnp) == names(jax, jnp)


def _saved_and_loaded(lib, np_lib):
    from importlib import import_module
    se = import_module(f"{lib.__name__}.experimental.serialize_executable")
    w = np_lib.arange(3.0)

    def saved(x, n, *, k):
        return {"y": x ** n * w + k}
    # A name of each library's own: the two programs are otherwise one, which the
    # suite's persistent compilation cache compiles once, and JAX cannot load a
    # serialized executable that came from that cache ("Function ... not found").
    saved.__name__ = f"saved_{lib.__name__}"
    compiled = lib.jit(saved, static_argnums=1).lower(np_lib.ones(3), 2, k=1.0).compile()
    payload, in_tree, out_tree = se.serialize(compiled)
    loaded = se.deserialize_and_load(payload, in_tree, out_tree)
    with pytest.raises(TypeError):
        loaded(np_lib.ones(4), k=1.0)
    return str(in_tree), str(out_tree), loaded(np_lib.full(3, 2.0), k=0.5)


def test_serialize_executable_saves_and_loads_as_jax():
    ours, theirs = _saved_and_loaded(minijax, mnp), _saved_and_loaded(jax, jnp)
    assert ours[:2] == theirs[:2]
    assert_trees_match(ours[2], theirs[2])
    from minijax.experimental import serialize_executable as se
    r = minijax.new_ref(np.zeros(3, np.float32))

    def bump(x):
        r[...] += x
    with pytest.raises(ValueError, match="refs"):
        se.serialize(minijax.jit(bump).lower(X[0]).compile())


def test_traced_lowers_for_other_platforms_as_jax():
    # Traced.lower(lowering_platforms=...) was a TypeError: reading the program for
    # another platform, or for several (with JAX's platform-index argument).
    def facts(lib, np_lib):
        traced = lib.jit(lambda x: np_lib.sin(x)).trace(1.0)
        both = traced.lower(lowering_platforms=("cpu", "tpu")).as_text()
        tpu = traced.lower(lowering_platforms=("tpu",)).as_text()
        return "_platform_index" in both, "_platform_index" in tpu, tpu.count("func.func")
    assert facts(minijax, mnp) == facts(jax, jnp) == (True, False, 1)
