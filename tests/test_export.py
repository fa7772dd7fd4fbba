"""`minijax.export` against `jax.export`: the same program saved for the same
arguments reports the same types, pytrees and platforms, and its call gives the same
results and errors eagerly, under `jit` and under `grad`; a program saved by one
library runs in the other (serialized with JAX's format, which needs `flatbuffers`).
"""
from __future__ import annotations

import importlib.util

import jax
import numpy as np
import pytest

import minijax
from minijax import interop
from tests.library_helpers import assert_same_outcome

HAS_FLATBUFFERS = importlib.util.find_spec("flatbuffers") is not None
needs_flatbuffers = pytest.mark.skipif(
    not HAS_FLATBUFFERS, reason="JAX serializes an Exported with flatbuffers, not installed")

X = np.array([0.5, -1.0, 2.0], np.float32)
N = np.array([1, 2, 3], np.int32)


def _fun(mod):
    jnp = mod.numpy

    def f(x, scale, *, pair, times):
        return {"y": jnp.sin(x) * scale + pair[0], "n": pair[1] * times}
    return mod.jit(f, static_argnames="times")


def _exported(mod, **options):
    return mod.export.export(_fun(mod), **options)(X, 2.0, pair=(X, N), times=3)


def _facts(exp) -> dict:
    return {name: str(getattr(exp, name)) for name in (
        "fun_name", "in_tree", "in_avals", "out_tree", "out_avals", "in_shardings_hlo",
        "out_shardings_hlo", "nr_devices", "platforms", "ordered_effects",
        "unordered_effects", "disabled_safety_checks", "calling_convention_version",
        "module_kept_var_idx", "uses_global_constants")} | {"has_vjp": exp.has_vjp()}


def test_exported_facts_match_jax():
    ours, theirs = _exported(minijax), _exported(jax)
    assert isinstance(ours, minijax.export.Exported)
    assert _facts(ours) == _facts(theirs)
    mesh = jax.sharding.Mesh(jax.devices()[:1], ("x",))
    assert ours.in_shardings_jax(mesh) == theirs.in_shardings_jax(mesh)
    assert ours.out_shardings_jax(mesh) == theirs.out_shardings_jax(mesh)
    # minijax's VJP program has the types and pytrees of JAX's
    assert _facts(ours.vjp()) == _facts(theirs.vjp())
    assert "stablehlo.sine" in ours.mlir_module()


def test_call_eagerly_under_jit_and_grad():
    def case(mod):
        exp = _exported(mod)

        def loss(x, s):
            out = exp.call(x, s, pair=(x * 2, N))
            return mod.numpy.sum(out["y"] ** 2), out
        value = exp.call(X, 3.0, pair=(X, N))
        return value, mod.jit(loss)(X, 3.0), mod.grad(loss, argnums=(0, 1), has_aux=True)(X, 3.0)
    assert_same_outcome(case)


def test_platforms_and_disabled_checks_as_jax():
    def exported(mod):
        return _exported(mod, platforms=("cpu", "tpu"),
                         disabled_checks=[mod.export.DisabledSafetyCheck.platform()])
    assert _facts(exported(minijax)) == _facts(exported(jax))
    assert_same_outcome(lambda mod: exported(mod).call(X, 1.0, pair=(X, N)))


def _bad_uses():
    def other_platform(mod):
        return mod.export.export(_fun(mod), platforms=("tpu",))(
            X, 2.0, pair=(X, N), times=3).call(X, 1.0, pair=(X, N))

    def refs_inside(mod):         # a ref made and used inside is fine
        def f(x):
            r = mod.new_ref(x)
            r[...] += 1.0
            return r[...]
        return mod.export.export(mod.jit(f))(X).call(X)

    def closes_over_ref(mod):
        r = mod.new_ref(X)
        return mod.export.export(mod.jit(lambda x: r[...] + x))(X)

    def host_callback(mod):
        def f(x):
            mod.debug.print("{}", x)
            return x
        return mod.export.export(mod.jit(f))(X)
    return {
        "shape": lambda mod: _exported(mod).call(X[:2], 1.0, pair=(X, N)),
        "dtype": lambda mod: _exported(mod).call(X, 1.0, pair=(X, N.astype(np.float32))),
        "structure": lambda mod: _exported(mod).call(X, 1.0, pair=(X,)),
        "static argument passed": lambda mod: _exported(mod).call(X, 1.0, pair=(X, N), times=3),
        "vmap": lambda mod: mod.vmap(lambda x: _exported(mod).call(x, 1.0, pair=(X, N)))(
            np.stack([X, X])),
        "not jitted": lambda mod: mod.export.export(lambda x: x)(X),
        "other platform": other_platform,
        "ref argument": lambda mod: mod.export.export(mod.jit(lambda r: r[...]))(
            mod.new_ref(X)),
        "refs inside": refs_inside,
        "closes over a ref": closes_over_ref,
        "host callback": host_callback,
    }


@pytest.mark.parametrize("use", sorted(_bad_uses()))
def test_errors_and_refs_as_jax(use):
    assert_same_outcome(_bad_uses()[use])


def test_forward_mode_refused_as_jax():
    # Exported.call is a custom_vjp function in both libraries.
    for mod in (minijax, jax):
        exp = mod.export.export(mod.jit(mod.numpy.sin))(X)
        with pytest.raises(TypeError, match="forward-mode"):
            mod.jvp(exp.call, (X,), (X,))


def test_interop_carries_the_call():
    exp = minijax.export.export(minijax.jit(minijax.numpy.cos))(X)
    program = minijax.make_jaxpr(lambda x: exp.call(x) * 2)(X)
    np.testing.assert_allclose(interop.to_jax(program)(X)[0], np.cos(X) * 2, rtol=1e-6)
    theirs = jax.export.export(jax.jit(jax.numpy.cos))(X)
    imported = interop.import_jaxpr(jax.make_jaxpr(theirs.call)(X))
    assert "call_exported" in str(imported)
    np.testing.assert_allclose(minijax.jit(lambda x: exp.call(x))(X), np.cos(X), rtol=1e-6)


def test_symbolic_dimensions_are_refused():
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 3"), np.float32)
    theirs = jax.export.export(jax.jit(jax.numpy.sin))(spec)
    with pytest.raises(NotImplementedError, match="symbolic dimensions"):
        minijax.export.Exported(theirs).call(np.stack([X, X]))


@needs_flatbuffers
def test_serialized_by_one_library_runs_in_the_other():
    # vjp_order=2 saves the VJP program and its own VJP: grad of grad works on
    # either side, whichever library saved the program.
    def second_derivative(mod, exp):
        def first(x):
            return mod.grad(lambda y: exp.call(y, 2.0, pair=(y, N))["y"].sum())(x).sum()
        return mod.grad(first)(X)
    blobs = {mod: _exported(mod).serialize(vjp_order=2) for mod in (minijax, jax)}
    want_facts = _facts(jax.export.deserialize(blobs[jax]))
    want = second_derivative(jax, jax.export.deserialize(blobs[jax]))
    for blob in blobs.values():
        for mod in (minijax, jax):
            loaded = mod.export.deserialize(blob)
            assert _facts(loaded) == want_facts
            np.testing.assert_allclose(second_derivative(mod, loaded), want, rtol=1e-6)


@needs_flatbuffers
def test_no_vjp_saved_is_an_error_as_jax():
    def case(mod):
        loaded = mod.export.deserialize(_exported(mod).serialize())
        return mod.grad(lambda x: loaded.call(x, 2.0, pair=(x, N))["y"].sum())(X)
    assert_same_outcome(case)


@pytest.mark.skipif(HAS_FLATBUFFERS, reason="flatbuffers is installed")
def test_serializing_without_flatbuffers_as_jax():
    assert_same_outcome(lambda mod: _exported(mod).serialize())


def _key_program(mod):
    """A program taking and returning typed keys (JAX's in_avals say key<fry>),
    called eagerly, under jit, differentiated through its float argument, and given
    a raw uint32 key, which is refused."""
    exp = mod.export.export(mod.jit(
        lambda k, x: (mod.random.split(k), mod.random.normal(k, x.shape) * x)))(
        mod.random.key(0), X)
    key = mod.random.key(3)
    keys, draws = exp.call(key, X)
    under_jit = mod.jit(exp.call)(key, X)[1]
    grad = mod.grad(lambda x: exp.call(key, x)[1].sum())(X)
    try:
        exp.call(mod.random.PRNGKey(0), X)
        refused = None
    except ValueError as error:
        refused = str(error)
    return (str(exp.in_avals), str(exp.out_avals), np.asarray(mod.random.key_data(keys)),
            np.asarray(draws), np.asarray(under_jit), np.asarray(grad), refused)


def test_an_exported_program_of_typed_keys_is_called_as_in_jax():
    ours, theirs = _key_program(minijax), _key_program(jax)
    assert ours[:2] == theirs[:2] and ours[-1] == theirs[-1]
    for a, b in zip(ours[2:-1], theirs[2:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
