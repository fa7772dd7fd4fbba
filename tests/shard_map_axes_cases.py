"""Checks of `axis_index_groups`, tuples of axis names, `shard_map` over some of the
mesh's axes, and shardings other than `NamedSharding`, on 8 host CPU devices against
JAX.

Run as a script by tests/test_shard_map.py in a subprocess (as `shard_map_cases.py`,
whose helpers it uses): the device count has to be set before JAX starts. Each check
runs minijax and JAX on the same inputs, eagerly, under `jit`, `vmap`, `grad` and in
the NumPy reference evaluator, and raises on a mismatch. The same process then runs
`shard_map_mesh_cases.py` (the context mesh, reshard).
"""
import os

# Added to any XLA_FLAGS inherited (the suite's compile-speed flags, tests/conftest.py).
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=8"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MINIJAX_ENABLE_CHECKS", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import minijax  # noqa: E402
from minijax import lax as mlax  # noqa: E402
from minijax.backends.reference import eval_closed_jaxpr  # noqa: E402
from shard_map_cases import close, MESH  # noqa: E402
import shard_map_mesh_cases  # noqa: E402

rng = np.random.default_rng(1)
X = rng.standard_normal((8, 8)).astype(np.float32)
GROUPS = [[0, 2], [1, 3]]           # on the mesh axis 'x' of size 4
XY = ("x", "y")                     # one axis of 8 members, numbered 2 * x + y
MIXED = [[0, 3, 5, 6], [1, 2, 4, 7]]    # groups of XY's members across both axes


def raises(error, fn, match=""):
    try:
        fn()
    except error as e:
        assert match in str(e), (match, str(e))
        return
    raise AssertionError(f"no {error.__name__} raised")


def both(make, in_specs, out_specs, *, check_vma=False, mesh=MESH, **kw):
    return (minijax.shard_map(make(mlax), mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                              check_vma=check_vma, **kw),
            jax.shard_map(make(jax.lax), mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                          check_vma=check_vma, **kw))


def compare(name, ours, theirs, x=X, differentiable=True):
    """`ours` against `theirs`: eager, jit, vmap, grad, jvp, reference evaluator.
    minijax's side runs as a user runs it; JAX's side (the oracle) under jax.jit: JAX's
    eager shard_map compiles each primitive of its body anew on every call."""
    want = jax.jit(theirs)(x)
    close(ours(x), want, f"{name} eager")
    close(minijax.jit(ours)(x), want, f"{name} jit")
    stacked = np.stack([x, 2 * x])
    # JAX's vmap of a grouped all_to_all is a NotImplementedError ("open a feature
    # request"); each example on its own is the same thing
    theirs_vmapped = (jax.jit(jax.vmap(theirs))(stacked) if "all_to_all groups" not in name
                      else np.stack([jax.jit(theirs)(row) for row in stacked]))
    close(minijax.vmap(ours)(stacked), theirs_vmapped, f"{name} vmap")
    close(eval_closed_jaxpr(minijax.make_jaxpr(ours)(x), x)[0], want,
          f"{name} reference evaluator")
    if differentiable:
        def loss(f):
            return lambda x: (f(x) ** 2).sum()
        close(minijax.grad(loss(ours))(x), jax.jit(jax.grad(loss(theirs)))(x),
              f"{name} grad", tol=1e-3)
        close(minijax.jvp(ours, (x,), (np.ones_like(x),)),
              jax.jit(lambda x, t: jax.jvp(theirs, (x,), (t,)))(x, np.ones_like(x)),
              f"{name} jvp", tol=1e-3)


GROUPED = {
    "psum groups": (lambda lax: lambda a: lax.psum(a, "x", axis_index_groups=GROUPS) * a,
                    P("x", "y"), P("x", "y")),
    "pmean groups": (lambda lax: lambda a: lax.pmean(a, "x", axis_index_groups=GROUPS),
                     P("x", "y"), P("x", "y")),
    "pmax groups": (lambda lax: lambda a: lax.pmax(a, "x", axis_index_groups=GROUPS) + a,
                    P("x", "y"), P("x", "y")),
    "pmin groups": (lambda lax: lambda a: lax.pmin(a, "x", axis_index_groups=GROUPS) - a,
                    P("x", "y"), P("x", "y")),
    "all_gather groups": (lambda lax: lambda a: lax.all_gather(
        a, "x", axis_index_groups=GROUPS, axis=1) * 2.0, P("x", "y"), P("x", None, "y")),
    "all_gather groups tiled": (lambda lax: lambda a: lax.all_gather(
        a, "x", axis_index_groups=GROUPS, tiled=True), P("x", "y"), P("x", "y")),
    "psum_scatter groups": (lambda lax: lambda a: lax.psum_scatter(
        a, "x", axis_index_groups=GROUPS, tiled=True), P("x", "y"), P("x", "y")),
    "all_to_all groups": (lambda lax: lambda a: lax.all_to_all(
        a, "x", 0, 1, axis_index_groups=GROUPS, tiled=True), P("x", "y"), P("x", "y")),
    "psum groups of a tuple": (lambda lax: lambda a: lax.psum(
        a, XY, axis_index_groups=MIXED) * a, P("x", "y"), P("x", "y")),
    "all_gather groups of a tuple": (lambda lax: lambda a: lax.all_gather(
        a, XY, axis_index_groups=MIXED, tiled=True), P("x", "y"), P("x", "y")),
    "psum_scatter groups of a tuple": (lambda lax: lambda a: lax.psum_scatter(
        a, XY, axis_index_groups=MIXED, scatter_dimension=1, tiled=True),
        P("x", "y"), P("x", "y")),
}
NAMED_TUPLES = {
    "axis_index of a tuple": (lambda lax: lambda a: a * lax.axis_index(XY),
                              P("x", "y"), P("x", "y")),
    "axis_index of a reversed tuple": (lambda lax: lambda a: a * lax.axis_index(("y", "x")),
                                       P("x", "y"), P("x", "y")),
    "all_gather of a tuple": (lambda lax: lambda a: lax.all_gather(a, XY, tiled=True),
                              P("x", "y"), P()),
    "all_gather of a tuple untiled": (lambda lax: lambda a: lax.all_gather(a, XY, axis=1),
                                      P("x", "y"), P()),
    "psum_scatter of a tuple": (lambda lax: lambda a: lax.psum_scatter(
        a, XY, scatter_dimension=1, tiled=True), P(None, None), P(None, XY)),
    "ppermute of a tuple": (lambda lax: lambda a: lax.ppermute(
        a, XY, [(i, (3 * i + 1) % 8) for i in range(8)]), P("x", "y"), P("x", "y")),
    "all_to_all of a tuple": (lambda lax: lambda a: lax.all_to_all(
        a, XY, 1, 0, tiled=True), P(None, None), P(XY, None)),
}


def check_axis_index_groups():
    for name, (make, in_specs, out_specs) in GROUPED.items():
        ours, theirs = both(make, in_specs, out_specs)
        compare(name, ours, theirs, differentiable=not name.startswith(("pmax", "pmin")))
    text = str(minijax.make_jaxpr(both(GROUPED["psum groups"][0], P("x", "y"),
                                       P("x", "y"))[0])(X))
    assert "psum[axes=('x',) axis_index_groups=((0, 2), (1, 3))]" in text, text


def check_axis_index_groups_errors():
    def grouped_psum(lax):
        return lambda a: lax.psum(a, "x", axis_index_groups=GROUPS)
    # JAX implements grouped psum only without its varying-value checks
    for lib, lax in ((minijax, mlax), (jax, jax.lax)):
        raises(NotImplementedError, lambda: lib.shard_map(
            grouped_psum(lax), mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))(X))
    for bad in ([[0, 1, 2, 3, 4], [5, 6, 7]], [[0, 5], [2, 3]]):
        raises(ValueError, lambda: minijax.shard_map(
            lambda a: mlax.psum(a, "x", axis_index_groups=bad), mesh=MESH,
            in_specs=P("x", "y"), out_specs=P("x", "y"), check_vma=False)(X),
            "cover all indices exactly once")
    raises(ValueError, lambda: jax.shard_map(
        lambda a: jax.lax.psum(a, "x", axis_index_groups=[[0, 5], [2, 3]]), mesh=MESH,
        in_specs=P("x", "y"), out_specs=P("x", "y"), check_vma=False)(X))
    raises(ValueError, lambda: minijax.shard_map(
        lambda a: mlax.psum(a, "x", axis_index_groups=[[0, 1, 2], [3]]), mesh=MESH,
        in_specs=P("x", "y"), out_specs=P("x", "y"), check_vma=False)(X), "same size")
    print("ok axis_index_groups errors")


def check_tuples_of_axis_names():
    for name, (make, in_specs, out_specs) in NAMED_TUPLES.items():
        ours, theirs = both(make, in_specs, out_specs)
        compare(name, ours, theirs, differentiable="axis_index" not in name)
    text = str(minijax.make_jaxpr(both(NAMED_TUPLES["axis_index of a tuple"][0],
                                       P("x", "y"), P("x", "y"))[0])(X))
    assert "axis_index[axis_name=('x', 'y')]" in text, text


PARTIAL = {   # manual over 'x' only: along 'y' the body sees whole arrays
    "partial psum": (lambda lax: lambda a: lax.psum(a * a, "x"), P("x"), P()),
    "partial all_gather": (lambda lax: lambda a: lax.all_gather(a, "x", tiled=True) * a[:1],
                           P("x"), P("x")),
    "partial matmul": (lambda lax: lambda a: lax.psum(a @ a.T, "x") * 0.5,
                       P(None, "x"), P()),
}
# JAX's eager shard_map over some axes with check_vma=False refuses every out_spec
# (registry entry "eager_partial_shard_map_without_vma_refuses_out_specs"), so the
# JAX side of these checks keeps its check_vma=True; values and derivatives agree.


def check_shard_map_over_some_mesh_axes():
    for name, (make, in_specs, out_specs) in PARTIAL.items():
        ours, theirs = both(make, in_specs, out_specs, axis_names={"x"}, check_vma=True)
        compare(name, ours, theirs)
    ours, theirs = both(PARTIAL["partial psum"][0], P("x"), P(), axis_names={"x"})
    try:
        theirs(X)
        refused = False
    except ValueError:
        refused = True
    print(f"JAX refuses an eager partial shard_map without vma checks: {refused}")
    close(ours(X), jax.jit(theirs)(X), "partial shard_map eagerly with check_vma=False")
    ours, _ = both(PARTIAL["partial psum"][0], P("x"), P(), axis_names={"x"})
    text = str(minijax.make_jaxpr(ours)(X))
    assert "auto_axes=('y',)" in text, text
    # a spec or a collective naming an axis that is not manual: as JAX does
    for lib, lax in ((minijax, mlax), (jax, jax.lax)):
        raises(ValueError, lambda: lib.shard_map(
            lambda a: a, mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"),
            axis_names={"x"})(X), "'y'")
        raises(NameError, lambda: lib.shard_map(
            lambda a: lax.psum(a, "y"), mesh=MESH, in_specs=P("x"), out_specs=P("x"),
            axis_names={"x"})(X), "y")
    print("ok partial errors")


def check_single_device_sharding():
    from jax.sharding import SingleDeviceSharding
    from minijax.interop import trace_with_jax, to_python_source
    second = SingleDeviceSharding(jax.devices()[1])

    def f(lax):
        return lambda a: lax.with_sharding_constraint(a * 2.0, second) + 1.0
    ours = minijax.jit(f(mlax), in_shardings=second, out_shardings=second)
    theirs = jax.jit(f(jax.lax), in_shardings=second, out_shardings=second)
    out = ours(X)
    assert out.sharding == theirs(X).sharding == second, out.sharding
    close(out, theirs(X), "single-device jit")
    text = str(minijax.make_jaxpr(ours)(X))
    assert "device_ids=(1,)" in text and "mesh_axes=()" in text, text
    close(minijax.grad(lambda a: (ours(a) ** 2).sum())(X),
          jax.jit(jax.grad(lambda a: (theirs(a) ** 2).sum()))(X), "single-device grad")
    close(minijax.vmap(ours)(np.stack([X, X])), jax.vmap(theirs)(np.stack([X, X])),
          "single-device vmap")
    close(eval_closed_jaxpr(minijax.make_jaxpr(ours)(X), X)[0], theirs(X),
          "single-device reference evaluator")
    put = minijax.device_put(X, second)
    assert put.sharding == second, put.sharding
    traced = minijax.jit(lambda a: minijax.device_put(a * 1.0, second))(X)
    assert traced.sharding == second, traced.sharding
    close(traced, X, "single-device device_put traced")
    closed = trace_with_jax(jax.jit(f(jax.lax)))(X)
    assert "mesh_axes=()" in str(closed), str(closed)
    namespace = {}
    exec(to_python_source(minijax.make_jaxpr(ours)(X)), namespace)
    result = jax.jit(namespace["program"])(X)[0]
    assert result.sharding == second, result.sharding
    close(result, theirs(X), "single-device as Python source")
    # a bare PartitionSpec needs a context mesh (jax.set_mesh), in JAX as in minijax
    for lib in (minijax, jax):
        raises(RuntimeError, lambda: lib.jit(lambda a: a, in_shardings=P("x"))(X),
               "set_mesh")
    raises(TypeError, lambda: minijax.jit(lambda a: a, in_shardings="x")(X),
           "SingleDeviceSharding")
    print("ok single-device sharding errors")


def check_refs_passed_in():
    """A ref passed into a shard_map: each device reads and writes its own block."""
    def body(r, s):
        r[...] += s[...]                    # s: the same on every device, read only
        return r[...] * 2.0

    def program(lib):
        def f(a, b):
            r, s = lib.new_ref(a), lib.new_ref(b)
            out = lib.shard_map(body, mesh=MESH, in_specs=(P("x", "y"), P()),
                                out_specs=P("x", "y"))(r, s)
            return out, r[...]
        return f
    b = rng.standard_normal((2, 4)).astype(np.float32)
    expected = jax.jit(program(jax))(X, b)
    close(minijax.jit(program(minijax))(X, b), expected, "ref passed in, jit")
    close(program(minijax)(X, b), expected, "ref passed in, eager")
    closed = minijax.make_jaxpr(program(minijax))(X, b)
    close(eval_closed_jaxpr(closed, X, b), expected, "ref passed in, reference evaluator")
    def local(lax, lib):
        def f(a):
            r = lib.new_ref(a)              # a ref made and used inside the body
            r[...] = r[...] * 3.0
            return r[...] + lax.psum(a, "x")
        return lib.shard_map(f, mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))
    close(minijax.jit(local(mlax, minijax))(X), jax.jit(local(jax.lax, jax))(X),
          "ref made inside the body")
    for lib in (minijax, jax):      # JAX refuses (eagerly) to return a ref, as minijax does
        raises(ValueError, lambda: lib.shard_map(lambda a: lib.new_ref(a), mesh=MESH,
                                                 in_specs=P("x"), out_specs=P("x"))(X),
               "return")
    stacked = (np.stack([X, 2 * X]), np.stack([b, b]))
    close(minijax.vmap(program(minijax))(*stacked), jax.jit(jax.vmap(program(jax)))(*stacked),
          "ref passed in, vmap")
    # grad works: shard_map_mesh_cases.check_grad_of_shard_map_taking_refs (JAX's own
    # fails, registry entry "grad_of_shard_map_taking_refs_crashes")
    print("ok ref errors")


def check_import_and_python_source():
    """JAX programs with groups and tuples of names import; minijax's are written back
    as JAX code by to_python_source."""
    from minijax.interop import trace_with_jax, to_python_source
    from minijax.transforms import eval_jaxpr
    cases = {**{n: c + ({},) for n, c in {**GROUPED, **NAMED_TUPLES}.items()},
             **{n: c + ({"axis_names": {"x"}},) for n, c in PARTIAL.items()}}
    for name, (make, in_specs, out_specs, kw) in cases.items():
        ours, theirs = both(make, in_specs, out_specs, **kw)
        theirs = jax.jit(theirs)
        closed = trace_with_jax(theirs)(X)
        close(eval_jaxpr(closed.jaxpr, closed.consts, [X])[0], theirs(X), f"{name} imported")
        namespace = {}
        exec(to_python_source(minijax.make_jaxpr(ours)(X)), namespace)
        # (jitted: see "eager_partial_shard_map_without_vma_refuses_out_specs")
        close(jax.jit(namespace["program"])(X)[0], theirs(X), f"{name} as Python source")


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    check_axis_index_groups()
    check_axis_index_groups_errors()
    check_tuples_of_axis_names()
    check_shard_map_over_some_mesh_axes()
    check_single_device_sharding()
    check_refs_passed_in()
    check_import_and_python_source()
    shard_map_mesh_cases.run_all()
    print("all shard_map axes checks passed")
