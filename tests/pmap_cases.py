"""Checks of `pmap` on 8 host CPU devices, against `jax.pmap` on the same inputs.

Run as a script by tests/test_shard_map.py in a subprocess of its own (the device
count has to be set before JAX starts; a process of its own also lets pytest-xdist run
it beside the other 8-device scripts). Each check raises on a mismatch and prints one
"ok ..." line.
"""
import os

# Added to any XLA_FLAGS inherited (the suite's compile-speed flags, tests/conftest.py).
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=8"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MINIJAX_ENABLE_CHECKS", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402

import minijax  # noqa: E402
from minijax import lax as mlax  # noqa: E402
from shard_map_cases import close  # noqa: E402

rng = np.random.default_rng(2)
X = rng.standard_normal((4, 6)).astype(np.float32)     # 4 devices, 6 values each
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]

# name: f(lax) -> the per-device function, over axis 'i' of size 4
COLLECTIVES = {
    "psum": lambda lax: lambda a: lax.psum(a, "i") * a,
    "pmean": lambda lax: lambda a: lax.pmean(a, "i") * a,
    "pmax": lambda lax: lambda a: lax.pmax(a, "i") + a,
    "pmin": lambda lax: lambda a: lax.pmin(a, "i") - a,
    "all_gather": lambda lax: lambda a: lax.all_gather(a, "i").sum(0) * a,
    "all_gather tiled": lambda lax: lambda a: lax.all_gather(a, "i", tiled=True)[:6] * a,
    "psum_scatter": lambda lax: lambda a: lax.psum_scatter(a[:4], "i", tiled=True) * 3.0,
    "ppermute": lambda lax: lambda a: lax.ppermute(a, "i", RING) * a,
    "all_to_all": lambda lax: lambda a: lax.all_to_all(
        a[:4].reshape(4, 1), "i", 0, 0).reshape(4) * 2.0,
    "axis_index": lambda lax: lambda a: a * lax.axis_index("i"),
}
DIFFERENTIABLE = set(COLLECTIVES) - {"pmax", "pmin"}


def both(make, **kw):
    return minijax.pmap(make(mlax), **kw), jax.pmap(make(jax.lax), **kw)


def same_sharding(ours, theirs, what):
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert isinstance(a.sharding, NamedSharding), (what, a.sharding)
        assert a.sharding.spec == b.sharding.spec, (what, a.sharding, b.sharding)
        assert list(a.sharding.mesh.devices.flat) == list(b.sharding.mesh.devices.flat), what


def check_collectives():
    for name, make in COLLECTIVES.items():
        ours, theirs = both(make, axis_name="i")
        out, expected = ours(X), theirs(X)
        close(out, expected, f"pmap {name} eager")
        same_sharding(out, expected, name)
        close(minijax.jit(ours)(X), jax.jit(theirs)(X), f"pmap {name} jit")
        stacked = np.stack([X, -2 * X])
        close(minijax.vmap(ours)(stacked), jax.vmap(theirs)(stacked), f"pmap {name} vmap")
        if name in DIFFERENTIABLE:
            def loss(f):
                return lambda x: (f(x) ** 2).sum()
            # JAX's side jitted: eagerly, each op around JAX's pmap is a compile
            close(minijax.grad(loss(ours))(X), jax.jit(jax.grad(loss(theirs)))(X),
                  f"pmap {name} grad of pmap")
            inner_ours = minijax.pmap(minijax.grad(loss(make(mlax))), axis_name="i")
            inner_theirs = jax.pmap(jax.grad(loss(make(jax.lax))), axis_name="i")
            close(inner_ours(X), inner_theirs(X), f"pmap {name} pmap of grad")
            tangent = np.ones_like(X)
            close(minijax.jvp(ours, (X,), (tangent,)), jax.jvp(theirs, (X,), (tangent,)),
                  f"pmap {name} jvp")


def check_axes_and_static_arguments():
    y = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal(6).astype(np.float32)
    cases = {
        "in_axes (0, None)": (lambda lax: lambda a, b: lax.psum(a * b, "i"),
                              dict(in_axes=(0, None)), (X, w)),
        "in_axes 1": (lambda lax: lambda a: a - lax.pmean(a, "i"), dict(in_axes=1), (y,)),
        "in_axes dict prefix": (lambda lax: lambda d: d["a"] * d["b"].sum(),
                                dict(in_axes=({"a": 0, "b": 1},)), ({"a": X, "b": y},)),
        "out_axes 1": (lambda lax: lambda a: (a, a * 2.0), dict(out_axes=(1, 0)), (X,)),
        "out_axes None": (lambda lax: lambda a: (lax.psum(a, "i"), a),
                          dict(out_axes=(None, 0)), (X,)),
    }
    for name, (make, kw, args) in cases.items():
        ours, theirs = both(make, axis_name="i", **kw)
        out, expected = ours(*args), theirs(*args)
        close(out, expected, f"pmap {name}")
        same_sharding(out, expected, name)
    # JAX's pmap documents non-negative in_axes (and jax 0.10 reads -1 as 0); minijax
    # counts a negative one from the end, as vmap does
    close(minijax.pmap(lambda a: a * 2.0, in_axes=-1)(y),
          jax.pmap(lambda a: a * 2.0, in_axes=1)(y), "pmap in_axes negative")
    ours, theirs = both(lambda lax: lambda a, b: a * b, in_axes=(None,))
    close(ours(X[0], b=X), theirs(X[0], b=X), "pmap keyword argument mapped over axis 0")

    def scaled(lax):
        return lambda a, power, b: (a ** power) * lax.psum(b, "i")
    ours, theirs = both(scaled, axis_name="i", static_broadcasted_argnums=1)
    close(ours(X, 2, X), theirs(X, 2, X), "pmap static_broadcasted_argnums")
    close(ours(X, 3, X), theirs(X, 3, X), "pmap static_broadcasted_argnums retraced")
    ours, theirs = both(lambda lax: lambda n, a: a * n, static_broadcasted_argnums=(0,),
                        in_axes=(None, 1))
    close(ours(5, X.T), theirs(5, X.T), "pmap static argument with in_axes")

    last_two = jax.devices()[-2:]
    ours, theirs = both(lambda lax: lambda a: lax.psum(a, "i"), axis_name="i",
                        devices=last_two)
    out, expected = ours(X[:2]), theirs(X[:2])
    close(out, expected, "pmap devices=")
    same_sharding(out, expected, "pmap devices=")
    unnamed_ours, unnamed_theirs = both(lambda lax: lambda a: a + 1.0)
    same_sharding(unnamed_ours(X), unnamed_theirs(X), "pmap without axis_name")


def check_nested_names():
    """A named vmap inside a pmap and a pmap inside a named vmap: each collective over
    its own axis, and over both."""
    def body(lax):
        return lambda a: (lax.psum(a, "v") * lax.axis_index("i")
                          + lax.psum(a, ("i", "v")) + lax.pmax(a, "i"))
    x3 = rng.standard_normal((4, 3, 5)).astype(np.float32)
    ours = minijax.pmap(minijax.vmap(body(mlax), axis_name="v"), axis_name="i")
    theirs = jax.pmap(jax.vmap(body(jax.lax), axis_name="v"), axis_name="i")
    close(ours(x3), theirs(x3), "pmap of a named vmap")
    ours = minijax.vmap(minijax.pmap(body(mlax), axis_name="i"), axis_name="v",
                        in_axes=1)
    theirs = jax.vmap(jax.pmap(body(jax.lax), axis_name="i"), axis_name="v", in_axes=1)
    close(ours(x3), theirs(x3), "named vmap of a pmap")
    # pmap inside pmap: 2 x 4 devices. JAX 0.10 refuses it (registry entry
    # "nested_pmap_refused", pinned in tests/test_pmap.py); its docs promise the values
    # of the nested named vmaps
    def smooth(lax):
        return lambda a: (lax.psum(a, "v") * lax.axis_index("i")
                          + lax.psum(a * a, ("i", "v")) + lax.all_gather(a, "i")[1])
    x24 = rng.standard_normal((2, 4, 3)).astype(np.float32)
    ours = minijax.pmap(minijax.pmap(smooth(mlax), axis_name="v"), axis_name="i")
    theirs = jax.vmap(jax.vmap(smooth(jax.lax), axis_name="v"), axis_name="i")
    # (JAX's nested vmaps jitted: eagerly each of their ops is a compile of its own)
    close(ours(x24), jax.jit(theirs)(x24), "nested pmaps")
    close(minijax.grad(lambda x: (ours(x) ** 2).sum())(x24),
          jax.jit(jax.grad(lambda x: (theirs(x) ** 2).sum()))(x24), "nested pmaps grad")
    print("ok nested names")


def check_data_parallel_training():
    """The data-parallel training step of JAX's pmap docs: replicated parameters,
    a batch split over 8 devices, gradients averaged with pmean."""
    def make_update(api, lax):
        def loss(params, xs, ys):
            w, b = params
            return ((xs @ w + b - ys) ** 2).mean()

        def update(params, xs, ys):
            grads = api.grad(loss)(params, xs, ys)
            grads = lax.pmean(grads, "batch")
            return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return api.pmap(update, axis_name="batch", in_axes=(None, 0, 0))
    xs = rng.standard_normal((8, 4, 3)).astype(np.float32)
    ys = (xs @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3)[..., None]
    start = (np.zeros((3, 1), np.float32), np.zeros((1,), np.float32))
    ours, theirs = make_update(minijax, mlax), make_update(jax, jax.lax)
    p_ours = p_theirs = start
    for _ in range(3):
        # out_axes=0: every device returns its (equal) copy of the new parameters
        p_ours = jax.tree_util.tree_map(lambda p: p[0], ours(p_ours, xs, ys))
        p_theirs = jax.tree_util.tree_map(lambda p: p[0], theirs(p_theirs, xs, ys))
    close(p_ours, p_theirs, "pmap data-parallel training, 3 steps")


def check_printed_program_and_donation():
    jaxpr = minijax.make_jaxpr(minijax.pmap(lambda a: mlax.psum(a, "i"), "i"))(X)
    text = str(jaxpr)
    assert "shard_map[" in text and "psum[axes=('i',)]" in text, text
    assert "mesh_axes=(('i', 4),)" in text and "device_ids=(0, 1, 2, 3)" in text, text
    # an array already split over the devices is donated (as in JAX); the buffer of a
    # one-device array is not the one the program takes, so it survives in both
    on_one_device = jax.device_put(X)
    donated = minijax.pmap(lambda a: a)(X)
    doubled = minijax.pmap(lambda a: a * 2.0, donate_argnums=0)
    close(doubled(donated), 2 * X, "pmap donate_argnums")
    doubled(on_one_device)
    assert donated.is_deleted() and not on_one_device.is_deleted()
    print("ok pmap make_jaxpr and donation")


def raises(error, fn, match):
    try:
        fn()
    except error as e:
        assert match in str(e), (match, str(e))
        return
    raise AssertionError(f"no {error.__name__} ({match})")


def check_errors():
    ident = minijax.pmap(lambda a: a)
    raises(ValueError, lambda: ident(np.ones((9, 2), np.float32)),
           "requires 9 replicas, but only 8 XLA devices")
    raises(ValueError, lambda: minijax.pmap(lambda a: a, devices=jax.devices()[:2])(X),
           "only 2 XLA devices")
    raises(ValueError, lambda: minijax.pmap(lambda a, b: a, in_axes=(None, None))(X, X),
           "at least one argument with a mapped axis")
    raises(ValueError, lambda: minijax.pmap(lambda a, b: a)(X, X[:3]),
           "inconsistent sizes")
    raises(ValueError, lambda: minijax.pmap(lambda a: a, axis_size=2)(X),
           "Specified axis_size 2")
    raises(ValueError, lambda: minijax.pmap(lambda a, n: a, static_broadcasted_argnums=1)(X),
           "static_broadcasted_argnums=(1,)")
    raises(ValueError, lambda: ident(np.float32(1.0)), "rank should be at least 1")
    raises(TypeError, lambda: minijax.pmap(lambda a: a, in_axes=1.0), "pmap in_axes")
    raises(NameError, lambda: minijax.pmap(lambda a: mlax.psum(a, "j"), "i")(X), "'j'")
    raises(ValueError, lambda: minijax.pmap(lambda a: a, devices=[]), "non-empty")
    # unlike vmap, JAX's pmap takes no list for the tuple of arguments' axes
    raises(ValueError, lambda: minijax.pmap(lambda a, b: a, in_axes=[0, 0])(X, X),
           "tree prefix")
    raises(ValueError, lambda: minijax.pmap(lambda a: a, out_axes=-1), "non-negative")
    print("ok pmap errors")


def run_all():
    check_collectives()
    check_axes_and_static_arguments()
    check_nested_names()
    check_data_parallel_training()
    check_printed_program_and_donation()
    check_errors()
    print("all pmap checks passed")


if __name__ == "__main__":
    assert len(jax.devices()) == 8, jax.devices()
    run_all()
