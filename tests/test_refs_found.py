"""Regression tests for ref bugs found by generating random programs (issue 17).

Each program is written once against a library namespace `m` (minijax or jax), run
through both and compared; where JAX 0.10.2 is wrong the test pins the registry entry
(minijax/divergences/refs_found.py)."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match
from tests.test_divergences import pins

X = np.float32(1.5)
T = np.float32(1.0)
LIBS = {"minijax": (minijax, mjnp), "jax": (jax, jjnp)}


def _match(mine, theirs):
    assert_trees_match(mine, theirs)


# -- 1. a ref created inside a while_loop body, under differentiation --------------------

def loop_ref_read_back(m, x):
    def body(c):
        i, v = c
        r = m.new_ref(v)
        r[...] = r[...] * 2.0
        return i + 1, m.freeze(r)
    return m.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def loop_ref_unused(m, x):
    def body(c):
        i, v = c
        m.new_ref(v)
        return i + 1, v * 2.0
    return m.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def loop_ref_zero_trips(m, x):
    def body(c):
        i, v = c
        r = m.new_ref(v)
        r[...] += v
        return i + 1, r[...]
    return m.lax.while_loop(lambda c: c[0] < 0, body, (0, x))[1]


def loop_ref_beside_invariant(m, x):
    def body(c):
        i, v, w = c
        r = m.new_ref(v)
        r[...] += w
        return i + 1, r[...], w
    return m.lax.while_loop(lambda c: c[0] < 2, body, (0, x, x * 3.0))[1]


LOOP_PROGRAMS = [loop_ref_read_back, loop_ref_unused, loop_ref_zero_trips,
                 loop_ref_beside_invariant]


def _both(program):
    return (lambda x: program(minijax, x)), (lambda x: program(jax, x))


@pytest.mark.parametrize("program", LOOP_PROGRAMS)
def test_jvp_and_linearize_of_a_loop_making_refs(program):
    mine, theirs = _both(program)
    expected = jax.jvp(theirs, (X,), (T,))
    _match(minijax.jvp(mine, (X,), (T,)), expected)
    primal, f_lin = minijax.linearize(mine, X)
    assert isinstance(primal, jax.Array)            # not an internal tracer
    _match((primal, f_lin(T)), expected)
    _match(minijax.jit(lambda x: minijax.linearize(mine, x)[1](T))(X), expected[1])
    _match(minijax.jacfwd(mine)(X), expected[1])


@pins("jax_jacfwd_of_while_with_internal_ref_fails")
def test_jax_jacfwd_of_while_with_internal_ref_fails():
    mine, theirs = _both(loop_ref_read_back)
    with pytest.raises(ValueError, match="out_axes"):
        jax.jacfwd(theirs)(X)
    _match(minijax.jacfwd(mine)(X), jax.jvp(theirs, (X,), (T,))[1])


@pytest.mark.parametrize("program", LOOP_PROGRAMS[:3])
@pytest.mark.parametrize("how", ["grad", "vjp", "jacrev"])
def test_reverse_mode_of_a_loop_making_refs_names_the_loop(program, how):
    mine = lambda x: program(minijax, x)
    transform = {"grad": minijax.grad, "jacrev": minijax.jacrev,
                 "vjp": lambda f: (lambda x: minijax.vjp(f, x)[1](T))}[how]
    with pytest.raises(minijax.MinijaxError, match="Reverse-mode differentiation.*"
                       "while_loop.*lax.scan"):
        transform(mine)(X)


# -- 2. vmap of freeze(new_ref(...)) of a value the same for every example ----------------

def fresh_zeros(m, jnp, x):
    return m.freeze(m.new_ref(jnp.zeros_like(x)))


def fresh_then_accumulate(m, jnp, x):
    r = m.new_ref(jnp.zeros_like(x))
    r[...] += x
    return m.freeze(r)


@pytest.mark.parametrize("program", [fresh_zeros, fresh_then_accumulate])
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_freezes_a_ref_it_made(program, jit):
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    outs = []
    for m, jnp in LIBS.values():
        f = m.vmap(lambda x: program(m, jnp, x))
        outs.append((m.jit(f) if jit else f)(xs))
    _match(*outs)


def test_vmap_frees_a_ref_it_made():
    # (JAX 0.10.2 has no batching rule for free_ref at all.)
    def f(x):
        minijax.free_ref(minijax.new_ref(mjnp.ones(2)))
        return x * 2.0
    _match(minijax.vmap(f)(np.ones(3, np.float32)), np.full(3, 2.0, np.float32))


def test_vmap_still_refuses_to_freeze_a_ref_from_outside():
    r = minijax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(minijax.RefError, match="cannot freeze.*passed in"):
        minijax.vmap(lambda x: minijax.freeze(r) + x)(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros(3))


# -- 3. a checkpoint-ed body writing a ref made earlier by the differentiated function -----

def checkpoint_writes_earlier_ref(m, x):
    r = m.new_ref(x)

    @m.checkpoint
    def g(y):
        r[...] = r[...] * y
        return m.numpy.sin(y) if m is minijax else jjnp.sin(y)
    return g(x) + r[...]


def checkpoint_accumulates_earlier_ref(m, x):
    r = m.new_ref(x * x)
    s = m.new_ref(np.float32(0.0))

    @m.checkpoint
    def g(y):
        r[...] += y * 3.0
        s[...] = y                      # a ref only written: its entry value unused
        return y * y
    return g(x) * r[...] + s[...]


CHECKPOINT_PROGRAMS = [checkpoint_writes_earlier_ref, checkpoint_accumulates_earlier_ref]


@pytest.mark.parametrize("program", CHECKPOINT_PROGRAMS)
def test_checkpoint_writing_an_earlier_ref_under_forward_mode(program):
    mine, theirs = _both(program)
    expected = jax.jvp(theirs, (X,), (T,))
    _match(minijax.jvp(mine, (X,), (T,)), expected)
    primal, f_lin = minijax.linearize(mine, X)
    _match((primal, f_lin(T)), expected)


@pytest.mark.parametrize("program", CHECKPOINT_PROGRAMS)
def test_checkpoint_writing_an_earlier_ref_under_reverse_mode(program):
    mine, theirs = _both(program)
    expected = jax.jvp(theirs, (X,), (T,))      # a scalar function: d/dx both ways
    primal, pullback = minijax.vjp(mine, X)
    _match((primal, pullback(T)), (expected[0], (expected[1],)))
    _match(minijax.grad(mine)(X), expected[1])
    _match(minijax.jit(minijax.grad(mine))(X), expected[1])
    _match(minijax.jacrev(mine)(X), expected[1])
    second = jax.jvp(lambda y: jax.jvp(theirs, (y,), (T,))[1], (X,), (T,))[1]
    _match(minijax.grad(minijax.grad(mine))(X), second)


@pins("jax_linearize_of_checkpoint_writing_earlier_ref_is_wrong")
def test_jax_linearize_of_checkpoint_writing_earlier_ref_is_wrong():
    mine, theirs = _both(checkpoint_writes_earlier_ref)
    right = jax.jvp(theirs, (X,), (T,))[1]
    _, their_lin = jax.linearize(theirs, X)
    assert not np.allclose(their_lin(T), right)
    with pytest.raises(AttributeError, match="ValAccum"):
        jax.grad(theirs)(X)
    _match(minijax.linearize(mine, X)[1](T), right)
    _match(minijax.grad(mine)(X), right)


def test_checkpoint_writing_a_differentiated_value_into_an_outside_ref_is_an_error():
    r = minijax.new_ref(np.float32(2.0))

    @minijax.checkpoint
    def g(y):
        r[...] = r[...] * y
        return y

    with pytest.raises(minijax.MinijaxError, match="differentiated value.*stop_gradient"):
        minijax.grad(lambda x: g(x) * 2.0)(X)
    np.testing.assert_array_equal(np.asarray(r[...]), np.float32(2.0))


# -- 4. grad through a while_loop whose body returns part of the carry unchanged ------------

def loop_with_invariant_carry(m, x):
    def body(c):
        i, a, b = c
        return i + 1, a * 2.0, b
    _, _, b = m.lax.while_loop(lambda c: c[0] < 3, body, (0, x, x * 3.0))
    return b * 2.0


def loop_reading_invariant_carry(m, x):
    def body(c):
        i, a, b = c
        return i + 1, a + b, b
    _, a, b = m.lax.while_loop(lambda c: c[0] < 3, body, (0, np.float32(0.0), x * x))
    return b * 2.0 + m.lax.stop_gradient(a)


@pytest.mark.parametrize("program", [loop_with_invariant_carry, loop_reading_invariant_carry])
def test_reverse_mode_through_the_invariant_part_of_a_while_loop(program):
    mine, theirs = _both(program)
    _match(minijax.grad(mine)(X), jax.grad(theirs)(X))
    _match(minijax.jit(minijax.grad(mine))(X), jax.jit(jax.grad(theirs))(X))
    primal, pullback = minijax.vjp(mine, X)
    _match((primal, pullback(T)), (theirs(X), jax.vjp(theirs, X)[1](T)))
    _match(minijax.jacrev(mine)(X), jax.jacrev(theirs)(X))
    _match(minijax.jvp(mine, (X,), (T,)), jax.jvp(theirs, (X,), (T,)))
    xs = np.array([1.0, 2.0], np.float32)
    _match(minijax.vmap(minijax.grad(mine))(xs), jax.vmap(jax.grad(theirs))(xs))


def test_reverse_mode_through_the_changing_part_of_a_while_loop_is_still_an_error():
    def f(x):
        def body(c):
            i, a, b = c
            return i + 1, a * b, b
        _, a, b = minijax.lax.while_loop(lambda c: c[0] < 3, body, (0, x, x * 3.0))
        return a + b
    with pytest.raises(minijax.MinijaxError, match="Reverse-mode.*while_loop"):
        minijax.grad(f)(X)


def test_dce_drops_effects_on_an_internal_ref_nobody_reads_but_keeps_the_rest():
    from minijax.transforms import dce_jaxpr

    def f(x, outside):
        mine = minijax.new_ref(x)
        mine[...] = x * 2.0                       # never read again: invisible
        outside[...] = x                          # visible to the caller
        kept = minijax.new_ref(x)
        kept[...] += 1.0
        return kept[...]
    jaxpr = minijax.make_jaxpr(f)(X, minijax.new_ref(X)).jaxpr
    pruned = dce_jaxpr(jaxpr).jaxpr
    prims = [e.primitive.name for e in pruned.eqns]
    assert prims.count("new_ref") == 1 and "mul" not in prims
    assert sum(1 for e in pruned.eqns if e.primitive.name == "swap"
               and e.inputs[0] is jaxpr.invars[1]) == 1
    assert prims.count("swap") == 2          # outside, and the kept ref's increment
