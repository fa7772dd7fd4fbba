"""`jit(f, donate_argnums=...)` with refs (issue 17): a donated ref hands its current
buffer to XLA -- the array it held is deleted and the new contents are written into
that buffer -- and goes on working; donated arrays beside it are deleted as in JAX.

JAX 0.10.2 cannot donate a ref its function writes (`jax_donating_a_ref_argument_fails`,
pinned in test_refs_jit_surface.py), so the written case is compared with JAX's call
without donation. `_held(r)` is the `jax.Array` a box holds at the moment: what a
donation deletes (the public `r[...]` is a fresh copy)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match


def _held(r):
    return r._value


def bump(r, x):
    r[...] += x
    return r[...] * 2.0


def _ones(m):
    return m.new_ref(np.ones(3, np.float32))


def test_a_donated_written_ref_is_updated_in_its_own_buffer():
    r = _ones(minijax)
    f = minijax.jit(bump, donate_argnums=0)
    outs = []
    for _ in range(2):
        old = _held(r)
        pointer = old.unsafe_buffer_pointer()
        outs.append(f(r, np.full(3, 2.0, np.float32)))
        assert old.is_deleted()
        assert _held(r).unsafe_buffer_pointer() == pointer     # XLA wrote in place
    expected_ref = _ones(jax)
    expected = [jax.jit(bump)(expected_ref, np.full(3, 2.0, np.float32)) for _ in range(2)]
    assert_trees_match((outs, r[...]), (expected, expected_ref[...]))


def test_a_donated_ref_that_is_only_read_keeps_working():
    def total(r):
        return r[...].sum()
    r, expected_ref = _ones(minijax), _ones(jax)
    old = _held(r)
    expected = jax.jit(total)(expected_ref)
    assert_trees_match(minijax.jit(total, donate_argnums=0)(r), expected)
    assert old.is_deleted()
    assert_trees_match(r[...], expected_ref[...])
    bump(r, np.ones(3, np.float32))                                # still a live ref
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 2.0))


def test_arrays_donated_beside_a_ref_are_deleted_as_in_jax():
    results = []
    for m in (minijax, jax):
        r, x = _ones(m), jnp.full(3, 2.0, jnp.float32)
        out = m.jit(bump, donate_argnums=1)(r, x)
        results.append((out, r[...], x.is_deleted()))
    assert results[0][2] and results[1][2]
    assert_trees_match(results[0][:2], results[1][:2])


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")   # y's, as in JAX
def test_donation_by_name_with_static_arguments_and_in_pytrees():
    def f(scale, state, x):
        state["r"][...] += x * scale
        return state["r"][...].sum() + state["y"].sum()
    r, y = _ones(minijax), jnp.ones(2, jnp.float32)
    old = _held(r)
    g = minijax.jit(f, static_argnums=0, donate_argnames="state")
    out = g(3.0, {"r": r, "y": y}, np.ones(3, np.float32))
    assert old.is_deleted() and not y.is_deleted()
    assert float(out) == 14.0
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 4.0))
    old = _held(r)                        # the same parameter passed by keyword
    g(3.0, state={"r": r, "y": y}, x=np.ones(3, np.float32))
    assert old.is_deleted()
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 7.0))


def test_refs_not_donated_keep_their_arrays():
    log = _ones(minijax)

    def f(r, x):
        log[...] += x                     # closed over: never donated
        r[...] += x
        return x * 2.0
    r = _ones(minijax)
    old_log, old_r, x = _held(log), _held(r), jnp.ones(3, jnp.float32)
    minijax.jit(f, donate_argnums=1)(r, x)
    assert x.is_deleted()
    assert not old_log.is_deleted() and not old_r.is_deleted()
    np.testing.assert_array_equal(np.asarray(log[...]), np.full(3, 2.0))
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 2.0))


def test_a_donating_call_that_fails_leaves_the_ref_and_its_array_alone():
    def bad(r, x):
        r[...] += 1.0
        return r[...] @ x                 # shape mismatch: f32[3] @ f32[2]
    r = _ones(minijax)
    old = _held(r)
    with pytest.raises(TypeError):
        minijax.jit(bad, donate_argnums=0)(r, np.ones(2, np.float32))
    assert not old.is_deleted() and _held(r) is old


def test_donation_is_ignored_under_transformations():
    g = minijax.jit(bump, donate_argnums=0)

    def loss(m, jitted, x):
        r = m.new_ref(x)
        return jitted(r, x).sum() + r[...].sum()
    x = np.full(3, 1.5, np.float32)
    assert_trees_match(minijax.grad(lambda x: loss(minijax, g, x))(x),
                       jax.grad(lambda x: loss(jax, jax.jit(bump), x))(x))


def test_array_donation_before_and_after_the_function_met_a_ref():
    def h(a, b):
        return a[...] * 2.0 + b           # takes an array or a ref
    f = minijax.jit(h, donate_argnums=0)
    x = jnp.ones(3, jnp.float32)
    assert_trees_match(f(x, 1.0), jnp.full(3, 3.0, jnp.float32))
    assert x.is_deleted()                 # the fast path: JAX's own donation
    r = _ones(minijax)
    old = _held(r)
    assert_trees_match(f(r, 1.0), jnp.full(3, 3.0, jnp.float32))
    assert old.is_deleted()
    x = jnp.ones(3, jnp.float32)          # from now on minijax's own path: still donated
    assert_trees_match(f(x, 1.0), jnp.full(3, 3.0, jnp.float32))
    assert x.is_deleted()


# -- ahead of time: `jit(f, donate_argnums=...).lower(...).compile()` donates as the call does

def test_an_ahead_of_time_executable_donates_a_ref_and_arrays():
    r = _ones(minijax)
    compiled = minijax.jit(bump, donate_argnums=(0, 1)).lower(r, jnp.ones(3)).compile()
    expected_ref = _ones(jax)
    for _ in range(2):
        old, x = _held(r), jnp.full(3, 2.0, jnp.float32)
        pointer = old.unsafe_buffer_pointer()
        out = compiled(r, x)
        assert old.is_deleted() and x.is_deleted()
        assert _held(r).unsafe_buffer_pointer() == pointer
        assert_trees_match(out, jax.jit(bump)(expected_ref, np.full(3, 2.0, np.float32)))
    assert_trees_match(r[...], expected_ref[...])


def test_an_ahead_of_time_executable_without_refs_donates_as_jax_does():
    deleted = []
    for m in (minijax, jax):
        compiled = m.jit(lambda x: x * 2.0, donate_argnums=0).lower(jnp.ones(3)).compile()
        x = jnp.ones(3, jnp.float32)
        np.testing.assert_array_equal(np.asarray(compiled(x)), np.full(3, 2.0))
        deleted.append(x.is_deleted())
    assert deleted == [True, True]
