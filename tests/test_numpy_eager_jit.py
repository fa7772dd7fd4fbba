"""Eager jnp calls through one cached compiled program (`minijax/frontend/eager_jit.py`).

The jnp functions that JAX itself jits run an eager call with plain operands as one
`minijax.jit` program, with JAX's static arguments, and inline under every other
trace. Each case runs twice (the second call is a cache hit) against JAX: values,
dtypes and weak types; errors keep their types and messages; refs, large Python
ints, unhashable static arguments and NaN checking keep the direct path.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match

_X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
_I8 = np.arange(1, 7, dtype=np.int8).reshape(2, 3)   # no zero: no division by zero

OPERANDS = {
    "jax f32": lambda: jnp.asarray(_X),
    "numpy f64": lambda: _X.astype(np.float64),
    "numpy i8": lambda: _I8.copy(),
    "jax bool": lambda: jnp.asarray(_X > 0),
    "numpy f32 scalar": lambda: np.float32(0.5),
    "python float": lambda: 0.5,
    "python int": lambda: 3,
    "python bool": lambda: True,
}

UNARY = ["sin", "exp", "sqrt", "floor", "negative", "absolute", "square", "sign",
         "log1p", "cbrt", "rint", "reciprocal", "fabs", "isfinite",
         "logical_not", "invert", "positive", "deg2rad"]
BINARY = ["add", "multiply", "subtract", "true_divide", "maximum", "less",
          "arctan2", "logical_and", "bitwise_and", "equal", "floor_divide", "remainder",
          "fmod", "fmax", "fmin", "copysign", "float_power"]


_ERRORS = (TypeError, ValueError, OverflowError)


def _minijax_outcome(name, *operands):
    """minijax's eager result of `mnp.<name>(*operands)`, or the type of its error."""
    try:
        return getattr(mnp, name)(*operands)
    except _ERRORS as error:
        return type(error)


def _jax_outcomes(calls, *operands):
    """JAX's outcome of every call in `calls` (a key -> function of `operands`): a
    result, or the type of the exception the call raised. The calls are traced into
    one `jax.jit` program: these jnp functions are jitted by JAX, so an eager call is
    already the same trace as a jit argument of each operand (a Python scalar weak, a
    NumPy array strong), and the outputs' dtypes and weak types are the same; only the
    number of programs JAX compiles for the oracle changes (one, not one per call).
    Their errors come from the same checks, made while tracing."""
    errors = {}

    def every_call(*traced):
        results = {}
        for key, call in calls.items():
            try:
                results[key] = call(*traced)
            except _ERRORS as error:
                errors[key] = type(error)
        return results
    return {**jax.jit(every_call)(*operands), **errors}


def _assert_same(name, mini, ref):
    if isinstance(ref, type) or isinstance(mini, type):
        # An error on one side must be one on the other (minijax's sign and
        # negative refuse bools, as JAX does; its bitwise ops refuse floats).
        assert isinstance(mini, type) and isinstance(ref, type), (name, mini, ref)
        return
    assert_trees_match(mini, ref, rtol=1e-6, what=name)


@pytest.mark.parametrize("kind", OPERANDS)
def test_unary_eager_matches_jax_on_each_operand_kind(kind):
    expected = _jax_outcomes({name: getattr(jnp, name) for name in UNARY}, OPERANDS[kind]())
    for name in UNARY:
        for _ in range(2):
            _assert_same(name, _minijax_outcome(name, OPERANDS[kind]()), expected[name])


@pytest.mark.parametrize("kind", ["jax f32", "numpy i8", "jax bool", "python float",
                                  "python int", "numpy f32 scalar"])
def test_binary_eager_matches_jax_with_an_array_and_each_operand_kind(kind):
    # minijax's float floor_divide by zero is nan, JAX's +-inf
    names = [name for name in BINARY if not (
        kind == "jax bool" and name in ("floor_divide", "remainder", "fmod"))]
    # (the operand first, then second: against a float array, then an int8 one)
    calls = {(name, first): (lambda x, other, i8, f=getattr(jnp, name), first=first:
                             f(other, i8) if first else f(x, other))
             for name in names for first in (False, True)}
    expected = _jax_outcomes(calls, jnp.asarray(_X), OPERANDS[kind](), jnp.asarray(_I8))
    for name in names:
        for first, operands in [(False, (jnp.asarray(_X), OPERANDS[kind]())),
                                (True, (OPERANDS[kind](), jnp.asarray(_I8)))]:
            for _ in range(2):
                _assert_same(name, _minijax_outcome(name, *operands), expected[name, first])


@pytest.mark.parametrize("call", [
    lambda m, x: m.sum(x), lambda m, x: m.sum(x, axis=0), lambda m, x: m.sum(x, 1),
    lambda m, x: m.sum(x, axis=(0, 1), keepdims=True), lambda m, x: m.sum(x, dtype=np.int32),
    lambda m, x: m.prod(x, axis=-1), lambda m, x: m.max(x, axis=1, keepdims=True),
    lambda m, x: m.min(x, initial=0.0), lambda m, x: m.mean(x, axis=0),
    lambda m, x: m.mean(x, dtype=np.float32), lambda m, x: m.any(x, axis=0),
    lambda m, x: m.all(x), lambda m, x: m.argmax(x, axis=1), lambda m, x: m.argmin(x),
    lambda m, x: m.argmax(x, axis=0, keepdims=True),
    lambda m, x: m.dot(x, m.transpose(x)), lambda m, x: m.matmul(m.transpose(x), x),
    lambda m, x: m.dot(x, np.float32(2.0)), lambda m, x: m.matmul(x, np.ones(3, np.float32),
                                                       precision="highest"),
])
@pytest.mark.parametrize("kind", ["jax f32", "numpy i8"])
def test_reductions_and_products_with_static_arguments_match_jax(call, kind):
    for _ in range(2):
        assert_trees_match(call(mnp, OPERANDS[kind]()), call(jnp, OPERANDS[kind]()),
                           rtol=1e-6)


_XS = np.linspace(-1, 1, 5, dtype=np.float32)
_NAN_X = np.where(_X > 0.5, np.nan, _X).astype(np.float32)
_INTS = np.array([12, -18, 0, 7], np.int32)

# The other jnp functions JAX jits, each with its static arguments and an operand the
# body takes traced (q, ddof, period, a weight, a spacing, a Python float).
WHOLE_PROGRAM_CALLS = {
    "nanvar": lambda m: m.nanvar(_NAN_X, axis=1, ddof=1),
    "nanstd": lambda m: m.nanstd(_NAN_X, keepdims=True),
    "nanquantile": lambda m: m.nanquantile(_NAN_X, jnp.asarray([0.25, 0.5]), axis=0,
                                           method="midpoint"),
    "nanpercentile": lambda m: m.nanpercentile(_NAN_X, 40.0, axis=1),
    "nanmedian": lambda m: m.nanmedian(_NAN_X, axis=0, keepdims=True),
    "cov": lambda m: m.cov(_X, rowvar=False, ddof=0, aweights=_XS[:2] + 2),
    "corrcoef": lambda m: m.corrcoef(_X),
    "digitize": lambda m: m.digitize(_XS, np.array([-0.5, 0., 0.5], np.float32), right=True),
    "searchsorted": lambda m: m.searchsorted(_XS, 0.1, side="right"),
    "polyfit": lambda m: m.polyfit(_XS, _XS ** 2, 2, w=_XS + 2, cov=True),
    "polyadd": lambda m: m.polyadd(_XS, _XS[:2]),
    "polysub": lambda m: m.polysub(_XS[:2], _XS),
    "polyder": lambda m: m.polyder(_XS, 2),
    "polyint": lambda m: m.polyint(_XS, 2, k=0.5),
    "poly": lambda m: m.poly(_XS[:3]),
    "gradient": lambda m: (m.gradient(_X, 0.5, axis=1), m.gradient(_X, _XS[:2], _XS[2:])),
    "vander": lambda m: m.vander(_XS, 3, increasing=True),
    "packbits": lambda m: m.packbits(_I8 % 2, axis=1, bitorder="little"),
    "unpackbits": lambda m: m.unpackbits(_I8.astype(np.uint8), axis=0, count=5),
    "i0": lambda m: m.i0(_X),
    "ldexp": lambda m: m.ldexp(_X, _I8.astype(np.int32)),
    "frexp": lambda m: m.frexp(_X),
    "modf": lambda m: m.modf(_X),
    "gcd": lambda m: m.gcd(_INTS, 6),
    "lcm": lambda m: m.lcm(_INTS, _INTS[::-1]),
    "nextafter": lambda m: m.nextafter(_X, 0.0),
    "spacing": lambda m: m.spacing(_X),
    "sort_complex": lambda m: m.sort_complex(_XS[::-1]),
    "unwrap": lambda m: m.unwrap(_XS * 4, period=3.0, axis=0),
    "isclose": lambda m: m.isclose(_NAN_X, _X, rtol=0.1, equal_nan=True),
    "allclose": lambda m: m.allclose(_X, _X + 1e-3, atol=1e-2),
    "tril": lambda m: m.tril(_X, k=1),
    "triu": lambda m: m.triu(_I8, -1),
    "kron": lambda m: m.kron(_X, _I8),
    "clip": lambda m: (m.clip(_X, -0.5, 0.5), m.clip(_I8, max=3)),
    "round": lambda m: (m.round(_X * 7, decimals=1), m.round(_I8)),
    "diff": lambda m: m.diff(_X, n=2, axis=1, prepend=0.5),
    "cross": lambda m: m.cross(_X, _X[::-1], axis=1),
    "convolve": lambda m: m.convolve(_XS, _XS[:3], mode="same"),
    "correlate": lambda m: m.correlate(_XS, _XS[:2] + 1, "full"),
    "ptp": lambda m: m.ptp(_X, axis=1, keepdims=True),
    "count_nonzero": lambda m: m.count_nonzero(_I8 % 2, axis=0),
    "var": lambda m: (m.var(_X, axis=1, ddof=1), m.var(_I8, ddof=5), m.var(_X, correction=0.5)),
    "std": lambda m: (m.std(_X, keepdims=True, ddof=2), m.std(_I8, axis=0, dtype=np.float32)),
    "average": lambda m: (m.average(_X, axis=1, weights=_XS[:3] + 2, returned=True),
                          m.average(_I8, keepdims=True)),
    "cumsum": lambda m: (m.cumsum(_X, axis=1), m.cumsum(_I8, dtype=np.int16)),
    "cumprod": lambda m: m.cumprod(_X[0] > 0),
    "nancumsum": lambda m: m.nancumsum(_NAN_X, axis=0, dtype=np.float32),
    "nancumprod": lambda m: m.nancumprod(_NAN_X),
    "median": lambda m: (m.median(_X, axis=1, keepdims=True), m.median(_I8)),
    "linspace": lambda m: (m.linspace(-1.0, 1.0, 8), m.linspace(_XS[:2], 2.0, 4, axis=1),
                           m.linspace(0.0, 9.0, 4, endpoint=False, retstep=True)),
    "quantile": lambda m: (m.quantile(_X, np.array([0.25, 0.5], np.float32), axis=1),
                           m.quantile(_NAN_X, 0.3, method="nearest")),
    "percentile": lambda m: m.percentile(_X, 40.0, axis=0, method="midpoint", keepdims=True),
    "roll": lambda m: (m.roll(_X, 2), m.roll(_X, (1, -4), axis=(0, 1)), m.roll(_I8, -1, 1)),
    "sort": lambda m: (m.sort(_X, axis=0, descending=True), m.sort(_I8, axis=None)),
    "argsort": lambda m: m.argsort(_X[::-1], axis=1, stable=True, descending=True),
    "take": lambda m: (m.take(_X, np.array([2, -1, 5]), axis=1),
                       m.take(_I8, np.array([0, 7]), mode="clip"),
                       m.take(_X, np.array([[0, 9]]), axis=1, fill_value=-2.0)),
    "take_along_axis": lambda m: (m.take_along_axis(_X, np.array([[2], [0]]), axis=1),
                                  m.take_along_axis(_X, np.array([[1, 5, -1]]), 0,
                                                    fill_value=3.0)),
}


def test_more_functions_run_eagerly_as_one_cached_program():
    # JAX's side: every call in one jax.jit program (see _jax_outcomes)
    expected = _jax_outcomes({name: lambda call=call: call(jnp)
                              for name, call in WHOLE_PROGRAM_CALLS.items()})
    for name, call in WHOLE_PROGRAM_CALLS.items():
        for _ in range(2):
            assert_trees_match(call(mnp), expected[name], rtol=2e-5, atol=1e-6, what=name)
        assert getattr(mnp, name).eager_jit.call_cache().fast is not None, name


def test_static_argnames_after_star_args_name_no_position():
    # gradient(f, *varargs, axis=None): `axis` has no position, so a second spacing
    # array is an operand, not a static argument (as in JAX's jit).
    def scaled(x, *weights, axis=None, power=2):
        return sum(w * mnp.sum(x ** power, axis=axis) for w in weights)
    args = (_XS, jnp.asarray(2.0), jnp.asarray(3.0))   # unhashable: never static
    for static in (("axis", "power"), ("axis",)):
        assert_trees_match(minijax.jit(scaled, static_argnames=static)(*args, axis=0, power=3),
                           jax.jit(lambda x, *w, axis=None, power=2: sum(
                               v * jnp.sum(x ** power, axis=axis) for v in w),
                               static_argnames=static)(*args, axis=0, power=3), rtol=1e-6)


def test_traced_programs_hold_the_body_inline():
    def f(x, y):
        return mnp.sum(mnp.sin(x) * y, axis=0) + mnp.dot(x, y)
    x = jnp.ones(3)
    for _ in range(2):      # before and after the eager calls made their programs
        f(x, x)
        jaxpr = minijax.make_jaxpr(f)(x, x).jaxpr
        names = [e.primitive.name for e in jaxpr.eqns]
        assert "jit" not in names and "sin" in names and "reduce_sum" in names
    assert_trees_match(minijax.grad(lambda x: mnp.sum(mnp.sin(x)))(x),
                       jax.grad(lambda x: jnp.sum(jnp.sin(x)))(x))
    assert_trees_match(minijax.vmap(lambda v: mnp.dot(v, v))(jnp.ones((2, 3))),
                       jax.vmap(lambda v: jnp.dot(v, v))(jnp.ones((2, 3))))
    assert_trees_match(minijax.jit(lambda x: mnp.add(x, 1))(x), jnp.add(x, 1))


def test_plain_operands_run_the_cached_program_and_clear_caches_resets_it():
    x = jnp.ones(3)
    mnp.cos(x)
    assert mnp.cos.eager_jit.call_cache().fast is not None
    minijax.clear_caches()
    assert mnp.cos.eager_jit.call_cache().fast is None
    assert_trees_match(mnp.cos(x), jnp.cos(x))
    minijax.clear_caches()
    with minijax.disable_jit():       # op by op: no program is made
        assert_trees_match(mnp.cos(x), jnp.cos(x))
        assert mnp.cos.eager_jit.call_cache().fast is None


def test_errors_keep_their_types_and_messages_on_every_call():
    bools = jnp.asarray([True, False])
    for _ in range(2):
        with pytest.raises(TypeError, match="subtract does not accept dtype bool"):
            mnp.subtract(bools, bools)
        with pytest.raises(TypeError, match="expected an array, a Python scalar"):
            mnp.sin("a")
        with pytest.raises(TypeError, match="expected an array, a Python scalar"):
            mnp.sin(None)
        with pytest.raises(TypeError, match="arrays of dtype <U1 are not supported"):
            mnp.sin(np.array(["a"]))    # minijax's message, not JAX's argument check
        with pytest.raises(TypeError):        # lists are refused, as JAX does
            mnp.add([1.0], jnp.ones(1))
        with pytest.raises(ValueError):
            mnp.sum(jnp.ones(3), axis=1)
        with pytest.raises(TypeError):
            jnp.dot(jnp.ones(3), jnp.ones(4))
        with pytest.raises(TypeError):
            mnp.dot(jnp.ones(3), jnp.ones(4))


def test_python_ints_the_body_checks_keep_the_direct_path():
    # Outside 0..127 the body converts a Python int to the promoted dtype (wrapping,
    # as JAX does), or refuses one the weak int32 cannot hold.
    for _ in range(2):
        assert_trees_match(mnp.add(jnp.asarray(_I8), 1000), jnp.add(jnp.asarray(_I8), 1000))
        with pytest.raises(OverflowError, match="too large to convert to int32"):
            mnp.add(jnp.ones(2, jnp.int32), 2 ** 40)
        assert_trees_match(mnp.add(jnp.ones(2, jnp.int32), -5),
                           jnp.add(jnp.ones(2, jnp.int32), -5))
        assert_trees_match(mnp.multiply(jnp.asarray(_X), 10 ** 6),
                           jnp.multiply(jnp.asarray(_X), 10 ** 6))


def test_unhashable_static_arguments_take_the_direct_path():
    x = jnp.asarray(_X)
    for _ in range(2):
        assert_trees_match(mnp.sum(x, axis=[0, 1]), jnp.sum(x, axis=(0, 1)))


def test_ref_operands_keep_the_direct_path_and_its_error():
    ref = minijax.new_ref(jnp.arange(3.0))
    for _ in range(2):
        with pytest.raises(TypeError, match="a ref is not an array"):
            mnp.sin(ref)
        with pytest.raises(TypeError, match="a ref is not an array"):
            mnp.add(ref, 1.0)


def test_debug_nans_names_the_operation():
    minijax.config.update("jax_debug_nans", True)
    try:
        for _ in range(2):
            with pytest.raises(FloatingPointError, match="encountered in log"):
                mnp.log(jnp.asarray([-1.0]))
            with pytest.raises(FloatingPointError, match="encountered in div"):
                mnp.true_divide(jnp.zeros(2), 0.0)
            assert_trees_match(mnp.log(jnp.ones(2)), jnp.log(jnp.ones(2)))
    finally:
        minijax.config.update("jax_debug_nans", False)


def test_newly_compiled_functions_keep_their_errors_and_direct_paths():
    for _ in range(2):    # the checks run while tracing, on every new signature
        with pytest.raises(ValueError, match="order must be non-negative"):
            mnp.diff(_X, n=-1)
        with pytest.raises(ValueError, match="Dimension must be either 2 or 3"):
            mnp.cross(_X, _X[:, :1], axis=1)
        with pytest.raises(ValueError, match="mode must be one of"):
            mnp.convolve(_XS, _XS, mode="bad")
        with pytest.raises(ValueError, match="must have the same number of dimensions"):
            mnp.take_along_axis(_X, np.array([0]), axis=0)
        with pytest.raises(ValueError, match="indices must be integers"):   # JAX's type
            mnp.take(_X, np.array([0.5]))
        with pytest.raises(ValueError, match="bool inputs are not supported"):
            mnp.round(np.array([True]))
    # An array shift and a traced ddof are operands, as in JAX.
    assert_trees_match(mnp.roll(_X, jnp.asarray(2), axis=1),
                       jnp.roll(_X, jnp.asarray(2), axis=1))
    assert_trees_match(minijax.jit(lambda d: mnp.var(_X, ddof=d))(1),
                       jax.jit(lambda d: jnp.var(_X, ddof=d))(1), rtol=1e-6)


def test_eager_linspace_rounds_as_jax_does():
    # JAX's linspace is one jitted program, whose fused interpolation rounds one point
    # of (-1, 1, 8) 1 ulp away from the op-by-op result minijax gave before it ran
    # whole. (1, 5, 4) and (0.1, 7.3, 13) tell JAX 0.12's formula from the older one
    # (backends/jax_features.py, LINSPACE_SCALES_STOP_FIRST): bit for bit on each.
    def points(m):
        return [m.linspace(-1.0, 1.0, 8), m.linspace(1.0, 5.0, 4), m.linspace(0.1, 7.3, 13),
                m.linspace(1 + 1j, 3 - 2j, 4), m.linspace(0.0, 3.0, 7, dtype=m.bfloat16),
                m.histogram_bin_edges(np.array([3.0, 1.0, 2.0, 5.0, 4.0], np.float32), 3)]
    for got, want in zip(points(mnp), points(jnp)):
        assert got.dtype == want.dtype
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)
