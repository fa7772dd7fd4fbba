"""`pmap` on this process's one device, against `jax.pmap`: a mapped axis of size 1
(the collectives then see one member), eagerly, under jit, grad, jvp and vmap, the
printed program, and the error for more examples than devices. The same on 8
devices, where the collectives really communicate: tests/pmap_cases.py (run by
tests/test_shard_map.py)."""
import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding

import minijax
from minijax import lax as mlax
from minijax.interop import trace_with_jax
from minijax.transforms import eval_jaxpr

X = (np.arange(6, dtype=np.float32).reshape(1, 6) - 2.0) / 3.0

BODIES = {
    "psum": lambda lax: lambda a: lax.psum(a, "i") * a,
    "pmean": lambda lax: lambda a: lax.pmean(a, "i") ** 2 + a,
    "pmax": lambda lax: lambda a: lax.pmax(a, "i") - a,
    "all_gather": lambda lax: lambda a: lax.all_gather(a, "i")[0] * a,
    "ppermute": lambda lax: lambda a: lax.ppermute(a, "i", [(0, 0)]) * 2.0,
    "axis_index": lambda lax: lambda a: a + lax.axis_index("i"),
}


def both(name, **kw):
    make = BODIES[name]
    return minijax.pmap(make(mlax), axis_name="i", **kw), jax.pmap(make(jax.lax),
                                                                   axis_name="i", **kw)


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_collectives_over_one_device(name):
    ours, theirs = both(name)
    out, expected = ours(X), theirs(X)
    close(out, expected)
    # (on one device XLA may spell the split as P(): the same layout)
    assert isinstance(out.sharding, NamedSharding)
    assert out.sharding.is_equivalent_to(expected.sharding, out.ndim)
    close(minijax.jit(ours)(X), jax.jit(theirs)(X))
    stacked = np.stack([X, 2 * X, -X])
    close(minijax.vmap(ours)(stacked), jax.vmap(theirs)(stacked))
    if name != "pmax":      # JAX defines no derivative of pmax
        close(minijax.grad(lambda x: ours(x).sum())(X), jax.grad(lambda x: theirs(x).sum())(X))
        tangent = np.ones_like(X)
        for got, want in zip(minijax.jvp(ours, (X,), (tangent,)),
                             jax.jvp(theirs, (X,), (tangent,))):
            close(got, want)


def test_data_parallel_step_with_replicated_parameters():
    def step(api, lax):
        def loss(w, xs):
            return ((xs * w).sum() - 1.0) ** 2

        def update(w, xs):
            return w - 0.5 * lax.pmean(api.grad(loss)(w, xs), "batch")
        return api.pmap(update, axis_name="batch", in_axes=(None, 0))
    w = np.ones(6, np.float32) / 6
    close(step(minijax, mlax)(w, X), step(jax, jax.lax)(w, X))


def test_static_arguments_and_axes():
    f = minijax.pmap(lambda n, a: (a * n, a.sum()), static_broadcasted_argnums=0,
                     in_axes=(None, 1), out_axes=(1, None))
    g = jax.pmap(lambda n, a: (a * n, a.sum()), static_broadcasted_argnums=0,
                 in_axes=(None, 1), out_axes=(1, None))
    for got, want in zip(f(3, X.T), g(3, X.T)):
        close(got, want)


def test_make_jaxpr_shows_a_shard_map_over_one_device():
    text = str(minijax.make_jaxpr(minijax.pmap(lambda a: mlax.psum(a, "i"), "i"))(X))
    assert "shard_map[" in text and "mesh_axes=(('i', 1),)" in text, text
    assert "device_ids=(0,)" in text and "psum[axes=('i',)]" in text, text
    # without axis_name, the mesh axis has JAX's internal name
    text = str(minijax.make_jaxpr(minijax.pmap(lambda a: a * 2.0))(X))
    assert "_internal_pmap_axis_name" in text, text


def test_a_jax_program_using_pmap_imports():
    f = jax.pmap(BODIES["psum"](jax.lax), axis_name="i")
    closed = trace_with_jax(f)(X)
    close(eval_jaxpr(closed.jaxpr, closed.consts, [X])[0], f(X))


def test_errors():
    with pytest.raises(ValueError, match="requires 2 replicas, but only 1 XLA devices"):
        minijax.pmap(lambda a: a)(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        minijax.pmap(lambda a: a, in_axes=None, axis_size=1)(X)
    with pytest.raises(NameError, match="'j'"):
        minijax.pmap(lambda a: mlax.psum(a, "j"), axis_name="i")(X)
    with pytest.raises(TypeError, match="pmap out_axes"):
        minijax.pmap(lambda a: a, out_axes="0")
    with pytest.raises(TypeError, match="axis_name must be a string"):
        minijax.pmap(lambda a: a, axis_name=7)      # jax 0.10 fails lowering it
    with pytest.raises(TypeError, match="callable"):
        minijax.pmap(3)
    with pytest.raises(ValueError, match="both static and donated"):
        minijax.pmap(lambda a, n: a, static_broadcasted_argnums=1, donate_argnums=1)


def test_device_counts_are_jax_s():
    assert minijax.device_count() == jax.device_count() == 1
    assert minijax.local_device_count() == jax.local_device_count()


def test_nested_pmaps():
    # Registry entry "nested_pmap_refused": JAX 0.10 fails; minijax computes what the
    # nested named vmaps compute (the same on 8 devices: tests/pmap_cases.py)
    from tests.test_collectives import _retire_if_fixed

    def body(lax):
        return lambda v: lax.psum(v, ("i", "j")) * 2.0 + lax.axis_index("j")
    x = X.reshape(1, 1, 6)
    try:
        jax.pmap(jax.pmap(body(jax.lax), axis_name="j"), axis_name="i")(x)
        jax_fails = False
    except ValueError as e:
        jax_fails = "should match the mesh passed to shard_map" in str(e)
    _retire_if_fixed("nested_pmap_refused", jax_fails)
    nested = minijax.pmap(minijax.pmap(body(mlax), axis_name="j"), axis_name="i")
    expected = jax.vmap(jax.vmap(body(jax.lax), axis_name="j"), axis_name="i")(x)
    close(nested(x), expected)
    close(minijax.grad(lambda x: (nested(x) ** 2).sum())(x),
          jax.grad(lambda x: (jax.vmap(jax.vmap(body(jax.lax), axis_name="j"),
                                       axis_name="i")(x) ** 2).sum())(x))
    with pytest.raises(ValueError, match="product is 2, which requires 2 replicas"):
        minijax.pmap(minijax.pmap(lambda v: v, axis_name="j"), axis_name="i")(
            np.ones((1, 2, 3), np.float32))
    with pytest.raises(ValueError, match="Nested pmaps with devices="):
        minijax.pmap(minijax.pmap(lambda v: v, devices=jax.devices()), axis_name="i")(x)
