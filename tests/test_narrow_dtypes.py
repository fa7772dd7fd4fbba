"""JAX's narrow dtypes (float8_*, float6_*, float4_e2m1fn, int4/uint4, int2/uint2,
int1/uint1) in minijax, each against JAX on the same inputs.

Names, `finfo`/`iinfo`, the promotion lattice (8-bit floats promote implicitly to
nothing), conversions bit for bit (eagerly, under jit, and in the NumPy reference
evaluator), the arithmetic XLA has for them, `dot_general` into float32,
`bitcast_convert_type`, `reduce_precision`, grad of the fake-quant pattern, vmap, the
text form and the interop bridge. XLA on CPU runs no float6 program and no arithmetic
on int1/uint1 (JAX's own programs fail there too), so those compare names, types and
errors only.
"""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.dtypes as mdtypes
import minijax.lax as mlax
import minijax.numpy as mnp
from minijax import interop, ir
from minijax.backends import reference
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.devices import on_cpu
from tests.library_helpers import outcome
from tests.test_divergences import pins

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu"]
FLOAT6 = ["float6_e2m3fn", "float6_e3m2fn"]
INTS = ["int4", "uint4", "int2", "uint2"]
ONE_BIT = ["int1", "uint1"]
NARROW = FLOAT8 + FLOAT6 + ["float4_e2m1fn"] + INTS + ONE_BIT
# The dtypes XLA on CPU computes with (see the module docstring).
RUNNABLE = FLOAT8 + ["float4_e2m1fn"] + INTS
WIDE = ["bool", "int8", "uint8", "int16", "int32", "uint32", "float16", "bfloat16",
        "float32", "complex64"]

F32_SAMPLES = np.array([0.1, 1.3, -2.7, 500., -9., 8.6, 0.0, -0.0, 3e-3, 6.0,
                        np.nan, -np.inf], np.float32)
I32_SAMPLES = np.array([0, 7, 8, -9, 15, 16, 100, -100], np.int32)


def _promotion_outcome(fun, *args):
    out = outcome(lambda: fun(*args))
    return out if isinstance(out, type) else np.dtype(out)


def test_names_dtypes_and_info_match_jax():
    abstract = [np.floating, np.inexact, np.integer, np.signedinteger,
                np.unsignedinteger, np.number, np.generic]
    for name in NARROW:
        mine, theirs = getattr(mnp, name), getattr(jnp, name)
        dtype = jnp.dtype(name)
        assert mine == theirs and mnp.dtype(mine) == dtype == mnp.dtype(name), name
        assert repr(mine) == f"minijax.numpy.{name}"
        for kind in abstract:
            assert mnp.issubdtype(mine, kind) == jnp.issubdtype(theirs, kind), (name, kind)
            assert mdtypes.issubdtype(dtype, kind) == jax.dtypes.issubdtype(dtype, kind)
        for kind in ("integral", "real floating", "numeric", "signed integer"):
            assert mnp.isdtype(mine, kind) == jnp.isdtype(theirs, kind), (name, kind)
        assert mdtypes.itemsize_bits(mine) == jax.dtypes.itemsize_bits(dtype)
        assert mdtypes.canonicalize_dtype(mine) == jax.dtypes.canonicalize_dtype(dtype)
        info = mnp.finfo if name.startswith("float") else mnp.iinfo
        jax_info = jnp.finfo if name.startswith("float") else jnp.iinfo
        fields = ("bits", "eps", "max", "min", "tiny", "nmant", "nexp") \
            if info is mnp.finfo else ("bits", "min", "max")
        for field in fields:
            assert np.array_equal(getattr(info(mine), field), getattr(jax_info(dtype), field),
                                  equal_nan=True), (name, field)
    # JAX's short names ('f8_e4m3fn', the jaxpr text's) are no dtype names to NumPy.
    for bad in ("f8_e4m3fn", "f4_e2m1fn"):
        assert outcome(lambda: mnp.dtype(bad)) is outcome(lambda: jnp.dtype(bad)) is TypeError


def test_promotion_table_matches_jax_including_weak_scalars():
    dtypes = [jnp.dtype(n) for n in NARROW + WIDE]
    for a in dtypes:
        for b in dtypes:
            mine = _promotion_outcome(mnp.promote_types, a, b)
            assert mine == _promotion_outcome(jnp.promote_types, a, b), (a, b, mine)
        for scalar in (True, 1, 1.0, 1j):
            mine = outcome(lambda: mdtypes.result_type(a, scalar, return_weak_type_flag=True))
            theirs = outcome(lambda: jax.dtypes.result_type(a, scalar,
                                                             return_weak_type_flag=True))
            assert mine == theirs, (a, scalar, mine, theirs)
    # The jnp names stand for their dtypes in promotion, as JAX's do.
    for name in NARROW:
        assert _promotion_outcome(mnp.result_type, getattr(mnp, name), 1.0, mnp.int8) == \
            _promotion_outcome(jnp.result_type, getattr(jnp, name), 1.0, jnp.int8), name


def test_mixing_narrow_dtypes_in_an_op_raises_jaxs_error():
    x = np.ones(2, np.float32)
    for lib, np_lib in ((minijax, mnp), (jax, jnp)):
        f8 = np_lib.asarray(x, np_lib.float8_e4m3fn)
        for fun in (lambda a: np_lib.add(a, np_lib.asarray(a, np_lib.float8_e5m2)),
                    lambda a: np_lib.multiply(a, x)):
            with pytest.raises(jax.dtypes.TypePromotionError,
                               match="8-bit floats do not support implicit promotion"):
                fun(f8)
            with pytest.raises(jax.dtypes.TypePromotionError):
                lib.jit(fun)(f8)
        # int4 meets no float implicitly either, not even a Python float
        i4 = np_lib.asarray(x, np_lib.int4)
        with pytest.raises(jax.dtypes.TypePromotionError, match="int4"):
            np_lib.multiply(i4, 2.5)


def _converter(lib, names, float4_hop=False):
    """Each dtype of `names`: floats and ints converted to it, and back to f32/i32.
    `lib.astype`, not the method: an eager minijax value is a jax.Array, whose methods
    are JAX's own. JAX's float4 -> int32 is off at 6.0 (divergence
    float4_six_converts_to_the_int_maximum); with `float4_hop` it goes through f32."""
    def convert(floats, ints):
        out = {}
        for name in names:
            dtype = jnp.dtype(name)
            hop = jnp.float32 if float4_hop and name == "float4_e2m1fn" else dtype
            narrow_ints = lib.astype(ints, dtype)
            out[name] = (lib.astype(floats, dtype),
                         lib.astype(lib.astype(floats, dtype), jnp.float32), narrow_ints,
                         lib.astype(lib.astype(narrow_ints, hop), jnp.int32))
        return out
    return convert


ARGS = (F32_SAMPLES, I32_SAMPLES)


def test_conversions_are_bit_equal_to_jaxs():
    # On the CPU device: XLA's GPU compiler allows excess precision, so inside one
    # program it may drop a round trip through a narrow float (f32 -> float4 -> f32
    # gave back the f32 input on an H200, in JAX's programs and minijax's alike),
    # depending on how it fuses the program (tests/devices.py).
    with on_cpu():
        _check_conversions()


def _check_conversions():
    # All dtypes in one program per side (compiling dominates the test's time).
    expected = jax.jit(_converter(jnp, RUNNABLE, float4_hop=True))(*ARGS)
    convert = _converter(mnp, RUNNABLE)
    assert_trees_match(minijax.jit(convert)(*ARGS), expected)
    closed = minijax.make_jaxpr(convert)(*ARGS)
    assert_trees_match(reference.eval_closed_jaxpr(closed, *ARGS),
                       [np.asarray(v) for v in jax.tree_util.tree_leaves(expected)])
    # Eagerly each conversion is a program of its own, so a few kinds of dtype.
    eager = ["float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint2"]
    assert_trees_match(_converter(mnp, eager)(*map(mnp.asarray, ARGS)),
                       _converter(jnp, eager, float4_hop=True)(*map(jnp.asarray, ARGS)))


@pytest.mark.parametrize("name", FLOAT6 + ONE_BIT)
def test_conversions_xla_cannot_run_fail_or_agree_as_in_jax(name):
    expected = outcome(lambda: jax.jit(_converter(jnp, [name]))(*ARGS))
    if isinstance(expected, type):       # float6 and uint1 on CPU
        assert outcome(lambda: minijax.jit(_converter(mnp, [name]))(*ARGS)) is expected
    else:                                # int1: XLA's values, which minijax's are
        assert_trees_match(minijax.jit(_converter(mnp, [name]))(*ARGS), expected)


def test_array_creation_and_printing():
    x = np.array([0.3, -1.7, 2.0], np.float32)
    for name in ("float8_e4m3fn", "float4_e2m1fn", "int4", "uint2"):
        mine, theirs = getattr(mnp, name), getattr(jnp, name)
        pairs = [(mnp.zeros(3, dtype=mine), jnp.zeros(3, dtype=theirs)),
                 (mnp.ones((2,), mine), jnp.ones((2,), theirs)),
                 (mnp.full(2, 1, mine), jnp.full(2, 1, theirs)),
                 (mnp.asarray(x, dtype=mine), jnp.asarray(x, dtype=theirs)),
                 (mnp.array(np.asarray(x, ml_dtypes.float8_e5m2), mine),
                  jnp.array(np.asarray(x, ml_dtypes.float8_e5m2), theirs)),
                 (mnp.astype(mnp.asarray(x), mine), jnp.astype(jnp.asarray(x), theirs)),
                 (mine(1), theirs(1))]
        if name in ("float4_e2m1fn", "uint2"):    # the kinds are covered; fewer programs
            pairs = pairs[3:4]
        for got, want in pairs:
            assert_trees_match(got, want)
            assert repr(got) == repr(want)
    # A NumPy array of a narrow dtype is data as any other.
    data = np.asarray(x, ml_dtypes.int4)
    assert_trees_match(mnp.asarray(data), jnp.asarray(data))


def _arithmetic(lib):
    def ops(a, b):
        # lib's functions, not operators: eager minijax values are jax.Arrays
        return {"add": lib.add(a, b), "mul": lib.multiply(a, b), "max": lib.maximum(a, b),
                "lt": lib.less(a, b), "eq": lib.equal(a, b), "neg": lib.negative(a),
                "weak_scalar": lib.add(lib.multiply(a, 2), 1),
                "wrapping_int_scalar": lib.add(a, 100)}    # int4: 100 wraps to 4
    return ops


def test_arithmetic_and_comparisons_match_jax():
    names = ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "uint4"]
    pairs = {n: (np.asarray(F32_SAMPLES[:8], jnp.dtype(n)),
                 np.asarray(F32_SAMPLES[4:], jnp.dtype(n))) for n in names}

    def run(lib):
        return lambda pairs: {n: _arithmetic(lib)(*ab) for n, ab in pairs.items()}
    assert_trees_match(minijax.jit(run(mnp))(pairs), jax.jit(run(jnp))(pairs))
    for name in ("float8_e4m3fn", "int4"):     # eagerly: one program per op, so fewer
        a, b = pairs[name]
        assert_trees_match(_arithmetic(mnp)(mnp.asarray(a), mnp.asarray(b)),
                           _arithmetic(jnp)(jnp.asarray(a), jnp.asarray(b)))


def test_dot_general_into_float32():
    dims = (((1,), (0,)), ((), ()))
    x = np.array([[0.5, -1.25, 3.0], [2.0, 0.1, -0.7]], np.float32)
    y = np.array([[1.5, -2.0], [0.25, 4.0], [-3.0, 0.5]], np.float32)
    for lhs, rhs, out in (("float8_e4m3fn", "float8_e4m3fn", np.float32),
                          ("float8_e5m2", "float8_e5m2", np.float32),
                          ("int4", "int4", None)):
        a, b = np.asarray(x, jnp.dtype(lhs)), np.asarray(y, jnp.dtype(rhs))

        def dot(lax):
            return lambda p, q: lax.dot_general(p, q, dims, preferred_element_type=out)
        assert_trees_match(dot(mlax)(a, b), dot(jax.lax)(a, b))
        assert_trees_match(minijax.jit(dot(mlax))(a, b), jax.jit(dot(jax.lax))(a, b))
    # XLA on CPU cannot widen int4 operands inside a dot (JAX's own program fails).
    a, b = np.asarray(x, jnp.int4), np.asarray(y, jnp.int4)
    mine = outcome(lambda: mlax.dot_general(a, b, dims, preferred_element_type=np.int32))
    theirs = outcome(lambda: jax.lax.dot_general(a, b, dims,
                                                   preferred_element_type=np.int32))
    if jax.default_backend() == "cpu":
        assert mine is theirs is jax.errors.JaxRuntimeError
    else:
        assert_trees_match(mine, theirs)
    # lax.dot_general takes operands of different dtypes (float8 weights, float32
    # activations) and computes in the wider one.
    a, b = np.asarray(x, jnp.float8_e4m3fn), y
    assert_trees_match(mlax.dot_general(a, b, dims), jax.lax.dot_general(a, b, dims))
    assert_trees_match(minijax.jit(mlax.dot_general, static_argnums=2)(a, b, dims),
                       jax.jit(jax.lax.dot_general, static_argnums=2)(a, b, dims))


def test_bitcast_and_reduce_precision_match_jax():
    f8 = np.asarray(F32_SAMPLES, jnp.float8_e4m3fn)
    cases = [
        (lambda lax: lambda v: lax.bitcast_convert_type(v, np.uint8), f8),
        (lambda lax: lambda v: lax.bitcast_convert_type(v, jnp.float8_e5m2), f8),
        (lambda lax: lambda v: lax.bitcast_convert_type(
            lax.bitcast_convert_type(v, np.int8), jnp.float8_e4m3fn), f8),
        (lambda lax: lambda v: lax.reduce_precision(v, exponent_bits=4,
                                                    mantissa_bits=3), F32_SAMPLES),
        (lambda lax: lambda v: lax.reduce_precision(v, exponent_bits=2,
                                                    mantissa_bits=1), f8),
    ]
    for make, arg in cases:
        assert_trees_match(make(mlax)(arg), make(jax.lax)(arg))
        assert_trees_match(minijax.jit(make(mlax))(arg), jax.jit(make(jax.lax))(arg))


def _fake_quant(np_lib):
    def loss(x, w):
        q = x.astype(np_lib.float8_e4m3fn).astype(np_lib.float32)
        return np_lib.sum(q * w) + np_lib.sum(x.astype(np_lib.float8_e5m2)
                                               .astype(np_lib.float32) ** 2)
    return loss


def test_grad_through_the_fake_quant_pattern_and_vmap():
    x = F32_SAMPLES[:6]
    w = np.linspace(-1, 1, 6, dtype=np.float32)
    assert_trees_match(minijax.grad(_fake_quant(mnp))(x, w),
                       jax.grad(_fake_quant(jnp))(x, w))
    grads = (minijax.jit(minijax.grad(_fake_quant(mnp), argnums=(0, 1)))(x, w),
             jax.jit(jax.grad(_fake_quant(jnp), argnums=(0, 1)))(x, w))
    assert_trees_match(*grads)
    rows = F32_SAMPLES.reshape(3, 4)

    def quantize_row(np_lib):
        return lambda r: (r.astype(np_lib.float8_e4m3fn) * 2).astype(np_lib.int4)
    assert_trees_match(minijax.vmap(quantize_row(mnp))(rows),
                       jax.vmap(quantize_row(jnp))(rows))


def _program(np_lib):
    consts = (np.array([1.5, np.nan, -0.0, 448.], ml_dtypes.float8_e4m3fn),
              np.array([1, -2, 7, -8], ml_dtypes.int4))

    def f(x):
        q = x.astype(np_lib.float8_e4m3fn) + np_lib.asarray(consts[0])
        i = x.astype(np_lib.int4) * np_lib.asarray(consts[1])
        return q * np.array(3, ml_dtypes.float8_e4m3fn), i, x.astype(np_lib.float4_e2m1fn)
    return f


def test_text_form_round_trip_verifier_and_interop():
    x = F32_SAMPLES[:4]
    closed = minijax.make_jaxpr(_program(mnp))(x)
    ir.verify_jaxpr(closed)
    text = ir.dumps(closed)
    assert "f8_e4m3fn[4] = [1.5, nan, -0.0, 448.0]" in text
    assert "i4[4] = [1, -2, 7, -8]" in text
    assert "3.0:f8_e4m3fn[]" in text
    again = ir.loads(text)
    assert ir.dumps(again) == text
    # The types print as JAX's jaxprs print them.
    theirs = str(jax.make_jaxpr(_program(jnp))(x))
    for short in ("f8_e4m3fn[4]", "i4[4]", "f4_e2m1fn[4]"):
        assert short in theirs and short in str(closed)
    want = jax.jit(_program(jnp))(x)
    assert_trees_match(minijax.jit(_program(mnp))(x), want)
    assert_trees_match(reference.eval_closed_jaxpr(again, x), list(want))
    assert_trees_match(jax.jit(interop.to_jax(closed))(x), list(want))
    namespace = {}
    exec(interop.to_python_source(closed), namespace)    # a standalone reproducer
    assert_trees_match(jax.jit(namespace["program"])(x), want)
    imported = interop.trace_with_jax(_program(jnp))(x)
    assert [v.aval.type_text() for v in imported.jaxpr.outvars] == ["f8_e4m3fn[4]", "i4[4]",
                                                             "f4_e2m1fn[4]"]


def test_text_form_refuses_out_of_range_narrow_ints():
    text = "{ lambda a:i4[2] = [3, 8]; . let  in (a,) }"
    with pytest.raises(ir.ParseError, match="8 out of bounds for int4"):
        ir.loads(text)


@pins("convert_of_a_numpy_float_to_int_eagerly_wraps")
def test_eager_convert_of_numpy_floats_saturates_as_under_jit():
    x = np.array([500., -300., 1e10], np.float32)
    saturated = {"int4": [7, -8, 7], "int8": [127, -128, 127],
                 "int32": [500, -300, 2**31 - 1]}
    # jax 0.11 converts NumPy operands eagerly with NumPy's astype, which wraps
    wrapped = {"int4": [4, 4, 0], "int8": [-12, -44, 0], "int32": [500, -300, -2**31]}
    for name, want in saturated.items():
        dtype = jnp.dtype(name)
        with np.errstate(invalid="ignore"):    # NumPy's own complaint about 1e10
            jax_eager = jax.lax.convert_element_type(x, dtype).tolist()
        assert jax_eager == (wrapped[name] if JAX_VERSION >= (0, 11) else want)
        assert jax.jit(lambda a: jax.lax.convert_element_type(a, dtype))(x) \
            .tolist() == want
        assert mlax.convert_element_type(x, dtype).tolist() == want
        assert minijax.jit(lambda a: mlax.convert_element_type(a, dtype))(x) \
            .tolist() == want


@pins("float4_six_converts_to_the_int_maximum")
def test_float4_six_converts_to_six():
    x = np.array([1.5, 6.0, -6.0, -4.0], np.float32)

    def to_ints(lib):
        return lambda a: lib.astype(lib.astype(a, lib.float4_e2m1fn), lib.int32)
    if jax.default_backend() == "cpu":      # the record is of XLA's CPU conversion
        assert jax.jit(to_ints(jnp))(x).tolist() == [1, 2**31 - 1, -2**31, -4]
    assert minijax.jit(to_ints(mnp))(x).tolist() == [1, 6, -6, -4]
    assert mnp.astype(mnp.astype(x, mnp.float4_e2m1fn), mnp.int32).tolist() == [1, 6, -6, -4]


def test_the_repl_shows_narrow_values_as_numbers():
    from minijax.repl.render import format_value
    assert format_value(np.array([1.5, 2], ml_dtypes.float8_e4m3fn)) == "[1.5, 2]"
    assert format_value(np.array([1, -2], ml_dtypes.int4)) == "[1, -2]"
    assert format_value(np.zeros(2, minijax.dtypes.float0)) == "float0[2]"
