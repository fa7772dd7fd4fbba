"""A `while_loop` whose `cond_fun` writes refs (issue 17): the sequential meaning --
the condition runs before every body and once more at the end -- eagerly, under
`jit`, under `jvp`/`linearize`/`jacfwd` and `vmap`, checked against a plain Python
loop (JAX 0.10.2 loses a condition's write, or refuses a ref written by both:
`jax_while_condition_write_is_lost`)."""
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match

RUNS = {"eager": lambda f: f, "jit": minijax.jit}


def shared_ref_loop(x):
    """The condition counts its runs in `calls` and doubles `s`; the body adds x to
    `s`. Returns the loop count and both refs' final contents."""
    calls = minijax.new_ref(np.float32(0.0))
    s = minijax.new_ref(x)

    def cond(c):
        calls[...] += 1.0
        s[...] = s[...] * 2.0
        return c < 3

    def body(c):
        s[...] += x
        return c + 1
    n = minijax.lax.while_loop(cond, body, 0)
    return n, calls[...], s[...]


def python_shared_ref_loop(x):
    calls, s, c = 0.0, x, 0
    while True:
        calls += 1.0
        s = s * 2.0
        if not c < 3:
            break
        s = s + x
        c += 1
    return c, calls, s


@pytest.mark.parametrize("run", RUNS)
def test_cond_and_body_writing_the_same_ref(run):
    x = np.float32(1.5)
    n, calls, s = RUNS[run](shared_ref_loop)(x)
    want = python_shared_ref_loop(1.5)
    assert int(n) == want[0] and float(calls) == want[1]
    np.testing.assert_allclose(float(s), want[2])


@pytest.mark.parametrize("run", RUNS)
def test_a_closed_over_ref_written_by_the_condition(run):
    log = minijax.new_ref(np.zeros(5, np.float32))

    def f(x):
        def cond(c):
            log[c] = x * c                          # a write at a traced index
            return c < 3
        return minijax.lax.while_loop(cond, lambda c: c + 1, 0)
    assert int(RUNS[run](f)(np.float32(2.0))) == 3
    np.testing.assert_array_equal(np.asarray(log[...]), [0.0, 2.0, 4.0, 6.0, 0.0])


def test_a_condition_false_at_once_still_writes_once():
    def f(x):
        r = minijax.new_ref(x)

        def cond(c):
            r[...] += 1.0
            return c < 0
        return minijax.lax.while_loop(cond, lambda c: c + 1, 0), r[...]
    for run in RUNS.values():
        assert_trees_match(run(f)(np.float32(1.0)), (np.int32(0), np.float32(2.0)))


def test_forward_mode_through_a_writing_condition():
    def f(x):
        acc = minijax.new_ref(x)

        def cond(c):
            acc[...] = acc[...] * x                 # differentiated, ref made inside
            return c[0] < 2
        _, y = minijax.lax.while_loop(cond, lambda c: (c[0] + 1, c[1] + acc[...]), (0, x))
        return y + acc[...]

    def by_hand(x):
        acc, y, c = x, x, 0
        while True:
            acc = acc * x
            if not c < 2:
                break
            c, y = c + 1, y + acc
        return y + acc
    x, eps = 1.3, 1e-3
    slope = (by_hand(x + eps) - by_hand(x - eps)) / (2 * eps)
    primal, tangent = minijax.jvp(f, (np.float32(x),), (np.float32(1.0),))
    np.testing.assert_allclose(float(primal), by_hand(x), rtol=1e-5)
    np.testing.assert_allclose(float(tangent), slope, rtol=1e-3)
    p, f_lin = minijax.linearize(f, np.float32(x))
    np.testing.assert_allclose(float(f_lin(np.float32(1.0))), slope, rtol=1e-3)
    np.testing.assert_allclose(float(minijax.jacfwd(f)(np.float32(x))), slope, rtol=1e-3)
    np.testing.assert_allclose(float(minijax.jit(minijax.jacfwd(f))(np.float32(x))), slope,
                               rtol=1e-3)


def test_vmap_of_a_writing_condition_per_example_trip_counts():
    def f(limit):
        r = minijax.new_ref(np.float32(0.0))

        def cond(c):
            r[...] += 1.0
            return c < limit
        return minijax.lax.while_loop(cond, lambda c: c + 1, 0), r[...]
    limits = np.array([0, 2, 5], np.int32)
    for run in RUNS.values():
        n, calls = run(minijax.vmap(f))(limits)
        np.testing.assert_array_equal(np.asarray(n), limits)
        np.testing.assert_array_equal(np.asarray(calls), limits + 1.0)


def test_reverse_mode_is_still_the_while_loop_error():
    def f(x):
        r = minijax.new_ref(x)

        def cond(c):
            r[...] *= 2.0
            return c < 2
        minijax.lax.while_loop(cond, lambda c: c + 1, 0)
        return r[...]
    with pytest.raises(minijax.MinijaxError, match="Reverse-mode.*while_loop"):
        minijax.grad(f)(np.float32(1.0))


def test_the_reference_evaluator_agrees():
    from minijax.backends.reference import eval_closed_jaxpr
    closed = minijax.make_jaxpr(shared_ref_loop)(np.float32(1.5))
    got = eval_closed_jaxpr(closed, np.float32(1.5))
    want = python_shared_ref_loop(1.5)
    assert int(got[0]) == want[0] and float(got[1]) == want[1]
    np.testing.assert_allclose(float(got[2]), want[2])
