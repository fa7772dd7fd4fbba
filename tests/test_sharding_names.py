"""JAX's sharding names in minijax (`jax.sharding`, `jax.make_mesh`, `jax.set_mesh`,
`jax.P`, `jax.reshard`, ...) and a bare `PartitionSpec` under a mesh context, against
JAX, on this process's one device; plus two `shard_map` cases that need no more than
one device: a collective over a vmap's axis inside the body, and grad with refs.
The same on 8 devices, where the specs really split: tests/shard_map_mesh_cases.py."""
import jax
import numpy as np
import pytest
from jax.sharding import AxisType, PartitionSpec as P

import minijax
import minijax.sharding
from minijax import lax as mlax
from minijax.backends.reference import eval_closed_jaxpr
from minijax.interop import trace_with_jax
from minijax.transforms import eval_jaxpr
from tests.program_counting import programs

X = np.arange(8, dtype=np.float32).reshape(4, 2) / 8


def mesh(names=("x",), kind=AxisType.Auto):
    return jax.make_mesh((1,) * len(names), names, axis_types=(kind,) * len(names))


def test_jax_names_are_there_and_are_jax_objects():
    for name in ("Mesh", "AbstractMesh", "AxisType", "PartitionSpec", "NamedSharding",
                 "SingleDeviceSharding", "Sharding", "set_mesh", "get_mesh",
                 "get_abstract_mesh", "use_abstract_mesh", "make_single_device_sharding"):
        assert getattr(minijax.sharding, name) is getattr(jax.sharding, name), name
    for name in ("make_mesh", "set_mesh", "NamedSharding", "P", "Device", "Shard"):
        assert getattr(minijax, name) is getattr(jax, name), name
    # an array's shards are JAX's Shard objects
    assert all(isinstance(s, minijax.Shard)
               for s in minijax.numpy.arange(4.0).addressable_shards)
    # what acts on values is minijax's own
    assert minijax.reshard is minijax.sharding.reshard is not jax.sharding.reshard
    assert minijax.sharding is minijax.sharding  # the attribute is the module


def _values(lib):
    lax = mlax if lib is minijax else jax.lax
    return {
        "jit shardings": lambda: lib.jit(lambda a: a * 2.0, in_shardings=P("x"),
                                         out_shardings=P(None, "x"))(X),
        "constraint": lambda: lib.jit(lambda a: lax.with_sharding_constraint(
            a + 1.0, P("x")))(X),
        "constraint eagerly": lambda: lax.with_sharding_constraint(X, P("x")),
        "device_put": lambda: lib.device_put(X, P("x")),
        "device_put traced": lambda: lib.jit(lambda a: lib.device_put(a, P("x")) * 3.0)(X),
        "shard_map without mesh": lambda: lib.shard_map(
            lambda a: lax.psum(a, "x") * a, in_specs=P("x"), out_specs=P("x"))(X),
        "shard_map without mesh, jit": lambda: lib.jit(lib.shard_map(
            lambda a: lax.psum(a, "x") * a, in_specs=P("x"), out_specs=P("x")))(X),
    }


def test_partition_spec_on_the_context_mesh():
    m = mesh()
    with jax.set_mesh(m):
        ours, theirs = _values(minijax), _values(jax)
        for name in ours:
            got, want = ours[name](), theirs[name]()
            np.testing.assert_allclose(got, want, err_msg=name)
            assert got.dtype == want.dtype, name
            if name != "shard_map without mesh":
                assert got.sharding.is_equivalent_to(want.sharding, X.ndim), name
        text = str(minijax.make_jaxpr(lambda a: mlax.with_sharding_constraint(a, P("x")))(X))
        assert "device_ids=None" in text and "mesh_axes=(('x', 1),)" in text, text
        grads = minijax.grad(lambda a: (minijax.jit(lambda b: b * b, in_shardings=P("x"))(a)
                                        ).sum())(X)
        np.testing.assert_allclose(grads, 2 * X)
        closed = minijax.make_jaxpr(minijax.shard_map(
            lambda a: mlax.psum(a, "x") * a, in_specs=P("x"), out_specs=P("x")))(X)
        np.testing.assert_allclose(eval_closed_jaxpr(closed, X)[0], X * X)
        imported = trace_with_jax(lambda a: jax.lax.with_sharding_constraint(a, P("x")))(X)
        assert "device_ids=None" in str(imported), imported
        np.testing.assert_allclose(eval_jaxpr(imported.jaxpr, imported.consts, [X])[0], X)
        stacked = np.stack([X, 2 * X])
        np.testing.assert_allclose(
            minijax.vmap(lambda a: mlax.with_sharding_constraint(a, P("x")))(stacked), stacked)


def test_traces_follow_the_context_mesh():
    f = minijax.jit(lambda a: mlax.with_sharding_constraint(a, P("x")) * 2.0)
    with jax.set_mesh(mesh(("x",))):
        np.testing.assert_allclose(f(X), 2 * X)
    with jax.set_mesh(mesh(("z",))):     # the trace on the mesh with 'x' is not reused
        with pytest.raises(ValueError, match="'x'"):
            f(X)
    trace = minijax.make_jaxpr(lambda a: mlax.with_sharding_constraint(a, P("x")))
    with pytest.raises(RuntimeError, match="set_mesh"):     # no context mesh to trace on
        trace(X)
    with jax.set_mesh(mesh(("x",))):
        closed = trace(X)
        np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, [X])[0], X)
    # run without the mesh it names: lowering says so
    with pytest.raises(ValueError, match="context mesh"):
        eval_jaxpr(closed.jaxpr, closed.consts, [X])


def test_no_context_mesh_is_jaxs_error():
    cases = {
        "jit": (RuntimeError, lambda lib, lax: lib.jit(lambda a: a, in_shardings=P("x"))(X)),
        "constraint": (RuntimeError, lambda lib, lax: lib.jit(
            lambda a: lax.with_sharding_constraint(a, P("x")))(X)),
        "device_put": (ValueError, lambda lib, lax: lib.device_put(X, P("x"))),
        "shard_map": (ValueError, lambda lib, lax: lib.shard_map(
            lambda a: a, in_specs=P("x"), out_specs=P("x"))(X)),
        "reshard": (ValueError, lambda lib, lax: lib.reshard(X, P("x"))),
    }
    for name, (error, call) in cases.items():
        for lib, lax in ((minijax, mlax), (jax, jax.lax)):
            with pytest.raises(error):
                call(lib, lax)
    traced = (ValueError, lambda lib: lib.jit(lambda a: lib.device_put(a, P("x")))(X))
    with pytest.raises(traced[0], match="set_mesh"):
        traced[1](minijax)


def test_with_sharding_constraint_refuses_explicit_axes_as_jax_does():
    """A spec naming an Explicit axis is a ValueError (use reshard), eagerly and under
    jit, given a NamedSharding or a bare spec under the mesh; unnamed and Auto axes of
    the same mesh stay requests."""
    m = jax.make_mesh((1, 1), ("e", "a"), axis_types=(AxisType.Explicit, AxisType.Auto))
    refused = [lambda lib, lax: lax.with_sharding_constraint(X, jax.NamedSharding(m, P("e"))),
               lambda lib, lax: lib.jit(lambda a: lax.with_sharding_constraint(
                   a, jax.NamedSharding(m, P(None, "e"))))(X),
               lambda lib, lax: lib.jit(lambda a: lax.with_sharding_constraint(
                   {"k": a}, {"k": P(("a", "e"))}))(X)]
    with jax.set_mesh(m):
        for call in refused:
            for lib, lax in ((minijax, mlax), (jax, jax.lax)):
                with pytest.raises(ValueError, match="Explicit|Auto axes"):
                    call(lib, lax)
        for call in (lambda lib, lax: lib.jit(lambda a: lax.with_sharding_constraint(
                         a * 2.0, P("a")))(X),
                     lambda lib, lax: lib.jit(lambda a: lax.with_sharding_constraint(
                         a * 2.0, jax.NamedSharding(m, P(None))))(X)):
            np.testing.assert_allclose(call(minijax, mlax), call(jax, jax.lax))


def test_reshard_on_explicit_axes():
    m = mesh(kind=AxisType.Explicit)
    with jax.set_mesh(m):
        for f in (lambda lib: lib.reshard(X, P("x")),
                  lambda lib: lib.jit(lambda a: lib.reshard(a * 2.0, P("x")))(X),
                  lambda lib: lib.reshard({"a": X}, {"a": jax.NamedSharding(m, P("x"))})["a"],
                  lambda lib: lib.grad(lambda a: (lib.reshard(a, P("x")) ** 2).sum())(X),
                  lambda lib: lib.jit(lambda a: a * 2.0, in_shardings=P("x"))(X),
                  lambda lib: lib.jit(lambda a: lib.device_put(a, P("x")))(X)):
            got, want = f(minijax), f(jax)
            np.testing.assert_allclose(got, want)
            assert got.sharding.is_equivalent_to(want.sharding, X.ndim)
        text = str(minijax.make_jaxpr(lambda a: minijax.reshard(a, P("x")))(X))
        assert "explicit_axes=('x',)" in text, text
        imported = trace_with_jax(lambda a: jax.reshard(a * 2.0, P("x")))(X)
        assert "explicit_axes=('x',)" in str(imported), imported
        got = minijax.jit(lambda a: eval_jaxpr(imported.jaxpr, imported.consts, [a])[0])(X)
        np.testing.assert_allclose(got, 2 * X)
    with jax.set_mesh(mesh()):      # JAX's reshard takes Explicit axes only
        for lib in (minijax, jax):
            with pytest.raises(ValueError):
                lib.reshard(X, P("x"))


def test_collective_over_the_vmap_axis_inside_shard_map():
    def program(lib, lax):
        body = lib.shard_map(lambda a: lax.psum(a, "i") * a + lax.axis_index("i")
                             + lax.pmean(a, "x"), mesh=mesh(), in_specs=P("x"),
                             out_specs=P("x"), check_vma=False)
        return lib.vmap(body, axis_name="i")
    ours, theirs = program(minijax, mlax), program(jax, jax.lax)
    xs = np.stack([X, 2 * X, -X])
    # JAX's side under jax.jit, once: its eager shard_map compiles each primitive anew
    want = jax.jit(theirs)(xs)
    np.testing.assert_allclose(ours(xs), want, rtol=1e-6)
    np.testing.assert_allclose(minijax.jit(ours)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(eval_closed_jaxpr(minijax.make_jaxpr(ours)(xs), xs)[0],
                               want, rtol=1e-6)
    loss = lambda f: lambda x: (f(x) ** 2).sum()
    np.testing.assert_allclose(minijax.grad(loss(ours))(xs),
                               jax.jit(jax.grad(loss(theirs)))(xs), rtol=1e-5)


def test_an_eager_shard_map_compiles_once_per_body():
    # Each eager call traces the body anew; the program compiled for the first trace
    # serves the later ones, as for an eager cond (JAX's eager shard_map compiles
    # each primitive of the body anew on every call)
    f = minijax.shard_map(lambda a: mlax.psum(a, "x") * a, mesh=mesh(), in_specs=P("x"),
                          out_specs=P("x"))
    loss = lambda a: (f(a) ** 2).sum()
    f(X), minijax.grad(loss)(X)
    with programs("compiled") as compiles:
        values, grads = f(X), minijax.grad(loss)(X)
    assert compiles == []
    np.testing.assert_allclose(values, X * X)
    np.testing.assert_allclose(grads, 4 * X ** 3, rtol=1e-6)


def _with_refs(a, b):
    """A shard_map that updates one ref in place and reads another."""
    r, s = minijax.new_ref(a), minijax.new_ref(b)

    def body(r, s):
        r[...] += s[...] * r[...]
        return r[...] * 2.0 + mlax.psum(s[...], "x")
    out = minijax.shard_map(body, mesh=mesh(), in_specs=(P("x"), P()),
                            out_specs=P("x"))(r, s)
    return (out * out).sum() + (r[...] ** 3).sum()


def _without_refs(a, b):
    """The same program in JAX, the ref's final value returned instead."""
    def body(a, s):
        a = a + s * a
        return a * 2.0 + jax.lax.psum(s, "x"), a
    out, final = jax.shard_map(body, mesh=mesh(), in_specs=(P("x"), P()),
                               out_specs=(P("x"), P("x")), check_vma=False)(a, b)
    return (out * out).sum() + (final ** 3).sum()


def test_grad_of_shard_map_taking_refs():
    b = np.array([[0.5, -1.0]], np.float32)
    for argnums in (0, 1, (0, 1)):
        want = jax.jit(jax.grad(_without_refs, argnums))(X, b)   # (JAX's side jitted)
        for got in (minijax.grad(_with_refs, argnums)(X, b),
                    minijax.jit(minijax.grad(_with_refs, argnums))(X, b)):
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(g, w, rtol=1e-5)
    tangent = jax.jit(lambda x, y: jax.jvp(_without_refs, (x, y), (x, y))[1])(X, b)
    np.testing.assert_allclose(minijax.jvp(_with_refs, (X, b), (X, b))[1], tangent,
                               rtol=1e-5)
    np.testing.assert_allclose(minijax.linearize(_with_refs, X, b)[1](X, b), tangent,
                               rtol=1e-5)
    # a ref from outside the differentiated function gets no tangent: writing a
    # differentiated value into it is refused, as for any ref (ref_rules.py)
    outside = minijax.new_ref(X)
    with pytest.raises(TypeError, match="tangent is not tracked"):
        minijax.grad(lambda c: minijax.shard_map(
            lambda r, s: _body_writing(r, s), mesh=mesh(), in_specs=(P("x"), P()),
            out_specs=P("x"))(outside, minijax.new_ref(c)).sum())(b)


def _body_writing(r, s):
    r[...] += s[...]
    return r[...]


def test_jax_grad_of_shard_map_taking_refs_fails():
    # Registry entry "grad_of_shard_map_taking_refs_crashes"
    from tests.test_collectives import _retire_if_fixed

    def jax_with_refs(a):
        r = jax.new_ref(a)

        def body(r):
            r[...] = r[...] * r[...]
            return r[...] * 2.0
        return jax.shard_map(body, mesh=mesh(), in_specs=P("x"), out_specs=P("x"))(r).sum()

    def fails(f):
        try:
            f()
        except Exception:
            return True
        return False
    _retire_if_fixed("grad_of_shard_map_taking_refs_crashes",
                     fails(lambda: jax.grad(jax_with_refs)(X))
                     and fails(lambda: jax.jit(jax.grad(jax_with_refs))(X)))
