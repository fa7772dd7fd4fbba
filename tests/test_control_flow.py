"""cond, switch, while_loop, fori_loop, scan and map against JAX: values, jit, jvp,
grad (where JAX supports it) and vmap with batched and unbatched operands/predicates."""
import jax
import numpy as np
import pytest

import minijax
import minijax.testing
from minijax import lax
import minijax.numpy as mnp
import jax.numpy as jnp
from tests.control_flow_helpers import MJ, JX, check_transforms, randn, assert_close


# -- cond and switch --------------------------------------------------------------------

def cond_program(ns):
    def f(p, x, y):
        # pytree operands, a closure over a traced value (y), different work per branch
        return ns.lax.cond(p > 0, lambda a: (ns.jnp.sin(a[0]) * y, a[1] * 2.0),
                           lambda a: (a[0] * a[1], ns.jnp.cos(a[1]) + y),
                           (x, x * 3.0))
    return f


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_cond_values_and_derivatives(p):
    x, y = randn(3), randn(3)
    # eagerly too: the partial evaluator then runs the known branch right away
    check_transforms(cond_program, np.float32(p), x, y, jit=(p > 0))


def test_cond_vmap_batched_and_unbatched_predicate():
    xs, ys = randn(4, 3), randn(4, 3)
    ps = np.array([1.0, -1.0, 2.0, -3.0], np.float32)
    # batched predicate: becomes a select of both branches
    check_transforms(cond_program, ps[0], xs[0], ys[0], hows=(),
                     vmap_args=(ps, xs, ys))
    # unbatched predicate, batched operand; and batched predicate, unbatched operands
    check_transforms(cond_program, ps[0], xs[0], ys[0], hows=(),
                     vmap_args=(np.float32(1.0), xs, ys[0]), in_axes=(None, 0, None))
    check_transforms(cond_program, ps[0], xs[0], ys[0], hows=(),
                     vmap_args=(ps, xs[0], ys[0]), in_axes=(0, None, None))


def test_batched_predicate_becomes_select():
    f = minijax.vmap(cond_program(MJ))
    text = str(minijax.make_jaxpr(f)(np.ones(2, np.float32), randn(2, 3), randn(2, 3)))
    assert "select_n" in text and "cond[" not in text


def switch_program(ns):
    def f(i, x):
        branches = [lambda v: v * 2.0, lambda v: ns.jnp.sin(v), lambda v: v * v]
        return ns.lax.switch(i, branches, x)
    return f


@pytest.mark.parametrize("i", [-3, 0, 1, 2, 7])   # out of range clamps, as in JAX
def test_switch(i):
    check_transforms(switch_program, np.int32(i), randn(3), hows=("eval", "jit", "jvp"))


def test_switch_grad_and_vmap():
    check_transforms(switch_program, np.int32(1), randn(3), hows=("grad",),
                     vmap_args=(np.array([0, 2, 5, -1], np.int32), randn(4, 3)))


def test_cond_branches_of_different_types_is_a_clear_error():
    with pytest.raises(TypeError, match=r"float32\[3\].*float32\[\]|float32\[\].*float32\[3\]"):
        lax.cond(True, lambda x: x, lambda x: x.sum(), np.ones(3, np.float32))


def test_switch_bad_arguments_raise_jax_s_exceptions():
    # No branches is JAX's ValueError; a float index its TypeError, checked first.
    for mod in (jax, minijax):
        with pytest.raises(ValueError, match="(?i)empty"):
            mod.lax.switch(0, [], 1.0)
        with pytest.raises(TypeError, match="(?i)index"):
            mod.lax.switch(1.0, [], 1.0)
    with pytest.raises(minijax.MinijaxError):
        minijax.lax.switch(0, [], 1.0)


def test_cond_predicate_must_be_scalar():
    with pytest.raises(TypeError, match="scalar"):
        lax.cond(np.ones(2, bool), lambda: 1.0, lambda: 2.0)


# -- while_loop and fori_loop -------------------------------------------------------------

def while_program(ns):
    def f(x, scale):
        def body(carry):
            i, v, acc = carry
            return i + 1, v * scale, acc + ns.jnp.sum(ns.jnp.sin(v))
        return ns.lax.while_loop(lambda c: (c[0] < 4) & (ns.jnp.sum(c[1]) < 50.0), body,
                                 (0, x, 0.0))
    return f


def test_while_loop_values_jit_jvp():
    x = np.abs(randn(3)) + 0.5
    check_transforms(while_program, x, np.float32(1.5), hows=("eval", "jit", "jvp"))


def test_while_loop_vmap_batched_predicate_freezes_finished_lanes():
    xs = np.abs(randn(4, 3)) * np.array([[0.1], [1.0], [5.0], [20.0]], np.float32)
    check_transforms(while_program, xs[0], np.float32(1.5), hows=(),
                     vmap_args=(xs, np.float32(1.5)), in_axes=(0, None))
    check_transforms(while_program, xs[0], np.float32(1.5), hows=(),
                     vmap_args=(xs[0], np.array([1.1, 2.0, 3.0], np.float32)),
                     in_axes=(None, 0))


def test_while_loop_reverse_mode_is_a_clear_error():
    f = while_program(MJ)
    with pytest.raises(minijax.MinijaxError, match="scan"):
        minijax.grad(lambda x: f(x, np.float32(1.5))[2])(np.ones(3, np.float32))


@pytest.mark.parametrize("call", [
    lambda lax, np_: lax.scan(lambda c, x: (c, x), 0.0, (np_.ones(3), np_.ones(4))),
    lambda lax, np_: lax.scan(lambda c, x: (c, x), 0.0, np_.ones(3), length=4),
    lambda lax, np_: lax.scan(lambda c, x: (c, x), 0.0, None),
    lambda lax, np_: lax.map(lambda x: x, (np_.ones(3), np_.ones(2))),
    lambda lax, np_: lax.map(lambda x: x, (np_.ones(3), np_.ones(2)), batch_size=2),
    lambda lax, np_: lax.cond(True, lambda: np_.ones(2), lambda: np_.ones(3)),
    lambda lax, np_: lax.scan(lambda c, x: (c.astype(np_.int32), x), 1.0, np_.ones(3)),
])
def test_control_flow_errors_have_jaxs_exception_types(call):
    # Scan lengths that disagree are JAX's ValueError; bodies that do not fit, TypeError.
    with pytest.raises(Exception) as expected:
        call(jax.lax, jnp)
    with pytest.raises(expected.type):
        call(lax, mnp)


def fori_program(ns, static=True):
    def f(x, n):
        upper = 5 if static else n
        return ns.lax.fori_loop(1, upper, lambda i, c: c * ns.jnp.cos(c) + i, x)
    return f


def test_fori_loop_static_bounds_is_a_scan_and_reverse_differentiable():
    check_transforms(fori_program, randn(3), np.int32(5))
    assert "scan[" in str(minijax.make_jaxpr(fori_program(MJ))(randn(3), 5))


def test_fori_loop_dynamic_bounds_is_a_while_loop_forward_only():
    make = lambda ns: fori_program(ns, static=False)   # noqa: E731
    check_transforms(make, randn(3), np.int32(4), hows=("eval", "jit", "jvp"),
                     vmap_args=(randn(2, 3), np.array([2, 6], np.int32)))
    assert "while[" in str(minijax.make_jaxpr(make(MJ))(randn(3), np.int32(4)))
    with pytest.raises(minijax.MinijaxError, match="fori_loop"):
        # under jit the bound is traced, so the loop is a while_loop
        minijax.jit(lambda x, n: minijax.grad(lambda x: make(MJ)(x, n).sum())(x))(
            randn(3), np.int32(3))


# -- scan ---------------------------------------------------------------------------------

def rnn_program(ns):
    def f(w, h0, xs):
        def cell(h, x):
            h = ns.jnp.tanh(ns.jnp.dot(w, h) + x)
            return h, {"h": h, "norm": ns.jnp.sum(h * h)}
        return ns.lax.scan(cell, h0, xs)
    return f


def test_scan_rnn():
    w, h0, xs = randn(3, 3) * 0.5, randn(3), randn(5, 3)
    check_transforms(rnn_program, w, h0, xs, jit=False,
                     vmap_args=(w, randn(2, 3), randn(2, 5, 3)), in_axes=(None, 0, 0))


def test_scan_vmap_over_weights_only():
    w, h0, xs = randn(3, 3) * 0.5, randn(3), randn(5, 3)
    check_transforms(rnn_program, w, h0, xs, hows=(),
                     vmap_args=(randn(2, 3, 3), h0, xs), in_axes=(0, None, None))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_unroll_and_no_xs(reverse):
    def make(ns):
        def f(x):
            def body(c, _):
                a, b = c
                return (a * 0.9 + b, ns.jnp.sin(b)), a
            return ns.lax.scan(body, (x, x * 2.0), None, length=4, reverse=reverse,
                               unroll=2)
        return f
    check_transforms(make, randn(2), vmap_args=(randn(3, 2),))


def test_scan_weakly_typed_initial_carry_is_promoted():
    make = lambda ns: lambda x: ns.lax.scan(lambda c, xi: (c + xi, c), 0.0, x)  # noqa: E731
    check_transforms(make, randn(4), hows=("eval", "jit", "grad"))


# Initial carries JAX promotes to the body's dtype (an int 0 accumulating floats, a
# Python float accumulating bfloat16s), where minijax used to refuse the loop.
WEAK_INITS = {
    "fori int to f32": lambda lib, x: lib.lax.fori_loop(0, 3, lambda i, c: c + lib.numpy.asarray(x)[i], 0),
    "scan int to f32": lambda lib, x: lib.lax.scan(lambda c, xi: (c + xi, c * 2), 0, x),
    "while int to f32": lambda lib, x: lib.lax.while_loop(
        lambda c: c < 2, lambda c: c + x[0] * 0 + 0.5, 0),
    "fori float to bf16": lambda lib, x: lib.lax.fori_loop(
        0, 3, lambda i, c: c + lib.numpy.asarray(x)[i].astype(lib.numpy.bfloat16), 1.0),
    "scan tuple": lambda lib, x: lib.lax.scan(
        lambda c, xi: ((c[0] + xi, c[1] + 1), c[0]), (0, 0), x),
    # of its own dtype, made strong by the body: the carry going in stays weak, so the
    # ys read from it are weak (and the final carry strong)
    "scan weak ys": lambda lib, x: lib.lax.scan(lambda c, xi: (c + xi, c * 2), 0.0, x),
    "fori weak second carry": lambda lib, x: lib.lax.fori_loop(
        0, 3, lambda i, c: (c[0] + lib.numpy.asarray(x)[i], c[0]), (0.0, 0.0)),
    "while weak second carry": lambda lib, x: lib.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + x[0] + 1, c[0] * 2), (0.0, 0.0)),
}


@pytest.mark.parametrize("name", list(WEAK_INITS))
def test_weak_initial_carries_take_the_bodys_dtype_as_jaxs(name):
    fn, x = WEAK_INITS[name], randn(4)
    for wrap in (lambda f: f, minijax.jit):
        got = wrap(lambda x: fn(minijax, x))(x)
        want = (jax.jit if wrap is minijax.jit else (lambda f: f))(lambda x: fn(jax, x))(x)
        minijax.testing.assert_trees_match(got, want, rtol=1e-6)
    if "bf16" not in name and "while" not in name:   # (no reverse mode through a while)
        total = lambda lib: lambda x: sum(lib.numpy.sum(leaf) for leaf in   # noqa: E731
                                          lib.tree_util.tree_leaves(fn(lib, x)))
        minijax.testing.assert_trees_match(minijax.grad(total(minijax))(x),
                                           jax.grad(total(jax))(x), rtol=1e-6)
    tangent = np.ones_like(x)
    minijax.testing.assert_trees_match(
        minijax.jvp(lambda x: fn(minijax, x), (x,), (tangent,)),
        jax.jvp(lambda x: fn(jax, x), (x,), (tangent,)), rtol=1e-6)


def test_scan_carry_type_mismatch_is_a_clear_error():
    with pytest.raises(TypeError, match=r"float32\[2\]"):
        lax.scan(lambda c, x: (np.ones(2, np.float32) * c, x), np.float32(0), randn(3))


def test_scan_lowers_to_one_loop_not_unrolled():
    f = minijax.jit(rnn_program(MJ))
    text = f.lower(randn(3, 3), randn(3), randn(50, 3)).as_text()
    assert text.count("stablehlo.while") == 1
    assert text.count("tanh") == 1


# -- map ----------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 4, 10])
def test_map_with_batch_size(batch_size):
    def make(ns):
        return lambda xs: ns.lax.map(lambda x: (ns.jnp.sin(x) * x[0], x.sum()), xs,
                                     batch_size=batch_size)
    hows = ("eval", "grad") if batch_size in (None, 2) else ("eval",)
    check_transforms(make, randn(4, 3), hows=hows)


# -- select and the branch-free forms -----------------------------------------------------

def branch_free_program(ns):
    def f(x, y):
        a = ns.lax.select(x > y, x * 2.0, ns.jnp.sin(y))
        b = ns.jnp.where(ns.jnp.logical_and(x > 0, ns.jnp.logical_not(y > 0)), x, y)
        c = ns.jnp.where(ns.jnp.logical_or(x > 1, y < -1), a, b)
        return a + b + c
    return f


def test_select_and_logical_ops():
    check_transforms(branch_free_program, randn(5), randn(5), hows=("jit", "grad"),
                     vmap_args=(randn(2, 5), randn(2, 5)))


def test_jnp_select_and_piecewise():
    def make(ns):
        def f(x):
            s = ns.jnp.select([x < -0.5, x > 0.5], [x * 2.0, ns.jnp.sin(x)], default=x * x)
            p = ns.jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
            return s + p
        return f
    check_transforms(make, randn(6), hows=("jit", "grad"), vmap_args=(randn(2, 6),))


# -- the reference evaluator agrees --------------------------------------------------------

@pytest.mark.parametrize("make,args", [
    (cond_program, (np.float32(-1), randn(3), randn(3))),
    (switch_program, (np.int32(2), randn(3))),
    (while_program, (np.abs(randn(3)) + 0.5, np.float32(1.5))),
    (rnn_program, (randn(3, 3), randn(3), randn(4, 3))),
])
def test_reference_evaluator_agrees(make, args):
    from minijax.backends.reference import eval_closed_jaxpr
    closed = minijax.make_jaxpr(make(MJ))(*args)
    leaves = [a for a in args]
    ours = eval_closed_jaxpr(closed, *leaves)
    theirs = jax.tree_util.tree_leaves(make(JX)(*args))
    assert_close(ours, theirs, tol=1e-5)


def test_eager_calls_with_retraced_bodies_reuse_the_compiled_program():
    from minijax.backends import eager_dispatch

    def step(x):      # fresh lambdas, so fresh branch jaxprs, on every call
        return lax.cond(x > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    step(np.float32(1))
    compiled = eager_dispatch._compiled_primitive.cache_info().currsize
    for value in (2.0, -3.0):
        assert float(step(np.float32(value))) == (value * 2 if value > 0 else value - 1)
    assert eager_dispatch._compiled_primitive.cache_info().currsize == compiled


def test_a_carry_passed_through_unchanged_is_a_loop_invariant_not_a_residual():
    # A weight riding in the carry: JAX hoists it out of the loop state, and so does
    # minijax, so grad saves it once rather than once per iteration.
    def loss(lib, np_):
        def body(carry, xi):
            w, h = carry
            return (w, np_.sin(h @ w) * xi), None

        def f(w, h, xs):
            (w_out, h), _ = lib.lax.scan(body, (w, h), xs)
            return np_.sum(h) + np_.sum(w_out)
        return f
    w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    h, xs = np.ones(4, np.float32), np.linspace(0, 1, 20, dtype=np.float32).reshape(5, 4)
    grads = minijax.grad(loss(minijax, mnp), argnums=(0, 1))(w, h, xs)
    expected = jax.grad(loss(jax, jnp), argnums=(0, 1))(w, h, xs)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    closed = minijax.make_jaxpr(minijax.grad(loss(minijax, mnp), argnums=(0, 1)))(w, h, xs)
    forward_scan = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
    stacked = [v.aval.shape for v in forward_scan.outputs if v.aval.shape[:1] == (5,)]
    assert (5, 4, 4) not in stacked, f"the weight is saved per iteration: {stacked}"


def test_bodies_are_traced_in_jaxs_order():
    # A body's Python side effects (a print while tracing) come in JAX's order: cond's
    # true_fun before false_fun, while_loop's cond_fun before body_fun.
    def record(lax_, np_):
        seen = []
        def note(name, value):
            seen.append(name)
            return value
        lax_.cond(True, lambda x: note("true", x), lambda x: note("false", -x), 1.0)
        lax_.switch(1, [lambda: note("b0", 0.0), lambda: note("b1", 1.0),
                        lambda: note("b2", 2.0)])
        lax_.while_loop(lambda c: note("cond", c < 3), lambda c: note("body", c + 1), 0)
        lax_.while_loop(lambda c: note("cond2", c[0] < 3),
                        lambda c: note("body2", (c[0] + 1, c[1] * np_.float32(2.0))),
                        (0, 1.0))
        return seen
    assert record(lax, mnp) == record(jax.lax, jnp)
