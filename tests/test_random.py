"""`minijax.random` against `jax.random`: the same key gives the same bits.

Every sampler is compared bit for bit (values, shape, dtype) with both key styles
(typed `key` and raw `PRNGKey`), over a few shapes and dtypes, eagerly and inside
`jit`. Transformations of programs that use keys (vmap, loops, refs, AD, the text
form) are in test_random_transforms.py.
"""
from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.random as mr

jr = jax.random
bf16 = ml_dtypes.bfloat16


def assert_same_bits(ours, theirs, what=""):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs), what
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_bits(a, b, f"{what} [{i}]")
        return
    if str(getattr(theirs, "dtype", "")).startswith("key<"):
        assert str(ours.dtype) == str(theirs.dtype), what
        ours, theirs = jr.key_data(ours), jr.key_data(theirs)
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (what, ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours, theirs, err_msg=what)


def both_ways(mj_fn, jax_fn, *args, jax_jit_may_round_apart=False):
    """minijax eagerly and under jit, each against JAX's value. JAX's samplers are
    jitted functions, and its key and bits functions integer primitives: its eager
    value of `jax_fn`, a call of those, is its value under jit, so both of minijax's
    are compared with it rather than compile the same programs again in a `jax.jit`
    (a program per sampler, shape and dtype). Where `jax_fn` does float arithmetic of
    its own around them, one XLA program may round apart from its eager ops
    (`jax_jit_may_round_apart`): minijax's jit is compared with JAX's jit."""
    theirs = jax_fn(*args)
    assert_same_bits(mj_fn(*args), theirs, "eager")
    if jax_jit_may_round_apart:
        theirs = jax.jit(jax_fn)(*args)
    assert_same_bits(minijax.jit(mj_fn)(*args), theirs, "jit")


KEYS = {"typed": lambda seed: jr.key(seed), "raw": lambda seed: jr.PRNGKey(seed)}


# -- keys --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 42, -1, 2**31 - 1, 2**32 + 5, np.int32(-7),
                                  np.uint32(4_000_000_000), np.int8(-3)])
def test_seeds_make_jax_keys(seed):
    assert_same_bits(mr.key(seed), jr.key(seed))
    assert_same_bits(mr.PRNGKey(seed), jr.PRNGKey(seed))


def test_traced_seeds():
    seeds = np.int32([0, -1, 12345])
    assert_same_bits(minijax.vmap(mr.key)(seeds), jax.vmap(jr.key)(seeds))
    assert_same_bits(minijax.jit(mr.PRNGKey)(np.int32(-9)), jr.PRNGKey(np.int32(-9)))  # (jitted)


def test_a_typed_key_looks_like_jax_s():
    k = mr.key(3)
    assert k.shape == () and str(k.dtype) == "key<fry>"
    assert repr(k) == repr(jr.key(3))
    assert mr.key_impl(k) == jr.key_impl(jr.key(3)) == "threefry2x32"
    assert_same_bits(mr.wrap_key_data(mr.key_data(k)), k)


def test_keys_convert_only_to_their_own_dtype_as_jax():
    # jnp.asarray/array with the key's own dtype hand the key back; any other dtype,
    # and a uint32 array made a key, is JAX's ValueError, eagerly, in jit and in vmap.
    k = jr.key(1)
    for np_mod, lax_mod in ((minijax.numpy, minijax.lax), (jax.numpy, jax.lax)):
        assert_same_bits(np_mod.asarray(k, dtype=k.dtype), k)
        assert_same_bits(np_mod.array(k, dtype=k.dtype), k)
        assert_same_bits(lax_mod.convert_element_type(k, k.dtype), k)
    for m in (minijax, jax):
        for bad in (lambda: m.numpy.asarray(k, dtype=m.numpy.float32),
                    lambda: m.numpy.array(k, dtype=m.numpy.uint32),
                    lambda: m.jit(lambda k: m.lax.convert_element_type(k, float))(k),
                    lambda: m.vmap(lambda k: m.numpy.asarray(k, dtype=np.int32))(jr.split(k)),
                    lambda: m.lax.convert_element_type(np.zeros(2, np.uint32), k.dtype)):
            with pytest.raises(ValueError) as info:
                bad()
            assert m is jax or isinstance(info.value, minijax.MinijaxError)
    with pytest.raises(ValueError, match="key arrays are opaque; use jax.random.key_data"):
        minijax.numpy.asarray(k, dtype=np.float32)


@pytest.mark.parametrize("style", KEYS)
@pytest.mark.parametrize("num", [2, 3, (2, 3)])
def test_split(style, num):
    k = KEYS[style](5)
    both_ways(lambda k: mr.split(k, num), lambda k: jr.split(k, num), k)


@pytest.mark.parametrize("style", KEYS)
def test_fold_in(style):
    k = KEYS[style](5)
    for data in (0, 7, 2**32 - 1, np.int32(-2), np.uint32(9)):
        assert_same_bits(mr.fold_in(k, data), jr.fold_in(k, data))
    both_ways(mr.fold_in, jr.fold_in, k, np.int32(123))


@pytest.mark.parametrize("style", KEYS)
@pytest.mark.parametrize("dtype", [np.uint32, np.uint16, np.uint8])
def test_bits(style, dtype):
    k = KEYS[style](1)
    both_ways(lambda k: mr.bits(k, (2, 5), dtype), lambda k: jr.bits(k, (2, 5), dtype), k)
    assert_same_bits(mr.bits(k), jr.bits(k))


# -- samplers ------------------------------------------------------------------------------

FLOATS = [np.float32, np.float16, bf16]


@pytest.mark.parametrize("style, dtype, shape", [
    ("typed", np.float32, ()), ("raw", np.float32, (7,)), ("typed", np.float32, (2, 3)),
    ("raw", np.float16, ()), ("typed", np.float16, (2, 3)), ("typed", bf16, ()),
    ("raw", bf16, (7,))], ids=lambda v: getattr(v, "__name__", str(v)))
def test_uniform_and_normal(style, dtype, shape):
    k = KEYS[style](11)
    both_ways(lambda k: (mr.uniform(k, shape, dtype), mr.normal(k, shape, dtype)),
              lambda k: (jr.uniform(k, shape, dtype), jr.normal(k, shape, dtype)), k)


def test_uniform_bounds_broadcast_like_jax():
    k = jr.key(2)
    lo, hi = np.float32(-2), np.float32([1, 2, 3])
    both_ways(lambda k, lo, hi: mr.uniform(k, (2, 3), minval=lo, maxval=hi),
              lambda k, lo, hi: jr.uniform(k, (2, 3), minval=lo, maxval=hi), k, lo, hi)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint8, np.int16])
def test_randint(dtype):
    k = jr.PRNGKey(4)
    lo, hi = (3, 250) if np.dtype(dtype).kind == "u" else (-50, 100)
    both_ways(lambda k: mr.randint(k, (9,), lo, hi, dtype),
              lambda k: jr.randint(k, (9,), lo, hi, dtype), k)
    if np.dtype(dtype).itemsize == 1:   # maxval past the dtype's range includes its max
        both_ways(lambda k: mr.randint(k, (20,), 0, 256 if dtype == np.uint8 else 128, dtype),
                  lambda k: jr.randint(k, (20,), 0, 256 if dtype == np.uint8 else 128, dtype), k)


def test_randint_with_array_bounds_and_empty_range():
    k = jr.key(4)
    lo, hi = np.int32([0, 5, 9]), np.int32([10, 5, 3])
    both_ways(lambda k, lo, hi: mr.randint(k, (2, 3), lo, hi),
              lambda k, lo, hi: jr.randint(k, (2, 3), lo, hi), k, lo, hi)


@pytest.mark.parametrize("mode", ["low", "high"])
def test_bernoulli_and_rademacher(mode):
    k = jr.key(8)
    p = np.float32([0.1, 0.5, 0.9])
    both_ways(lambda k, p: mr.bernoulli(k, p, (4, 3), mode),
              lambda k, p: jr.bernoulli(k, p, (4, 3), mode), k, p)
    assert_same_bits(mr.bernoulli(k), jr.bernoulli(k))
    assert_same_bits(mr.rademacher(k, (6,)), jr.rademacher(k, (6,)))
    assert_same_bits(mr.rademacher(k, (6,), np.float32), jr.rademacher(k, (6,), np.float32))


def test_normal_complex():
    k = jr.key(8)
    assert_same_bits(mr.normal(k, (3,), np.complex64), jr.normal(k, (3,), np.complex64))


@pytest.mark.parametrize("name", ["gumbel", "exponential", "laplace", "logistic"])
@pytest.mark.parametrize("dtype", FLOATS, ids=["f32", "f16", "bf16"])
def test_simple_distributions(name, dtype):
    k = jr.key(9)
    both_ways(lambda k: getattr(mr, name)(k, (5,), dtype),
              lambda k: getattr(jr, name)(k, (5,), dtype), k)


def test_gumbel_high_and_truncated_normal():
    k = jr.key(9)
    both_ways(lambda k: mr.gumbel(k, (5,), mode="high"), lambda k: jr.gumbel(k, (5,), mode="high"), k)
    lo, hi = np.float32([-1, 0, 2]), np.float32(3)
    both_ways(lambda k, lo, hi: mr.truncated_normal(k, lo, hi),
              lambda k, lo, hi: jr.truncated_normal(k, lo, hi), k, lo, hi)
    both_ways(lambda k: mr.truncated_normal(k, -0.5, 0.5, (2, 3), np.float16),
              lambda k: jr.truncated_normal(k, -0.5, 0.5, (2, 3), np.float16), k)


def test_permutation():
    k = jr.key(10)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    both_ways(lambda k: mr.permutation(k, 10), lambda k: jr.permutation(k, 10), k)
    both_ways(lambda k, x: mr.permutation(k, x, axis=1), lambda k, x: jr.permutation(k, x, axis=1), k, x)
    both_ways(lambda k, x: mr.permutation(k, x, 1, True),
              lambda k, x: jr.permutation(k, x, 1, True), k, x)


def test_choice():
    k = jr.PRNGKey(10)
    x = np.arange(12).reshape(3, 4)
    p = np.float32([0.1, 0.2, 0.3, 0.4])
    assert_same_bits(mr.choice(k, 10, (4,)), jr.choice(k, 10, (4,)))
    assert_same_bits(mr.choice(k, x, (2,), replace=False), jr.choice(k, x, (2,), replace=False))
    assert_same_bits(mr.choice(k, x, (5,), axis=1, p=p), jr.choice(k, x, (5,), axis=1, p=p))
    both_ways(lambda k, p: mr.choice(k, 4, (3,), replace=False, p=p),
              lambda k, p: jr.choice(k, 4, (3,), replace=False, p=p), k, p,
              jax_jit_may_round_apart=True)
    assert_same_bits(mr.choice(k, 5, (0,)), jr.choice(k, 5, (0,)))


def test_categorical():
    k = jr.key(12)
    logits = np.log(np.float32([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    both_ways(lambda k, l: mr.categorical(k, l), lambda k, l: jr.categorical(k, l), k, logits,
              jax_jit_may_round_apart=True)
    assert_same_bits(mr.categorical(k, logits, axis=0, shape=(4, 3)),
                     jr.categorical(k, logits, axis=0, shape=(4, 3)))
    assert_same_bits(mr.categorical(k, logits, shape=(2, 2), replace=False),
                     jr.categorical(k, logits, shape=(2, 2), replace=False))


def test_gamma_family():
    k = jr.key(13)
    a = np.float32([0.3, 1.0, 4.5])
    both_ways(lambda k, a: mr.gamma(k, a), lambda k, a: jr.gamma(k, a), k, a)
    assert_same_bits(mr.loggamma(k, a, (2, 3)), jr.loggamma(k, a, (2, 3)))
    assert_same_bits(mr.beta(k, a, 2.0), jr.beta(k, a, 2.0))
    assert_same_bits(mr.dirichlet(k, a, (2,)), jr.dirichlet(k, a, (2,)))
    assert_same_bits(mr.gamma(k, 2.0, (2,), bf16), jr.gamma(k, 2.0, (2,), bf16))


def test_ball_and_generalized_normal():
    k = jr.key(14)
    assert_same_bits(mr.ball(k, 3, shape=(2,)), jr.ball(k, 3, shape=(2,)))
    assert_same_bits(mr.ball(k, 2, p=1, shape=(3,)), jr.ball(k, 2, p=1, shape=(3,)))
    assert_same_bits(mr.generalized_normal(k, 1.5, (4,)), jr.generalized_normal(k, 1.5, (4,)))


@pytest.mark.skipif(not hasattr(minijax.lax, "lgamma"), reason="needs lax.lgamma")
def test_poisson():
    k = jr.key(15)
    lam = np.float32([0.0, 0.5, 3.0, 12.0, 80.0])
    both_ways(lambda k, lam: mr.poisson(k, lam), lambda k, lam: jr.poisson(k, lam), k, lam)


@pytest.mark.skipif(not hasattr(minijax.numpy, "linalg"), reason="needs numpy.linalg")
def test_multivariate_normal():
    k = jr.key(16)
    mean = np.float32([1.0, -1.0])
    cov = np.float32([[2.0, 0.5], [0.5, 1.0]])
    np.testing.assert_allclose(mr.multivariate_normal(k, mean, cov, (3,)),
                               jr.multivariate_normal(k, mean, cov, (3,)), rtol=1e-5, atol=1e-6)


def test_samplers_need_operations_this_minijax_may_lack():
    k = mr.key(0)
    if not hasattr(minijax.lax, "lgamma"):
        with pytest.raises(minijax.MinijaxError, match="lgamma"):
            mr.poisson(k, np.float32([1.0]))
    if not hasattr(minijax.numpy, "linalg"):
        with pytest.raises(minijax.MinijaxError, match="linalg"):
            mr.multivariate_normal(k, np.zeros(2, np.float32), np.eye(2, dtype=np.float32))


def test_more_distributions():
    k = jr.key(21)
    df = np.float32([1.5, 4.0])
    for name, f in {"cauchy": lambda m: m.cauchy(k, (3,), bf16),
                    "lognormal": lambda m: m.lognormal(k, 0.5, (3,)),
                    "pareto": lambda m: m.pareto(k, df), "t": lambda m: m.t(k, df, (3, 2)),
                    "chisquare": lambda m: m.chisquare(k, df),
                    "rayleigh": lambda m: m.rayleigh(k, df),
                    "weibull_min": lambda m: m.weibull_min(k, 2.0, 1.5, (3,)),
                    "geometric": lambda m: m.geometric(k, np.float32([0.2, 0.7]))}.items():
        assert_same_bits(f(mr), f(jr), name)
    # XLA rounds the fused normal-then-norm program of maxwell 1 ulp apart at times.
    np.testing.assert_allclose(mr.maxwell(k, (2,)), jr.maxwell(k, (2,)), rtol=3e-7)


@pytest.mark.parametrize("call", [
    lambda r, k, s: r.normal(k, s), lambda r, k, s: r.uniform(k, s, minval=-1.0),
    lambda r, k, s: r.randint(k, s, 0, 9), lambda r, k, s: r.bernoulli(k, 0.3, s),
    lambda r, k, s: r.categorical(k, np.zeros(4, np.float32), shape=s),
    lambda r, k, s: r.gamma(k, 2.0, s), lambda r, k, s: r.dirichlet(k, np.ones(2), s),
    lambda r, k, s: r.bits(k, s), lambda r, k, s: r.orthogonal(k, 2, s),
])
def test_a_python_int_shape_is_one_axis_as_in_jax(call):
    # random.normal(key, 3): JAX's canonicalize_shape takes a Python int as (3,);
    # a NumPy integer or a float is still no shape, in both.
    assert_same_bits(call(mr, mr.key(1), 3), call(jr, jr.key(1), 3))
    assert_same_bits(call(mr, mr.key(1), 3), call(mr, mr.key(1), (3,)))
    for bad in (np.int32(3), 3.0):
        with pytest.raises(TypeError):
            call(jr, jr.key(1), bad)
        with pytest.raises(TypeError):
            call(mr, mr.key(1), bad)
