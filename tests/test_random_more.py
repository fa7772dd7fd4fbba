"""`random.binomial`, `random.multinomial`, `random.clone` and `random.key_dtype`
against `jax.random`: the same key gives the same numbers, bit for bit, eagerly, under
jit and vmap, with typed and raw keys; bad dtypes and shapes are refused as JAX does."""
import jax
import numpy as np
import pytest

import minijax
import minijax.random as mr
from minijax.testing import JAX_VERSION, assert_trees_match

# The cases share shapes and dtypes where that does not matter to them (the scalar
# cases draw (6,), the per-element and invalid ones (2, 3)), so that they share their
# compiled programs (the binomial sampler's rejection loop is slow to compile).
BINOMIAL = {
    "small n (inversion)": (5.0, 0.3, (6,)),
    "large n (rejection)": (100.0, 0.4, (6,)),
    "p above one half": (7.0, 0.99, (6,)),
    "per-element parameters": (np.array([3.0, 50.0, 1000.0], np.float32),
                                np.array([0.9, 0.2, 0.05], np.float32), (2, 3)),
    "shape from the parameters": (np.array([4.0, 40.0], np.float32), 0.5, None),
    "integer n": (np.array([2, 30], np.int32), np.float32(0.25), None),
    "invalid p and n": (np.array([10.0, -1.0, np.inf], np.float32),
                        np.array([-0.1, 0.5, 0.3], np.float32), (2, 3)),
}


def _same(ours, theirs):
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape


@pytest.mark.parametrize("case", list(BINOMIAL))
def test_binomial_gives_jax_values_bit_for_bit(case):
    n, p, shape = BINOMIAL[case]
    theirs = jax.random.binomial(jax.random.key(3), n, p, shape=shape)
    _same(mr.binomial(mr.key(3), n, p, shape=shape), theirs)
    _same(minijax.jit(lambda k, n, p: mr.binomial(k, n, p, shape=shape))(mr.key(3), n, p), theirs)


def _per_key(sample, key, n):
    """JAX's values of `sample` for each of `n` keys split from `key`, stacked: what a
    vmap over those keys gives (vmap(f)(keys)[i] is f(keys[i])). Each call reuses the
    program of JAX's eager call of the same shapes, where a `jax.vmap` of it would
    compile the sampler's loop once more, batched."""
    return jax.numpy.stack([sample(k) for k in jax.random.split(key, n)])


def test_binomial_dtypes_raw_keys_and_vmap():
    _same(mr.binomial(mr.PRNGKey(1), 20.0, 0.3, (3,), dtype=np.float16),
          jax.random.binomial(jax.random.PRNGKey(1), 20.0, 0.3, (3,), dtype=np.float16))
    keys = mr.split(mr.key(5), 3)
    _same(minijax.vmap(lambda k: mr.binomial(k, 12.0, 0.6, (6,)))(keys),
          _per_key(lambda k: jax.random.binomial(k, 12.0, 0.6, (6,)), jax.random.key(5), 3))
    ps = np.array([0.1, 0.5, 0.8], np.float32)
    _same(minijax.vmap(lambda p: mr.binomial(mr.key(2), 30.0, p))(ps),
          jax.vmap(lambda p: jax.random.binomial(jax.random.key(2), 30.0, p))(ps))


def test_binomial_refuses_what_jax_refuses():
    for random in (mr, jax.random):
        with pytest.raises(ValueError, match="must be a float dtype"):
            random.binomial(random.key(0), 3.0, 0.5, dtype=np.int32)
        with pytest.raises(ValueError, match="(?i)broadcast"):   # JAX's words differ
            random.binomial(random.key(0), np.ones(3), 0.5, shape=(2,))


# "one row" has as many outcomes as "unnormalised with a zero": the two share their
# compiled programs (a scan over a binomial's rejection loop, slow to compile).
MULTINOMIAL = {
    "one row": (20.0, np.array([0.2, 0.4, 0.3, 0.1], np.float32), None),
    "two rows": (np.array([5.0, 9.0], np.float32),
                 np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], np.float32), None),
    "batch shape": (np.array([5.0, 9.0], np.float32),
                    np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], np.float32), (4, 2)),
    "unnormalised with a zero": (50.0, np.array([2.0, 0.0, 1.0, 1.0], np.float32), None),
}


def _jax_shape(shape, p):
    # `shape` is the batch shape in JAX 0.12, as its docstring says in every release;
    # JAX 0.10/0.11 take it as the whole result's shape.
    return shape if shape is None or JAX_VERSION >= (0, 12) else (*shape, np.shape(p)[-1])


@pytest.mark.parametrize("case", list(MULTINOMIAL))
def test_multinomial_gives_jax_values_bit_for_bit(case):
    n, p, shape = MULTINOMIAL[case]
    jax_shape = _jax_shape(shape, p)
    theirs = jax.random.multinomial(jax.random.key(1), n, p, shape=jax_shape)
    _same(mr.multinomial(mr.key(1), n, p, shape=shape), theirs)
    _same(minijax.jit(lambda k, n, p: mr.multinomial(k, n, p, shape=shape, unroll=2))(
        mr.key(1), n, p), theirs)
    keys = mr.split(mr.key(4), 2)
    _same(minijax.vmap(lambda k: mr.multinomial(k, n, p, shape=shape))(keys),
          _per_key(lambda k: jax.random.multinomial(k, n, p, shape=jax_shape),
                   jax.random.key(4), 2))


def test_multinomial_refuses_a_shape_that_includes_the_outcomes():
    n, p, shape = MULTINOMIAL["batch shape"]
    whole = (*shape, p.shape[-1])      # what JAX 0.10/0.11 took
    with pytest.raises(ValueError, match="(?i)broadcast"):
        mr.multinomial(mr.key(1), n, p, shape=whole)
    if JAX_VERSION >= (0, 12):
        with pytest.raises(ValueError, match="(?i)broadcast"):   # JAX's words differ
            jax.random.multinomial(jax.random.key(1), n, p, shape=whole)
    else:
        assert jax.random.multinomial(jax.random.key(1), n, p, shape=whole).shape == whole


def test_clone_and_key_dtype():
    key = mr.key(0)
    assert_trees_match(mr.uniform(mr.clone(key), (2,)), mr.uniform(key, (2,)))
    assert_trees_match(minijax.jit(lambda k: mr.normal(mr.clone(k)))(key),
                       jax.random.normal(jax.random.clone(jax.random.key(0))))
    raw = mr.PRNGKey(3)
    assert mr.clone(raw) is raw
    with pytest.raises(TypeError):
        mr.clone(np.float32(1.0))
    assert mr.key_dtype() == jax.random.key_dtype() == key.dtype
    assert mr.key_dtype("threefry2x32") == jax.random.key_dtype("threefry2x32")
    assert mr.key_dtype("rbg") == jax.random.key_dtype("rbg")   # (more in test_rng.py)
    for lib in (mr, jax.random):
        with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
            lib.key_dtype("no_such_prng")
