"""`jit`'s caching and call path, against JAX's (issues #12 and #18).

JAX caches a jitted function's traces on the *function* (and its jit options), so
`jit(f)(x)` written inside a loop traces once, and a global changed after the first
call is not seen by the cached trace -- behaviour programs rely on. Each test counts
traces (a Python side effect in the function body) on both sides and compares.
Also: a jitted method binds `self` (jit returns a descriptor), donation deletes the
donated array, `disable_jit` runs the Python op by op, calls with refs and under
transformations still take minijax's own path (the `jit` primitive).
"""
import gc
import functools
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match


def _counting(np_lib):
    """A function and the list its traces append to."""
    traces = []

    def f(x, n=2):
        traces.append(1)
        return np_lib.sin(x) * n
    return f, traces


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_jit_of_the_same_function_traces_once(lib, np_lib):
    f, traces = _counting(np_lib)
    x = np.ones(3, np.float32)
    for _ in range(3):
        lib.jit(f)(x)           # a new wrapper each time, as in a loop body
    assert len(traces) == 1
    lib.jit(f)(np.ones(4, np.float32))       # a new shape: a new trace
    lib.jit(f)(np.ones(3, np.int32))         # a new dtype
    assert len(traces) == 3
    lib.jit(f, static_argnums=1)(x, 3)       # other options: a cache of their own
    lib.jit(f, static_argnums=1)(x, 3)
    lib.jit(f, static_argnums=1)(x, 4)       # a new static value
    assert len(traces) == 5


def test_trace_counts_match_jax_across_weak_types_and_pytrees():
    def count(lib, np_lib, calls):
        f, traces = _counting(np_lib)
        g = lib.jit(lambda t: f(t["x"]) + t["y"])
        for arg in calls:
            g(arg)
        return len(traces)
    calls = [{"x": 1.0, "y": 2.0}, {"x": 1.5, "y": 2.0},              # weak f32: one trace
             {"x": np.float32(1.0), "y": 2.0},                        # strong: another
             {"x": 1.0, "y": np.ones(2, np.float32)},                 # new aval
             {"x": 1, "y": 2.0}]                                      # weak int
    assert count(minijax, mnp, calls) == count(jax, jnp, calls)


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_a_changed_global_is_not_seen_by_a_cached_trace(lib, np_lib):
    scale = {"value": 2.0}

    def f(x):
        return x * scale["value"]    # read while tracing, then baked in
    x = np.ones(2, np.float32)
    first = lib.jit(f)(x)
    scale["value"] = 10.0
    np.testing.assert_array_equal(lib.jit(f)(x), first)
    lib.jit(f).clear_cache()
    np.testing.assert_array_equal(lib.jit(f)(x), x * 10.0)


def test_clear_caches_forgets_every_trace():
    f, traces = _counting(mnp)
    minijax.jit(f)(1.0)
    minijax.clear_caches()
    minijax.jit(f)(1.0)
    assert len(traces) == 2


def test_the_cache_does_not_keep_the_function_alive():
    def f(x):
        return x + 1.0
    alive = weakref.ref(f)
    minijax.jit(f)(np.ones(2, np.float32))
    del f
    gc.collect()
    assert alive() is None


class _Scaler:
    def __init__(self, factor):
        self.factor = factor

    def __hash__(self):
        return hash(self.factor)

    def __eq__(self, other):
        return isinstance(other, _Scaler) and other.factor == self.factor


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_jit_as_a_method_decorator_binds_self(lib, np_lib):
    class Model(_Scaler):
        @functools.partial(lib.jit, static_argnums=0)
        def apply(self, x):
            return np_lib.tanh(x) * self.factor

        @lib.jit
        def add(self, x):    # self as a pytree leaf: refused, as by JAX
            return x + 1.0

    out = Model(3.0).apply(np.ones(2, np.float32))
    np.testing.assert_allclose(out, np.tanh(1.0) * 3.0, rtol=1e-6)
    assert isinstance(Model.__dict__["apply"], type(lib.jit(lambda x: x)))
    assert Model.apply is Model.__dict__["apply"]    # unbound through the class
    with pytest.raises(TypeError):
        Model(1.0).add(np.ones(2, np.float32))


def test_method_results_match_jax():
    def make(lib, np_lib):
        class Model(_Scaler):
            @functools.partial(lib.jit, static_argnums=0)
            def apply(self, x):
                return np_lib.sum(x * self.factor)
        return Model(2.0).apply
    x = np.arange(3, dtype=np.float32)
    assert_trees_match(make(minijax, mnp)(x), make(jax, jnp)(x))


@pytest.mark.parametrize("donate", [dict(donate_argnums=0), dict(donate_argnames="x")])
def test_a_donated_array_is_deleted_as_in_jax(donate):
    def f(x, y):
        return x * 2.0 + y
    results = []
    for lib in (minijax, jax):
        x, y = jnp.ones(3), jnp.ones(3)
        results.append(lib.jit(f, **donate)(x, y))
        assert x.is_deleted() and not y.is_deleted()
    assert_trees_match(*results)


@pytest.mark.parametrize("make_copy", [
    lambda np_, x: np_.array(x), lambda np_, x: np_.asarray(x, copy=True),
    lambda np_, x: np_.copy(x), lambda np_, x: np_.array(x, dtype=np_.float32)],
    ids=["array", "asarray-copy", "copy", "array-same-dtype"])
def test_a_copy_outlives_the_donation_of_its_source_as_in_jax(make_copy):
    # jnp.array/copy of a jax.Array owns its buffer (minijax's returned the array
    # itself, so donating the source deleted the "copy")
    for lib, np_ in ((minijax, mnp), (jax, jnp)):
        x = jnp.arange(3.0)
        copied = make_copy(np_, x)
        assert copied is not x and np_.asarray(x) is x
        lib.jit(lambda v: v * 2.0, donate_argnums=0)(x)
        assert x.is_deleted() and not copied.is_deleted()
        np.testing.assert_array_equal(copied, np.arange(3.0))


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_donation_of_a_pytree_argument_matches_jax():
    # XLA reuses as many donated buffers as outputs can take; JAX deletes those.
    deleted = []
    for lib in (minijax, jax):
        x = {"a": jnp.ones(2), "b": jnp.zeros(2)}
        out = lib.jit(lambda t: t["a"] + t["b"], donate_argnums=0)(x)
        np.testing.assert_array_equal(out, np.ones(2))
        deleted.append((x["a"].is_deleted(), x["b"].is_deleted()))
    assert deleted[0] == deleted[1] and any(deleted[0])


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_disable_jit_runs_the_python_op_by_op(lib, np_lib):
    seen = []

    def f(x):
        seen.append(float(x.sum()))     # a concrete value: only without jit
        return np_lib.cos(x) if x.sum() > 0 else x
    g = lib.jit(f)
    with lib.disable_jit():
        out = g(np.ones(2, np.float32))
        out2 = g(np.ones(2, np.float32))
    assert seen == [2.0, 2.0]
    np.testing.assert_allclose(out, np.cos(np.ones(2)), rtol=1e-6)
    np.testing.assert_array_equal(out, out2)
    with pytest.raises(TypeError):      # jit is back on: the branch needs a value
        g(np.ones(2, np.float32))


def test_static_arguments_by_name_and_position_match_jax():
    def f(x, n, *, power=2):
        return x ** power * n
    x = np.arange(3, dtype=np.float32)
    for kwargs in [dict(static_argnums=1), dict(static_argnames=("n", "power"))]:
        mini = minijax.jit(f, **kwargs)
        ref = jax.jit(f, **kwargs)
        assert_trees_match(mini(x, 3, power=3), ref(x, 3, power=3))
        assert_trees_match(mini(x, n=2), ref(x, n=2))
    with pytest.raises(ValueError):     # unhashable static argument, as JAX
        minijax.jit(f, static_argnums=1)(x, [1])


def test_refs_take_minijax_path_and_are_updated():
    counter = minijax.new_ref(mnp.zeros(3))

    @minijax.jit
    def bump(r, x):
        r[...] += x
        return x * 2.0
    for _ in range(3):
        out = bump(counter, mnp.ones(3))
    np.testing.assert_array_equal(counter[...], 3 * np.ones(3))
    np.testing.assert_array_equal(out, 2 * np.ones(3))
    # The same function later called without a ref (a new tracing, same answers).
    with pytest.raises(minijax.RefError):
        bump(counter, counter)


def test_a_closed_over_ref_is_written_through_the_cached_path():
    box = minijax.new_ref(mnp.zeros(()))

    @minijax.jit
    def add(x):
        box[...] += x
        return box[...]
    for value in (1.0, 2.0, 3.0):
        last = add(value)
    assert float(box[...]) == 6.0 and float(last) == 6.0


def test_under_transformations_jit_stays_one_equation():
    f = minijax.jit(lambda x: mnp.sin(x) * 2.0)
    f(1.0)                      # the fast path's cache must not change what is staged
    closed = minijax.make_jaxpr(lambda x: f(x) + 1.0)(1.0)
    assert [e.primitive.name for e in closed.jaxpr.eqns][0] == "jit"
    assert_trees_match(minijax.grad(f)(0.5), jax.grad(jax.jit(lambda x: jnp.sin(x) * 2.0))(0.5))
    xs = np.linspace(0, 1, 4, dtype=np.float32)
    assert_trees_match(minijax.vmap(f)(xs), jax.vmap(jax.jit(lambda x: jnp.sin(x) * 2.0))(xs))


def test_errors_while_tracing_are_the_users():
    @minijax.jit
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(minijax.errors.TracerBoolConversionError, match="bool"):
        f(1.0)
    with pytest.raises(TypeError, match="static_argnums"):   # JAX's own message
        minijax.jit(lambda x: x)(object())


def test_eval_shape_and_lower_take_shape_dtype_structs():
    def f(x, y):
        return {"out": mnp.tanh(x @ y), "n": 1.0}

    def g(x, y):
        return {"out": jnp.tanh(x @ y), "n": 1.0}
    args = (jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((3, 4), jnp.float32))
    assert minijax.eval_shape(f, *args) == jax.eval_shape(g, *args)
    assert minijax.jit(f).eval_shape(*args) == jax.eval_shape(g, *args)
    assert minijax.eval_shape(lambda x: x * 2, 1.0) == jax.eval_shape(lambda x: x * 2, 1.0)
    lowered = minijax.jit(f).lower(*args)
    assert "stablehlo.tanh" in lowered.as_text()
    compiled = lowered.compile()
    inputs = (np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    # The executable answers with f's own output pytree, as JAX's does.
    expected = jax.jit(g).lower(*args).compile()(*inputs)
    assert_trees_match(compiled(*inputs), expected)


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_calls_trace_and_lower_share_one_trace(lib, np_lib):
    f, traces = _counting(np_lib)
    g = lib.jit(f)
    x = np.ones(3, np.float32)
    g(x)
    g.trace(x)
    g.lower(x)
    assert len(traces) == 1


def test_a_trace_make_jaxpr_stored_is_verified_before_a_call_binds_it(monkeypatch):
    """make_jaxpr shares jit's trace cache without verifying (that would double its
    cost, benchmarks/trace_speed.py); the first call through either path verifies."""
    from minijax.frontend import tracing
    verified = []
    real = tracing.verify_jaxpr
    monkeypatch.setattr(tracing, "verify_jaxpr", lambda c: verified.append(c) or real(c))
    x = np.ones(3, np.float32)
    for call in ("fast", "staged"):
        f = lambda v: v * 2.0  # noqa: E731
        minijax.make_jaxpr(f)(x)
        minijax.make_jaxpr(f)(x)
        assert verified == []
        g = minijax.jit(f)
        (g if call == "fast" else lambda v: g.lower(v).compile()(v))(x)
        g(x)
        assert len(verified) == 1
        verified.clear()


def test_an_error_in_a_call_leaves_jit_on():
    @minijax.jit
    def f(x):
        if x.shape == (2,):
            raise ValueError("no pairs")
        return x > 0

    with pytest.raises(ValueError, match="no pairs"):
        f(np.ones(2, np.float32))
    f(np.ones(3, np.float32))       # cached and traced as usual

    @minijax.jit
    def g(x):
        return x if x > 0 else -x   # needs a value: fails only while jit is on
    with pytest.raises(minijax.errors.TracerBoolConversionError):
        g(1.0)


def test_clear_caches_empties_eager_control_flow_and_source_sites():
    # Every cache minijax keeps goes with `clear_caches`, the eager cond's canonical
    # params and the table of call sites included.
    from minijax.backends import xla_control_flow
    from minijax.ir import source_info
    minijax.lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 1.0)
    assert source_info.user_source_info() is not None
    assert xla_control_flow._params_by_text and source_info._sites
    minijax.clear_caches()
    assert not xla_control_flow._params_by_text and not source_info._sites
    assert float(minijax.lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 1.0)) == 2.0
