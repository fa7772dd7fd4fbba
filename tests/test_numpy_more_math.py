"""jnp math and statistics names added in session 5, each against jax.numpy:
ldexp/frexp/modf, gcd/lcm, nextafter/spacing, logaddexp2, sort_complex, unwrap,
trim_zeros, interp; bincount, digitize, the histograms, ravel_multi_index, cov and
corrcoef. Values, dtypes and weak types (traced, jit, eager), grad and vmap against
JAX's, and the errors with JAX's exception types."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.devices import on_cpu
from tests.numpy_helpers import assert_values_close, check
from tests.test_divergences import pins

rng = np.random.default_rng(1)
X = np.array([0., -0., 1.5, -3.25, np.inf, -np.inf, np.nan, 6e37, 1e-3], np.float32)
SUBNORMAL = np.array([1e-40, -2e-39, 1.5], np.float32)
I = np.array([12, -18, 0, 7, 0, 100], np.int32)
J = np.array([8, 27, 5, 0, 0, -75], np.int32)
A = rng.normal(size=20).astype(np.float32)
INTS = np.array([0, 3, 1, 1, 5, 0], np.int32)
M = rng.normal(size=(3, 6)).astype(np.float32)
PHASE = np.array([0., 3, 6.5, 7, -5, 1, 9, 9.5], np.float32)
XP = np.array([0., 1., 1., 2.5, 4.], np.float32)
FP = np.array([1., 3., -2., 0., 5.], np.float32)
QUERIES = np.linspace(-1, 5, 13).astype(np.float32)

MATH = {
    "frexp": (lambda np_, x: np_.frexp(x), (X,)),
    "frexp float16, int": (lambda np_, x: (np_.frexp(x.astype(np.float16)),
                                           np_.frexp(np.array([3, -4, 0], np.int32))),
                           (X[[0, 2, 3, 8]],)),
    "modf": (lambda np_, x: np_.modf(x), (X,)),
    "ldexp": (lambda np_, x, k: np_.ldexp(x, k), (X[:6], np.array([1, 2, -3, 130, -5, 0],
                                                                    np.int32))),
    "ldexp scalars, float16": (lambda np_, k: (np_.ldexp(2.0, k), np_.ldexp(np.float16(3), k),
                                               np_.ldexp(np.float32(1.5), 3)),
                               (np.array([1, 2, -3, 4, -5, 0], np.int32),)),
    "gcd, lcm": (lambda np_, a, b: (np_.gcd(a, b), np_.lcm(a, b), np_.gcd(a, 6),
                                    np_.lcm(a.astype(np.int8), np.int8(4)),
                                    np_.gcd(a[:, None], b[None, :])), (I, J)),
    "nextafter, spacing": (lambda np_, x: (np_.nextafter(x, 0.), np_.spacing(x),
                                           np_.nextafter(x, x[::-1]), np_.spacing(2.0)), (X,)),
    "logaddexp2": (lambda np_, a, b: (np_.logaddexp2(a, b), np_.logaddexp2(a, 3.)),
                   (X[:6], X[5::-1])),
    "sort_complex": (lambda np_, a: (np_.sort_complex(a),
                                     np_.sort_complex(np.array([3, 1, 2], np.int32)),
                                     np_.sort_complex(np.array([1 + 2j, 1 - 1j, -2j],
                                                               np.complex64))), (X[:6],)),
    "unwrap": (lambda np_, p: (np_.unwrap(p), np_.unwrap(p, period=4.),
                               np_.unwrap(p.reshape(2, 4), axis=0),
                               np_.unwrap(p, discont=2.)), (PHASE,)),
    "interp": (lambda np_, q, xp, fp: (np_.interp(q, xp, fp),
                                       np_.interp(q, xp, fp, left=-1., right=7.),
                                       np_.interp(q, xp, fp, period=3.),
                                       np_.interp(2.2, xp, fp)), (QUERIES, XP, FP)),
    "interp ints": (lambda np_, q, xp, fp: np_.interp(q, xp, fp),
                    (np.array([1, 2, 3], np.int32), np.array([0, 2, 4], np.int32),
                     np.array([0, 1, 0], np.int32))),
}


@pytest.mark.parametrize("name", list(MATH))
def test_math_matches_jax(name):
    fn, args = MATH[name]
    check(fn, *args, eager=True)


def test_frexp_and_ldexp_of_subnormals_under_jit_and_eagerly():
    # Eagerly too: ldexp runs an eager call as one compiled program, as JAX's.
    check(lambda np_, x: np_.ldexp(x, np.int32(3)), SUBNORMAL, eager=True)
    # frexp is NumPy's, exact for subnormals too, where each JAX differs (pinned below)
    for frexp in (mnp.frexp, minijax.jit(mnp.frexp)):
        for got, expected in zip(frexp(SUBNORMAL), np.frexp(SUBNORMAL)):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pins("frexp_of_a_subnormal")
def test_frexp_of_a_subnormal():
    x = SUBNORMAL[:2]
    # JAX 0.10 and 0.11 give +-0.5 * 2**-149; 0.12 flushes to signed zero (documented)
    expected = ([0.0, -0.0], [0, 0]) if JAX_VERSION >= (0, 12) else ([0.5, -0.5], [-149] * 2)
    for frexp in (jnp.frexp, jax.jit(jnp.frexp)):
        with on_cpu():     # XLA's CPU backend's flushing; on a GPU (H200) JAX 0.11 is exact
            mantissa, exponent = frexp(x)
        assert mantissa.tolist() == expected[0] and exponent.tolist() == expected[1]
        assert np.signbit(mantissa).tolist() == [False, True]
    mantissa, exponent = mnp.frexp(x)
    assert mantissa.tolist() == np.frexp(x)[0].tolist() == [np.float32(0.54444885),
                                                            np.float32(-0.6805649)]
    assert exponent.tolist() == [-132, -128]


def test_trim_zeros_eagerly_matches_jax():
    z = np.array([0, 0, 1, 2, 0, 3, 0], np.int32)
    for trim in ("fb", "f", "b", "F"):
        assert_values_close(mnp.trim_zeros(z, trim), jnp.trim_zeros(z, trim))
    assert_values_close(mnp.trim_zeros(z * 0), jnp.trim_zeros(z * 0))


@pytest.mark.parametrize("name", ["ldexp", "frexp", "modf", "logaddexp2", "interp",
                                  "unwrap"])
def test_math_grad_and_vmap(name):
    x = np.array([1.5, -3.25, 6e3, 1e-3], np.float32)
    k = np.array([1, -2, 3, 0], np.int32)
    fns = {"ldexp": lambda np_, x: np_.ldexp(x, k),
           "frexp": lambda np_, x: np_.frexp(x)[0],
           "modf": lambda np_, x: np_.modf(x)[0] * 3 + np_.modf(x)[1],
           "logaddexp2": lambda np_, x: np_.logaddexp2(x, x[::-1]),
           "interp": lambda np_, x: np_.interp(x, np.array([-4., 0, 2, 7000], np.float32),
                                               x * 2),
           "unwrap": lambda np_, x: np_.unwrap(x * 3)}
    fn = fns[name]
    assert_values_close(minijax.grad(lambda x: mnp.sum(fn(mnp, x)))(x),
                        jax.jit(jax.grad(lambda x: jnp.sum(fn(jnp, x))))(x))
    batch = np.stack([x, x * 2])
    assert_values_close(minijax.vmap(lambda x: fn(mnp, x))(batch),
                        jax.jit(jax.vmap(lambda x: fn(jnp, x)))(batch))


def test_vmap_of_gcd():
    assert_values_close(minijax.vmap(mnp.gcd)(I.reshape(2, 3), J.reshape(2, 3)),
                        jax.vmap(jnp.gcd)(I.reshape(2, 3), J.reshape(2, 3)))


def test_math_errors():
    with pytest.raises(ValueError, match="integer"):
        mnp.ldexp(X, X)
    with pytest.raises(ValueError):
        jnp.ldexp(X, X)
    with pytest.raises(ValueError, match="integers"):
        mnp.gcd(X, X)
    with pytest.raises(ValueError):
        jnp.gcd(X, X)
    with pytest.raises(ValueError, match="same length"):
        mnp.interp(QUERIES, XP, FP[:3])
    with pytest.raises(ValueError):
        jnp.interp(QUERIES, XP, FP[:3])
    with pytest.raises(TypeError, match="size depends"):
        minijax.jit(mnp.trim_zeros)(INTS)


STATS = {
    "bincount": (lambda np_, x: (np_.bincount(x, length=7),
                                 np_.bincount(x, weights=x * 0.5, length=4),
                                 np_.bincount(x, minlength=9, length=9)), (INTS,)),
    "digitize": (lambda np_, x, b: (np_.digitize(x, b), np_.digitize(x, b, right=True),
                                    np_.digitize(x, b[::-1]), np_.digitize(x, b[:0])),
                 (A, np.array([-1., 0, 0.5, 1.], np.float32))),
    "histogram_bin_edges": (lambda np_, x: (np_.histogram_bin_edges(x),
                                            np_.histogram_bin_edges(x, 4, range=(-1, 1)),
                                            np_.histogram_bin_edges(x[:1], 3)), (A,)),
    "histogram": (lambda np_, x: (np_.histogram(x), np_.histogram(x, 5, density=True),
                                  np_.histogram(x, np.array([-1., 0., 2.], np.float32),
                                                weights=x * x),
                                  np_.histogram(x, 3, range=(0., 1.))), (A,)),
    "histogram2d": (lambda np_, x, y: (np_.histogram2d(x, y, bins=3),
                                       np_.histogram2d(x, y, bins=(2, 4), density=True),
                                       np_.histogram2d(x, y, bins=np.array([-1., 0, 1],
                                                                           np.float32),
                                                       weights=x)), (A, A[::-1] * 2)),
    "histogramdd": (lambda np_, s: np_.histogramdd(s, bins=(2, 3, 2),
                                                   range=[(-1, 1), (-2, 2), (0, 1)]),
                    (A[:18].reshape(6, 3),)),
    "ravel_multi_index": (lambda np_, i, j: (
        np_.ravel_multi_index((i, j), (6, 4), mode="clip"),
        np_.ravel_multi_index((i, j), (6, 4), mode="wrap", order="F")), (INTS, INTS[::-1] - 2)),
    "cov": (lambda np_, m: (np_.cov(m), np_.cov(m, rowvar=False), np_.cov(m[0], m[1]),
                            np_.cov(m, bias=True), np_.cov(m, ddof=2), np_.cov(m[0])), (M,)),
    "cov weights": (lambda np_, m, f, w: (np_.cov(m, fweights=f), np_.cov(m, aweights=w),
                                          np_.cov(m, fweights=f, aweights=w),
                                          np_.cov(m, fweights=f, aweights=w, ddof=0)),
                    (M, np.array([1, 2, 1, 3, 1, 1], np.int32),
                     np.linspace(0.1, 1, 6).astype(np.float32))),
    "corrcoef": (lambda np_, m: (np_.corrcoef(m), np_.corrcoef(m[0], m[1]),
                                 np_.corrcoef(m, rowvar=False), np_.corrcoef(m[0])), (M,)),
    "complex": (lambda np_, m: (np_.cov(m), np_.corrcoef(m)),
                ((M[:2] + 1j * M[1:]).astype(np.complex64),)),
    "ints": (lambda np_, m: (np_.cov(m), np_.corrcoef(m)), (INTS.reshape(2, 3),)),
}


@pytest.mark.parametrize("name", list(STATS))
def test_statistics_match_jax(name):
    fn, args = STATS[name]
    check(fn, *args, eager=True)


def test_unsized_counts_eagerly():
    assert_values_close(mnp.bincount(INTS), jnp.bincount(INTS))
    assert_values_close(mnp.bincount(INTS, minlength=8), jnp.bincount(INTS, minlength=8))
    assert_values_close(mnp.ravel_multi_index((INTS, INTS), (6, 6)),
                        jnp.ravel_multi_index((INTS, INTS), (6, 6)))


@pytest.mark.parametrize("name", ["histogram weights", "cov", "corrcoef"])
def test_statistics_grad_and_vmap(name):
    fns = {"histogram weights": lambda np_, w: np_.histogram(A[:6], 3, range=(-2, 2),
                                                              weights=w)[0],
           "cov": lambda np_, m: np_.cov(m),
           "corrcoef": lambda np_, m: np_.corrcoef(m)}
    fn = fns[name]
    x = M[:, :6] if name != "histogram weights" else M[0]
    assert_values_close(minijax.grad(lambda x: mnp.sum(fn(mnp, x) ** 2))(x),
                        jax.jit(jax.grad(lambda x: jnp.sum(fn(jnp, x) ** 2)))(x), rtol=1e-4)
    batch = np.stack([x, x * 2 + 1])
    assert_values_close(minijax.vmap(lambda x: fn(mnp, x))(batch),
                        jax.jit(jax.vmap(lambda x: fn(jnp, x)))(batch), rtol=1e-4)


def test_statistics_errors():
    with pytest.raises(TypeError, match="integer"):
        mnp.bincount(A)
    with pytest.raises(TypeError):
        jnp.bincount(A)
    with pytest.raises(TypeError, match="length="):
        minijax.jit(mnp.bincount)(INTS)
    with pytest.raises(ValueError, match="1-d"):
        mnp.digitize(A, M)
    with pytest.raises(ValueError):
        jnp.digitize(A, M)
    with pytest.raises(ValueError, match="more than 2"):
        mnp.cov(np.ones((2, 2, 2), np.float32))
    with pytest.raises(ValueError):
        jnp.cov(np.ones((2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="invalid entry"):
        mnp.ravel_multi_index((INTS, INTS), (3, 3))
    with pytest.raises(ValueError):
        jnp.ravel_multi_index((INTS, INTS), (3, 3))
    with pytest.raises(ValueError, match="mode"):
        mnp.ravel_multi_index((INTS,), (6,), mode="bogus")


@pytest.mark.parametrize("sample_dtype", [np.float32, np.float16, np.int32, np.bool_])
def test_histograms_promote_the_sample_and_weights_together(sample_dtype):
    # The edges and weighted counts take the inexact dtype of sample and weights
    # together, as JAX's; unweighted histogram counts take the sample's inexact dtype,
    # histogramdd's are int32. (minijax gave int32 or the weights' dtype, and refused
    # a boolean sample.)
    sample = (np.arange(8).reshape(4, 2) % 3).astype(sample_dtype)
    for weights in [None] + [np.array([1, 2, 0, 1], w)
                             for w in (np.float16, np.float32, np.int32, np.bool_)]:
        for fn in (lambda m: m.histogram(sample[:, 0], bins=3, weights=weights),
                   lambda m: m.histogramdd(sample, bins=3, weights=weights),
                   lambda m: m.histogram2d(sample[:, 0], sample[:, 1], bins=3,
                                           weights=weights)):
            assert_trees_match(fn(mnp), fn(jnp), rtol=1e-3)


def test_isclose_of_integers_and_heaviside_of_nan():
    # isclose compares integers and booleans as floats with the tolerances, as NumPy and
    # JAX do (minijax compared them for equality: 10**8 was not close to 10**8 + 1), its
    # result strongly typed; heaviside of NaN is NaN (minijax gave x2).
    big = np.array([100000000, 5, 7, -3], np.int32)
    for a, b in [(big, big + np.array([1, 0, 1, 0], np.int32)), (big > 5, big < 7),
                 (big, 2.0), (big > 5, 2), (np.float32(3), 3.00001)]:
        for kwargs in ({}, dict(rtol=0.2, atol=1), dict(equal_nan=True)):
            assert_trees_match(mnp.isclose(a, b, **kwargs), jnp.isclose(a, b, **kwargs))
            assert_trees_match(minijax.jit(lambda a, b: mnp.isclose(a, b, **kwargs))(a, b),
                               jnp.isclose(a, b, **kwargs))
    x = np.array([-1., 0., 2., np.nan], np.float32)
    assert_trees_match(mnp.heaviside(x, 0.5), jnp.heaviside(x, 0.5))
    assert_trees_match(mnp.heaviside(x, x[::-1]), jnp.heaviside(x, x[::-1]))
