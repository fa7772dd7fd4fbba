"""A partial write to an outside ref inside `grad` of a `checkpoint`-ed function
under `vmap` (issue 17, formerly under "Not yet" in docs/refs.md): the write
happens once. The remat rewrite takes writes to a ref the body never reads out of
the body and performs them at exit, so vmap sees a write, not a read and a write.
The derivatives are compared with JAX on the same function without the ref."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match

XS = np.array([0.1, 0.2, 0.7], np.float32)


def _pure(np_mod):
    return lambda y: np_mod.sin(y) * 2.0


@pytest.mark.parametrize("jit", [False, True])
def test_partial_write_under_vmap_of_grad_of_checkpoint_happens_once(jit):
    r = minijax.new_ref(np.zeros(3, np.float32))
    log = minijax.new_ref(np.zeros(4, np.float32))

    def f(x):
        def g(y):
            r[0] = 1.0                           # a constant, at a static index
            log[1:3] = minijax.lax.stop_gradient(mjnp.ones(2) * 5.0)
            return _pure(mjnp)(y)
        return minijax.checkpoint(g)(x)
    run = minijax.vmap(minijax.grad(f))
    got = (minijax.jit(run) if jit else run)(XS)
    assert_trees_match(got, jax.vmap(jax.grad(_pure(jjnp)))(XS))
    np.testing.assert_array_equal(np.asarray(r[...]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(log[...]), [0.0, 5.0, 5.0, 0.0])


def test_partial_write_at_a_traced_index_and_two_writes_in_order():
    r = minijax.new_ref(np.zeros(4, np.float32))

    def f(x, i):
        def g(y):
            r[i] = 2.0
            r[i] = 3.0                           # the later write wins, as without remat
            return _pure(mjnp)(y)
        return minijax.checkpoint(g)(x)
    got = minijax.vmap(minijax.grad(f), in_axes=(0, None))(XS, 2)
    assert_trees_match(got, jax.vmap(jax.grad(_pure(jjnp)))(XS))
    np.testing.assert_array_equal(np.asarray(r[...]), [0.0, 0.0, 3.0, 0.0])


@pytest.mark.parametrize("how", ["grad", "jvp", "linearize"])
def test_partial_write_without_vmap_under_each_transform(how):
    r = minijax.new_ref(np.zeros(3, np.float32))

    def f(x):
        def g(y):
            r[1:] = mjnp.full(2, 4.0)
            return _pure(mjnp)(y)
        return minijax.checkpoint(g)(x)
    x = np.float32(0.3)
    if how == "grad":
        got, want = minijax.grad(f)(x), jax.grad(_pure(jjnp))(x)
    elif how == "jvp":
        got = minijax.jvp(f, (x,), (np.float32(1.0),))
        want = jax.jvp(_pure(jjnp), (x,), (np.float32(1.0),))
    else:
        got = minijax.linearize(f, x)[1](np.float32(1.0))
        want = jax.linearize(_pure(jjnp), x)[1](np.float32(1.0))
    assert_trees_match(got, want)
    np.testing.assert_array_equal(np.asarray(r[...]), [0.0, 4.0, 4.0])


def test_a_partial_write_of_a_differentiated_value_is_still_an_error():
    r = minijax.new_ref(np.zeros(3, np.float32))

    def f(x):
        def g(y):
            r[0] = y * 2.0
            return y
        return minijax.checkpoint(g)(x)
    with pytest.raises(minijax.MinijaxError, match="differentiated value.*stop_gradient"):
        minijax.vmap(minijax.grad(f))(XS)
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros(3))


def test_a_per_example_partial_write_is_still_the_vmap_error():
    r = minijax.new_ref(np.zeros(3, np.float32))

    def f(x):
        def g(y):
            r[0] = minijax.lax.stop_gradient(y)       # differs per example
            return y
        return minijax.checkpoint(g)(x)
    with pytest.raises(minijax.MinijaxError, match="differs per example"):
        minijax.vmap(minijax.grad(f))(XS)
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros(3))


def test_a_swap_whose_old_value_is_used_is_a_read_and_stays_in_the_body():
    def make(checkpointed):
        r = minijax.new_ref(np.array([2.0, 3.0], np.float32))

        def g(y):
            old = minijax.ref.swap(r, 0, minijax.lax.stop_gradient(y) + 1.0)
            return y * (old + 1.0)
        return (minijax.checkpoint(g) if checkpointed else g), r
    results = []
    for checkpointed in (True, False):
        g, r = make(checkpointed)
        results.append((minijax.grad(g)(np.float32(0.5)), r[...]))
    assert_trees_match(results[0], results[1])
    assert_trees_match(results[0], (np.float32(3.0), np.array([1.5, 3.0], np.float32)))
