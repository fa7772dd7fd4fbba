"""`dtype=` arguments, swept over every public function that has one, against JAX.

JAX refuses a value where it wants a dtype: a jax.Array or a tracer is a ValueError
telling you to write `x.dtype`, a NumPy array is NumPy's TypeError, and `object`,
an unknown name or a Python class that is no scalar type are TypeErrors. Each case
below is one function's call; every kind of dtype argument goes through it in both
libraries: the refused kinds eagerly and under `jit` (they raise before anything
compiles), the accepted kinds (a scalar type, a name, a NumPy dtype, None) under
`eval_shape`, which traces only. `jnp.dtype` itself is NumPy's constructor, more
lenient: its own tests are at the end.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.ir.dtype_args import ARRAY_AS_DTYPE
from tests.test_divergences import pins

X = np.ones(3, np.float32)
M = np.ones((2, 2), np.float32)
C = np.ones(4, np.complex64)


def _key(L):
    return L.random.key(0)


def _init(name, *args):
    return lambda L, d: getattr(L.nn.initializers, name)(*args)(_key(L), (2, 2), d)


def _random(name, *args):
    return lambda L, d: getattr(L.random, name)(_key(L), *args, dtype=d)


# name -> (call(L, dtype) with L the library, a dtype the function accepts)
CASES = {
    "numpy.zeros": (lambda L, d: L.numpy.zeros(2, dtype=d), np.int8),
    "numpy.ones": (lambda L, d: L.numpy.ones(2, dtype=d), np.int8),
    "numpy.empty": (lambda L, d: L.numpy.empty(2, dtype=d), np.int8),
    "numpy.full": (lambda L, d: L.numpy.full(2, 1, dtype=d), np.int8),
    "numpy.zeros_like": (lambda L, d: L.numpy.zeros_like(X, dtype=d), np.int8),
    "numpy.ones_like": (lambda L, d: L.numpy.ones_like(X, dtype=d), np.int8),
    "numpy.empty_like": (lambda L, d: L.numpy.empty_like(X, dtype=d), np.int8),
    "numpy.full_like": (lambda L, d: L.numpy.full_like(X, 1, dtype=d), np.int8),
    "numpy.array": (lambda L, d: L.numpy.array([1, 2], dtype=d), np.int8),
    "numpy.asarray": (lambda L, d: L.numpy.asarray(X, dtype=d), np.int8),
    "numpy.astype": (lambda L, d: L.numpy.astype(X, d), np.int8),
    "numpy.arange": (lambda L, d: L.numpy.arange(3, dtype=d), np.int8),
    "numpy.linspace": (lambda L, d: L.numpy.linspace(0, 1, 3, dtype=d), np.float16),
    "numpy.logspace": (lambda L, d: L.numpy.logspace(0, 1, 3, dtype=d), np.float16),
    "numpy.geomspace": (lambda L, d: L.numpy.geomspace(1, 2, 3, dtype=d), np.float16),
    "numpy.eye": (lambda L, d: L.numpy.eye(2, dtype=d), np.int8),
    "numpy.identity": (lambda L, d: L.numpy.identity(2, dtype=d), np.int8),
    "numpy.tri": (lambda L, d: L.numpy.tri(2, dtype=d), np.int8),
    "numpy.indices": (lambda L, d: L.numpy.indices((2,), dtype=d), np.int8),
    "numpy.fromfunction": (lambda L, d: L.numpy.fromfunction(lambda i: i, (2,), dtype=d),
                           np.int8),
    "numpy.frombuffer": (lambda L, d: L.numpy.frombuffer(b"\0\0\0\0", dtype=d), np.int8),
    "numpy.concatenate": (lambda L, d: L.numpy.concatenate([X, X], dtype=d), np.int8),
    "numpy.stack": (lambda L, d: L.numpy.stack([X, X], dtype=d), np.int8),
    "numpy.hstack": (lambda L, d: L.numpy.hstack([X, X], dtype=d), np.int8),
    "numpy.vstack": (lambda L, d: L.numpy.vstack([X, X], dtype=d), np.int8),
    "numpy.dstack": (lambda L, d: L.numpy.dstack([X, X], dtype=d), np.int8),
    "numpy.sum": (lambda L, d: L.numpy.sum(X, dtype=d), np.int8),
    "numpy.prod": (lambda L, d: L.numpy.prod(X, dtype=d), np.int8),
    "numpy.mean": (lambda L, d: L.numpy.mean(X, dtype=d), np.float16),
    "numpy.var": (lambda L, d: L.numpy.var(X, dtype=d), np.float16),
    "numpy.std": (lambda L, d: L.numpy.std(X, dtype=d), np.float16),
    "numpy.nansum": (lambda L, d: L.numpy.nansum(X, dtype=d), np.int8),
    "numpy.nanprod": (lambda L, d: L.numpy.nanprod(X, dtype=d), np.float16),
    "numpy.nanmean": (lambda L, d: L.numpy.nanmean(X, dtype=d), np.float16),
    "numpy.nanvar": (lambda L, d: L.numpy.nanvar(X, dtype=d), np.float16),
    "numpy.nanstd": (lambda L, d: L.numpy.nanstd(X, dtype=d), np.float16),
    "numpy.cumsum": (lambda L, d: L.numpy.cumsum(X, dtype=d), np.int8),
    "numpy.cumprod": (lambda L, d: L.numpy.cumprod(X, dtype=d), np.int8),
    "numpy.nancumsum": (lambda L, d: L.numpy.nancumsum(X, dtype=d), np.int8),
    "numpy.nancumprod": (lambda L, d: L.numpy.nancumprod(X, dtype=d), np.int8),
    "numpy.cumulative_sum": (lambda L, d: L.numpy.cumulative_sum(X, dtype=d), np.int8),
    "numpy.cumulative_prod": (lambda L, d: L.numpy.cumulative_prod(X, dtype=d), np.int8),
    "numpy.trace": (lambda L, d: L.numpy.trace(M, dtype=d), np.int8),
    "numpy.linalg.trace": (lambda L, d: L.numpy.linalg.trace(M, dtype=d), np.int8),
    "numpy.dot": (lambda L, d: L.numpy.dot(M, M, preferred_element_type=d), np.float16),
    "numpy.matmul": (lambda L, d: L.numpy.matmul(M, M, preferred_element_type=d),
                     np.float16),
    "numpy.inner": (lambda L, d: L.numpy.inner(X, X, preferred_element_type=d),
                    np.float16),
    "numpy.vdot": (lambda L, d: L.numpy.vdot(X, X, preferred_element_type=d), np.float16),
    "numpy.vecdot": (lambda L, d: L.numpy.vecdot(X, X, preferred_element_type=d),
                     np.float16),
    "numpy.tensordot": (lambda L, d: L.numpy.tensordot(M, M, preferred_element_type=d),
                        np.float16),
    "numpy.einsum": (lambda L, d: L.numpy.einsum("ij,jk", M, M, preferred_element_type=d),
                     np.float16),
    "numpy.convolve": (lambda L, d: L.numpy.convolve(X, X, preferred_element_type=d),
                       np.float32),
    "numpy.correlate": (lambda L, d: L.numpy.correlate(X, X, preferred_element_type=d),
                        np.float32),
    "numpy.fft.fftfreq": (lambda L, d: L.numpy.fft.fftfreq(4, dtype=d), np.float16),
    "numpy.fft.rfftfreq": (lambda L, d: L.numpy.fft.rfftfreq(4, dtype=d), np.float16),
    "lax.convert_element_type": (lambda L, d: L.lax.convert_element_type(X, d), np.int8),
    "lax.bitcast_convert_type": (lambda L, d: L.lax.bitcast_convert_type(X, d), np.int32),
    "lax.argmax": (lambda L, d: L.lax.argmax(X, 0, d), np.int8),
    "lax.argmin": (lambda L, d: L.lax.argmin(X, 0, d), np.int8),
    "lax.iota": (lambda L, d: L.lax.iota(d, 3), np.int8),
    "lax.broadcasted_iota": (lambda L, d: L.lax.broadcasted_iota(d, (2, 2), 1), np.int8),
    "lax.full": (lambda L, d: L.lax.full((2,), 1, d), np.int8),
    "lax.full_like": (lambda L, d: L.lax.full_like(X, 1, d), np.int8),
    "lax.empty": (lambda L, d: L.lax.empty((2,), d), np.int8),
    "lax.dot": (lambda L, d: L.lax.dot(M, M, preferred_element_type=d), np.float16),
    "lax.dot_general": (lambda L, d: L.lax.dot_general(
        M, M, (((1,), (0,)), ((), ())), preferred_element_type=d), np.float16),
    "lax.conv": (lambda L, d: L.lax.conv(M[None, None], M[None, None], (1, 1), "SAME",
                                         preferred_element_type=d), np.complex64),
    "lax.conv_general_dilated": (lambda L, d: L.lax.conv_general_dilated(
        M[None, None], M[None, None], (1, 1), "SAME", preferred_element_type=d),
        np.float32),
    "lax.ragged_dot": (lambda L, d: L.lax.ragged_dot(
        M, M[None], np.array([2], np.int32), preferred_element_type=d), np.float16),
    "random.uniform": (lambda L, d: L.random.uniform(_key(L), (2,), dtype=d), np.float16),
    "random.normal": (lambda L, d: L.random.normal(_key(L), (2,), dtype=d), np.float16),
    "random.bits": (lambda L, d: L.random.bits(_key(L), (2,), dtype=d), np.uint8),
    "random.randint": (lambda L, d: L.random.randint(_key(L), (2,), 0, 3, dtype=d),
                       np.int8),
    "random.rademacher": (
        lambda L, d: L.random.rademacher(_key(L), (2,), dtype=d), np.int8),
    "random.truncated_normal": (lambda L, d: L.random.truncated_normal(
        _key(L), -1., 1., (2,), dtype=d), np.float16),
    "random.exponential": (lambda L, d: L.random.exponential(_key(L), (2,), dtype=d),
                           np.float16),
    "random.poisson": (lambda L, d: L.random.poisson(_key(L), 2., (2,), dtype=d),
                       np.int16),
    "random.geometric": (lambda L, d: L.random.geometric(_key(L), .5, (2,), dtype=d),
                         np.int16),
    "random.multivariate_normal": (lambda L, d: L.random.multivariate_normal(
        _key(L), np.zeros(2, np.float32), M, dtype=d), np.float16),
    # (float16: JAX 0.12's qr refuses it, 0.10's takes it.)
    "random.orthogonal": (lambda L, d: L.random.orthogonal(_key(L), 2, dtype=d),
                          np.float32),
    "nn.one_hot": (lambda L, d: L.nn.one_hot(np.arange(2), 3, dtype=d), np.int8),
    "nn.initializers.zeros": (lambda L, d: L.nn.initializers.zeros(_key(L), (2,), d),
                              np.int8),
    "nn.initializers.ones": (lambda L, d: L.nn.initializers.ones(_key(L), (2,), d),
                             np.int8),
    "nn.initializers.constant": (_init("constant", 2.), np.int8),
    "nn.initializers.normal": (_init("normal"), np.float16),
    "nn.initializers.uniform": (_init("uniform"), np.float16),
    "nn.initializers.truncated_normal": (_init("truncated_normal"), np.float16),
    "nn.initializers.glorot_normal": (_init("glorot_normal"), np.float16),
    "nn.initializers.he_uniform": (_init("he_uniform"), np.float16),
    "nn.initializers.orthogonal": (_init("orthogonal"), np.float32),
    # The rest share the checks above; each is still its own call site.
    **{f"random.{name}": (_random(name, *args), np.float32) for name, *args in (
        ("gamma", 2., (2,)), ("beta", 2., 2., (2,)), ("binomial", 3., .5, (2,)),
        ("ball", 2), ("chisquare", 2., (2,)), ("dirichlet", np.ones(2, np.float32)),
        ("f", 2., 3., (2,)), ("t", 2., (2,)), ("laplace", (2,)), ("logistic", (2,)),
        ("cauchy", (2,)), ("gumbel", (2,)), ("loggamma", 2., (2,)),
        ("lognormal", 1., (2,)), ("maxwell", (2,)),
        ("double_sided_maxwell", 0., 1., (2,)), ("weibull_min", 1., 1., (2,)),
        ("pareto", 2., (2,)), ("rayleigh", 1., (2,)), ("wald", 1., (2,)),
        ("triangular", 0., .5, 1., (2,)), ("generalized_normal", 2., (2,)),
        ("multinomial", 3., np.array([.5, .5], np.float32)))},
    "lax.conv_transpose": (lambda L, d: L.lax.conv_transpose(
        M[None, None], M[None, None], (1, 1), "SAME", preferred_element_type=d), np.float32),
    "lax.conv_with_general_padding": (lambda L, d: L.lax.conv_with_general_padding(
        M[None, None], M[None, None], (1, 1), ((0, 0), (0, 0)), None, None,
        preferred_element_type=d), np.float32),
    "lax.conv_general_dilated_patches": (lambda L, d: L.lax.conv_general_dilated_patches(
        M[None, None], (1, 1), (1, 1), "SAME", preferred_element_type=d), np.float32),
    "lax.ragged_dot_general": (lambda L, d: L.lax.ragged_dot_general(
        M, M[None], np.array([2], np.int32), L.lax.RaggedDotDimensionNumbers(
            (((1,), (1,)), ((), ())), (0,), (0,)), preferred_element_type=d), np.float32),
    "numpy.linalg.matmul": (lambda L, d: L.numpy.linalg.matmul(
        M, M, preferred_element_type=d), np.float32),
    "numpy.linalg.tensordot": (lambda L, d: L.numpy.linalg.tensordot(
        M, M, preferred_element_type=d), np.float32),
    "numpy.linalg.vecdot": (lambda L, d: L.numpy.linalg.vecdot(
        X, X, preferred_element_type=d), np.float32),
    "numpy.fromstring": (lambda L, d: L.numpy.fromstring("1 2", dtype=d, sep=" "), np.int8),
    **{f"nn.initializers.{name}": (_init(name, *args), np.float32) for name, *args in (
        ("glorot_uniform",), ("he_normal",), ("lecun_normal",), ("lecun_uniform",),
        ("kaiming_normal",), ("xavier_uniform",),
        ("variance_scaling", 1., "fan_in", "normal"))},
    "nn.initializers.delta_orthogonal": (lambda L, d: L.nn.initializers.delta_orthogonal()(
        _key(L), (3, 3, 2, 2), d), np.float32),
    "scipy.linalg.dft": (lambda L, d: L.scipy.linalg.dft(2, dtype=d), np.complex64),
    "scipy.linalg.hadamard": (lambda L, d: L.scipy.linalg.hadamard(2, dtype=d), np.int8),
    "numpy.argsort": (lambda L, d: L.numpy.argsort(X, dtype=d), np.int8),
    "numpy.cov": (lambda L, d: L.numpy.cov(M, dtype=d), np.float16),
    "numpy.corrcoef": (lambda L, d: L.numpy.corrcoef(M, dtype=d), np.float16),
    "numpy.ravel_multi_index": (lambda L, d: L.numpy.ravel_multi_index(
        (np.array([0, 1]), np.array([1, 0])), (2, 2), "wrap", dtype=d), np.int8),
    "lax.mul": (lambda L, d: L.lax.mul(X, X, out_dtype=d), np.int8),
}

ARRAY = jax.device_put(np.ones(2, np.float32))      # a jax.Array: minijax's values too
REFUSED = {"jax.Array": ARRAY, "NumPy array": np.ones(2, np.float32), "object": object,
           "unknown name": "foo", "class": dict}


def _outcome(fun):
    """('ok', (shape, dtype)) or (exception type, message), JAX's deprecation
    warnings (a jax.Array taken as a dtype) as errors so that they are seen."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            out = fun()
        except Exception as error:      # noqa: BLE001 -- the type is what is compared
            return type(error), str(error)
    return "ok", (tuple(out.shape), np.dtype(out.dtype))


# Where JAX fails before it looks at the dtype -- its jit hashing a static `dtype`, a
# primitive hashing its parameter, `dtype or default` asking an array for its truth --
# minijax gives the dtype's own error (`array_as_dtype_argument_fails_by_accident`),
# and lax.full_like refuses what JAX takes (`lax_full_like_takes_an_array_as_dtype`).
_ACCIDENTS = ("Non-hashable static arguments are not supported", "unhashable type",
              "As of JAX v0.7, parameters to jaxpr equations must have __hash__",
              "The truth value of an array with more than one element is ambiguous")
_OWN_ERRORS = {"jax.Array": (ValueError, ARRAY_AS_DTYPE),
               "tracer": (ValueError, ARRAY_AS_DTYPE),
               "NumPy array": (TypeError, "Cannot construct a dtype from an array")}
# minijax's own refusals of a dtype argument, whatever words JAX's failure has.
_DTYPE_ERRORS = (ARRAY_AS_DTYPE, "Cannot construct a dtype from an array",
                 "JAX only supports number, bool, and string dtypes, got dtype ")


def _check_same(name, kind, fun_jax, fun_mini, problems):
    expected, got = _outcome(fun_jax), _outcome(fun_mini)
    if kind in _OWN_ERRORS and (name == "lax.full_like" or expected[0] in (
            ValueError, TypeError) and expected[1].startswith(_ACCIDENTS)):
        expected = _OWN_ERRORS[kind]
    if expected[0] == "ok":
        same = got == expected
    else:
        # The same exception type, and minijax's words say what is wrong with the dtype
        # (JAX's words sometimes come from deeper down, e.g. its lowering of `object`).
        same = got[0] is expected[0] and (got[1][:30] == expected[1][:30]
                                          or got[1].startswith(_DTYPE_ERRORS))
    if not same:
        problems.append(f"{kind}: JAX {expected}, minijax {got}")


@pytest.mark.parametrize("name", CASES)
def test_dtype_argument_as_in_jax(name):
    call, accepted = CASES[name]
    problems = []
    for kind, dtype in REFUSED.items():
        _check_same(name, kind, lambda: call(jax, dtype), lambda: call(minijax, dtype),
                    problems)
    # A tracer as the dtype: raised while tracing, before anything compiles.
    _check_same(name, "tracer", lambda: jax.jit(lambda t: call(jax, t))(ARRAY),
                lambda: minijax.jit(lambda t: call(minijax, t))(ARRAY), problems)
    # lax.empty(shape, None) is float64 in JAX's eval_shape (x64 off): not compared.
    accepted_kinds = {"scalar type": accepted, "None": None}
    if name == "lax.empty":
        del accepted_kinds["None"]
    for kind, dtype in accepted_kinds.items():
        _check_same(name, kind, lambda: jax.eval_shape(lambda: call(jax, dtype)),
                    lambda: minijax.eval_shape(lambda: call(minijax, dtype)), problems)
    assert not problems, "\n".join(problems)


def test_other_spellings_of_a_dtype_are_accepted():
    """A name, a NumPy dtype and each library's own `jnp.int8` (a class in JAX, an
    instance here) mean the same dtype."""
    for call, accepted in (CASES["numpy.zeros"], CASES["lax.convert_element_type"],
                           CASES["random.normal"], CASES["nn.initializers.normal"]):
        name = np.dtype(accepted).name
        for mine, theirs in ((getattr(mnp, name), getattr(jnp, name)), (name, name),
                             (np.dtype(name), np.dtype(name))):
            got = minijax.eval_shape(lambda: call(minijax, mine))
            want = jax.eval_shape(lambda: call(jax, theirs))
            assert (got.shape, got.dtype) == (want.shape, want.dtype)


def test_the_astype_method_of_a_tracer():
    def f(lib):
        def body(x):
            with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
                x.astype(x)
            return x.astype(lib.int8)
        return body
    assert jax.jit(f(jnp))(X).dtype == minijax.jit(f(mnp))(X).dtype == np.int8


def test_an_int_dtype_after_an_int_shape_suggests_a_tuple():
    for name in ("zeros", "ones", "empty"):
        assert _outcome(lambda: getattr(mnp, name)(2, 3)) == \
            _outcome(lambda: getattr(jnp, name)(2, 3))


@pytest.mark.parametrize("operand, preferred", [(M, np.float16), (M, np.int32),
                                                (M.astype(np.int8), np.uint8),
                                                (M.astype(np.int8), np.float32)])
def test_conv_preferred_element_type_is_checked_as_in_jax(operand, preferred):
    def call(L):
        return lambda: L.lax.conv(operand[None, None], operand[None, None], (1, 1), "SAME",
                                  preferred_element_type=preferred)
    assert (_outcome(lambda: minijax.eval_shape(call(minijax)))
            == _outcome(lambda: jax.eval_shape(call(jax))))


def test_a_ref_as_a_dtype_argument_is_refused():
    ref = minijax.new_ref(np.ones(2, np.float32))
    for value in (ref, ref.at[0:1]):
        with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
            mnp.zeros(2, dtype=value)

    def traced(x):
        r = minijax.new_ref(x)
        with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
            mnp.zeros(2, dtype=r)
        return x
    minijax.jit(traced)(X)


@pins("ref_as_a_dtype_argument_is_taken")
def test_ref_as_dtype_pin():
    ref = jax.new_ref(jnp.ones(2))
    assert not isinstance(ref, jax.Array)
    assert jnp.zeros(2, dtype=ref).dtype == jnp.float32
    with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
        mnp.zeros(2, dtype=minijax.new_ref(X))


@pins("array_as_dtype_argument_fails_by_accident")
def test_array_dtype_accident_pin():
    for dtype in (ARRAY, np.ones(2, np.float32)):
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            jnp.sum(X, dtype=dtype)
        with pytest.raises(ValueError, match="truth value of an array"):
            jnp.fft.fftfreq(4, dtype=dtype)
    with pytest.raises(TypeError, match="unhashable type"):
        jax.lax.empty((2,), ARRAY)
    for fun in (lambda d: mnp.sum(X, dtype=d), lambda d: mnp.fft.fftfreq(4, dtype=d),
                lambda d: minijax.lax.empty((2,), d)):
        with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
            fun(ARRAY)
        with pytest.raises(TypeError, match="Cannot construct a dtype from an array"):
            fun(np.ones(2, np.float32))


@pins("lax_full_like_takes_an_array_as_dtype")
def test_full_like_array_dtype_pin():
    assert jax.lax.full_like(X, 1, dtype=ARRAY.astype(np.int8)).dtype == np.int8
    with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
        minijax.lax.full_like(X, 1, dtype=ARRAY.astype(np.int8))


# -- jnp.dtype: NumPy's constructor in JAX -----------------------------------------------

def _dtype_outcome(lib, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = lib.dtype(value)
        except Exception as error:      # noqa: BLE001
            result = type(error)
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("value", [ARRAY, np.ones(2), None, np.float32, "bfloat16", "foo",
                                   object, 3], ids=["jax.Array", "NumPy array", "None",
                                                    "scalar type", "bfloat16", "foo",
                                                    "object", "int"])
def test_jnp_dtype_as_in_jax(value):
    # jax 0.10.2 to 0.12.0.1: a jax.Array gives its dtype with a DeprecationWarning.
    assert _dtype_outcome(mnp, value) == _dtype_outcome(jnp, value)


def test_jnp_dtype_of_a_tracer_is_its_dtype():
    seen = {}

    def record(lib, key):
        def f(x):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                seen[key] = (lib.dtype(x), lib.issubdtype(x, lib.floating),
                             lib.isdtype(x, "real floating"), lib.can_cast(x, lib.float32))
            return x
        return f
    jax.jit(record(jnp, "jax"))(X)
    minijax.jit(record(mnp, "minijax"))(X)
    assert seen["minijax"] == seen["jax"]


# -- a 64-bit dtype with x64 off: truncated, with JAX's warning -------------------------------

_WIDE = {"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.uint64}
# JAX keeps the 64-bit type, unwarned, in these (x64 off; 0.10.2 to 0.12.0.1); minijax
# truncates and warns as everywhere else.
_JAX_KEEPS_WIDE = {"lax.empty", "lax.ragged_dot", "lax.ragged_dot_general"}
# JAX truncates `lax.mul`'s `out_dtype` without a word; minijax warns, as for the rest.
_JAX_SILENT = {"lax.mul"}


def _truncation(lib, call, dtype):
    """(the result's dtype under eval_shape, the truncation warnings' texts). Under
    `disable_jit`, so that no jitted function's cached trace (an earlier test's)
    skips the body that warns, in either library."""
    with warnings.catch_warnings(record=True) as caught, lib.disable_jit():
        warnings.simplefilter("always")
        out = lib.eval_shape(lambda: call(lib, dtype))
    texts = [str(w.message) for w in caught if "Explicitly requested" in str(w.message)]
    return jax.tree.leaves(out)[0].dtype, texts


# A 64-bit type these cannot take at all (a buffer's size, conv's operand type); and
# JAX's rayleigh and wald fail under `disable_jit` with one (AttributeError, 0.10.2).
_NO_WIDE_CASE = {"numpy.frombuffer", "numpy.fromstring", "lax.conv", "random.rayleigh",
                 "random.wald"}


@pytest.mark.parametrize("name", [n for n, (_, d) in CASES.items()
                                  if np.dtype(d).kind in _WIDE and n not in _NO_WIDE_CASE])
def test_a_64_bit_dtype_is_truncated_with_jax_s_warning(name):
    call, accepted = CASES[name]
    wide = _WIDE[np.dtype(accepted).kind]
    ours, ours_warned = _truncation(minijax, call, wide)
    theirs, theirs_warned = _truncation(jax, call, wide)
    assert ours == minijax.dtypes.canonicalize_dtype(wide)
    if name not in _JAX_KEEPS_WIDE:
        assert ours == theirs
        assert bool(theirs_warned) == (name not in _JAX_SILENT)
    assert ours_warned
    # JAX's sentence; the function it names is the one the user called, or the one it
    # went through (JAX names its own inner functions too: `std` warns as `var`).
    for text in ours_warned:
        assert text.startswith(f"Explicitly requested dtype {np.dtype(wide)}")
        assert text.endswith(f"is not available, and will be truncated to dtype "
                             f"{ours}. To enable more dtypes, set the jax_enable_x64 "
                             f"configuration option or the JAX_ENABLE_X64 shell "
                             f"environment variable. See "
                             f"https://github.com/jax-ml/jax#current-gotchas for more.")


@pytest.mark.parametrize("name", ["numpy.zeros", "numpy.ones", "numpy.full", "numpy.array",
                                  "numpy.arange", "numpy.linspace", "numpy.eye",
                                  "numpy.astype", "numpy.mean", "numpy.cumsum",
                                  "numpy.einsum", "lax.convert_element_type",
                                  "random.uniform", "random.randint"])
def test_the_truncation_warning_reads_as_jax_s(name):
    call, accepted = CASES[name]
    wide = _WIDE[np.dtype(accepted).kind]
    assert _truncation(minijax, call, wide)[1][0] == _truncation(jax, call, wide)[1][0]


def test_the_truncation_warning_points_at_the_user_s_line():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64") as caught:
        mnp.zeros(2, np.float64)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mnp.zeros(2, np.float32)                 # nothing to truncate: no warning
        mnp.asarray(np.ones(2, np.float64))      # an input's own dtype: no warning
        mnp.zeros(2, int), mnp.ones(2, float), mnp.zeros(2, complex)   # as JAX: none
