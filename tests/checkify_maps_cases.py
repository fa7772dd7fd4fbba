"""`checkify` of `shard_map` and `pmap` bodies on 8 host CPU devices, against
`jax.experimental.checkify` on the same programs.

Run as a script by tests/test_experimental_checkify_maps.py in a subprocess of its own
(the device count has to be set before JAX starts). Each check raises on a mismatch
and prints one "ok ..." line; where JAX fails (registry entries) the script prints
"jax fails <entry>: True/False" and checks minijax against JAX's `vmap` of the same
per-device function, which reports each device's error as the shard_map should.
"""
import os

# Added to any XLA_FLAGS inherited (the suite's compile-speed flags, tests/conftest.py).
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=8"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MINIJAX_ENABLE_CHECKS", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import checkify as jax_checkify  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mnp  # noqa: E402
from minijax.experimental import checkify  # noqa: E402

SIDES = {"minijax": (minijax, mnp, checkify), "jax": (jax, jax.numpy, jax_checkify)}
MESH = Mesh(np.array(jax.devices()[:4]), ("i",))
MESH_2D = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
X = np.array([1., 2., -3., 4., -5., 6., 7., 8.], np.float32)   # shards 1 and 2 fail


def pred_shapes(error):
    return sorted(np.shape(p) for p in error._pred.values())


def same(program, what):
    """`program(lib, np_lib, checkify_module) -> (error, out)` on both libraries: the
    same message (`get()`: one line per failing device), per-device error shapes and
    outputs."""
    (ours, out), (theirs, expected) = (program(*SIDES[s]) for s in ("minijax", "jax"))
    assert ours.get() == theirs.get(), (what, ours.get(), theirs.get())
    assert pred_shapes(ours) == pred_shapes(theirs), (what, pred_shapes(ours),
                                                      pred_shapes(theirs))
    for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=what)
    print("ok", what)
    return ours


def compare(make, what, *args, errors=None, eager=False):
    """`make(lib, np_lib, ck)`: the function to checkify, compared under jit, and also
    eagerly with `eager` (op by op on both sides: the costly way, so for a few)."""
    def program(jitted):
        def run(lib, np_lib, ck):
            kw = {} if errors is None else {"errors": getattr(ck, errors)}
            checked = ck.checkify(make(lib, np_lib, ck), **kw)
            return (lib.jit(checked) if jitted else checked)(*args)
        return run
    if eager:
        same(program(False), f"{what} eager")
    return same(program(True), f"{what} jit")


def shard_map(lib, f, mesh=MESH, in_specs=P("i"), out_specs=P("i")):
    return lib.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


def check_shard_map():
    def user(lib, np_lib, ck):
        def body(x):
            ck.check(np_lib.all(x > 0), "shard {} has {}", lib.lax.axis_index("i"), x[0])
            return x * 2
        return shard_map(lib, body)
    error = compare(user, "user check, sharded in and out", X, eager=True)
    assert error.get().count("\n") == 1, error.get()   # one line per failing shard

    def replicated_in(lib, np_lib, ck):
        def body(x):   # every device holds all of x and checks its own element
            ck.check(x[lib.lax.axis_index("i")] > 0, "element {}", lib.lax.axis_index("i"))
            return x
        return shard_map(lib, body, in_specs=P(), out_specs=P())
    compare(replicated_in, "user check, replicated in and out", X[:4])

    def replicated_out(lib, np_lib, ck):
        def body(x):
            ck.check(np_lib.all(x > 0), "negative")
            return lib.lax.psum(x, "i")
        return shard_map(lib, body, out_specs=P())
    compare(replicated_out, "user check, replicated out", X)

    compare(lambda lib, np_lib, ck: shard_map(lib, np_lib.log), "nan check", X,
            errors="nan_checks", eager=True)
    compare(lambda lib, np_lib, ck: shard_map(
        lib, lambda x: 12 // (x.astype(np.int32) - 4)), "div check", X, errors="div_checks")

    def before(lib, np_lib, ck):    # an error made before the map is every device's
        def f(x):
            ck.check(x[0] > 1, "before the map")
            return shard_map(lib, lambda b: np_lib.sin(b))(x)
        return f
    # a JAX array: checkify leaves a NumPy argument a NumPy value, and `x[0] > 1` no array
    compare(before, "check before the map", jax.numpy.asarray(X), errors="all_checks")

    def mesh_2d(lib, np_lib, ck):
        def body(x):
            ck.check(np_lib.all(x > 0), "x={} y={}", lib.lax.axis_index("x"),
                     lib.lax.axis_index("y"))
            return x
        return shard_map(lib, body, mesh=MESH_2D, in_specs=P("y"), out_specs=P("y"))
    error = compare(mesh_2d, "2-D mesh, replicated over x", X)
    assert pred_shapes(error) == [(8,)], pred_shapes(error)


def check_transformed():
    def checked(lib, np_lib, ck):
        def body(x):
            ck.check(np_lib.all(x > 0), "first {}", x[0])
            return np_lib.sin(x) * x
        return ck.checkify(shard_map(lib, body))

    stacked = np.stack([X, -X])
    same(lambda lib, np_lib, ck: lib.jit(lib.vmap(checked(lib, np_lib, ck)))(stacked),
         "vmap of checkified shard_map, jit")

    def grad(lib, np_lib, ck):
        f = checked(lib, np_lib, ck)
        return lib.jit(f)(X)[0], lib.jit(lib.grad(lambda x: f(x)[1].sum()))(X)
    same(grad, "grad of checkified shard_map, jit")


def check_pmap():
    blocks = X.reshape(4, 2)

    def user(lib, np_lib, ck):
        def body(x):
            ck.check(np_lib.all(x > 0), "device {} has {}", lib.lax.axis_index("i"), x)
            return x + 1
        return lib.pmap(body, axis_name="i")
    compare(user, "pmap user check", blocks, eager=True)
    compare(lambda lib, np_lib, ck: lib.pmap(np_lib.log, in_axes=1), "pmap nan check",
                  X.reshape(2, 4), errors="nan_checks")
    compare(lambda lib, np_lib, ck: lib.pmap(lambda x: 12 // (x.astype(np.int32) - 4)),
                  "pmap div check", blocks, errors="div_checks")
    same(lambda lib, np_lib, ck: lib.pmap(ck.checkify(np_lib.log, errors=ck.nan_checks))(
        blocks), "pmap of checkify")


def jax_fails(program, match) -> bool:
    try:
        program()
    except Exception as e:  # noqa: BLE001 -- which failure is checked below
        assert match in str(e), (type(e).__name__, str(e))
        return True
    return False


def check_where_jax_fails():
    """Index checks in a map, and checks after one: minijax's error against JAX's vmap
    of the per-device program over the blocks (the oracle `same` cannot be, as JAX's
    own checkify of the map fails)."""
    def gather(np_lib):   # shard k reads its element x[0] (an index out of range: OOB)
        return lambda x: x[x[0].astype(np.int32)][None]
    blocks = X.reshape(4, 2)
    want = jax.jit(jax.vmap(jax_checkify.checkify(gather(jax.numpy),
                                                  errors=jax_checkify.index_checks))
                   )(blocks)[0].get()
    assert want.count("out-of-bounds") == 3, want
    fails = jax_fails(lambda: jax.jit(jax_checkify.checkify(
        shard_map(jax, gather(jax.numpy)), errors=jax_checkify.index_checks))(X), "foreach")
    fails &= jax_fails(lambda: jax.jit(jax_checkify.checkify(
        jax.pmap(gather(jax.numpy)), errors=jax_checkify.index_checks))(blocks), "foreach")
    print("jax fails checkify_index_check_inside_shard_map_crashes:", fails)
    index = checkify.checkify(shard_map(minijax, gather(mnp)), errors=checkify.index_checks)
    for name, f in (("eager", index), ("jit", minijax.jit(index))):
        assert f(X)[0].get() == want, (name, f(X)[0].get(), want)
    pmapped = checkify.checkify(minijax.pmap(gather(mnp)), errors=checkify.index_checks)
    assert pmapped(blocks)[0].get() == want
    print("ok index check in shard_map and pmap")

    def two_maps(lib, np_lib, ck):
        def f(x):
            y = shard_map(lib, lambda b: (ck.check(np_lib.all(b > 0), "one {}", b[0]), b)[1])(x)
            y = shard_map(lib, lambda b: (ck.check(np_lib.all(b < 7), "two {}", b[0]), b)[1])(y)
            ck.check(y[0] > 1, "after {}", y[0])
            return y
        return ck.checkify(f)

    def per_device(b):
        jax_checkify.check(jax.numpy.all(b > 0), "one {}", b[0])
        jax_checkify.check(jax.numpy.all(b < 7), "two {}", b[0])
        first = jax.numpy.asarray(X[0])
        jax_checkify.check(first > 1, "after {}", first)
        return b
    want = jax.vmap(jax_checkify.checkify(per_device))(blocks)[0].get()
    assert want.count("\n") == 3, want            # every device fails, one after all
    print("jax fails checkify_after_shard_map_crashes:",
          jax_fails(lambda: jax.jit(two_maps(*SIDES["jax"]))(X), "same shapes"))
    error, out = minijax.jit(two_maps(*SIDES["minijax"]))(X)
    assert error.get() == want, (error.get(), want)
    np.testing.assert_array_equal(out, X)
    print("ok checks after a shard_map")

    def in_loop_and_cond(lib, np_lib, ck):   # the carry is per device from the start
        inner = shard_map(lib, lambda b: (ck.check(np_lib.all(b > 0), "one {}", b[0]), b)[1])

        def f(x):
            x = lib.lax.scan(lambda c, _: (inner(c), None), x, None, length=2)[0]
            return lib.lax.cond(x[0] > 0, inner, lambda x: -x, x)
        return ck.checkify(f)
    print("jax fails checkify_after_shard_map_crashes in scan:",
          jax_fails(lambda: jax.jit(in_loop_and_cond(*SIDES["jax"]))(X), "shape"))
    error, out = minijax.jit(in_loop_and_cond(*SIDES["minijax"]))(X)
    want = jax.vmap(jax_checkify.checkify(lambda b: (jax_checkify.check(
        jax.numpy.all(b > 0), "one {}", b[0]), b)[1]))(blocks)[0].get()
    assert error.get() == want, (error.get(), want)
    np.testing.assert_array_equal(out, X)
    print("ok shard_map in scan and cond")

    def of_grad(lib, np_lib, ck):   # grad runs the body's checks in two shard_maps
        inner = shard_map(lib, lambda b: (ck.check(np_lib.all(b > 0), "one {}", b[0]),
                                          np_lib.sin(b) * b)[1])
        return ck.checkify(lib.grad(lambda x: inner(x).sum()), errors=ck.all_checks)
    print("jax fails checkify_after_shard_map_crashes of grad:",
          jax_fails(lambda: jax.jit(of_grad(*SIDES["jax"]))(X), "shape"))
    error, grad = minijax.jit(of_grad(*SIDES["minijax"]))(X)
    assert error.get() == want, (error.get(), want)
    np.testing.assert_array_equal(
        grad, jax.jit(jax.grad(lambda x: (jax.numpy.sin(x) * x).sum()))(X))
    print("ok checkify of grad of shard_map")


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    check_shard_map()
    check_transformed()
    check_pmap()
    check_where_jax_fails()
    print("all checkify map checks passed")
