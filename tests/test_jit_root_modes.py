"""The one flag a cached `jit` call tests (`minijax/ir/root_modes.py`, issue #18).

A cached call goes straight to JAX's executable when `modes.direct` says this thread
is at the root trace, outside `disable_jit` and without NaN/inf checks. These tests
pin that the flag follows every way those states change (transformations, errors
inside them, `ensure_compile_time_eval`, the context managers, `config.update` and
new threads, `reset_trace_state`), and that the calls that cannot go straight -- a
miss of JAX's cache, a ref after arrays, a jitted call made while another runs --
still behave as JAX's do.
"""
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.ir.root_modes import modes
from minijax.ir.trace import reset_trace_state, set_current_trace, current_trace
from minijax.testing import assert_trees_match


def _direct_inside(transform):
    """`modes.direct` as seen from inside `transform` of a function, and after."""
    seen = []

    def f(x):
        seen.append(modes.direct)
        return x * x
    transform(f)(1.0)
    return seen, modes.direct


@pytest.mark.parametrize("transform", [
    minijax.make_jaxpr, minijax.grad, minijax.vmap,
    lambda f: minijax.jit(lambda x: f(x) + 1.0)],
    ids=["make_jaxpr", "grad", "vmap", "outer jit"])
def test_direct_is_off_inside_every_transformation(transform):
    assert modes.direct
    if transform is minijax.vmap:
        seen, after = _direct_inside(lambda f: lambda x: transform(f)(jnp.ones(2) * x))
    else:
        seen, after = _direct_inside(transform)
    assert seen and not any(seen) and after


def test_direct_comes_back_after_an_error_inside_a_transformation():
    def f(x):
        raise ValueError("inside")
    with pytest.raises(ValueError, match="inside"):
        minijax.make_jaxpr(f)(1.0)
    assert modes.direct


def test_direct_follows_ensure_compile_time_eval():
    with minijax.ensure_compile_time_eval():      # at the root it changes nothing
        assert modes.direct
    seen = []

    def f(x):
        with minijax.ensure_compile_time_eval():
            seen.append(modes.direct)
        return x
    minijax.make_jaxpr(f)(1.0)
    assert seen == [False] and modes.direct


@pytest.mark.parametrize("context", [
    lambda: minijax.disable_jit(), lambda: minijax.debug_nans(True),
    lambda: minijax.debug_infs(True)], ids=["disable_jit", "debug_nans", "debug_infs"])
def test_direct_is_off_inside_the_context_managers(context):
    with context():
        assert not modes.direct
        with minijax.disable_jit(False):
            assert modes.direct is (not (modes.nans or modes.infs))
    assert modes.direct


def test_reset_trace_state_puts_the_root_back():
    enter = set_current_trace(minijax.ir.trace.CompileTimeEvalTrace(current_trace()))
    enter.__enter__()        # left open, as an interrupted transformation would
    assert not modes.direct
    reset_trace_state()
    assert modes.direct


def test_config_sets_the_modes_new_threads_start_from():
    seen = []

    def in_thread():
        seen.append((modes.jit_disabled, modes.direct))
    try:
        minijax.config.update("jax_disable_jit", True)
        assert not modes.direct
        thread = threading.Thread(target=in_thread)
        thread.start()
        thread.join()
    finally:
        minijax.config.update("jax_disable_jit", False)
    assert seen == [(True, False)] and modes.direct
    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    assert seen[1] == (False, True)


def test_another_threads_disable_jit_leaves_this_threads_calls_compiled():
    traces = []

    def f(x):
        traces.append(1)
        return mnp.sin(x)
    g = minijax.jit(f)
    x = np.ones(3, np.float32)
    entered, leave = threading.Event(), threading.Event()

    def op_by_op():
        with minijax.disable_jit():
            entered.set()
            leave.wait(timeout=30)
    thread = threading.Thread(target=op_by_op)
    thread.start()
    try:
        entered.wait(timeout=30)
        for _ in range(3):
            assert_trees_match(g(x), jnp.sin(x))
    finally:
        leave.set()
        thread.join()
    assert len(traces) == 1        # traced once, then the cached program


@pytest.mark.parametrize("lib,np_lib", [(minijax, mnp), (jax, jnp)], ids=["minijax", "jax"])
def test_each_new_shape_runs_the_python_once(lib, np_lib):
    # A direct call that misses JAX's cache is refused before the body runs, looked
    # at and called again: the function's Python still runs once per trace.
    traces = []

    def f(x):
        traces.append(1)
        return np_lib.cos(x)
    g = lib.jit(f)
    for n in (2, 3, 2, 4, 3):
        assert_trees_match(g(np.ones(n, np.float32)), np.cos(np.ones(n, np.float32)))
    assert len(traces) == 3


def test_a_ref_after_arrays_takes_minijax_path():
    traces = []

    def double(r):
        traces.append(1)
        return r[...] * 2
    g = minijax.jit(double)
    assert_trees_match(g(jnp.ones(3)), jnp.ones(3) * 2)
    for n in (3, 4):         # the ref's shape JAX has compiled for, and a new one
        ref = minijax.new_ref(mnp.ones(n))
        assert_trees_match(g(ref), jnp.ones(n) * 2)
    assert_trees_match(g(jnp.ones(3)), jnp.ones(3) * 2)     # arrays still work
    assert len(traces) == 3      # one per aval: f32[3], Ref{f32[3]}, Ref{f32[4]}


def test_a_jitted_call_inside_a_running_one():
    # A host callback runs while the outer compiled call is in progress; the jitted
    # call it makes (a new shape each time) traces and runs as at the root.
    inner = minijax.jit(lambda v: mnp.sum(v * v))

    def host(x):
        n = int(np.asarray(x)[0])
        return np.asarray(inner(np.ones(n, np.float32)), np.float32)

    @minijax.jit
    def outer(x):
        return minijax.pure_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x)
    for n in (2, 3, 5):
        assert float(outer(np.full(1, n, np.float32))) == n


def test_a_refused_miss_passes_cleanly_through_jax_transformations():
    # JAX's own transformations of a minijax.jit function: each new shape misses
    # inside JAX's trace, is refused (UncheckedCall) and called again there.
    f = minijax.jit(lambda x: mnp.sin(x) * 2)
    g = lambda x: jnp.sin(x) * 2
    f(np.ones(3, np.float32))
    for n in (4, 5):
        x = np.linspace(0, 1, n, dtype=np.float32)
        assert_trees_match(jax.jit(f)(x), jax.jit(g)(x))
        assert_trees_match(jax.grad(lambda v: f(v).sum())(x),
                           jax.grad(lambda v: g(v).sum())(x))
    assert_trees_match(f(np.ones(3, np.float32)), g(np.ones(3, np.float32)))
