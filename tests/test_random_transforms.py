"""Keys are values like any other: programs that use `minijax.random` under vmap,
loops, refs and differentiation, their text form, the NumPy evaluator, and errors.
Every result is compared with `jax.random` under the same transformation.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
import minijax.random as mr
from minijax.backends.reference import eval_closed_jaxpr
from minijax.ir import dumps, loads, ParseError, VerifierError, verify_jaxpr
from minijax.ir.types import keys_as_numpy
from minijax.testing import assert_trees_match

from tests.test_random import assert_same_bits

jr = jax.random


def _draw(random):
    """A small program drawing from a key: the same code for both libraries."""
    def draw(key, scale):
        k1, k2 = random.split(key)
        return scale * random.normal(k1, (3,)) + random.uniform(k2, (3,))
    return draw


# -- vmap ----------------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["typed", "raw"])
def test_vmap_over_split_keys(style):
    keys = jr.split(jr.key(0) if style == "typed" else jr.PRNGKey(0), 4)
    scale = np.float32(2.0)
    assert_same_bits(minijax.vmap(_draw(mr), in_axes=(0, None))(keys, scale),
                     jax.vmap(_draw(jr), in_axes=(0, None))(keys, scale))
    assert_same_bits(minijax.jit(minijax.vmap(mr.split))(keys), jax.jit(jax.vmap(jr.split))(keys))


def test_vmap_keys_on_a_later_axis_and_samplers_with_loops():
    keys = jr.split(jr.key(1), (2, 3))
    f = lambda m: (lambda k: m.random.gamma(k, np.float32([0.5, 2.0])))
    assert_same_bits(minijax.vmap(minijax.vmap(f(minijax)), in_axes=1)(keys),
                     jax.vmap(jax.vmap(f(jax)), in_axes=1)(keys))
    g = lambda m: (lambda k: m.random.permutation(k, 5))
    assert_same_bits(minijax.vmap(minijax.vmap(g(minijax)))(keys), jax.vmap(jax.vmap(g(jax)))(keys))


def test_vmap_over_seeds_and_fold_in_data():
    data = np.arange(4, dtype=np.int32)
    f = lambda m: (lambda d: m.random.key_data(m.random.fold_in(m.random.key(7), d)))
    assert_same_bits(minijax.vmap(f(minijax))(data), jax.vmap(f(jax))(data))


# -- loops and refs --------------------------------------------------------------------------

def _scan_program(m):
    def step(key, x):
        key, sub = m.random.split(key)
        return key, x + m.random.normal(sub, ())
    return lambda key, xs: m.lax.scan(step, key, xs)


@pytest.mark.parametrize("style", ["typed", "raw"])
def test_scan_carries_a_key(style):
    key = jr.key(3) if style == "typed" else jr.PRNGKey(3)
    xs = np.arange(4, dtype=np.float32)
    assert_same_bits(minijax.jit(_scan_program(minijax))(key, xs),
                     jax.jit(_scan_program(jax))(key, xs))
    assert_same_bits(_scan_program(minijax)(key, xs), _scan_program(jax)(key, xs))


def test_fori_loop_and_while_loop_carry_keys():
    def fori(m):
        def body(i, carry):
            key, total = carry
            key, sub = m.random.split(key)
            return key, total + m.random.uniform(sub, (2,))
        return lambda key: m.lax.fori_loop(0, 3, body, (key, np.zeros(2, np.float32)))
    assert_same_bits(fori(minijax)(jr.key(4)), fori(jax)(jr.key(4)))
    assert_same_bits(minijax.jit(fori(minijax))(jr.PRNGKey(4)), jax.jit(fori(jax))(jr.PRNGKey(4)))


def test_cond_chooses_between_keys():
    def f(m):
        return lambda pred, key: m.lax.cond(pred, lambda k: m.random.split(k)[0],
                                            lambda k: m.random.fold_in(k, 1), key)
    for pred in (True, False):
        assert_same_bits(minijax.jit(f(minijax))(pred, jr.key(5)), jax.jit(f(jax))(pred, jr.key(5)))


def test_keys_in_refs():
    def f(m):
        def run(keys):
            ref = m.new_ref(keys)
            ref[1] = m.random.fold_in(ref[0], 3)
            return ref[...], m.random.normal(ref[2], (2,))
        return run
    keys = jr.split(jr.key(6), 3)
    assert_same_bits(minijax.jit(f(minijax))(keys), jax.jit(f(jax))(keys))
    ref = minijax.new_ref(keys)          # an eager ref of keys
    ref[0] = mr.key(9)
    assert_same_bits(ref[0], jr.key(9))
    assert "dtype=key<fry>" in repr(ref)


def test_shape_operations_move_whole_keys():
    keys = jr.split(jr.key(7), 4)
    f = lambda m: (lambda ks, i: (ks[i], ks[1:3], ks[::-1], m.numpy.where(i > 1, ks[0], ks[1]),
                                  m.numpy.concatenate([ks, ks]), m.numpy.stack([ks[0], ks[1]]),
                                  ks.reshape(2, 2).T))
    assert_same_bits(minijax.jit(f(minijax))(keys, 2), jax.jit(f(jax))(keys, 2))
    assert_same_bits(f(minijax)(keys, 2), f(jax)(keys, 2))      # eagerly, on jax.Arrays
    closed = minijax.make_jaxpr(f(minijax))(keys, 2)
    for ours, theirs in zip(eval_closed_jaxpr(closed, keys_as_numpy(keys), np.int32(2)),
                            jax.jit(f(jax))(keys, 2)):
        np.testing.assert_array_equal(ours["fry"], jr.key_data(theirs))


def test_closed_over_keys():
    key = jr.key(8)
    f = lambda m: (lambda x: x * m.random.normal(key, (2,)))
    assert_same_bits(minijax.jit(f(minijax))(np.float32(3)), jax.jit(f(jax))(np.float32(3)))


# -- differentiation -----------------------------------------------------------------------------
# The derivatives are compared to a tolerance, so JAX's side runs as one jitted program.

def test_grad_with_respect_to_floats_next_to_a_key():
    key, scale = jr.key(10), np.float32(1.5)
    loss = lambda m: (lambda key, s: m.numpy.sum(_draw(m.random)(key, s) ** 2))
    assert_trees_match(minijax.grad(loss(minijax), argnums=1)(key, scale),
                       jax.jit(jax.grad(loss(jax), argnums=1))(key, scale))
    assert_trees_match(minijax.vmap(minijax.grad(loss(minijax), argnums=1), in_axes=(0, None))(
        jr.split(key, 3), scale), jax.jit(jax.vmap(jax.grad(loss(jax), argnums=1),
                                                   in_axes=(0, None)))(
        jr.split(key, 3), scale))


def test_a_key_s_tangent_is_float0():
    key = jr.key(11)
    f = lambda m: (lambda k, x: (m.random.split(k), x * m.random.uniform(k)))
    tangents = (np.zeros((), jax.dtypes.float0), np.float32(1))
    (out_key, y), (t_key, t_y) = minijax.jvp(f(minijax), (key, np.float32(2)), tangents)
    (out_key_j, y_j), (t_key_j, t_y_j) = jax.jvp(f(jax), (key, np.float32(2)), tangents)
    assert_same_bits(out_key, out_key_j)
    assert t_key.dtype == t_key_j.dtype == jax.dtypes.float0 and t_key.shape == t_key_j.shape
    assert_trees_match((y, t_y), (y_j, t_y_j))
    g = minijax.grad(lambda k, x: x * mr.normal(k), argnums=0, allow_int=True)(key, np.float32(2))
    assert g.dtype == jax.dtypes.float0


def test_checkpoint_and_linearize_of_programs_with_keys():
    key, x = jr.key(3), np.float32([1, 2, 3])

    def f(m):
        def loss(x, k):
            k1, k2 = m.random.split(k)
            return m.numpy.sum(x * m.random.normal(k1, (3,))
                               + m.random.uniform(k2, (3,), minval=x[0]))
        return loss
    assert_trees_match(minijax.grad(minijax.checkpoint(f(minijax)))(x, key),
                       jax.jit(jax.grad(jax.checkpoint(f(jax))))(x, key), rtol=1e-5, atol=1e-6)
    _, lin = minijax.linearize(lambda x: f(minijax)(x, key), x)   # the key is closed over
    _, lin_jax = jax.linearize(lambda x: f(jax)(x, key), x)
    assert_trees_match(lin(x), lin_jax(x))


def test_reparametrized_samplers_differentiate_like_jax():
    key = jr.key(12)
    f = lambda m: (lambda lo, hi: m.numpy.sum(m.random.uniform(key, (4,), minval=lo, maxval=hi)
                                              + m.random.truncated_normal(key, lo, hi, (4,))))
    lo, hi = np.float32(-1), np.float32(2)
    assert_trees_match(minijax.grad(f(minijax), argnums=(0, 1))(lo, hi),
                       jax.jit(jax.grad(f(jax), argnums=(0, 1)))(lo, hi))


def test_gamma_family_differentiates_implicitly_like_jax():
    key = jr.key(13)
    a = np.float32([0.3, 1.0, 4.5])
    f = lambda m: (lambda a: m.numpy.sum(m.random.gamma(key, a))
                   + m.numpy.sum(m.random.beta(key, a, 2.0))
                   + m.numpy.sum(m.random.dirichlet(key, a) ** 2))
    # JAX's side as one jitted program where the comparison has a tolerance (not its
    # eager grad's three rejection-loop programs and a dozen small ones).
    assert_trees_match(minijax.grad(f(minijax))(a), jax.jit(jax.grad(f(jax)))(a), rtol=1e-5)
    g = lambda m: (lambda a: m.numpy.sum(m.random.loggamma(key, a, (2, 3))))
    jax_grad_g = jax.jit(jax.grad(g(jax)))
    assert_trees_match(minijax.jit(minijax.grad(g(minijax)))(a), jax_grad_g(a), rtol=1e-5)
    # vmap's rows against JAX's gradient at each row (its compiled program again, where a
    # jax.vmap of it would compile the rejection loops once more, batched).
    assert_trees_match(minijax.vmap(minijax.grad(g(minijax)))(np.stack([a, a + 1])),
                       np.stack([jax_grad_g(a), jax_grad_g(a + 1)]), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="random_gamma_grad"):
        minijax.grad(minijax.grad(lambda a: mr.gamma(key, a)))(np.float32(2.0))


# -- the text form and the NumPy evaluator -------------------------------------------------------

def test_text_form_shows_and_round_trips_keys():
    closed = minijax.make_jaxpr(lambda k, s: _draw(mr)(k, s))(jr.key(0), np.float32(1))
    text = dumps(closed)
    assert "key<fry>[]" in text and "threefry2x32" in text and "random_wrap" in text
    assert dumps(loads(text)) == text
    # A closed-over key is a constant written by its two words.
    key = jr.key(42)
    closed = minijax.make_jaxpr(lambda x: x + mr.normal(key))(np.float32(0))
    text = dumps(closed)
    assert "= fry(0, 42)" in text
    again = loads(text)
    assert dumps(again) == text
    assert_same_bits(jr.key_data(again.consts[0]), jr.key_data(key))


def test_text_form_rejects_bad_key_constants():
    with pytest.raises(ParseError, match=r"a key is written fry\(WORD, WORD\)"):
        loads("{ lambda a:key<fry>[] = 3; . let  in (a,) }")
    with pytest.raises(ParseError, match="out of bounds"):
        loads("{ lambda a:key<fry>[2] = [fry(1, 2), fry(-1, 3)]; . let  in (a,) }")
    negated = loads("{ lambda ; a:key<fry>[]. let\n    b:key<fry>[] = neg a\n  in (b,) }")
    with pytest.raises(VerifierError, match="does not accept key arrays"):
        verify_jaxpr(negated)                     # arithmetic on keys does not verify


def test_the_numpy_evaluator_agrees():
    closed = minijax.make_jaxpr(
        lambda k, s: (_draw(mr)(k, s), mr.split(k, 3), mr.randint(k, (4,), 0, 9),
                      mr.permutation(k, 6)))(jr.key(13), np.float32(2))
    ours = eval_closed_jaxpr(closed, keys_as_numpy(jr.key(13)), np.float32(2))
    draws, keys, ints, perm = jax.jit(lambda k, s: (_draw(jr)(k, s), jr.split(k, 3),
                                                    jr.randint(k, (4,), 0, 9),
                                                    jr.permutation(k, 6)))(jr.key(13), 2.0)
    np.testing.assert_allclose(ours[0], draws, rtol=2e-6)   # erf_inv: float64 in NumPy
    np.testing.assert_array_equal(ours[1]["fry"], jr.key_data(keys))
    np.testing.assert_array_equal(ours[2], ints)
    np.testing.assert_array_equal(ours[3], perm)


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.zeros(3, np.uint32), np.zeros(2, np.float32), 1.5],
                         ids=["u32[3]", "f32[2]", "float"])
def test_bad_raw_keys_raise_type_error_like_jax(bad):
    with pytest.raises(TypeError):
        jr.normal(bad, (2,))
    with pytest.raises(TypeError, match="key data"):
        mr.normal(bad, (2,))


def test_batched_keys_need_vmap():
    keys = mr.split(mr.key(0))
    for fn in (lambda k: mr.normal(k), lambda k: mr.split(k), lambda k: mr.fold_in(k, 1)):
        with pytest.raises(ValueError, match="single key"):
            fn(keys)
    with pytest.raises(ValueError, match="single key"):
        mr.normal(np.zeros((2, 2), np.uint32))


def test_bad_seeds_and_dtypes():
    with pytest.raises(TypeError, match="integer"):
        mr.key(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        mr.key(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="PRNG key"):
        mr.key(mr.key(0))
    with pytest.raises(ValueError, match="float dtype"):
        mr.uniform(mr.key(0), (2,), np.int32)
    with pytest.raises(ValueError, match="unsigned"):
        mr.bits(mr.key(0), (2,), np.int32)
    with pytest.raises(TypeError, match="integer dtypes"):
        mr.randint(mr.key(0), (2,), 0, 3, np.float32)
    with pytest.raises(TypeError, match="floating"):
        mr.bernoulli(mr.key(0), np.int32(1))
    with pytest.raises(OverflowError):
        mr.fold_in(mr.key(0), -3)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        mr.bernoulli(mr.key(0), np.float32([0.1, 0.2]), (3,))
    with pytest.raises(ValueError, match="larger sample"):
        mr.choice(mr.key(0), 3, (4,), replace=False)


def test_arithmetic_on_keys_is_refused():
    with pytest.raises(TypeError, match="key arrays"):
        minijax.jit(lambda k: jnp.add(mr.key_data(k), 1) + k)(mr.key(0))
    with pytest.raises(TypeError, match="key arrays"):
        minijax.make_jaxpr(lambda k: minijax.lax.neg(k))(mr.key(0))


def test_stop_gradient_passes_keys_through():
    # `stop_gradient` is the one elementwise primitive declared with accepts_keys.
    from minijax.ir import elementwise
    assert elementwise.stop_gradient_p.accepts_keys
    assert not elementwise.neg_p.accepts_keys
    f = lambda k: mr.uniform(minijax.lax.stop_gradient(k), (2,))
    g = lambda k: jax.random.uniform(jax.lax.stop_gradient(k), (2,))
    np.testing.assert_array_equal(minijax.jit(f)(mr.key(3)), g(jax.random.key(3)))
    np.testing.assert_array_equal(f(mr.key(3)), g(jax.random.key(3)))
