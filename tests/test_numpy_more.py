"""jnp names added in session 5 (part 1), each against jax.numpy: the NaN statistics
(nanvar ... nancumprod) and the function builders (vectorize, apply_along_axis,
apply_over_axes, fromfunction). Values, dtypes and weak types traced, under jit and
eagerly (numpy_helpers.check), then grad and vmap against JAX's, and the errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check
from tests.program_counting import programs
from tests.test_divergences import pins

NAN_DATA = np.array([[1., np.nan, 3., 4.], [np.nan] * 4, [2., 5., 1., 0.]], np.float32)
DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7


def grad_and_vmap_match(fn, *args, argnums=0):
    """grad of sum(fn) and vmap of fn over a stacked first argument, minijax vs JAX."""
    def scalar(lib):
        return lambda *a: lib.sum(fn(lib, *a))
    assert_values_close(minijax.grad(scalar(mnp), argnums)(*args),
                        jax.jit(jax.grad(scalar(jnp), argnums))(*args))
    batch = np.stack([args[0], args[0] * 2])
    rest = args[1:]
    assert_values_close(minijax.vmap(lambda a: fn(mnp, a, *rest))(batch),
                        jax.jit(jax.vmap(lambda a: fn(jnp, a, *rest)))(batch))


# -- NaN statistics -------------------------------------------------------------------------

NAN_CASES = {
    "nanvar": lambda np_, a: (np_.nanvar(a, axis=1), np_.nanvar(a),
                              np_.nanvar(a, axis=0, ddof=1, keepdims=True)),
    "nanstd": lambda np_, a: (np_.nanstd(a, axis=1), np_.nanstd(a, axis=(0, 1), ddof=2)),
    "nanquantile": lambda np_, a: (np_.nanquantile(a, np.array([0.1, 0.5, 0.9], np.float32),
                                                   axis=1),
                                   np_.nanquantile(a, 0.25, axis=0, keepdims=True),
                                   np_.nanquantile(a, 0.7)),
    "methods": lambda np_, a: [np_.nanquantile(a, 0.3, axis=1, method=m)
                               for m in ("lower", "higher", "midpoint", "nearest")],
    "nanpercentile": lambda np_, a: (np_.nanpercentile(a, 30.0, axis=1),
                                     np_.nanpercentile(a, np.array([10, 90]), axis=None)),
    "nanmedian": lambda np_, a: (np_.nanmedian(a, axis=1), np_.nanmedian(a, keepdims=True)),
    "nanargmax": lambda np_, a: (np_.nanargmax(a, axis=1), np_.nanargmax(a),
                                 np_.nanargmin(a, axis=1, keepdims=True), np_.nanargmin(a)),
    "nancumsum": lambda np_, a: (np_.nancumsum(a, axis=1), np_.nancumsum(a),
                                 np_.nancumprod(a, axis=0), np_.nancumprod(a, axis=1)),
}


@pytest.mark.parametrize("name", list(NAN_CASES))
def test_nan_statistics_match_jax(name):
    check(NAN_CASES[name], NAN_DATA, eager=True)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16])
def test_nan_statistics_of_other_dtypes(dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    check(lambda np_, a: (np_.nanvar(a, axis=1), np_.nanstd(a), np_.nanmedian(a, axis=0),
                          np_.nanargmax(a, axis=1), np_.nancumsum(a, axis=1)), a,
          rtol=2e-3, atol=2e-3)


def test_nan_statistics_of_python_scalars_and_complex():
    check(lambda np_, x: (np_.nanvar(x), np_.nanmedian(x), np_.nancumsum(x)), 2.5)
    z = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64)
    check(lambda np_, z: np_.nanvar(z), z)


def test_nanquantile_with_traced_q():
    check(lambda np_, a, q: np_.nanquantile(a, q, axis=1), NAN_DATA,
          np.array([0.2, 0.8], np.float32))


@pytest.mark.parametrize("name", ["nanvar", "nanstd", "nanquantile", "nanmedian",
                                  "nancumsum"])
def test_nan_statistics_grad_and_vmap(name):
    data = np.array([[1., np.nan, 3., 4.], [2., 5., 1., 0.5]], np.float32)
    fns = {"nanvar": lambda np_, a: np_.nanvar(a, axis=-1),
           "nanstd": lambda np_, a: np_.nanstd(a, axis=-1),
           "nanquantile": lambda np_, a: np_.nanquantile(a, 0.4, axis=-1),
           "nanmedian": lambda np_, a: np_.nanmedian(a, axis=-1),
           "nancumsum": lambda np_, a: np_.nancumsum(a, axis=-1)}
    grad_and_vmap_match(fns[name], data)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantiles_of_every_method_match_jax(name):
    # quantile and nanquantile share one implementation: a NaN makes quantile's slice
    # NaN and is skipped by nanquantile's. Eager, with a traced q under vmap, and grad.
    data = np.array([[0.3, -1.2, 2.5, 0.7, 1.1], [4.0, np.nan, -0.5, 0.2, 3.3]], np.float32)
    qs = np.array([0.1, 0.5, 0.95], np.float32)
    variants = [(method, axis, keepdims)
                for method in ["linear", "lower", "higher", "midpoint", "nearest"]
                for axis, keepdims in [(None, False), (1, True), ((0, 1), False)]]
    # JAX's side (the oracle, compared to a tolerance) of all fifteen in one program.
    wants = jax.jit(lambda d, q: [getattr(jnp, name)(d, q, axis=axis, method=method,
                                                     keepdims=keepdims)
                                  for method, axis, keepdims in variants])(data, qs)
    for (method, axis, keepdims), want in zip(variants, wants):
        got = getattr(mnp, name)(data, qs, axis=axis, method=method, keepdims=keepdims)
        assert_values_close(got, want)
    finite = np.nan_to_num(data)
    got = minijax.vmap(lambda q: getattr(mnp, name)(finite, q, axis=1))(qs)
    assert_values_close(got, jax.jit(jax.vmap(lambda q: getattr(jnp, name)(finite, q,
                                                                            axis=1)))(qs))
    got = minijax.grad(lambda d: getattr(mnp, name)(d, 0.3, axis=1).sum())(finite)
    assert_values_close(got, jax.jit(jax.grad(lambda d: getattr(jnp, name)(d, 0.3,
                                                                          axis=1).sum()))(finite))
    for bad in ({"out": finite}, {"overwrite_input": True}):
        with pytest.raises(ValueError):
            jnp.quantile(finite, 0.5, **bad)
        with pytest.raises(ValueError, match="overwrite_input"):
            getattr(mnp, name)(finite, 0.5, **bad)


_WEIGHTED = [  # (function, q, axis, keepdims, weights' shape: the data's or the axis')
    ("quantile", 0.3, None, False, None), ("quantile", [0.0, 0.25, 0.5, 1.0], 1, False, "full"),
    ("quantile", 0.5, 0, True, "axis"), ("quantile", 0.7, None, False, "full"),
    ("percentile", [10.0, 90.0], (0, 1), False, "full"), ("nanquantile", 0.4, 1, False, "full"),
    ("nanpercentile", 40.0, 1, True, "full")]


def test_weighted_inverted_cdf_quantiles_match_jax():
    # NumPy's 'inverted_cdf' (the only method that takes weights): with a tie, a NaN in
    # the data and a negative weight (the slice's quantile is NaN), eager and in one jit.
    rng = np.random.default_rng(0)
    data = rng.normal(size=(3, 5)).astype(np.float32)
    data[0, 1] = data[0, 3]
    weights = rng.uniform(0, 2, size=(3, 5)).astype(np.float32)
    with_nan, bad_weights = data.copy(), weights.copy()
    with_nan[1, 2], bad_weights[2, 0] = np.nan, -1.0

    def run(lib, a, w):
        outs = []
        for name, q, axis, keepdims, w_shape in _WEIGHTED:
            kw = {} if w_shape is None else {"weights": w if w_shape == "full" else w[:, 0]}
            outs.append(getattr(lib.numpy, name)(a, np.asarray(q, np.float32), axis=axis,
                                                 keepdims=keepdims, method="inverted_cdf", **kw))
        return outs
    for a, w in [(data, weights), (with_nan, weights), (data, bad_weights)]:
        want = run(jax, a, w)
        for got in (run(minijax, a, w), minijax.jit(lambda a, w: run(minijax, a, w))(a, w)):
            for x, y in zip(got, want):
                assert x.dtype == y.dtype and x.weak_type == y.weak_type
                np.testing.assert_array_equal(x, y)
    loss = lambda lib: lambda a: lib.numpy.quantile(a, 0.5, axis=1, method="inverted_cdf",  # noqa: E731
                                                    weights=weights).sum()
    np.testing.assert_array_equal(minijax.grad(loss(minijax))(data), jax.grad(loss(jax))(data))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(weights=np.ones((2, 3))), NotImplementedError, "Only method 'inverted_cdf'"),
    (dict(method="inverted_cdf", weights=np.ones(2), axis=1), ValueError, "must match reduction"),
    (dict(method="inverted_cdf", weights=np.ones(3)), ValueError, "when axis is None"),
    (dict(method="inverted_cdf", weights=np.ones((2, 3), np.complex64)), ValueError, "complex")])
def test_weighted_quantile_errors_as_jax(kwargs, error, message):
    a = np.ones((2, 3), np.float32)
    for lib in (jnp, mnp):
        with pytest.raises(error, match=message):
            lib.quantile(a, 0.5, **kwargs)


def test_eager_nanargmax_is_one_program_as_in_jax():
    # JAX jits nanargmax's body (axis and keepdims static): one program on the first
    # eager call, none on a repeat; under a trace it stays inline.
    data = NAN_DATA[:2]
    for name in ("nanargmax", "nanargmin"):
        with programs("compiled") as made:
            first = getattr(mnp, name)(data, axis=1, keepdims=True)
        with programs("compiled") as again:
            getattr(mnp, name)(data, axis=1, keepdims=True)
        assert (len(made), len(again)) == (1, 0)
        assert_values_close(first, getattr(jnp, name)(data, axis=1, keepdims=True))
        eqns = minijax.make_jaxpr(lambda a: getattr(mnp, name)(a, axis=0))(data).jaxpr.eqns
        assert all(e.primitive.name != "jit" for e in eqns)


def test_nan_statistics_errors():
    with pytest.raises(ValueError, match="method"):
        mnp.nanquantile(NAN_DATA, 0.5, method="bogus")
    with pytest.raises(ValueError, match="q must be"):
        mnp.nanquantile(NAN_DATA, np.ones((2, 2)))
    with pytest.raises(ValueError, match="overwrite_input"):
        mnp.nanmedian(NAN_DATA, overwrite_input=True)
    with pytest.raises(ValueError):
        jnp.nanquantile(NAN_DATA, 0.5, method="bogus")
    with pytest.raises(TypeError):
        mnp.nanvar([1.0, 2.0])  # lists are refused, as by JAX
    with pytest.raises(TypeError):
        jnp.nanvar([1.0, 2.0])


# -- vectorize and friends ------------------------------------------------------------------

B = np.arange(4, dtype=np.float32) - 1.5

VECTORIZE_CASES = {
    "elementwise": (lambda np_, x, y: np_.vectorize(lambda u, v: u * v + 1)(x, y), (DATA, B)),
    "matvec": (lambda np_, x, y: np_.vectorize(lambda m, v: m @ v,
                                               signature="(m,n),(n)->(m)")(x, y), (DATA, B)),
    "two outputs": (lambda np_, x, y: np_.vectorize(lambda m, v: (m.sum(), m * v),
                                                    signature="(n),(n)->(),(n)")(x, y),
                    (DATA, B)),
    "excluded": (lambda np_, x: np_.vectorize(lambda u, k: u ** k, excluded={1})(x, 2),
                 (DATA[:1, :, :1],)),
    "size-1 loop dims": (lambda np_, x, y: np_.vectorize(lambda u, v: u - v)(x, y),
                         (DATA[:1, :1], B.reshape(1, 4, 1))),
    "excluded keyword": (lambda np_, x: np_.vectorize(
        lambda u, scale=1.0: u * scale, excluded={"scale"})(x, scale=3.0), (B,)),
}


@pytest.mark.parametrize("name", list(VECTORIZE_CASES))
def test_vectorize_matches_jax(name):
    fn, args = VECTORIZE_CASES[name]
    check(fn, *args, eager=True)


def test_vectorize_grad_and_vmap():
    f = lambda np_, x, y: np_.vectorize(lambda m, v: np_.tanh(m) @ v,  # noqa: E731
                                        signature="(m,n),(n)->(m)")(x, y)
    grad_and_vmap_match(f, DATA, B)
    grad_and_vmap_match(f, DATA, B, argnums=1)


def test_vectorize_errors():
    with pytest.raises(ValueError, match="signature"):
        mnp.vectorize(lambda x: x, signature="(n->()")(B)
    with pytest.raises(ValueError, match="inconsistent size"):
        mnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(B, B[:3])
    with pytest.raises(ValueError, match="core dimension"):
        mnp.vectorize(lambda a: a, signature="(n)->()")(B)
    with pytest.raises(ValueError):
        jnp.vectorize(lambda a: a, signature="(n)->()")(B)
    with pytest.raises(TypeError, match="excluded"):
        mnp.vectorize(lambda a: a, excluded={1.5})
    with pytest.raises(TypeError):
        jnp.vectorize(lambda a: a, excluded={1.5})
    with pytest.raises(ValueError, match="negative"):
        mnp.vectorize(lambda a: a, excluded={-1})


@pins("vectorize_drops_keyword_arguments")
def test_vectorize_keyword_arguments_divergence():
    """Registered: "vectorize_drops_keyword_arguments". JAX drops the keyword
    argument; minijax passes it on, as numpy.vectorize does."""
    scaled = lambda u, scale=1.0: u * scale  # noqa: E731
    assert_values_close(jnp.vectorize(scaled)(B, scale=3.0), B)
    assert_values_close(mnp.vectorize(scaled)(B, scale=3.0), B * 3)


APPLY_CASES = {
    "along axis, vector result": lambda np_, x: np_.apply_along_axis(
        lambda v: np_.stack([v.sum(), v.max()]), 1, x),
    "along last axis": lambda np_, x: np_.apply_along_axis(lambda v: v.sum(), -1, x),
    "along first axis, extra args": lambda np_, x: np_.apply_along_axis(
        lambda v, s: v * s, 0, x, 2.0),
    "over axes": lambda np_, x: np_.apply_over_axes(np_.sum, x, [0, 2]),
    "over one axis": lambda np_, x: np_.apply_over_axes(np_.cumsum, x, [1]),
}


@pytest.mark.parametrize("name", list(APPLY_CASES))
def test_apply_along_and_over_axes_match_jax(name):
    check(APPLY_CASES[name], DATA, eager=True)


def test_apply_over_axes_wants_a_sequence_as_jax():
    with pytest.raises(TypeError, match="sequence"):
        mnp.apply_over_axes(mnp.sum, DATA, 1)
    with pytest.raises(TypeError):
        jnp.apply_over_axes(jnp.sum, DATA, 1)


def test_apply_along_axis_grad_and_vmap():
    grad_and_vmap_match(lambda np_, x: np_.apply_along_axis(
        lambda v: np_.sin(v) * v[::-1], 1, x), DATA[0])


def test_fromfunction_matches_jax():
    check(lambda np_: (np_.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
                       np_.fromfunction(lambda i, j: i == j, (3, 3), dtype=int),
                       np_.fromfunction(lambda i: i * i, 5, dtype=np.int32)), eager=True)
    with pytest.raises(TypeError, match="shape"):
        mnp.fromfunction(lambda i: i, (2.5,))


# -- the surface ----------------------------------------------------------------------------

ADDED_NAMES = """nanvar nanstd nanquantile nanpercentile nanmedian nanargmax nanargmin nancumsum
nancumprod vectorize apply_along_axis apply_over_axes fromfunction isin unique_all
unique_counts unique_inverse unique_values intersect1d union1d setdiff1d setxor1d ldexp
frexp modf gcd lcm nextafter spacing logaddexp2 sort_complex unwrap trim_zeros interp
bincount digitize histogram_bin_edges histogram histogram2d histogramdd ravel_multi_index
cov corrcoef insert delete block unstack concat rollaxis dsplit diagflat resize compress
extract choose place put put_along_axis fill_diagonal lexsort partition argpartition vecdot
matvec vecmat cumulative_sum cumulative_prod array_equiv iscomplex isreal isrealobj
isscalar iterable gradient vander bartlett blackman hamming hanning mask_indices
einsum_path load save savez frombuffer fromstring printoptions get_printoptions
set_printoptions array_repr array_str ComplexWarning poly polyadd polysub polymul polydiv
polyder polyint polyfit mgrid ogrid r_ c_ single double csingle cdouble character flexible
object_ packbits unpackbits""".split()


def test_added_names_exist_in_both():
    assert len(ADDED_NAMES) == len(set(ADDED_NAMES))
    missing = [n for n in ADDED_NAMES if not hasattr(jnp, n) or not hasattr(mnp, n)]
    assert not missing, missing
