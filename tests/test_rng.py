"""`lax.rng_bit_generator`, `lax.rng_uniform`, and `minijax.random`'s 'rbg' and
'unsafe_rbg' keys, against real JAX: bit for bit eagerly, under `jit` and `vmap`, in
the NumPy reference evaluator, and through the text form and the JAX bridge. The
primitives' rule-by-rule checks are in test_reference.py (reference_cases.py).
"""
from __future__ import annotations

import jax
import jax.random as jr
import numpy as np
import pytest

import minijax
import minijax.random as mr
from minijax import lax
from minijax.backends.reference import eval_closed_jaxpr, reference_rules
from minijax.interop import trace_with_jax
from minijax.ir import dumps, loads, verify_jaxpr
from minijax.ir import random_primitives as R
from minijax.ir.types import keys_as_numpy
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr

# The last two words are the generator's counter: all ones, so it wraps around.
KEYS = np.array([[1, 2, 3, 4], [0xDEADBEEF, 7, 0xFFFFFFFF, 0xFFFFFFFF]], np.uint32)
ALGORITHMS = [lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_THREE_FRY,
              lax.RandomAlgorithm.RNG_PHILOX]
IMPLS = ["rbg", "unsafe_rbg"]


def _is_keys(x) -> bool:
    return str(getattr(x, "dtype", "")).startswith("key<")


def _same(ours, theirs):
    """Equal trees, bit for bit with dtypes and weak types; keys by impl and words."""
    # (The evaluators return lists where the functions return tuples.)
    ours, our_tree = jax.tree.flatten(list(ours) if isinstance(ours, tuple) else ours)
    theirs, their_tree = jax.tree.flatten(list(theirs) if isinstance(theirs, tuple) else theirs)
    assert our_tree == their_tree
    for mine, want in zip(ours, theirs):
        if _is_keys(want):
            assert str(mine.dtype) == str(want.dtype)
            mine, want = jr.key_data(mine), jr.key_data(want)
        assert_trees_match(mine, want)


# -- rng_bit_generator ---------------------------------------------------------------------

def test_bit_generator_matches_xla_bit_for_bit():
    # Shapes that exercise each layout: a scalar, an odd shape (Threefry halves its
    # longest axis), a unit axis, an odd length (Philox's last block cut short). Every
    # algorithm and shape is one program per library: one compile each, not one per
    # algorithm.
    def draws(lib):
        return lambda k: [lib.lax.rng_bit_generator(k, shape, dtype, algorithm)
                          for algorithm in ALGORITHMS
                          for shape, dtype in [((), np.uint32), ((3, 5), np.uint8),
                                               ((4, 1, 3), np.uint16), ((7,), np.uint32)]]
    ours, theirs = draws(minijax), draws(jax)
    closed = minijax.make_jaxpr(ours)(KEYS[0])
    our_jit, their_jit = minijax.jit(ours), jax.jit(theirs)
    for key in KEYS:
        want = their_jit(key)
        _same(our_jit(key), want)
        # The NumPy evaluator computes XLA's expansion itself.
        _same(eval_closed_jaxpr(closed, key), jax.tree.leaves(want))
    # Eagerly each draw is a program of its own. JAX's eager draw runs the same XLA
    # operation as its jitted one, so the last key's values above stand for it.
    _same(ours(KEYS[-1]), want)


@pytest.mark.parametrize("algorithm", [1, 2])
def test_bit_generator_64_bit_words_in_the_reference_rule(algorithm):
    # minijax's values are 32-bit (x64 off), so only the NumPy rule meets 64-bit words.
    rule = reference_rules[R.rng_bit_generator_p]
    with jax.enable_x64(True):
        for key in KEYS:
            theirs = jax.lax.rng_bit_generator(key, (2, 3), np.uint64, algorithm)
            ours = rule(key, shape=(2, 3), dtype=np.dtype(np.uint64), algorithm=algorithm)
            for mine, want in zip(ours, theirs):
                np.testing.assert_array_equal(mine, want)
                assert mine.dtype == want.dtype


def test_bit_generator_under_vmap_draws_from_the_first_key_as_jax():
    # JAX's batching draws once, from the first key, with the batch axis leading the
    # bits; only the first key advances.
    keys = np.concatenate([KEYS, KEYS[:1] + 5])
    for in_axes, batched in [(0, keys), (1, keys.T)]:
        ours = minijax.vmap(lambda k: lax.rng_bit_generator(k, (2, 3)), in_axes)(batched)
        theirs = jax.vmap(lambda k: jax.lax.rng_bit_generator(k, (2, 3)), in_axes)(batched)
        _same(ours, theirs)
    # an unbatched key stays unbatched
    ours = minijax.vmap(lambda x: lax.rng_bit_generator(KEYS[0], (4,))[1] + x)(KEYS)
    theirs = jax.vmap(lambda x: jax.lax.rng_bit_generator(KEYS[0], (4,))[1] + x)(KEYS)
    _same(ours, theirs)


def test_bit_generator_under_grad_is_a_constant():
    def f(lib):
        def g(x):
            bits = lib.lax.rng_bit_generator(KEYS[1], (3,))[1]
            return (x * bits.astype(np.float32)).sum()
        return g
    _same(minijax.grad(f(minijax))(np.float32(2.0)), jax.grad(f(jax))(np.float32(2.0)))
    _same(minijax.value_and_grad(f(minijax))(np.float32(2.0)),
          jax.value_and_grad(f(jax))(np.float32(2.0)))


def test_bit_generator_arguments():
    key = KEYS[0]
    _same(lax.rng_bit_generator(key, 4), jax.lax.rng_bit_generator(key, 4))   # an int shape
    _same(lax.rng_bit_generator(key, [2, 3], "uint16", 2),
          jax.lax.rng_bit_generator(key, [2, 3], "uint16", 2))
    for lib in (lax, jax.lax):
        for dtype in (np.float32, np.int32):
            with pytest.raises(TypeError, match="rng_bit_generator: unsupported dtype"):
                lib.rng_bit_generator(key, (2,), dtype)
        with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
            lib.rng_bit_generator(key, (2.0,))
    # A key that is not u32[4]: JAX fails only when it lowers (an AssertionError);
    # minijax says what is wrong when it traces.
    with pytest.raises(TypeError, match="the key must be uint32"):
        lax.rng_bit_generator(key[:2], (2,))
    with pytest.raises(TypeError, match="the key must be uint32"):
        lax.rng_bit_generator(key.astype(np.int32), (2,))
    with pytest.raises(Exception):
        jax.lax.rng_bit_generator(key[:2], (2,))
    with pytest.raises(TypeError, match="algorithm must be"):
        lax.rng_bit_generator(key, (2,), algorithm=5)


def test_bit_generator_in_the_text_form():
    closed = minijax.make_jaxpr(lambda k: lax.rng_bit_generator(
        k, (2,), np.uint8, lax.RandomAlgorithm.RNG_THREE_FRY))(KEYS[0])
    assert "rng_bit_generator[algorithm=1 dtype=uint8 shape=(2,)]" in str(closed)
    again = loads(dumps(closed))
    verify_jaxpr(again.jaxpr)
    _same(eval_jaxpr(again.jaxpr, again.consts, [KEYS[0]]),
          list(jax.lax.rng_bit_generator(KEYS[0], (2,), np.uint8, 1)))


def test_bit_generator_imported_from_jax():
    theirs = lambda k: jax.lax.rng_bit_generator(k, (3,), np.uint16,
                                                 jax.lax.RandomAlgorithm.RNG_THREE_FRY)
    closed = trace_with_jax(theirs)(KEYS[1])
    _same(eval_jaxpr(closed.jaxpr, closed.consts, [KEYS[1]]), list(theirs(KEYS[1])))


# -- rng_uniform ---------------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [(0., 1.), (np.float32(-2), np.float32(3)),
                                  (np.int32(3), np.int32(9))], ids=["weak", "f32", "i32"])
def test_uniform_draws_in_range_with_jax_types(a, b):
    # XLA's stateful generator: no two runs agree, so only types and the range compare.
    draw = lambda: lax.rng_uniform(a, b, (64,))
    theirs = jax.lax.rng_uniform(a, b, (64,))
    reference = eval_closed_jaxpr(minijax.make_jaxpr(draw)())[0]
    for ours in (draw(), minijax.jit(draw)(), reference):
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
        values = np.asarray(ours)
        assert np.all((values >= a) & (values < b)) and len(np.unique(values)) > 1
    for ours in (draw(), minijax.jit(draw)()):
        assert ours.weak_type == theirs.weak_type


def test_uniform_errors_as_jax():
    for lib in (lax, jax.lax):
        with pytest.raises(ValueError, match="must have identical dtypes"):
            lib.rng_uniform(np.float32(0), np.int32(1), (2,))
        with pytest.raises(ValueError, match="must be scalars"):
            lib.rng_uniform(np.zeros(2, np.float32), np.float32(1), (2,))
        with pytest.raises(TypeError):
            lib.rng_uniform(0., 1., 3)
    # XLA aborts the process on a bool or 8-bit draw; minijax refuses it when it traces.
    with pytest.raises(TypeError, match="rng_uniform: draws"):
        lax.rng_uniform(np.int8(0), np.int8(3), (2,))


def test_uniform_has_no_derivative_or_batching_rule_as_jax():
    for lib in (minijax, jax):
        with pytest.raises(NotImplementedError, match="Differentiation rule for 'rng_uniform'"):
            lib.grad(lambda a: lib.lax.rng_uniform(a, 1., ()))(0.)
        with pytest.raises(NotImplementedError, match="Batching rule for 'rng_uniform'"):
            lib.vmap(lambda a: lib.lax.rng_uniform(a, 1., (2,)))(np.zeros(3, np.float32))


# -- the rbg and unsafe_rbg PRNGs ------------------------------------------------------------

def _draws(lib):
    """Every kind of key operation and a few samplers, from one key."""
    r = lib.random

    def run(key):
        a, b = r.split(key)
        c = r.fold_in(b, 7)
        return (r.split(key, (2, 3)), c, r.bits(a, (5,)), r.bits(c, (3,), np.uint8),
                r.uniform(a, (4,)), r.normal(c, (3,), np.float16), r.randint(b, (4,), -5, 9))
    return run


# Shared, so that each side compiles the draws once per key type for the whole file.
OUR_DRAWS, THEIR_DRAWS = minijax.jit(_draws(minijax)), jax.jit(_draws(jax))


@pytest.mark.parametrize("impl", IMPLS)
def test_rbg_keys_match_jax_bit_for_bit(impl):
    key, their_key = mr.key(0, impl=impl), jr.key(0, impl=impl)
    _same(key, their_key)
    _same(mr.bits(mr.fold_in(mr.split(key)[1], 3), (3,)),    # eagerly
          jr.bits(jr.fold_in(jr.split(their_key)[1], 3), (3,)))
    key, their_key = mr.key(12345, impl=impl), jr.key(12345, impl=impl)
    _same(OUR_DRAWS(key), THEIR_DRAWS(their_key))


def test_rbg_gamma_draws_key_by_key_as_jax_on_cpu():
    # JAX's gamma maps over its keys one at a time on CPU; a vmap would give every
    # sample the first key's rng_bit_generator draw.
    f = lambda lib: lambda k: lib.random.gamma(k, np.float32([2.0, 0.5]))
    _same(minijax.jit(f(minijax))(mr.key(1, impl="rbg")), jax.jit(f(jax))(jr.key(1, impl="rbg")))


@pytest.mark.parametrize("impl", IMPLS)
def test_rbg_keys_under_vmap(impl):
    # Batched bits come from JAX's batching of rng_bit_generator: the first key's draw,
    # shared out along the batch.
    f = lambda lib: lambda k: (lib.random.bits(k, (3,)), lib.random.split(k),
                               lib.random.fold_in(k, 3))
    keys = mr.split(mr.key(3, impl=impl), 3)
    their_keys = jr.split(jr.key(3, impl=impl), 3)
    _same(keys, their_keys)
    _same(minijax.vmap(f(minijax))(keys), jax.vmap(f(jax))(their_keys))


def test_rbg_keys_in_the_reference_evaluator_and_text_form():
    key = mr.key(5, impl="rbg")
    closed = minijax.make_jaxpr(_draws(minijax))(key)
    theirs = THEIR_DRAWS(jr.key(5, impl="rbg"))
    for ours, want in zip(eval_closed_jaxpr(closed, keys_as_numpy(key)), theirs):
        if str(want.dtype).startswith("key<"):
            np.testing.assert_array_equal(ours["rbg"], jr.key_data(want))
        else:
            np.testing.assert_array_equal(ours, want)
    text = dumps(minijax.make_jaxpr(lambda: mr.split(key))())
    assert "rbg(" in text and "key<rbg>[2]" in text
    again = loads(text)
    _same(eval_jaxpr(again.jaxpr, again.consts, []), [jr.split(jr.key(5, impl="rbg"))])


@pytest.mark.parametrize("impl", IMPLS)
def test_key_constructors_and_impl(impl):
    words = np.arange(8, dtype=np.uint32).reshape(2, 4)
    _same(mr.PRNGKey(9, impl=impl), jr.PRNGKey(9, impl=impl))
    _same(mr.wrap_key_data(words, impl=impl), jr.wrap_key_data(words, impl=impl))
    assert mr.key_impl(mr.key(1, impl=impl)) == str(jr.key_impl(jr.key(1, impl=impl))) == impl
    assert mr.key_dtype(impl) == jr.key_dtype(impl)
    # impl given as a key dtype, JAX's or a key's, or as dtype=
    _same(mr.key(2, impl=jr.key(0, impl=impl).dtype), jr.key(2, impl=impl))
    _same(mr.key(2, impl=mr.key(0, impl=impl).dtype), jr.key(2, impl=impl))
    _same(mr.key(2, dtype=mr.key_dtype(impl)), jr.key(2, dtype=jr.key_dtype(impl)))
    _same(mr.wrap_key_data(words, dtype=impl), jr.wrap_key_data(words, dtype=impl))
    for lib in (mr, jr):
        with pytest.raises(TypeError, match="invalid PRNG key data"):
            lib.wrap_key_data(np.zeros(2, np.uint32), impl=impl)
        with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
            lib.key(0, impl="no_such_prng")
        with pytest.raises(TypeError, match="unrecognized type"):
            lib.key(0, impl=3)
        with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
            lib.key(0, impl=impl, dtype=impl)


def test_default_prng_impl_flag():
    assert minijax.config.jax_default_prng_impl == "threefry2x32"
    try:
        minijax.config.update("jax_default_prng_impl", "rbg")
        jax.config.update("jax_default_prng_impl", "rbg")
        # Raw keys are the default implementation's data.
        raw, their_raw = mr.PRNGKey(4), jr.PRNGKey(4)
        _same(raw, their_raw)
        _same(mr.split(raw), jr.split(their_raw))
        assert mr.key_impl(raw) == str(jr.key_impl(their_raw)) == "rbg"
        _same(minijax.jit(lambda s: mr.key(s))(3), jax.jit(lambda s: jr.key(s))(3))
    finally:
        minijax.config.update("jax_default_prng_impl", "threefry2x32")
        jax.config.update("jax_default_prng_impl", "threefry2x32")
    with minijax.default_prng_impl("unsafe_rbg"), jax.default_prng_impl("unsafe_rbg"):
        _same(mr.fold_in(mr.key(1), 2), jr.fold_in(jr.key(1), 2))
    assert mr.key(1).dtype == jr.key(1).dtype      # back to threefry
    with pytest.raises(ValueError, match="jax_default_prng_impl"):
        minijax.config.update("jax_default_prng_impl", "philox4x32")


@pytest.mark.parametrize("impl", IMPLS)
def test_rbg_programs_imported_from_jax(impl):
    def theirs(seed):
        key = jr.fold_in(jr.split(jr.key(seed, impl=impl), 3)[1], 4)
        return jr.key_data(key), jr.bits(key, (3,)), jr.uniform(key, (2,))
    closed = trace_with_jax(theirs)(np.int32(3))
    _same(eval_jaxpr(closed.jaxpr, closed.consts, [np.int32(3)]), list(theirs(np.int32(3))))
