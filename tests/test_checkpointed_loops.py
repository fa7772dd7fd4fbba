"""`checkpointed_scan` and `checkpointed_while_loop` against JAX: results and gradients
equal `lax.scan`'s / the unrolled loop's, for every schedule and several lengths, under
jit and vmap; prints happen once per step in the forward pass; the backward pass runs
the body exactly as often as the schedule says."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.ad_checkpoint import (checkpointed_scan, checkpointed_while_loop,
                                   checkpoint_schedule)
from minijax.testing import assert_trees_match
from minijax.transforms.checkpoint_schedules import (make_schedule, simulate, ScheduleError)
from tests.devices import on_cpu

SCHEDULES = ["binomial", "sqrt", "all"]
LENGTHS = [0, 1, 8, 13]          # empty, one step, a power of two, a prime
TOL = dict(rtol=2e-5, atol=2e-6)


def rnn_loss(lib, np_, scan):
    """A pytree carry (a pair and a dict), xs, and ys that feed the loss."""
    def loss(w, h, xs):
        def body(carry, x):
            a, d = carry
            a2 = np_.tanh(a * w + x)
            b2 = d["b"] * 0.9 + np_.sin(a2)
            return (a2, {"b": b2}), a2 * b2
        (a, d), ys = scan(body, (h, {"b": h * 0.5}), xs)
        return np_.sum(a) + np_.sum(d["b"] ** 2) + np_.sum(ys)
    return loss


def inputs(n, width=3, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 1.0, width).astype(np.float32)
    h = rng.standard_normal(width).astype(np.float32)
    xs = rng.standard_normal((n, width)).astype(np.float32) * 0.3
    return w, h, xs


@functools.lru_cache(maxsize=None)
def rnn_reference(n, reverse=False):
    """JAX's `rnn_loss` and its gradient (every argument) at `inputs(n)`: one `jax.jit`
    program (eagerly, a compile per distinct operation), shared by every schedule."""
    loss = rnn_loss(jax, jnp, theirs(reverse))
    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))(*inputs(n))


def ours(schedule, reverse=False, checkpoints=None):
    return lambda f, init, xs: checkpointed_scan(f, init, xs, reverse=reverse,
                                                 schedule=schedule, checkpoints=checkpoints)


def theirs(reverse=False):
    return lambda f, init, xs: jax.lax.scan(f, init, xs, reverse=reverse)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("n", LENGTHS)
def test_scan_values_and_gradients_match_lax_scan(schedule, n):
    args = inputs(n)
    mine = rnn_loss(minijax, mnp, ours(schedule))
    value, grads = rnn_reference(n)
    assert_trees_match(mine(*args), value, **TOL)
    assert_trees_match(minijax.grad(mine, argnums=(0, 1, 2))(*args), grads, **TOL)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("jit", [False, True])
def test_scan_reverse(schedule, jit):
    args = inputs(13)
    mine = minijax.grad(rnn_loss(minijax, mnp, ours(schedule, reverse=True)),
                        argnums=(0, 1, 2))
    value, grads = rnn_reference(13, reverse=True)
    assert_trees_match((minijax.jit(mine) if jit else mine)(*args), grads, **TOL)
    assert_trees_match(rnn_loss(minijax, mnp, ours(schedule, reverse=True))(*args),
                       value, **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_with_checkpoints_given(schedule):
    args = inputs(13)
    grads = rnn_reference(13)[1]
    ref = (grads[0], grads[2])
    for c in (9, 12):
        mine = minijax.grad(rnn_loss(minijax, mnp, ours(schedule, checkpoints=c)),
                            argnums=(0, 2))(*args)
        assert_trees_match(mine, ref, **TOL)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_scan_without_xs_and_integer_carry(schedule):
    def loss(lib, np_, scan):
        def f(w):
            def body(carry, _):
                k, h = carry
                return (k + 1, np_.sin(h * w) + k.astype(np.float32) * 0.1), None
            (k, h), _ = scan(body, (np.int32(0), w), None)
            return np_.sum(h)
        return f
    w = np.linspace(0.2, 0.9, 4).astype(np.float32)
    mine = loss(minijax, mnp, lambda f, c, xs: checkpointed_scan(f, c, xs, length=9,
                                                                 schedule=schedule))
    ref = loss(jax, jnp, lambda f, c, xs: jax.lax.scan(f, c, xs, length=9))
    assert_trees_match(minijax.grad(mine)(w), jax.jit(jax.grad(ref))(w), **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_under_vmap(schedule):
    w, h, xs = inputs(8)
    hs = np.stack([h, h * 2, -h])
    mine = minijax.vmap(minijax.grad(rnn_loss(minijax, mnp, ours(schedule)), argnums=(0, 1)),
                        in_axes=(None, 0, None))
    ref = jax.vmap(jax.grad(rnn_loss(jax, jnp, theirs()), argnums=(0, 1)),
                   in_axes=(None, 0, None))
    assert_trees_match(mine(w, hs, xs), jax.jit(ref)(w, hs, xs), **TOL)
    # and grad of a vmapped loop (the custom_vjp call batched, then differentiated)
    def batched(lib, np_, scan):
        inner = rnn_loss(lib, np_, scan)
        return lambda w, hs, xs: np_.sum(lib.vmap(inner, in_axes=(None, 0, None))(w, hs, xs))
    assert_trees_match(minijax.grad(batched(minijax, mnp, ours(schedule)))(w, hs, xs),
                       jax.jit(jax.grad(batched(jax, jnp, theirs())))(w, hs, xs), **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_batched_xs_with_integer_xs_under_vmap(schedule):
    def loss(np_, scan):
        def f(w, h, xs, ks):
            def body(c, x):
                xf, k = x
                return np_.sin(c * w + xf) + k.astype(np.float32) * 0.01, c
            c, ys = scan(body, h, (xs, ks))
            return np_.sum(c) + np_.sum(ys)
        return f
    w, h = np.float32(0.8), np.ones(3, np.float32)
    xs = np.random.default_rng(0).standard_normal((4, 9, 3)).astype(np.float32)
    ks = np.arange(9, dtype=np.int32)
    mine = loss(mnp, lambda f, c, x: checkpointed_scan(f, c, x, schedule=schedule))
    ref = loss(jnp, jax.lax.scan)
    axes = (None, None, 0, None)
    expected = jax.jit(jax.vmap(jax.grad(ref, argnums=(0, 2)), in_axes=axes))(w, h, xs, ks)
    batched = minijax.vmap(minijax.grad(mine, argnums=(0, 2)), in_axes=axes)
    assert_trees_match(batched(w, h, xs, ks), expected, **TOL)
    assert_trees_match(minijax.jit(batched)(w, h, xs, ks), expected, **TOL)


def test_scan_under_nested_checkpoint_and_policy():
    args = inputs(8)

    def loss(lib, np_, scan, wrap):
        def f(w, h, xs):
            def body(c, x):
                return np_.sin(c @ np_.diag(w)) + x, None
            c, _ = scan(wrap(body), h, xs)
            return np_.sum(c)
        return f
    policy = minijax.checkpoint_policies.dots_saveable
    mine = loss(minijax, mnp, ours("binomial"),
                lambda b: minijax.checkpoint(b, policy=policy))
    ref = loss(jax, jnp, theirs(), lambda b: jax.checkpoint(
        b, policy=jax.checkpoint_policies.dots_saveable))
    assert_trees_match(minijax.grad(mine)(*args), jax.jit(jax.grad(ref))(*args), **TOL)
    # and the checkpointed scan itself inside a checkpoint
    outer = minijax.checkpoint(loss(minijax, mnp, ours("sqrt"), lambda b: b))
    assert_trees_match(minijax.grad(outer)(*args),
                       jax.jit(jax.grad(loss(jax, jnp, theirs(), lambda b: b)))(*args),
                       **TOL)


# -- the schedule: stored carries, recomputation count, prints --------------------------------

def weighted_count(jaxpr, name):
    """How many times equations of primitive `name` run: scans multiply their body's
    count by their length; other bodies count once."""
    from minijax.ir.core import Jaxpr
    total = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == name:
            total += 1
        for value in eqn.params.values():
            for sub in (value if isinstance(value, tuple) else (value,)):
                if isinstance(sub, Jaxpr):
                    times = eqn.params["length"] if eqn.primitive.name == "scan" else 1
                    total += times * weighted_count(sub, name)
    return total


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("n", [1, 8, 13, 100])
def test_backward_pass_runs_the_body_as_often_as_the_schedule_says(schedule, n):
    def loss(h, xs):
        c, _ = checkpointed_scan(lambda c, x: (mnp.sin(c) + x, None), h, xs,
                                 schedule=schedule)
        return mnp.sum(c)
    h, xs = np.ones(2, np.float32), np.ones((n, 2), np.float32)
    closed = minijax.make_jaxpr(minijax.grad(loss))(h, xs)
    sim = simulate(make_schedule(n, schedule))
    # forward pass: n; backward: the recomputations plus the steps linearized again
    assert weighted_count(closed.jaxpr, "sin") == n + sim.backward_body_runs
    if schedule != "all" and n > 1:
        assert sim.backward_body_runs == sim.recomputations + n
    assert weighted_count(closed.jaxpr, "cos") == n


def test_schedules_scale_as_promised():
    for n in (100, 1000, 10000):
        log2 = int(np.ceil(np.log2(n)))
        binomial = simulate(make_schedule(n, "binomial"))
        assert binomial.peak_carries + binomial.base_steps <= 2 * log2 + 1
        # recomputation O(n log n): at most ceil(log2 n) extra sweeps
        assert binomial.recomputations <= log2 * n
        sqrt = simulate(make_schedule(n, "sqrt"))
        root = int(np.ceil(np.sqrt(n)))
        assert sqrt.peak_carries <= root and sqrt.base_steps <= root + 1
        assert sqrt.recomputations == 0    # each step is re-run once, by its linearization
        every = simulate(make_schedule(n, "all"))
        assert every.base_steps == n and every.recomputations == 0


def test_schedule_is_printable():
    text = repr(checkpoint_schedule(10, "sqrt"))
    assert "stored     |S..S..S..S|" in text
    assert "chunks [4]" in text or "chunks [3]" in text
    text = repr(checkpoint_schedule(10_000))
    assert "binomial schedule, 10000 steps" in text


def test_schedule_errors():
    with pytest.raises(ScheduleError, match="schedule must be one of"):
        make_schedule(10, "revolve")
    with pytest.raises(ScheduleError, match="needs at least 8 checkpoints"):
        make_schedule(10, "binomial", checkpoints=3)
    with pytest.raises(ScheduleError, match="positive int"):
        make_schedule(10, "sqrt", checkpoints=0)
    with pytest.raises(ScheduleError):
        checkpointed_scan(lambda c, x: (c, x), 0.0, np.ones(3, np.float32), schedule="x")


def printed(capsys, run):
    capsys.readouterr()
    run()
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_debug_print_once_per_step_in_the_forward_pass(capsys, schedule):
    def loss(h, xs):
        def body(c, x):
            minijax.debug.print("step {}", x)
            return mnp.sin(c) + x, None
        c, _ = checkpointed_scan(body, h, xs, schedule=schedule)
        return mnp.sum(c)
    xs = np.arange(9, dtype=np.float32)
    expected = [f"step {float(i)}" for i in range(9)]
    assert printed(capsys, lambda: minijax.grad(loss)(np.float32(0.5), xs)) == expected
    assert printed(capsys, lambda: minijax.jit(minijax.grad(loss))(np.float32(0.5), xs)) \
        == expected


# -- checkpointed_while_loop ----------------------------------------------------------------

def while_program(lib, np_, loop, limit=3.0):
    """x grows by a data-dependent factor until its norm passes `limit`."""
    def f(w, x):
        def cond(state):
            k, v = state
            return np_.sum(v * v) < limit
        def body(state):
            k, v = state
            return k + 1, np_.sin(v * w) + v * 1.1 + 0.05
        k, v = loop(cond, body, (np.int32(0), x))
        return np_.sum(v ** 2) + k.astype(np.float32)
    return f


def unrolled_reference(w, x, steps):
    return _unrolled_value_and_grad(steps)(w, x)


@functools.lru_cache(maxsize=None)
def _unrolled_value_and_grad(steps):
    """JAX's value and gradient of the loop unrolled `steps` times: one `jax.jit`
    program per step count (eagerly, a compile per distinct operation)."""
    def f(w, x):
        v = x
        for _ in range(steps):
            v = jnp.sin(v * w) + v * 1.1 + 0.05
        return jnp.sum(v ** 2) + steps
    return jax.jit(jax.value_and_grad(f, argnums=(0, 1)))


def jax_steps(w, x, limit=3.0):
    return int(_jax_steps(w, x, limit))


@functools.partial(jax.jit, static_argnames="limit")
def _jax_steps(w, x, limit):
    k, _ = jax.lax.while_loop(lambda s: jnp.sum(s[1] ** 2) < limit,
                              lambda s: (s[0] + 1, jnp.sin(s[1] * w) + s[1] * 1.1 + 0.05),
                              (0, x))
    return k


@pytest.mark.parametrize("checkpoints", [None, 1, 3, 20])
@pytest.mark.parametrize("scale", [2.0, 0.5, 0.1, 0.01])
def test_while_gradients_equal_the_unrolled_loop(checkpoints, scale):
    w = np.array([0.3, -0.2], np.float32)
    x = np.array([1.0, 0.5], np.float32) * np.float32(scale)
    loop = lambda c, b, v: checkpointed_while_loop(c, b, v, max_steps=20,
                                                   checkpoints=checkpoints)
    f = while_program(minijax, mnp, loop)
    steps = jax_steps(w, x)
    assert steps <= 20
    value, grads = unrolled_reference(w, x, steps)
    assert_trees_match(f(w, x), jax.jit(while_program(jax, jnp, jax.lax.while_loop))(w, x),
                       **TOL)
    assert_trees_match(minijax.value_and_grad(f, argnums=(0, 1))(w, x), (value, grads),
                       **TOL)
    assert_trees_match(minijax.jit(minijax.grad(f, argnums=(0, 1)))(w, x), grads, **TOL)


@pytest.mark.parametrize("policy", [None, "dots_saveable"])
def test_while_with_a_checkpointed_body(policy):
    def wrap(body):
        return minijax.checkpoint(
            body, policy=getattr(minijax.checkpoint_policies, policy) if policy else None)
    loop = lambda c, b, v: checkpointed_while_loop(c, wrap(b), v, max_steps=20,
                                                   checkpoints=4)
    f = while_program(minijax, mnp, loop)
    w, x = np.array([0.3, -0.2], np.float32), np.array([0.5, 0.25], np.float32)
    _, grads = unrolled_reference(w, x, jax_steps(w, x))
    assert_trees_match(minijax.jit(minijax.grad(f, argnums=(0, 1)))(w, x), grads, **TOL)
    # and the whole loop inside a checkpoint
    outer = minijax.checkpoint(while_program(
        minijax, mnp, lambda c, b, v: checkpointed_while_loop(c, b, v, max_steps=20)))
    assert_trees_match(minijax.grad(outer, argnums=(0, 1))(w, x), grads, **TOL)


def test_while_stops_at_max_steps():
    loop = lambda c, b, v: checkpointed_while_loop(c, b, v, max_steps=4)
    f = while_program(minijax, mnp, loop, limit=1e9)
    w, x = np.array([0.3, -0.2], np.float32), np.array([1.0, 0.5], np.float32)
    value, grads = unrolled_reference(w, x, 4)
    assert_trees_match(minijax.value_and_grad(f, argnums=(0, 1))(w, x), (value, grads),
                       **TOL)


def test_while_vjp_and_linearize():
    loop = lambda c, b, v: checkpointed_while_loop(c, b, v, max_steps=16, checkpoints=4)
    f = while_program(minijax, mnp, loop)
    w, x = np.array([0.3, -0.2], np.float32), np.array([0.4, 0.2], np.float32)
    _, grads = unrolled_reference(w, x, jax_steps(w, x))
    out, pullback = minijax.vjp(f, w, x)
    assert_trees_match(pullback(np.float32(1.0)), grads, **TOL)
    # linearize: its linear function runs the loop's tangent map (forward mode from
    # the stored initial carry), eagerly and under jit, and transposes to the gradient
    out, lin = minijax.linearize(f, w, x)
    for apply in (lin, minijax.jit(lin)):
        probes = [apply(np.zeros(2, np.float32), e) for e in np.eye(2, dtype=np.float32)]
        np.testing.assert_allclose(np.array(probes), grads[1], **TOL)
        probes = [apply(e, np.zeros(2, np.float32)) for e in np.eye(2, dtype=np.float32)]
        np.testing.assert_allclose(np.array(probes), grads[0], **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_linearize_matches_jax(schedule):
    args = inputs(13)
    mine = rnn_loss(minijax, mnp, ours(schedule))
    ref = rnn_loss(jax, jnp, theirs())
    tangents = inputs(13, seed=1)
    _, lin = minijax.linearize(mine, *args)
    jvp = jax.jit(lambda args, tangents: jax.jvp(ref, args, tangents))
    expected_pair = jvp(args, tangents)
    expected = expected_pair[1]
    assert_trees_match(lin(*tangents), expected, **TOL)
    assert_trees_match(minijax.jit(lin)(*tangents), expected, **TOL)
    # pure forward mode runs the same tangent map
    assert_trees_match(minijax.jvp(mine, args, tangents), expected_pair, **TOL)


def test_while_early_exit_differs_per_vmap_lane():
    loop = lambda c, b, v: checkpointed_while_loop(c, b, v, max_steps=30, checkpoints=5)
    f = while_program(minijax, mnp, loop)
    w = np.array([0.3, -0.2], np.float32)
    xs = np.array([[1.0, 0.5], [0.3, 0.1], [0.05, 0.02], [2.0, 0.0]], np.float32)
    steps = [jax_steps(w, x) for x in xs]
    assert len(set(steps)) == len(steps)          # every lane exits at a different step
    expected = [unrolled_reference(w, x, s)[1] for x, s in zip(xs, steps)]
    for run in (minijax.vmap(minijax.grad(f, argnums=(0, 1)), in_axes=(None, 0)),
                minijax.jit(minijax.vmap(minijax.grad(f, argnums=(0, 1)), in_axes=(None, 0)))):
        gw, gx = run(w, xs)
        for i, (ew, ex) in enumerate(expected):
            np.testing.assert_allclose(gw[i], ew, **TOL)
            np.testing.assert_allclose(gx[i], ex, **TOL)
    # grad of the sum over a vmapped loop: the custom call batched, then differentiated
    total = lambda w, xs: mnp.sum(minijax.vmap(f, in_axes=(None, 0))(w, xs))
    gw = minijax.grad(total)(w, xs)
    np.testing.assert_allclose(gw, sum(e[0] for e in expected), rtol=1e-4, atol=1e-5)


def test_while_prints_once_per_step_in_the_forward_pass(capsys):
    def f(x):
        def body(v):
            minijax.debug.print("v={}", v)
            return v * 2.0
        return checkpointed_while_loop(lambda v: v < 10.0, body, x, max_steps=8,
                                       checkpoints=2)
    lines = printed(capsys, lambda: minijax.grad(f)(np.float32(1.0)))
    assert lines == ["v=1.0", "v=2.0", "v=4.0", "v=8.0"]
    assert float(minijax.grad(f)(np.float32(1.0))) == 16.0


def test_while_errors():
    with pytest.raises(TypeError, match="max_steps must be a non-negative int"):
        checkpointed_while_loop(lambda v: v < 1.0, lambda v: v, 0.0, max_steps=2.5)
    with pytest.raises(TypeError, match="checkpoints must be a positive int"):
        checkpointed_while_loop(lambda v: v < 1.0, lambda v: v, 0.0, max_steps=3,
                                checkpoints=0)
    with pytest.raises(TypeError, match="must return a boolean scalar"):
        checkpointed_while_loop(lambda v: v, lambda v: v, 0.0, max_steps=3)
    ref = minijax.new_ref(0.0)
    with pytest.raises(TypeError, match="condition may not read refs"):
        checkpointed_while_loop(lambda v: v < ref[...], lambda v: v + 1.0, 0.0,
                                max_steps=3)


# -- refs: the remat rule -------------------------------------------------------------------

@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("jit", [False, True])
def test_scan_with_refs_runs_effects_once_per_step(schedule, jit):
    count = minijax.new_ref(0.0)
    total = minijax.new_ref(np.zeros(3, np.float32))

    def loss(np_, scan, make_ref, effects):
        def f(w, xs):
            def body(c, x):
                if effects:
                    count[...] += 1.0               # outside refs, written
                    total[...] += c
                tmp = make_ref(c)                   # a ref made inside the body
                tmp[...] = np_.sin(tmp[...] * w) + x
                return tmp[...], None
            c, _ = scan(body, np_.ones(3), xs)
            return np_.sum(c)
        return f
    w, xs = np.float32(0.7), np.linspace(0, 1, 21).reshape(7, 3).astype(np.float32)
    mine = loss(mnp, lambda f, c, xs: checkpointed_scan(f, c, xs, schedule=schedule),
                minijax.new_ref, True)
    grad = minijax.grad(mine, argnums=(0, 1))
    ours = (minijax.jit(grad) if jit else grad)(w, xs)
    assert float(count[...]) == 7.0                 # once per step, forward pass only
    carries, c = [], np.ones(3, np.float32)         # the body added each entering carry
    for x in xs:
        carries.append(c)
        c = np.sin(c * w) + x
    np.testing.assert_allclose(total[...], np.sum(carries, axis=0), rtol=1e-5)
    # JAX's side: the same program with a plain box for the inside ref, no effects
    theirs = jax.jit(jax.grad(loss(jnp, jax.lax.scan, _Box, False), argnums=(0, 1)))(w, xs)
    assert_trees_match(ours, theirs, **TOL)


class _Box:
    """A stand-in for a ref on the JAX side (the same program without refs)."""
    def __init__(self, value):
        self.value = value

    def __getitem__(self, index):
        return self.value

    def __setitem__(self, index, value):
        self.value = value


def test_while_with_refs_runs_effects_once_per_step():
    count = minijax.new_ref(0)

    def f(x):
        def body(v):
            count[...] += 1
            return v * 2.0
        return checkpointed_while_loop(lambda v: v < 10.0, body, x, max_steps=8,
                                       checkpoints=2)
    assert float(minijax.grad(f)(np.float32(1.0))) == 16.0
    assert int(count[...]) == 4
    assert float(minijax.jit(minijax.grad(f))(np.float32(1.0))) == 16.0
    assert int(count[...]) == 8


def test_while_memory_is_bounded_by_the_checkpoints_not_max_steps():
    """XLA's temp memory of jit(grad) with 8 checkpoints: 64x the max_steps adds a few
    carries (each segment is reversed by the binomial schedule), nowhere near 64x."""
    w = np.eye(16, dtype=np.float32) * 0.5
    h = np.ones((16, 16), np.float32)

    def temp_bytes(max_steps):
        def loss(w, h):
            def body(s):
                return s[0] + 1, mnp.tanh(s[1] @ w) * 0.5 + s[1] * 0.5
            _, h2 = checkpointed_while_loop(lambda s: s[0] < 3000, body, (0, h),
                                            max_steps=max_steps, checkpoints=8)
            return mnp.sum(h2)
        compiled = minijax.jit(minijax.grad(loss)).lower(w, h).compile()
        return compiled.memory_analysis().temp_size_in_bytes
    with on_cpu():      # bounds measured with XLA's CPU buffer assignment (tests/devices.py)
        small, large = temp_bytes(64), temp_bytes(4096)
    assert large - small <= 24 * h.nbytes, (small, large)
    assert large < 4096 * h.nbytes / 20
