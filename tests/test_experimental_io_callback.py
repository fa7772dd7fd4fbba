"""`minijax.experimental.io_callback` against `jax.experimental.io_callback`: what the
host function is called with, how often and in what order (eagerly, under jit, across
jit calls, in scan/while_loop/cond bodies, under vmap), the results, that an unused
call is kept, the derivative and vmap errors, the reference evaluator and importing
JAX's equation."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback

import minijax
import minijax.numpy as mnp
from minijax.backends.reference import eval_jaxpr as reference_eval
from minijax.experimental import io_callback
from minijax.testing import assert_trees_match

X = np.linspace(-1, 1, 3, dtype=np.float32)
SPEC = jax.ShapeDtypeStruct((3,), jnp.float32)
SCALAR = jax.ShapeDtypeStruct((), jnp.float32)
LIBS = {"minijax": (minijax, mnp, io_callback), "jax": (jax, jnp, jax_io_callback)}


class Log:
    """A host function that records what it was called with (tag, values) and returns
    twice its first argument."""

    def __init__(self):
        self.calls = []

    def tagged(self, tag):
        def host(x, *rest):
            self.calls.append((tag, np.asarray(x).tolist()))
            return (np.asarray(x) * 2).astype(np.float32)
        host.__name__ = f"host_{tag}"
        return host


def _run_both(program):
    """`program(lib, np_lib, io_callback, log)` for minijax and for JAX: both results
    and both call logs."""
    out = {}
    for name, (lib, np_lib, cb) in LIBS.items():
        log = Log()
        result = program(lib, np_lib, cb, log)
        lib.effects_barrier()
        out[name] = (result, log.calls)
    return out["minijax"], out["jax"]


def test_values_pytrees_and_unused_calls_as_jax():
    def program(lib, np_lib, cb, log):
        def f(x, tree):
            cb(log.tagged("dropped?"), SPEC, x)          # result unused: still called
            y = cb(log.tagged("used"), SPEC, x + 1.0) * 3.0
            stats = cb(lambda t, *, k: {"s": np.sum(t["a"]) * k, "b": t["b"] + 1},
                       {"s": SCALAR, "b": jax.ShapeDtypeStruct((2,), jnp.int32)}, tree, k=2.0)
            return y, stats
        tree = {"a": X, "b": np.array([1, 2], np.int32)}
        return [f(X, tree), lib.jit(f)(X, tree)]
    ours, theirs = _run_both(program)
    assert_trees_match(ours[0], theirs[0])
    # JAX may run unordered calls in any order; minijax keeps program order
    assert sorted(ours[1]) == sorted(theirs[1])
    assert [tag for tag, _ in ours[1]] == ["dropped?", "used"] * 2


def test_ordered_calls_keep_program_order_across_jit_calls():
    def program(lib, np_lib, cb, log):
        first = lib.jit(lambda x: cb(log.tagged("a"), SPEC, x, ordered=True) + 1.0)
        second = lib.jit(lambda x: (cb(log.tagged("b"), SPEC, x, ordered=True),
                                    cb(log.tagged("c"), SPEC, x * 2.0, ordered=True))[1])
        y = first(X)
        return [y, second(y), first(X + 1.0)]
    ours, theirs = _run_both(program)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert [tag for tag, _ in ours[1]] == ["a", "b", "c", "a"]


def test_in_scan_while_and_cond_bodies_as_jax():
    # ordered, so JAX's order is fixed too (it may run unordered calls in any order)
    def program(lib, np_lib, cb, log):
        def scan_body(carry, x):
            return carry + cb(log.tagged("scan"), SCALAR, x, ordered=True), carry
        loop = lambda c: cb(log.tagged("while"), SCALAR, c + 1.0, ordered=True)  # noqa: E731

        def f(xs):
            scanned = lib.lax.scan(scan_body, np.float32(0), xs)
            looped = lib.lax.while_loop(lambda c: c < 5.0, loop, np.float32(1))
            branch = lib.lax.cond(xs[0] > 0, lambda x: x,
                                  lambda x: cb(log.tagged("cond"), SCALAR, x, ordered=True),
                                  xs[1])
            return scanned, looped, branch
        xs = np.arange(3, dtype=np.float32)
        return [f(xs), lib.jit(f)(xs)]
    ours, theirs = _run_both(program)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert len(ours[1]) == 2 * (3 + 2 + 1)


def test_vmap_calls_an_unordered_callback_once_per_example_and_refuses_an_ordered_one():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)

    def program(lib, np_lib, cb, log):
        f = lambda x, y: cb(log.tagged("lane"), SPEC, x, y) + y               # noqa: E731
        g = lambda x: lib.lax.scan(                                           # noqa: E731
            lambda c, e: (c + cb(log.tagged("scan"), SCALAR, e), None), np.float32(0), x)[0]
        # an ordered callback on unbatched values is not batched, so vmap allows it
        h = lambda x, y: x + cb(log.tagged("same"), SPEC, y, ordered=True)   # noqa: E731
        return [lib.vmap(f, (1, None))(xs.T.copy(), X), lib.jit(lib.vmap(g))(xs),
                lib.vmap(h, (0, None))(xs, X)]
    ours, theirs = _run_both(program)
    assert_trees_match(ours[0], theirs[0])
    assert sorted(ours[1]) == sorted(theirs[1])     # (JAX's unordered calls: any order)
    assert ours[1][:2] == [("lane", xs[0].tolist()), ("lane", xs[1].tolist())]
    # scan iterations in order, each running the examples in example order
    assert ours[1][2:8] == [("scan", e) for e in (0.0, 3.0, 1.0, 4.0, 2.0, 5.0)]
    assert ours[1][8:] == [("same", X.tolist())]
    for name, (lib, _, cb) in LIBS.items():
        with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
            lib.vmap(lambda x: cb(Log().tagged(name), SPEC, x, ordered=True))(xs)


@pytest.mark.parametrize("ordered", [False, True])
def test_no_derivative_but_values_that_are_not_differentiated_pass(ordered):
    for lib, np_lib, cb in LIBS.values():
        host = Log().tagged("d")
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            lib.jvp(lambda x: cb(host, SPEC, x, ordered=ordered), (X,), (X,))
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            lib.grad(lambda x: cb(host, SCALAR, x, ordered=ordered))(np.float32(1))

    def program(lib, np_lib, cb, log):
        return lib.grad(lambda x: np_lib.sum(x * cb(log.tagged("g"), SPEC,
                                                    lib.lax.stop_gradient(x), ordered=ordered)))(X)
    ours, theirs = _run_both(program)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1] == [("g", X.tolist())]


def test_text_form_reference_evaluator_and_importing_jax_equation():
    log = Log()
    closed = minijax.make_jaxpr(lambda x: io_callback(log.tagged("r"), SPEC, x, ordered=True)
                                + 1.0)(X)
    assert "io_callback[" in str(closed) and "ordered=True" in str(closed)
    assert_trees_match(reference_eval(closed.jaxpr, closed.consts, X)[0], X * 2 + 1.0,
                       check_weak_types=False)
    imported = minijax.interop.trace_with_jax(
        lambda x: jax_io_callback(log.tagged("i"), SPEC, x, ordered=True) * 3.0)(X)
    assert "io_callback" in str(imported)
    assert_trees_match(reference_eval(imported.jaxpr, imported.consts, X)[0], X * 6.0,
                       check_weak_types=False)
    exported = minijax.interop.to_jax(imported)      # minijax's program, run by JAX
    assert_trees_match(jax.tree_util.tree_leaves(exported(X))[0], jnp.asarray(X) * 6.0)
    jax.effects_barrier()
    assert log.calls == [("r", X.tolist()), ("i", X.tolist()), ("i", X.tolist())]


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="io_callback: expected a callable"):
        io_callback(3, SPEC, X)
    with pytest.raises(TypeError, match="io_callback: result_shape_dtypes must hold"):
        io_callback(np.sin, [3], X)
    with pytest.raises(TypeError, match="cannot pass a ref"):
        io_callback(np.sin, SPEC, minijax.new_ref(mnp.ones(3)))
    wrong = minijax.jit(lambda x: io_callback(lambda x: x[:2], SPEC, x))
    with pytest.raises(Exception, match="shape"):
        minijax.block_until_ready(wrong(X))
