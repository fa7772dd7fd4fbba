"""The eager calls that issue #18 measures stay on JAX's C++ dispatch (no Python of
JAX's in front of the executable), and the quick checks in front of it keep every
other call's behaviour.

A repeated call of a `minijax.jit` function, or of a jnp function that JAX jits
(`frontend/eager_jit.py`), should run in JAX's C++ dispatch. Under `jax.no_tracing()`
a call that goes through JAX's Python instead raises, which is what these tests look
for (benchmarks/eager_dispatch.py and jit_dispatch.py measure the time):

* a second shape or static value: the first call of each misses JAX's cache from
  the unchecked fast path, and JAX's C++ cache marks an entry whose miss raised as
  served by Python from then on, about ten times slower (`_JitCache.
  forget_refused_entry`);
* static arguments by keyword (`axis=0`), which go to JAX's cache as they are, with
  no hash of minijax's in front: an unhashable one is JAX's ValueError, and the call
  then takes the body's direct path, as before;
* `block`'s nested lists, the operands of its one program (`nested_lists`).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.nn as mnn
import minijax.numpy as mnp
from minijax.testing import assert_trees_match
from tests.program_counting import programs

no_tracing = getattr(jax, "no_tracing", None)
needs_no_tracing = pytest.mark.skipif(no_tracing is None,
                                      reason="this JAX has no jax.no_tracing")

_M = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
_V = np.linspace(-1, 1, 5, dtype=np.float32)


def _twice_then_in_cpp(calls):
    """Make each call twice (each signature's first call, then its entry coming back
    after the other's miss), then once more where JAX may not run its Python."""
    for _ in range(2):
        for call in calls:
            call()
    with no_tracing():
        return [call() for call in calls]


def _scaled(a, k):
    return a * k


def _doubled(a):
    return a * 2


SIGNATURES = {
    "jit, two shapes": lambda m, v: [lambda: minijax.jit(_doubled)(m),
                                     lambda: minijax.jit(_doubled)(v)],
    "jit, two static values": lambda m, v: [
        lambda: minijax.jit(_scaled, static_argnums=1)(m, 2),
        lambda: minijax.jit(_scaled, static_argnums=1)(m, 3)],
    "jnp.exp, two shapes": lambda m, v: [lambda: mnp.exp(m), lambda: mnp.exp(v)],
    "nanmean, axis by keyword then by position": lambda m, v: [
        lambda: mnp.nanmean(m, axis=0), lambda: mnp.nanmean(m, 0)],
    "nanmean, two axes": lambda m, v: [lambda: mnp.nanmean(m, axis=0),
                                       lambda: mnp.nanmean(m, axis=1, keepdims=True)],
    "logmeanexp, two shapes": lambda m, v: [lambda: mnn.logmeanexp(m, axis=1),
                                            lambda: mnn.logmeanexp(v, axis=0)],
    "polyfit, two degrees": lambda m, v: [lambda: mnp.polyfit(v, v * v, 2),
                                          lambda: mnp.polyfit(v, v * v, 1)],
    "block, two nestings": lambda m, v: [lambda: mnp.block([[m, m], [m, m]]),
                                         lambda: mnp.block([v, v, v])],
}


@needs_no_tracing
@pytest.mark.parametrize("name", SIGNATURES)
def test_every_signature_is_served_by_jax_cpp_dispatch(name):
    m, v = jnp.asarray(_M), jnp.asarray(_V)
    first, second = SIGNATURES[name](m, v)
    got = _twice_then_in_cpp([first, second])
    with minijax.disable_jit():
        expected = [first(), second()]
    assert_trees_match(got, expected, rtol=1e-5)


@needs_no_tracing
def test_the_other_functions_keep_their_entries():
    # Dropping one function's C++ entries after its miss leaves the others' alone.
    m, v = jnp.asarray(_M), jnp.asarray(_V)
    mnp.sin(v)
    with programs("lowered") as made:
        _twice_then_in_cpp([lambda: mnp.cos(m), lambda: mnp.cos(v)])
        with no_tracing():
            mnp.sin(v)
    assert len(made) == 2        # cos's two programs, nothing again for sin


def test_keyword_statics_make_one_program_and_none_again():
    m = jnp.asarray(_M[:2])     # a shape no other test here uses
    with programs("lowered") as first:
        mnp.nanmean(m, axis=1, keepdims=True)
    with programs("lowered") as again:
        for _ in range(3):
            mnp.nanmean(m, axis=1, keepdims=True)
    assert (len(first), len(again)) == (1, 0)


def test_unhashable_statics_after_a_cached_call_take_the_direct_path():
    m = jnp.asarray(_M)
    mnp.nanmean(m, axis=0)                    # the fast path exists now
    for _ in range(2):
        # JAX's own jit refuses a list as a static argument (a ValueError); minijax
        # runs the body, as it did before the fast path.
        assert_trees_match(mnp.nanmean(m, axis=[0]), jnp.nanmean(m, axis=(0,)))
        assert_trees_match(mnp.nanmean(m, axis=jnp.asarray(1)), jnp.nanmean(m, axis=1))
        assert_trees_match(mnp.trace(m, jnp.asarray(1)), jnp.trace(m, 1))


def test_operands_by_keyword_are_still_checked():
    m = jnp.asarray(_M)
    mnp.nanmean(m, axis=0)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        mnp.nanmean(m, axis=0, where=[True, False, True, False])
    assert_trees_match(mnp.nanmean(m, axis=0, where=m > 1),
                       jnp.nanmean(m, axis=0, where=m > 1))
    with pytest.raises(TypeError, match="unexpected keyword argument 'axs'"):
        mnp.nanmean(m, axs=0)


def test_block_leaves_are_checked_as_operands():
    m, i8 = jnp.asarray(_M), jnp.ones((1, 2), jnp.int8)
    for _ in range(2):
        # A Python int outside 0..127 is no operand (the body sees it), one inside is.
        assert_trees_match(mnp.block([[i8, 200]]), jnp.block([[i8, 200]]))
        assert_trees_match(mnp.block([[i8, 5]]), jnp.block([[i8, 5]]))
        assert_trees_match(mnp.block([[np.ones((3, 1), np.float32), m]]),
                           jnp.block([[np.ones((3, 1), np.float32), m]]))
        with pytest.raises(ValueError, match="list at the top cannot be empty"):
            mnp.block([])
        with pytest.raises(ValueError, match=r"list at \(0,\) cannot be empty"):
            mnp.block([[]])
        with pytest.raises(TypeError, match="a ref is not an array"):
            mnp.block([[minijax.new_ref(m), m]])
    # Under a transformation the nested lists of tracers are one inline call too,
    # whose transformed body is cached: a repeat compiles nothing.
    def loss(np_, a):
        return np_.sum(np_.block([[a, a], [a, a]]) ** 2)
    expected = jax.grad(lambda a: loss(jnp, a))(m)
    for compiled_again in (True, False):
        with programs("lowered") as made:
            assert_trees_match(minijax.grad(lambda a: loss(mnp, a))(m), expected)
        assert bool(made) == compiled_again


def test_one_operand_functions_keep_their_signature_and_errors():
    import inspect
    assert str(inspect.signature(mnp.sin)) == "(x, /)"
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'x'"):
        mnp.sin()
    with pytest.raises(TypeError, match="positional-only arguments passed as keyword"):
        mnp.sin(x=_V)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        mnp.sin(_V, _V)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        mnp.sin([1.0, 2.0])
    assert_trees_match(mnp.sin(3), jnp.sin(3))          # a weak int operand
    assert_trees_match(mnp.sin(300), jnp.sin(300))      # passed to the body
