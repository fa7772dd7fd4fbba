"""The JAX bridge for the numeric primitive families: bit operations, special
functions, complex numbers, linear algebra, convolution and windowed reductions, the
scatter variants, and keys (`minijax/interop/import_rules_numeric.py`, the source
rules in `source.py`).

Each case is a small JAX function, checked three ways against JAX's own results:
imported (`trace_with_jax`) and run by minijax; that minijax program exported
(`to_jax`), traced again by JAX and imported back; and written as Python source
(`to_python_source`) and run by JAX. `cross_check` then compares minijax's transforms
of a few of them with JAX's.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minijax
from minijax.interop import (import_jaxpr, trace_with_jax, to_jax, to_python_source,
                             UnsupportedParamError, ExportError)
from minijax.testing import assert_cross_check, assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr

F = np.array([0.5, 1.5, 2.5], np.float32)
I = np.array([1, 2, 31], np.int32)
C = np.array([1 + 2j, 3 - 1j], np.complex64)
SPD = np.array([[4., 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
IMAGE = np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5) / 10
KERNEL = np.linspace(-1, 1, 54, dtype=np.float32).reshape(3, 2, 3, 3)
KEY = jax.random.key(3)
RAW_KEY = jax.random.PRNGKey(3)


def _window(x):
    return (lax.reduce_window(x, 0., lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID"),
            lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 1), "SAME"),
            lax.reduce_window(x, jnp.inf, lax.min, (1, 1, 3, 2), (1, 1, 1, 1),
                              [(0, 0), (0, 0), (1, 0), (0, 1)]))


CASES = {
    "bitcast": (lambda x: lax.bitcast_convert_type(x, jnp.int32), F),
    "shifts": (lambda i: (lax.shift_left(i, i), lax.shift_right_arithmetic(-i, 2),
                          lax.shift_right_logical(-i, i), lax.population_count(i)), I),
    "float_bits": (lambda x: (lax.nextafter(x, x + 1), lax.erf_inv(x / 3),
                              lax.reduce_precision(x * 1e3, 4, 2)), F),
    "special": (lambda x: (lax.erfc(x), lax.lgamma(x), lax.digamma(x), lax.igamma(x, 2.),
                           lax.igammac(x, x), lax.igamma_grad_a(x, x),
                           lax.polygamma(jnp.ones_like(x), x),
                           lax.betainc(x, 2 * x, x / 3), lax.zeta(x + 1, x),
                           lax.bessel_i0e(x), lax.bessel_i1e(-x)), F),
    "complex": (lambda c: (lax.real(c), lax.imag(c), lax.conj(c),
                           lax.complex(lax.real(c), 2.), lax.conj(lax.real(c))), C),
    "linalg": (lambda a: (lax.linalg.cholesky(a),
                          lax.linalg.triangular_solve(a, a[:, :2], left_side=True,
                                                      lower=True, transpose_a=True),
                          *lax.linalg.lu(a), *lax.linalg.eigh(a), *lax.linalg.svd(a),
                          lax.linalg.svd(a, compute_uv=False),
                          *lax.linalg.qr(a[:, :2], full_matrices=False)), SPD),
    "conv": (lambda x, w: (lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                           lax.conv_general_dilated(x, w[:2, :1], (2, 1), [(1, 0), (0, 2)],
                                                    rhs_dilation=(1, 2),
                                                    feature_group_count=2,
                                                    precision=lax.Precision.HIGHEST)),
             IMAGE, KERNEL),
    "reduce_window": (_window, IMAGE),
    "scatter": (lambda x: (x.at[np.array([0, 1])].mul(2.), x.at[np.array([0, 0])].max(2.),
                           x.at[np.array([2, 0])].min(1.)), jnp.asarray(F)),
    "seed": (lambda s: (jax.random.key(s), jax.random.PRNGKey(s)), np.int32(-7)),
    "split": (lambda k: (jax.random.split(k, 3), jax.random.split(k, (2, 2))), KEY),
    "raw_split": (lambda k: jax.random.split(k), RAW_KEY),
    "fold_in": (lambda k: (jax.random.fold_in(k, 5), jax.random.clone(k)), KEY),
    "bits": (lambda k: (jax.random.bits(k, (2, 3)), jax.random.bits(k, (5,), jnp.uint8),
                        jax.random.bits(k, (), jnp.uint16)), KEY),
    "samplers": (lambda k: (jax.random.uniform(k, (3,)), jax.random.normal(k, (2,)),
                            jax.random.randint(k, (4,), 0, 10)), RAW_KEY),
    "gamma": (lambda k: (jax.random.gamma(k, 2., (3,)), jax.random.loggamma(k, .5, (2,))),
              KEY),
    "batched_keys": (lambda k: (
        jax.vmap(lambda k: jax.random.uniform(k, (2,)))(jax.random.split(k, 4)),
        jax.vmap(jax.random.fold_in)(jax.random.split(k, 4), jnp.arange(4)),
        jax.vmap(lambda k: jax.random.split(k))(jax.random.split(k, 2)),
        jax.vmap(lambda k, a: jax.random.gamma(k, a))(jax.random.split(k, 2),
                                                       jnp.array([1., 3.]))), KEY),
    "fft": (lambda c: (lax.fft(c, "FFT", (2,)), lax.fft(c, lax.FftType.IFFT, (2,)),
                       lax.fft(lax.real(c), "RFFT", (2,)), lax.fft(c, "IRFFT", (2,)),
                       jnp.fft.rfft2(SPD)), C),
    "selection": (lambda x: (*lax.top_k(x, 2), *lax.approx_min_k(x, 1),
                             *lax.top_k(SPD, 1, axis=0), lax.optimization_barrier((x, 2 * x))),
                  F),
    "lax_compositions": (lambda x, i: (
        *lax.split(x, [1, 2]), lax.tile(x, (2,)), lax.stack([x, x], 1), *lax.unstack(SPD),
        lax.reduce_xor(i, (0,)), lax.clz(i), lax.mulhi(i, -i * 99999999),
        jnp.zeros_like(lax.empty((2,), jnp.float32)),     # `empty`'s contents: unspecified
        lax.scatter_sub(x, np.array([[0], [0]]), np.ones(2, np.float32),
                        lax.ScatterDimensionNumbers((), (0,), (0,)))), F, I),
    "cumlogsumexp": (lambda x: (lax.cumlogsumexp(x), lax.cumlogsumexp(SPD, 1, reverse=True)),
                     F),
    "key_data": (lambda ks: (jax.random.key_data(ks),
                             jax.random.wrap_key_data(jax.random.key_data(ks))),
                 jax.random.split(KEY, 2)),
}


def _comparable(tree):
    """The leaves of `tree`, key arrays as their words."""
    return [jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x
            for x in jax.tree_util.tree_leaves(tree)]


def _assert_same(got, want):
    """Values, shapes, dtypes and weak types agree (bits exactly, floats closely)."""
    assert_trees_match(_comparable(got), _comparable(want))


def _run(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_imported_program_computes_jax_results(name):
    f, *args = CASES[name]
    _assert_same(_run(trace_with_jax(f)(*args), args), f(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_program_imports_back(name):
    f, *args = CASES[name]
    program = trace_with_jax(f)(*args)
    exported = jax.make_jaxpr(to_jax(program))(*args)
    _assert_same(_run(import_jaxpr(exported), args), f(*args))
    _assert_same(jax.jit(to_jax(program))(*args), f(*args))


# The gamma sampler's derivative is a custom_jvp rule: a Python function, which
# to_python_source refuses by name (see test_interop.py).
# cumlogsumexp is a scan of a log-add-exp with a custom_jvp rule, likewise.
_NO_SOURCE = {"gamma", "batched_keys", "cumlogsumexp"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_source_runs_on_jax(name):
    f, *args = CASES[name]
    program = trace_with_jax(f)(*args)
    if name in _NO_SOURCE:
        with pytest.raises(ExportError, match="custom_jvp_call"):
            to_python_source(program)
        return
    source = to_python_source(program)
    namespace = {}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    _assert_same(namespace["program"](*args), f(*args))


def test_minijax_random_programs_export_with_jax_bits():
    def draw(key):
        a, b = minijax.random.split(key)
        return minijax.random.uniform(a, (3,)), minijax.random.bits(b, (2,))
    program = minijax.make_jaxpr(draw)(KEY)
    want = (jax.random.uniform(jax.random.split(KEY)[0], (3,)),
            jax.random.bits(jax.random.split(KEY)[1], (2,)))
    _assert_same(to_jax(program)(KEY), want)
    _assert_same(_run(import_jaxpr(jax.make_jaxpr(to_jax(program))(KEY)), [KEY]), want)


# -- cross_check: minijax's transforms of imported programs against JAX's -------------------

_ROWS = ["eager", "jit", "grad", "jvp", "vmap"]
# JAX's side of these runs eagerly: it is mostly one big operation (igamma's series
# loop, the uniform sampler) whose eager program every row shares, where a program per
# row would compile it again.
_SHARED_EAGER_ORACLE = {"igamma", "uniform"}


@pytest.mark.parametrize("f, args", [
    (lambda x: jnp.sum(lax.lgamma(x) * lax.digamma(x) + lax.erfc(x)), (F,)),
    (lambda x: jnp.sum(lax.igamma(x, 2. * x)), (F,)),
    (lambda x: jnp.sum(lax.betainc(2., 3., x / 3)), (F,)),
    (lambda a: jnp.sum(lax.linalg.cholesky(a @ a.T + 3 * jnp.eye(3)) ** 2), (SPD,)),
    (lambda a: jnp.sum(lax.linalg.qr(a)[1] ** 2), (SPD,)),
    (lambda a: jnp.sum(lax.linalg.triangular_solve(a, jnp.ones((3, 2)), left_side=True,
                                                   lower=True)), (SPD,)),
    (lambda x: jnp.sum(lax.abs(lax.complex(x, 2 * x) * (1 + 1j)) ** 2), (F,)),
    (lambda x, w: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2),
     (IMAGE, KERNEL)),
    (lambda x: sum(jnp.sum(w ** 2) for w in _window(x)), (IMAGE,)),
    # JAX differentiates scatter_mul only with unique_indices=True (minijax always can).
    (lambda x: jnp.sum(jnp.asarray(x).at[np.array([0, 1])].mul(x[1:], unique_indices=True)
                       ** 2), (F,)),
    (lambda x: jnp.sum(jax.random.uniform(KEY, (3,)) * x), (F,)),
    (lambda a: jnp.sum(jax.random.gamma(KEY, a)), (F,)),
], ids=["special", "igamma", "betainc", "cholesky", "qr", "triangular_solve", "complex",
        "conv", "reduce_window", "scatter_mul", "uniform", "gamma"])
def test_cross_check_of_each_family(f, args, request):
    # JAX's side of each row as one jitted program (the comparison has a tolerance),
    # not its operations compiled one by one, but for _SHARED_EAGER_ORACLE.
    eager_oracle = request.node.callspec.id in _SHARED_EAGER_ORACLE
    assert_cross_check(f, *args, transforms=_ROWS, policies=(), shrink=False,
                       jit_oracle=not eager_oracle)


# -- what the bridge refuses ------------------------------------------------------------------

def test_unsupported_params_are_refused_by_name():
    pivoted = jax.make_jaxpr(lambda a: lax.linalg.qr(a, pivoting=True))(SPD)
    with pytest.raises(UnsupportedParamError, match="pivoting"):
        import_jaxpr(pivoted)
    subset = jax.make_jaxpr(lambda a: lax.linalg.eigh(a, subset_by_index=(0, 2)))(SPD)
    with pytest.raises(UnsupportedParamError, match="subset_by_index"):
        import_jaxpr(subset)


def test_other_key_implementations_are_refused():
    # (rbg and unsafe_rbg import: tests/test_rng.py)
    program = jax.make_jaxpr(lambda s: jax.random.key(s, impl="philox4x32"))(1)
    with pytest.raises(UnsupportedParamError, match="threefry2x32, rbg and unsafe_rbg"):
        import_jaxpr(program)


def test_imports_take_the_counter_layout_of_jax_flag():
    # JAX reads jax_threefry_partitionable when it lowers, so an import reads JAX's
    # flag as it stands then; minijax's own (left on here) does not decide it.
    draw = lambda k: (jax.random.split(k, 3), jax.random.bits(k, (5,), jnp.uint8),  # noqa: E731
                      jax.random.gamma(k, jnp.float32([0.5, 2.0])))
    program = jax.make_jaxpr(draw)(KEY)
    with jax.threefry_partitionable(False):
        imported, expected = import_jaxpr(program), draw(KEY)
    assert minijax.config.jax_threefry_partitionable is True
    _assert_same(_run(imported, [KEY]), list(expected))
    with minijax.threefry_partitionable(False):
        imported = import_jaxpr(program)
    _assert_same(_run(imported, [KEY]), list(draw(KEY)))


def test_jax_threefry2x32_primitive_imports():
    from jax.extend.random import threefry2x32_p
    words = [np.array([1, 2], np.uint32), np.array([3, 4], np.uint32),
             np.array([5, 6], np.uint32), np.array([7, 8], np.uint32)]
    program = jax.make_jaxpr(lambda *w: threefry2x32_p.bind(*w))(*words)
    _assert_same(_run(import_jaxpr(program), words), threefry2x32_p.bind(*words))
