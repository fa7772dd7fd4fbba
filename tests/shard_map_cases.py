"""Checks of `shard_map` and collectives across 8 host CPU devices, against JAX.

Run as a script by tests/test_shard_map.py in a subprocess: the device count has to
be set (XLA_FLAGS) before JAX starts, which the rest of the test suite must not see.
Each check compares minijax with JAX on the same inputs and raises on a mismatch;
the script prints one line per check and exits non-zero on the first failure.
"""
import os

# Added to any XLA_FLAGS inherited (the suite's compile-speed flags, tests/conftest.py).
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=8"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MINIJAX_ENABLE_CHECKS", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import minijax  # noqa: E402
from minijax import lax as mlax  # noqa: E402

rng = np.random.default_rng(0)
MESH = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
LINE = Mesh(np.array(jax.devices()), ("d",))


def close(ours, theirs, what, tol=1e-4):
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape, a.dtype,
                                                           b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)
    print("ok", what)


def both(make, mesh, in_specs, out_specs, check_vma=True):
    return (minijax.shard_map(make(mlax), mesh=mesh, in_specs=in_specs, out_specs=out_specs),
            jax.shard_map(make(jax.lax), mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                          check_vma=check_vma))


X = rng.standard_normal((8, 4)).astype(np.float32)
COLLECTIVES = {
    "psum": (lambda lax: lambda a: lax.psum(a, "x") * a, P("x", "y"), P("x", "y")),
    "psum_two_axes": (lambda lax: lambda a: lax.psum(a, ("x", "y")), P("x", "y"), P()),
    "pmean": (lambda lax: lambda a: lax.pmean(a, "y") * a, P("x", "y"), P("x", "y")),
    "pmax": (lambda lax: lambda a: lax.pmax(a, "x") + a, P("x", "y"), P("x", "y")),
    "pmin": (lambda lax: lambda a: lax.pmin(a, "x") - a, P("x", "y"), P("x", "y")),
    "all_gather": (lambda lax: lambda a: lax.all_gather(a, "x", axis=0, tiled=True) * 2.0,
                   P("x", "y"), P(None, "y")),
    "psum_scatter": (lambda lax: lambda a: lax.psum_scatter(a, "x", tiled=True),
                     P(None, "y"), P("x", "y")),
    "ppermute": (lambda lax: lambda a: lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 3), (3, 0)])
                 * a, P("x", "y"), P("x", "y")),
    "all_to_all": (lambda lax: lambda a: lax.all_to_all(a, "y", 0, 1, tiled=True),
                   P("x", "y"), P("x", "y")),
    "axis_index": (lambda lax: lambda a: a * lax.axis_index("x") + lax.axis_index("y"),
                   P("x", "y"), P("x", "y")),
}
DIFFERENTIABLE = set(COLLECTIVES) - {"pmax", "pmin"}


# JAX's side of each comparison runs under jax.jit: JAX's eager shard_map compiles
# every primitive of its body as a program of its own, anew on each call (a dozen
# compiles for one eager grad), and the comparisons have a tolerance. minijax's side
# runs eagerly and under each transformation, as a user runs it.
EXPECTED = {}       # collective name -> JAX's value at X


def expected(name):
    """JAX's value of the collective `name`'s program at X, computed once."""
    if name not in EXPECTED:
        make, in_specs, out_specs = COLLECTIVES[name]
        EXPECTED[name] = jax.jit(jax.shard_map(make(jax.lax), mesh=MESH, in_specs=in_specs,
                                               out_specs=out_specs, check_vma=False))(X)
    return EXPECTED[name]


def check_collectives():
    for name, (make, in_specs, out_specs) in COLLECTIVES.items():
        # JAX cannot tell that a gathered value is the same on every device of 'x'
        ours, theirs = both(make, MESH, in_specs, out_specs,
                            check_vma=name != "all_gather")
        close(ours(X), expected(name), f"{name} eager")
        close(minijax.jit(ours)(X), expected(name), f"{name} jit")
        stacked = np.stack([X, 2 * X])
        close(minijax.vmap(ours)(stacked), jax.jit(jax.vmap(theirs))(stacked), f"{name} vmap")
        if name in DIFFERENTIABLE:
            def loss(f):
                return lambda x: (f(x) ** 2).sum()
            close(minijax.grad(loss(ours))(X), jax.jit(jax.grad(loss(theirs)))(X),
                  f"{name} grad")
            close(minijax.jvp(ours, (X,), (np.ones_like(X),)),
                  jax.jit(lambda x, t: jax.jvp(theirs, (x,), (t,)))(X, np.ones_like(X)),
                  f"{name} jvp")


def check_collectives_under_named_vmap_inside_shard_map():
    # a vmap axis 'r' over each block's rows, beside the mesh axis 'x'. (JAX's own
    # vmap of psum inside shard_map trips an assertion in jax 0.10.2, so the JAX side
    # spells the row sum out.)
    ours = minijax.shard_map(
        lambda a: minijax.vmap(lambda row: mlax.psum(row, "r") + mlax.psum(row, "x"),
                               axis_name="r")(a),
        mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))
    theirs = jax.shard_map(lambda a: a.sum(0) + jax.lax.psum(a, "x"),
                           mesh=MESH, in_specs=P("x", "y"), out_specs=P("x", "y"))
    close(ours(X), jax.jit(theirs)(X), "vmap(axis_name) inside shard_map")


def check_tensor_parallel_matmul():
    a = rng.standard_normal((4, 16)).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)

    def make(lax):
        return lambda a_block, w_block: lax.psum(a_block @ w_block, "d")
    ours, theirs = both(make, LINE, (P(None, "d"), P("d", None)), P())
    close(ours(a, w), jax.jit(theirs)(a, w), "tensor-parallel matmul")
    close(ours(a, w), a @ w, "tensor-parallel matmul equals a @ w")
    grads = minijax.grad(lambda a, w: ours(a, w).sum(), argnums=(0, 1))(a, w)
    close(grads, jax.jit(jax.grad(lambda a, w: theirs(a, w).sum(), argnums=(0, 1)))(a, w),
          "tensor-parallel matmul grad")


def mlp_step(lib, lax, mesh, check_vma=False, reduce="pmean"):
    """One data-parallel SGD step: batch split over 'd', gradients pmean-ed."""
    def loss(params, xb, yb):
        hidden = lib.numpy.tanh(xb @ params["w1"] + params["b1"])
        return ((hidden @ params["w2"] - yb) ** 2).mean()

    def per_shard(params, xb, yb):
        grads = lib.grad(loss)(params, xb, yb)
        grads = getattr(lax, reduce)(grads, "d")
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    if lib is minijax:
        mapped = minijax.shard_map(per_shard, mesh=mesh, in_specs=(P(), P("d"), P("d")),
                                   out_specs=P())
    else:
        mapped = jax.shard_map(per_shard, mesh=mesh, in_specs=(P(), P("d"), P("d")),
                               out_specs=P(), check_vma=check_vma)
    return lib.jit(mapped)


def init_mlp():
    return {"w1": rng.standard_normal((3, 8)).astype(np.float32) * 0.5,
            "b1": np.zeros(8, np.float32),
            "w2": rng.standard_normal((8, 2)).astype(np.float32) * 0.5}


def check_data_parallel_training():
    params = init_mlp()
    xs = rng.standard_normal((16, 3)).astype(np.float32)
    ys = rng.standard_normal((16, 2)).astype(np.float32)
    import jax.numpy  # noqa: F401  (jax.numpy for the JAX side of mlp_step)
    import minijax.numpy  # noqa: F401
    ours_step, theirs_step = mlp_step(minijax, mlax, LINE), mlp_step(jax, jax.lax, LINE)
    ours, theirs = params, params
    for _ in range(3):
        ours, theirs = ours_step(ours, xs, ys), theirs_step(theirs, xs, ys)
    close(ours, theirs, "data-parallel MLP, 3 steps")
    # With check_vma=True JAX knows the parameters are the same on every device: their
    # per-device gradients are already summed over 'd' (the transpose of the implicit
    # pvary is a psum), so pmean of them is that sum. minijax treats every value as
    # varying (check_vma=False); writing psum where JAX's check_vma=True program
    # writes pmean gives the same step.
    theirs_vma = mlp_step(jax, jax.lax, LINE, check_vma=True)(params, xs, ys)
    ours_summed = mlp_step(minijax, mlax, LINE, reduce="psum")(params, xs, ys)
    close(ours_summed, theirs_vma, "data-parallel step: check_vma=True sums gradients")


def check_import_from_jax():
    """A JAX program with shard_map and every collective, imported and run by minijax."""
    from minijax.interop import trace_with_jax
    from minijax.transforms import eval_jaxpr
    for name, (make, in_specs, out_specs) in COLLECTIVES.items():
        theirs = jax.shard_map(make(jax.lax), mesh=MESH, in_specs=in_specs,
                               out_specs=out_specs, check_vma=False)
        closed = trace_with_jax(theirs)(X)
        assert "shard_map[" in str(closed)
        close(eval_jaxpr(closed.jaxpr, closed.consts, [X])[0], expected(name),
              f"{name} imported")


def check_reference_evaluator():
    """The NumPy reference evaluator runs shard_map as nested named vmaps."""
    from minijax.backends.reference import eval_closed_jaxpr
    for name, (make, in_specs, out_specs) in COLLECTIVES.items():
        ours = minijax.shard_map(make(mlax), mesh=MESH, in_specs=in_specs,
                                 out_specs=out_specs)
        closed = minijax.make_jaxpr(ours)(X)
        close(eval_closed_jaxpr(closed, X)[0], ours(X), f"{name} reference evaluator")


def check_sharded_jit():
    from jax.sharding import NamedSharding
    rows = NamedSharding(MESH, P("x", None))
    cols = NamedSharding(MESH, P(None, "y"))

    def f(a):
        return mlax.with_sharding_constraint(a * 2.0, cols) + 1.0
    ours = minijax.jit(f, in_shardings=rows, out_shardings=NamedSharding(MESH, P("x", "y")))
    out = ours(X)
    assert out.sharding.is_equivalent_to(NamedSharding(MESH, P("x", "y")), 2), out.sharding
    close(out, X * 2.0 + 1.0, "jit in/out_shardings")
    text = str(minijax.make_jaxpr(ours)(X))
    assert "sharding_constraint[" in text and "spec=(('x',), ('y',))" in text, text
    grads = minijax.grad(lambda a: (ours(a) ** 2).sum())(X)
    close(grads, jax.grad(lambda a: ((jax.jit(lambda b: jax.lax.with_sharding_constraint(
        b * 2.0, cols) + 1.0)(a)) ** 2).sum())(X), "grad through sharding constraints")
    stacked = np.stack([X, X])
    close(minijax.vmap(ours)(stacked), np.stack([X * 2.0 + 1.0] * 2), "vmap of sharded jit")
    put = minijax.device_put(X, rows)
    assert put.sharding.is_equivalent_to(rows, 2)
    close(minijax.jit(lambda a: minijax.device_put(a, cols) * 1.0)(X), X, "device_put traced")
    from minijax.backends.reference import eval_closed_jaxpr
    close(eval_closed_jaxpr(minijax.make_jaxpr(ours)(X), X)[0], X * 2.0 + 1.0,
          "sharding constraint in the reference evaluator")


def check_repl_lower_shows_the_partitioned_module():
    import io
    from minijax.repl import Session
    out, err = io.StringIO(), io.StringIO()
    session = Session(stdout=out, stderr=err, colour=False)
    session.run_lines([
        "import numpy as np",
        "from jax.sharding import Mesh, PartitionSpec as P",
        "mesh = Mesh(np.array(jax.devices()), ('d',))",
        "f = jax.shard_map(lambda a: jax.lax.psum(a, 'd'), mesh=mesh, in_specs=P('d'), "
        "out_specs=P())",
        ":lower f(np.ones(16, np.float32))"])
    text = out.getvalue()
    assert err.getvalue() == "", err.getvalue()
    assert "-- partitioned: the program each device runs --" in text, text
    partitioned = text.split("-- partitioned")[1]
    assert "all-reduce" in partitioned and "f32[2]" in partitioned, partitioned
    print("ok repl :lower")


def check_python_source():
    """to_python_source writes shard_map and the collectives as JAX code."""
    from minijax.interop import to_python_source
    for name, (make, in_specs, out_specs) in COLLECTIVES.items():
        ours = minijax.shard_map(make(mlax), mesh=MESH, in_specs=in_specs,
                                 out_specs=out_specs)
        source = to_python_source(minijax.make_jaxpr(ours)(X))
        namespace = {}
        exec(source, namespace)
        close(jax.jit(namespace["program"])(X)[0], ours(X), f"{name} as Python source")


def check_errors():
    try:
        minijax.shard_map(lambda a: a, mesh=MESH, in_specs=P("z"), out_specs=P())(X)
    except ValueError as e:
        assert "'z'" in str(e), e
    else:
        raise AssertionError("an unknown mesh axis was accepted")
    try:
        minijax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"))(
            np.ones((6, 2), np.float32))
    except TypeError as e:
        assert "divisible by 4" in str(e), e
    else:
        raise AssertionError("an indivisible dimension was accepted")
    print("ok errors")


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    check_collectives()
    check_collectives_under_named_vmap_inside_shard_map()
    check_tensor_parallel_matmul()
    check_data_parallel_training()
    check_import_from_jax()
    check_reference_evaluator()
    check_sharded_jit()
    check_repl_lower_shows_the_partitioned_module()
    check_python_source()
    check_errors()
    print("all shard_map checks passed")
