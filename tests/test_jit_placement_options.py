"""`jit`'s `device=`, `backend=` and `compiler_options=` against `jax.jit`'s: the
result's device, JAX's deprecation warning, the option errors JAX gives (at `jit` or
at the first call), and XLA's own errors for bad compiler options. Then the random
samplers' `out_sharding=` against `jax.random`'s: values and shardings on a
one-device mesh, eagerly and under jit, the signatures and the errors."""
import inspect
import warnings

import jax
import numpy as np
import pytest

import minijax
import minijax.random as mrandom
from minijax.testing import assert_trees_match

X = np.arange(3, dtype=np.float32)
LIBS = (minijax, jax)


def _f(x):
    return x * 2.0 + 1.0


def test_device_and_backend_place_the_program_with_jaxs_warning():
    device = jax.devices()[0]
    for lib in LIBS:
        with pytest.warns(DeprecationWarning, match="backend and device argument on jit is "
                                                    "deprecated"):
            on_device = lib.jit(_f, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("error")             # no second warning at the call
            out = on_device(X)
        assert list(out.devices()) == [device]
        np.testing.assert_array_equal(out, X * 2 + 1)
        with pytest.warns(DeprecationWarning):
            on_backend = lib.jit(_f, backend=jax.default_backend())
        np.testing.assert_array_equal(on_backend(X), X * 2 + 1)


def test_placement_errors_are_jaxs():
    device = jax.devices()[0]
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ValueError, match="can't specify both a device and a backend"):
                lib.jit(_f, device=device, backend="cpu")
            with pytest.raises(ValueError, match="in_shardings should not be specified"):
                lib.jit(_f, device=device,
                        in_shardings=jax.sharding.SingleDeviceSharding(device))
            unknown = lib.jit(_f, backend="no_such_backend")     # JAX's error, at the call
            with pytest.raises(RuntimeError, match="Unknown backend no_such_backend"):
                unknown(X)


def test_compiler_options_reach_xla():
    for lib in LIBS:
        fast_math_off = lib.jit(_f, compiler_options={"xla_cpu_enable_fast_math": False})
        if jax.default_backend() == "cpu":
            np.testing.assert_array_equal(fast_math_off(X), X * 2 + 1)
        with pytest.raises(Exception, match="No such compile option: 'no_such_option'"):
            lib.jit(_f, compiler_options={"no_such_option": 1})(X)
    # two jits of one function with different options are different programs
    with pytest.raises(Exception, match="not a valid bool value"):
        minijax.jit(_f, compiler_options={"xla_cpu_enable_fast_math": "x"})(X)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        minijax.jit(_f, compiler_options=[("xla_cpu_enable_fast_math", False)])


def test_the_options_reach_every_root_compile():
    """Not only the calls JAX's jit serves: a call with a ref (minijax's own path),
    one with donation, and `.lower()` compile with the options too, so a bad option
    fails there as it does on the fast path."""
    bad = {"no_such_option": 1}
    with_ref = minijax.jit(lambda r, x: r.__setitem__(..., r[...] + x), compiler_options=bad)
    ref = minijax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(Exception, match="No such compile option: 'no_such_option'"):
        with_ref(ref, X)
    np.testing.assert_array_equal(ref[...], np.zeros(3))     # the failed call wrote nothing
    donating = minijax.jit(_f, donate_argnums=0, compiler_options=bad)
    with pytest.raises(Exception, match="No such compile option"):
        donating(np.ones(3, np.float32))
    for fn in (minijax.jit(_f, compiler_options=bad), with_ref):
        args = (X,) if fn is not with_ref else (ref, X)
        with pytest.raises(Exception, match="No such compile option"):
            fn.lower(*args).compile()
    # and a good option or device is applied there, not refused
    device = jax.devices()[0]
    with pytest.warns(DeprecationWarning):
        placed = minijax.jit(lambda r, x: r.__setitem__(..., r[...] + x), device=device)
    placed(ref, X)
    assert list(ref[...].devices()) == [device]
    np.testing.assert_array_equal(ref[...], X)
    fast_math_off = minijax.jit(_f, compiler_options={"xla_cpu_enable_fast_math": False})
    np.testing.assert_array_equal(fast_math_off.lower(X).compile()(X), X * 2 + 1)


def test_samplers_take_out_sharding_as_jax():
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    named = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))

    def draws(lib):
        key = lib.random.key(0)
        outs = [lib.random.normal(key, (4,), out_sharding=named),
                lib.random.uniform(key, (4,), out_sharding=None),
                lib.jit(lambda k: lib.random.randint(k, (4,), 0, 5, out_sharding=named))(key)]
        with jax.set_mesh(mesh):
            outs.append(lib.random.bernoulli(key, 0.5, (4,),
                                             out_sharding=jax.sharding.PartitionSpec("x")))
        return outs
    ours, theirs = draws(minijax), draws(jax)
    assert_trees_match(ours, theirs)
    assert [o.sharding for o in ours] == [t.sharding for t in theirs]
    for name in mrandom._SHARDED_SAMPLERS:
        assert "out_sharding" in inspect.signature(getattr(jax.random, name)).parameters
        ours_sig = inspect.signature(getattr(mrandom, name)).parameters["out_sharding"]
        assert ours_sig.kind is inspect.Parameter.KEYWORD_ONLY and ours_sig.default is None


def test_out_sharding_errors_are_jaxs():
    single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    for lib in LIBS:
        key = lib.random.key(0)
        with pytest.raises(TypeError, match="`out_sharding` argument of normal only supports"):
            lib.random.normal(key, (2,), out_sharding=single)
        with pytest.raises(ValueError, match="mesh"):
            lib.random.uniform(key, (2,), out_sharding=jax.sharding.PartitionSpec("x"))
