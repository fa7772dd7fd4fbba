"""`jax_threefry_partitionable=False`: JAX's older layout of a threefry key's counters
(`frontend/threefry_layout.py`), against JAX with the flag off on both
sides: `bits` of every width and of odd sizes, `split` (threefry and rbg keys),
`fold_in`, samplers built on them, under jit, vmap and the NumPy evaluator, and the
flag's own reading, setting and context manager. With the flag on (the default) the
same functions are test_random.py's.
"""
from __future__ import annotations

import contextlib

import jax
import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.random as mr
from minijax.backends.reference import eval_closed_jaxpr
from minijax.ir.types import keys_as_numpy

from tests.test_random import assert_same_bits

jr = jax.random


@contextlib.contextmanager
def _layout(partitionable):
    """The flag set alike in minijax and in JAX (minijax never reads JAX's)."""
    with minijax.threefry_partitionable(partitionable), \
            jax.threefry_partitionable(partitionable):
        yield


@pytest.fixture
def unpartitioned():
    with _layout(False):
        yield


def _same_in_one_program(draws, key, eager):
    """The draws `draws(random)` (functions of a key) of `key`, minijax's under jit
    against JAX's under jit (one program each side: integer results are the same
    eagerly), and the ones `eager` picks out drawn eagerly by minijax (a program
    each)."""
    ours, theirs = draws(mr), draws(jr)
    expected = jax.jit(lambda k: [draw(k) for draw in theirs])(key)
    assert_same_bits(minijax.jit(lambda k: [draw(k) for draw in ours])(key), expected, "jit")
    for i in eager:
        assert_same_bits(ours[i](key), expected[i], f"eager [{i}]")


# Odd sizes pad the counters with a 0; 8- and 16-bit draws take 4 or 2 values a word
# and cut the last word short; () and (0,) are the edge sizes.
_SHAPES = [(), (0,), (5,), (7, 3), (2, 3, 2)]
_WIDTHS = [np.uint8, np.uint16, np.uint32]


def test_bits_of_every_width_and_size(unpartitioned):
    draws = lambda random: [lambda k, s=s, d=d: random.bits(k, s, d)   # noqa: E731
                            for d in _WIDTHS for s in _SHAPES]
    _same_in_one_program(draws, jr.key(7), eager=[3, 5 + 3, 10 + 3])


def test_the_layout_is_not_the_partitionable_one():
    # The comparisons above could pass with either layout only if they were the same.
    key = jr.key(7)
    with _layout(True):
        on = mr.bits(key, (5,), np.uint8), mr.split(key, 3)
    with _layout(False):
        off = mr.bits(key, (5,), np.uint8), mr.split(key, 3)
    assert not np.array_equal(on[0], off[0])
    assert not np.array_equal(jr.key_data(on[1]), jr.key_data(off[1]))


def test_a_64_bit_request_is_32_bits_as_in_jax(unpartitioned):
    # With x64 off (minijax's only mode) JAX draws uint32 for uint64, with a warning.
    # (minijax does not warn: it never warns of a 64-bit dtype truncated.)
    key = jr.key(1)
    with pytest.warns(UserWarning, match="uint64"):
        theirs = jr.bits(key, (3,), np.uint64)
    assert_same_bits(mr.bits(key, (3,), np.uint64), theirs)


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_split_and_fold_in(unpartitioned, impl):
    # fold_in hashes [0, data], two counters in either layout: JAX's is the same.
    draws = lambda random: [lambda k: random.split(k, 1),   # noqa: E731
                            lambda k: random.split(k, 3), lambda k: random.split(k, (2, 3)),
                            lambda k: random.fold_in(k, 11)]
    _same_in_one_program(draws, jr.key(3, impl=impl), eager=[1])
    raw = jr.PRNGKey(3)
    assert_same_bits(mr.split(raw, 3), jr.split(raw, 3))


def test_samplers(unpartitioned):
    draws = lambda r: [                                              # noqa: E731
        lambda k: r.uniform(k, (3,), ml_dtypes.bfloat16),      # 8-bit draws
        lambda k: r.normal(k, (3,), np.float16),               # 16-bit draws
        lambda k: r.randint(k, (5,), 0, 100, np.int8),         # split, then two draws
        lambda k: r.permutation(k, 7)]
    _same_in_one_program(draws, jr.key(5), eager=[0, 1, 2, 3])


def test_vmap_of_draws_from_split_keys(unpartitioned):
    keys = jr.split(jr.key(9), 3)

    def draw(random):
        return lambda k: (random.bits(k, (5,), np.uint16), random.split(k, 3),
                          random.normal(k, (3,)))
    assert_same_bits(minijax.jit(minijax.vmap(draw(mr)))(keys),
                     jax.jit(jax.vmap(draw(jr)))(keys))


def test_the_numpy_evaluator_runs_the_same_layout(unpartitioned):
    key = jr.key(2)
    draw = lambda random: lambda k: (random.bits(k, (5,), np.uint8),   # noqa: E731
                                     random.split(k, 3))
    bits, keys = eval_closed_jaxpr(minijax.make_jaxpr(draw(mr))(key), keys_as_numpy(key))
    theirs = draw(jr)(key)
    assert_same_bits(bits, theirs[0])
    np.testing.assert_array_equal(keys["fry"], jr.key_data(theirs[1]))


def test_config_update_and_context_manager_reach_traced_functions():
    key = jr.key(4)
    draw = minijax.jit(lambda k: mr.bits(k, (5,)))
    expected = {flag: None for flag in (True, False)}
    for flag in expected:
        with jax.threefry_partitionable(flag):
            expected[flag] = jr.bits(key, (5,))
    assert_same_bits(draw(key), expected[True])
    try:
        minijax.config.update("jax_threefry_partitionable", False)
        assert minijax.config.jax_threefry_partitionable is False
        assert minijax.threefry_partitionable.value is False
        assert_same_bits(draw(key), expected[False])   # traced under True before
        with minijax.threefry_partitionable(True):
            assert_same_bits(draw(key), expected[True])
        assert_same_bits(draw(key), expected[False])
    finally:
        minijax.config.update("jax_threefry_partitionable", True)
    assert_same_bits(draw(key), expected[True])


def test_jax_flag_alone_does_not_change_minijax():
    # minijax's flags are its own (config.py), as jax_default_prng_impl's is.
    key = jr.key(4)
    with jax.threefry_partitionable(False):
        ours = mr.bits(key, (5,))
    assert_same_bits(ours, jr.bits(key, (5,)))


@pytest.mark.parametrize("bad", ["no", 2, None])
def test_the_flag_takes_a_bool(bad):
    with pytest.raises(ValueError, match="jax_threefry_partitionable takes a bool"):
        minijax.config.update("jax_threefry_partitionable", bad)
    with pytest.raises(ValueError, match="jax_threefry_partitionable takes a bool"):
        with minijax.threefry_partitionable(bad):
            pass
