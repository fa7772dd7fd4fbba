"""8-device checks of the mesh context (`jax.set_mesh` and bare `PartitionSpec`s),
`reshard` on Explicit axes, collectives over a vmap's axis inside `shard_map`, and grad
of a `shard_map` that takes refs, against JAX.

Imported by `shard_map_axes_cases.py`, whose subprocess has the 8 devices (no new
interpreter starts for these); `tests/test_sharding_names.py` runs the same ideas on
one device in the test process.
"""
import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import minijax
from minijax import lax as mlax
from minijax.backends.reference import eval_closed_jaxpr
from shard_map_cases import close

X = np.arange(64, dtype=np.float32).reshape(8, 8) / 64


def _mesh(kind):
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(kind, kind))


def _same_layout(ours, theirs, what):
    assert ours.sharding.is_equivalent_to(theirs.sharding, ours.ndim), (
        what, ours.sharding, theirs.sharding)
    close(ours, theirs, what)


def check_partition_specs_on_the_context_mesh():
    mesh = _mesh(AxisType.Auto)
    with jax.set_mesh(mesh):
        def cases(lib, lax):
            return {
                "context mesh jit shardings": lambda: lib.jit(
                    lambda a: a * 2.0, in_shardings=P("x"),
                    out_shardings=P(None, ("x", "y")))(X),
                "context mesh constraint": lambda: lib.jit(
                    lambda a: lax.with_sharding_constraint(a + 1.0, P("y", "x")))(X),
                "context mesh device_put": lambda: lib.device_put(X, P("x", "y")),
                "context mesh shard_map": lambda: lib.jit(lib.shard_map(
                    lambda a: lax.psum(a, "x") * a, in_specs=P("x", "y"),
                    out_specs=P("x", "y")))(X),
            }
        ours, theirs = cases(minijax, mlax), cases(jax, jax.lax)
        for name in ours:
            _same_layout(ours[name](), theirs[name](), name)
        # traced device_put: JAX's leaves the layout to XLA here; the values agree
        close(minijax.jit(lambda a: minijax.device_put(a, P("x")) * 3.0)(X),
              jax.jit(lambda a: jax.device_put(a, P("x")) * 3.0)(X),
              "context mesh device_put traced")
        spmd = minijax.shard_map(lambda a: mlax.psum(a, "x") * a, in_specs=P("x", "y"),
                                 out_specs=P("x", "y"))
        close(eval_closed_jaxpr(minijax.make_jaxpr(spmd)(X), X)[0],
              theirs["context mesh shard_map"](), "context mesh shard_map reference evaluator")
        grads = minijax.grad(lambda a: (spmd(a) ** 2).sum())(X)
        close(grads, jax.jit(jax.grad(lambda a: (jax.shard_map(
            lambda b: jax.lax.psum(b, "x") * b, in_specs=P("x", "y"),
            out_specs=P("x", "y"))(a) ** 2).sum()))(X), "context mesh shard_map grad")


def check_reshard_on_explicit_axes():
    mesh = _mesh(AxisType.Explicit)
    with jax.set_mesh(mesh):
        def cases(lib):
            return {
                "reshard": lambda: lib.reshard(X, P("x", "y")),
                "reshard jit": lambda: lib.jit(lambda a: lib.reshard(a * 2.0, P("y")))(X),
                "reshard NamedSharding": lambda: lib.reshard(
                    X, NamedSharding(mesh, P(None, ("x", "y")))),
                "explicit jit in_shardings": lambda: lib.jit(
                    lambda a: a + 1.0, in_shardings=P("x"), out_shardings=P(None, "y"))(X),
                "explicit device_put traced": lambda: lib.jit(
                    lambda a: lib.device_put(a, P("x", "y")))(X),
            }
        ours, theirs = cases(minijax), cases(jax)
        for name in ours:
            _same_layout(ours[name](), theirs[name](), name)
        close(minijax.grad(lambda a: (minijax.reshard(a, P("x")) ** 2).sum())(X),
              jax.grad(lambda a: (jax.reshard(a, P("x")) ** 2).sum())(X), "reshard grad")


def check_collectives_over_a_vmap_axis_inside_shard_map():
    mesh = _mesh(AxisType.Auto)

    def program(lib, lax):
        def body(a):
            return (lax.psum(a, "i") * a + lax.axis_index("i") + lax.pmean(a, "x")
                    + lax.all_gather(a, "i").sum(0) * a
                    + lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 0)]))
        return lib.vmap(lib.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                                      out_specs=P("x", "y"), check_vma=False),
                        axis_name="i")
    ours, theirs = program(minijax, mlax), program(jax, jax.lax)
    xs = np.stack([X, -2 * X, X * X])
    want = jax.jit(theirs)(xs)      # JAX's side jitted, as in shard_map_axes_cases
    close(ours(xs), want, "vmap axis inside shard_map eager")
    close(minijax.jit(ours)(xs), want, "vmap axis inside shard_map jit")
    close(eval_closed_jaxpr(minijax.make_jaxpr(ours)(xs), xs)[0], want,
          "vmap axis inside shard_map reference evaluator")
    loss = lambda f: lambda x: (f(x) ** 2).sum()
    close(minijax.grad(loss(ours))(xs), jax.jit(jax.grad(loss(theirs)))(xs),
          "vmap axis inside shard_map grad", tol=1e-3)


def check_grad_of_shard_map_taking_refs():
    mesh = _mesh(AxisType.Auto)
    b = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)

    def ours(a, c):
        r, s = minijax.new_ref(a), minijax.new_ref(c)

        def body(r, s):
            r[...] += s[...] * r[...]
            return r[...] * 2.0 + mlax.psum(s[...], "x")
        out = minijax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P()),
                                out_specs=P("x", "y"))(r, s)
        return (out * out).sum() + (r[...] ** 3).sum()

    def theirs(a, c):       # the same program without refs
        def body(a, s):
            a = a + s * a
            return a * 2.0 + jax.lax.psum(s, "x"), a
        out, final = jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P()),
                                   out_specs=(P("x", "y"), P("x", "y")),
                                   check_vma=False)(a, c)
        return (out * out).sum() + (final ** 3).sum()
    want = jax.jit(jax.grad(theirs, (0, 1)))(X, b)
    close(minijax.grad(ours, (0, 1))(X, b), want, "grad with refs", tol=1e-3)
    close(minijax.jit(minijax.grad(ours, (0, 1)))(X, b), want, "grad with refs, jit",
          tol=1e-3)


def check_smap():
    """`smap` over one axis of the context mesh: in_axes/out_axes as vmap's, the
    other axis left to XLA, against JAX (a negative axis: the registered divergence
    smap_negative_axis_names_the_first_dimension)."""
    mesh = _mesh(AxisType.Auto)
    v = X[:2]
    with jax.set_mesh(mesh):
        def cases(lib, lax):
            f = lambda a: lax.psum(a, "x") * a  # noqa: E731
            g = lambda a, b: (lax.psum(a * b, "x"), a - lax.pmean(a, "x"))  # noqa: E731
            return {
                "smap axis 0": lambda: lib.smap(f, in_axes=0, out_axes=0, axis_name="x")(X),
                "smap axis 1 jit": lambda: lib.jit(lib.smap(
                    f, in_axes=1, out_axes=1, axis_name="x"))(X),
                "smap tuple in_axes": lambda: lib.jit(lib.smap(
                    g, in_axes=(0, None), out_axes=(None, 0), axis_name="x"))(X, v),
                "smap over y, decorator": lambda: lib.smap(
                    in_axes=0, out_axes=0, axis_name="y")(lambda a: lax.psum(a, "y") - a)(X),
                "smap grad": lambda: lib.grad(lambda a: (lib.smap(
                    f, in_axes=0, out_axes=0, axis_name="x")(a) ** 2).sum())(X),
                "smap vmap": lambda: lib.vmap(lib.smap(
                    f, in_axes=0, out_axes=0, axis_name="x"))(np.stack([X, 2 * X])),
            }
        ours, theirs = cases(minijax, mlax), cases(jax, jax.lax)
        for name in ours:
            close(ours[name](), theirs[name](), name)
        # A negative axis: minijax counts from the end (as in_axes=1 here), JAX takes 0.
        neg = lambda lib, lax: lib.jit(lib.smap(  # noqa: E731
            lambda a: lax.psum(a, "x") * a, in_axes=-1, out_axes=-1, axis_name="x"))(X)
        close(neg(minijax, mlax), theirs["smap axis 1 jit"](), "smap negative axis")
        close(neg(jax, jax.lax), theirs["smap axis 0"](), "smap negative axis, JAX's")
        assert neg(jax, jax.lax).sharding.spec == P("x")
        assert neg(minijax, mlax).sharding.spec == P(None, "x")
        errors = {
            "no in_axes": (TypeError, lambda lib: lib.smap(lambda a: a, out_axes=0,
                                                           axis_name="x")(X)),
            "a list of names": (TypeError, lambda lib: lib.smap(
                lambda a: a, in_axes=0, out_axes=0, axis_name=["x"])(X)),
            "a list of axes": (TypeError, lambda lib: lib.smap(
                lambda a: a, in_axes=[0], out_axes=0, axis_name="x")(X)),
            "no such axis": (ValueError, lambda lib: lib.smap(
                lambda a: a, in_axes=0, out_axes=0, axis_name="z")(X)),
        }
        for what, (error, call) in errors.items():
            for lib in (jax, minijax):
                try:
                    call(lib)
                except error:
                    continue
                raise AssertionError(f"smap {what}: {lib.__name__} raised no {error}")
        try:
            minijax.smap(lambda a: a, in_axes=2, out_axes=0, axis_name="x")(X)
        except ValueError as e:
            assert "out of range" in str(e), e
        else:
            raise AssertionError("smap in_axes=2 of a rank-2 argument passed")
    try:
        minijax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x")(X)
    except ValueError as e:
        assert "set_mesh" in str(e), e
    else:
        raise AssertionError("smap without a context mesh passed")
    print("ok smap checks")


def check_pbroadcast():
    """minijax's pbroadcast under shard_map against the psum of the masked value JAX
    documents it as (JAX's own has no CPU lowering: registry entry
    pbroadcast_vmap_and_transpose_fail)."""
    mesh = _mesh(AxisType.Auto)

    def program(lib, lax, names, source):
        if lib is minijax:
            body = lambda a: lax.pbroadcast(a, names, source) * a  # noqa: E731
        else:
            def body(a):
                mine = lax.axis_index(names) == source
                return lax.psum(jax.numpy.where(mine, a, 0.0), names) * a
        return lib.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    for names, source in (("x", 2), (("x", "y"), 5)):
        ours, theirs = program(minijax, mlax, names, source), program(jax, jax.lax, names, source)
        want = jax.jit(theirs)(X)
        close(ours(X), want, f"pbroadcast {names}")
        close(minijax.jit(ours)(X), want, f"pbroadcast {names} jit")
        loss = lambda f: lambda a: (f(a) ** 2).sum()  # noqa: E731
        close(minijax.grad(loss(ours))(X), jax.jit(jax.grad(loss(theirs)))(X),
              f"pbroadcast {names} grad", tol=1e-3)


def check_auto_and_explicit_axes():
    """`sharding.auto_axes` on an Explicit mesh and `explicit_axes` on an Auto one, as
    the sharding tutorials use them: values, the layout `auto_axes` moves its result
    to, the axis types the function sees, grad, and the errors."""
    seen = {}

    def body(lib, tag):
        def g(a):
            mesh = jax.sharding.get_abstract_mesh()
            seen[tag] = tuple(mesh.axis_types)
            return a * 2.0 + a.sum(0)
        return g
    with jax.set_mesh(_mesh(AxisType.Explicit)):
        x = jax.device_put(X, P("x", None))

        def auto(lib, tag):
            return {
                f"{tag} eager": lambda: lib.sharding.auto_axes(
                    body(lib, tag), out_sharding=P("x", "y"))(x),
                f"{tag} jit": lambda: lib.jit(lambda a: lib.sharding.auto_axes(
                    body(lib, tag), out_sharding=P(None, "y"))(a))(x),
                f"{tag} keyword, one axis": lambda: lib.jit(lambda a: lib.sharding.auto_axes(
                    body(lib, tag), axes="x")(a, out_sharding=P("x")))(x),
                f"{tag} grad": lambda: lib.jit(lib.grad(lambda a: lib.sharding.auto_axes(
                    body(lib, tag), out_sharding=P("x"))(a).sum()))(x),
            }
        ours, theirs = auto(minijax, "auto_axes"), auto(jax, "jax auto_axes")
        for name in ours:
            mine, want = ours[name](), theirs[name.replace("auto_axes", "jax auto_axes")]()
            if "grad" not in name:
                _same_layout(mine, want, name)
            close(mine, want, name)
        assert seen["auto_axes"] == seen["jax auto_axes"], seen
        for lib in (jax, minijax):
            try:
                lib.sharding.auto_axes(lambda a: a)(x)
            except TypeError as e:
                assert "out_sharding" in str(e)
            else:
                raise AssertionError(f"{lib.__name__}: auto_axes without out_sharding")
    with jax.set_mesh(_mesh(AxisType.Auto)):
        def explicit(lib, tag):
            return {
                f"{tag} eager": lambda: lib.sharding.explicit_axes(
                    body(lib, tag), in_sharding=P("x"))(X),
                f"{tag} jit": lambda: lib.jit(lambda a: lib.sharding.explicit_axes(
                    body(lib, tag), in_sharding=P("x", "y"))(a))(X),
                f"{tag} keyword": lambda: lib.jit(lambda a: lib.sharding.explicit_axes(
                    body(lib, tag))(a, in_sharding=P("x")))(X),
                f"{tag} grad": lambda: lib.jit(lib.grad(lambda a: lib.sharding.explicit_axes(
                    body(lib, tag), in_sharding=P("x"))(a).sum()))(X),
            }
        ours, theirs = explicit(minijax, "explicit_axes"), explicit(jax, "jax explicit_axes")
        for name in ours:
            close(ours[name](), theirs[name.replace("explicit_axes", "jax explicit_axes")](),
                  name)
        assert seen["explicit_axes"] == seen["jax explicit_axes"], seen
    for lib in (jax, minijax):
        try:
            lib.sharding.explicit_axes(lambda a: a, in_sharding=P("x"))(X)
        except ValueError as e:
            assert "set_mesh" in str(e)
        else:
            raise AssertionError(f"{lib.__name__}: explicit_axes without a mesh")
    print("ok auto_axes and explicit_axes checks")


def run_all():
    check_auto_and_explicit_axes()
    check_pbroadcast()
    check_smap()
    check_partition_specs_on_the_context_mesh()
    check_reshard_on_explicit_axes()
    check_collectives_over_a_vmap_axis_inside_shard_map()
    check_grad_of_shard_map_taking_refs()
