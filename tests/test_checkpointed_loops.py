"""`checkpointed_scan` and `checkpointed_while_loop` against JAX: results and gradients
equal `lax.scan`'s / the unrolled loop's, for every schedule and several lengths, under
jit and vmap; prints happen once per step in the forward pass; the backward pass runs
the body exactly as often as the schedule says."""
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
    ref = rnn_loss(jax, jnp, theirs())
    assert_trees_match(mine(*args), ref(*args), **TOL)
    assert_trees_match(minijax.grad(mine, argnums=(0, 1, 2))(*args),
                       jax.grad(ref, argnums=(0, 1, 2))(*args), **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_reverse_under_jit(schedule):
    args = inputs(11)
    mine = minijax.jit(minijax.grad(rnn_loss(minijax, mnp, ours(schedule, reverse=True)),
                                    argnums=(0, 1, 2)))
    ref = jax.grad(rnn_loss(jax, jnp, theirs(reverse=True)), argnums=(0, 1, 2))
    assert_trees_match(mine(*args), ref(*args), **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_with_checkpoints_given(schedule):
    args = inputs(17)
    ref = jax.grad(rnn_loss(jax, jnp, theirs()), argnums=(0, 2))(*args)
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
    assert_trees_match(minijax.grad(mine)(w), jax.grad(ref)(w), **TOL)


@pytest.mark.parametrize("schedule", ["binomial", "sqrt"])
def test_scan_under_vmap(schedule):
    w, h, xs = inputs(7)
    hs = np.stack([h, h * 2, -h])
    mine = minijax.vmap(minijax.grad(rnn_loss(minijax, mnp, ours(schedule)), argnums=(0, 1)),
                        in_axes=(None, 0, None))
    ref = jax.vmap(jax.grad(rnn_loss(jax, jnp, theirs()), argnums=(0, 1)),
                   in_axes=(None, 0, None))
    assert_trees_match(mine(w, hs, xs), ref(w, hs, xs), **TOL)
    # and grad of a vmapped loop (the custom_vjp call batched, then differentiated)
    def batched(lib, np_, scan):
        inner = rnn_loss(lib, np_, scan)
        return lambda w, hs, xs: np_.sum(lib.vmap(inner, in_axes=(None, 0, None))(w, hs, xs))
    assert_trees_match(minijax.grad(batched(minijax, mnp, ours(schedule)))(w, hs, xs),
                       jax.grad(batched(jax, jnp, theirs()))(w, hs, xs), **TOL)


def test_scan_under_nested_checkpoint_and_policy():
    args = inputs(6)

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
    assert_trees_match(minijax.grad(mine)(*args), jax.grad(ref)(*args), **TOL)
    # and the checkpointed scan itself inside a checkpoint
    outer = minijax.checkpoint(loss(minijax, mnp, ours("sqrt"), lambda b: b))
    assert_trees_match(minijax.grad(outer)(*args),
                       jax.grad(loss(jax, jnp, theirs(), lambda b: b))(*args), **TOL)


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
