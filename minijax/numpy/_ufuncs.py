"""Elementwise functions: arithmetic, comparisons, logic, bit operations, math.

Each function promotes its operands (`_promotion.py`), broadcasts them, and applies
`minijax.lax` operations. Where NumPy's meaning differs from the XLA primitive's, the
difference is spelled out here as further `lax` operations, as jnp does:

* `floor_divide` / `remainder` round toward minus infinity (NumPy), while `div` and
  `rem` truncate toward zero (C and XLA);
* `true_divide` of integers computes in float32;
* `power` with a Python int exponent is `integer_pow` (exact, and differentiable at
  zero), and integer `power` with an array exponent is binary exponentiation;
* `add`/`multiply` of bools are `or`/`and`, since XLA has no boolean arithmetic.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..ir.trace import Tracer
from ._promotion import (PY_SCALARS, as_operand, as_array, shape_of, dtype_of, convert,
                         like, strong_like, lax_const_like, is_weak, promote_args,
                         promote_args_inexact, promote_args_numeric, promote_dtypes,
                         result_type, broadcast_shapes, broadcast_to_shape, is_bool,
                         is_integer, is_inexact, is_complex, is_float)
from ..frontend.eager_jit import jitted_eagerly


def _unsigned(dtype) -> bool:
    return np.dtype(dtype).kind == "u"


def _check(fname, x, accepts, what):
    if not accepts(dtype_of(x)):
        raise TypeError(f"{fname} does not accept dtype {dtype_of(x).name}; it needs "
                        f"{what} operands")


# -- float functions: integer and bool inputs compute in float32 ----------------------

def _float_unary(fname, op, real_only=False):
    def fn(x, /):
        x, = promote_args_inexact(fname, x)
        if real_only:
            _check(fname, x, lambda d: not is_complex(d), "real")
        return op(x)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`, elementwise (integer inputs compute in float32)."
    return jitted_eagerly()(fn)


sin, cos, tan = (_float_unary(n, f) for n, f in [("sin", lax.sin), ("cos", lax.cos),
                                                 ("tan", lax.tan)])
arcsin, arccos, arctan = (_float_unary(n, f) for n, f in [
    ("arcsin", lax.asin), ("arccos", lax.acos), ("arctan", lax.atan)])
sinh, cosh, tanh = (_float_unary(n, f) for n, f in [("sinh", lax.sinh), ("cosh", lax.cosh),
                                                    ("tanh", lax.tanh)])
arcsinh, arccosh, arctanh = (_float_unary(n, f) for n, f in [
    ("arcsinh", lax.asinh), ("arccosh", lax.acosh), ("arctanh", lax.atanh)])
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh
exp = _float_unary("exp", lax.exp)
exp2 = _float_unary("exp2", lax.exp2)
expm1 = _float_unary("expm1", lax.expm1)
log = _float_unary("log", lax.log)
log1p = _float_unary("log1p", lax.log1p)
sqrt = _float_unary("sqrt", lax.sqrt)
cbrt = _float_unary("cbrt", lax.cbrt, real_only=True)


def rint(x, /):
    """Round half to even; integers and bools become (strong) float32, as in JAX."""
    x = as_operand("rint", x)
    if not is_inexact(dtype_of(x)):
        return as_array(convert("rint", x, np.float32))
    if is_complex(dtype_of(x)):   # each part on its own, as JAX
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@jitted_eagerly()
def log10(x, /):
    """`jnp.log10`: the natural log times 1/log(10), as JAX computes it (which can differ
    from dividing by log(10) in the last bit)."""
    x, = promote_args_inexact("log10", x)
    # JAX's constant is strong, so even a Python scalar gives a strong result.
    return lax.mul(lax.log(x), strong_like(x, 1 / float(np.log(10))))


# JAX >= 0.11's one primitive, so a Python scalar's log2 stays weak (JAX 0.10 divided
# by a strong log(2), which made it strong).
log2 = _float_unary("log2", lax.log2)


def reciprocal(x, /):
    """`jnp.reciprocal`: `1 / x`, computed in floating point."""
    x, = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def deg2rad(x, /):
    x, = promote_args_inexact("deg2rad", x)
    return lax.mul(x, like(x, float(np.pi / 180)))


def rad2deg(x, /):
    x, = promote_args_inexact("rad2deg", x)
    return lax.mul(x, like(x, float(180 / np.pi)))


radians, degrees = deg2rad, rad2deg


# -- rounding: the identity on integers and bools -----------------------------------------

def _rounding(fname, op):
    def fn(x, /):
        x = as_operand(fname, x)
        if not is_inexact(dtype_of(x)):
            return as_array(x)
        _check(fname, x, lambda d: not is_complex(d), "real")
        return op(x)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`; integers and bools are returned unchanged."
    return jitted_eagerly()(fn)


floor = _rounding("floor", lax.floor)
ceil = _rounding("ceil", lax.ceil)
trunc = _rounding("trunc", lambda x: lax.select(lax.lt(x, like(x, 0)),
                                                lax.ceil(x), lax.floor(x)))


@jitted_eagerly("decimals")
def round(a, decimals: int = 0, out=None):
    """`jnp.round`: half to even, at `decimals` places (ints unchanged; complex
    numbers part by part)."""
    if out is not None:
        raise NotImplementedError("round: the out argument is not supported")
    a = as_operand("round", a)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an integer, got {decimals!r}") from None
    dtype = dtype_of(a)
    if is_bool(dtype):
        raise ValueError("round: bool inputs are not supported, as in JAX")
    if not is_inexact(dtype):
        if decimals < 0:
            raise NotImplementedError("round: negative decimals for integers")
        return as_array(a)
    if is_complex(dtype):   # each part on its own, as JAX
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    even = lax.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return lax.round(a, even)
    # As NumPy: scale, round, scale back, computing half floats in f32.
    work = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    x = convert("round", a, work)
    factor = convert("round", float(10 ** decimals), work)
    return convert("round", lax.div(lax.round(lax.mul(x, factor), even), factor), dtype)


around = round


# -- sign, abs and friends ----------------------------------------------------------------

@jitted_eagerly()
def negative(x, /):
    x = as_operand("negative", x)
    if is_bool(dtype_of(x)):
        raise TypeError("negative: the negative of a bool is not supported; use "
                        "logical_not or ~")
    return lax.neg(x)


def positive(x, /):
    return as_array(as_operand("positive", x))


@jitted_eagerly()
def absolute(x, /):
    """`jnp.abs`; bools and unsigned integers are returned unchanged."""
    x = as_operand("absolute", x)
    dtype = dtype_of(x)
    if is_bool(dtype) or _unsigned(dtype):
        return as_array(x)
    return lax.abs(x)          # |z| of a complex z is real (the abs primitive's type rule)


abs = absolute


def fabs(x, /):
    x, = promote_args_inexact("fabs", x)
    _check("fabs", x, lambda d: not is_complex(d), "real")
    return lax.abs(x)


@jitted_eagerly()
def sign(x, /):
    x = as_operand("sign", x)
    _check("sign", x, lambda d: not is_bool(d), "numeric")
    return lax.sign(x)


@jitted_eagerly()
def square(x, /):
    x = as_operand("square", x)
    if is_bool(dtype_of(x)):
        x = convert("square", x, np.int32)
    return lax.square(x)


# -- binary arithmetic --------------------------------------------------------------------

def _binary(fname, op, promote=promote_args, accepts=None, what=""):
    def fn(x, y, /):
        x, y = promote(fname, x, y)
        if accepts is not None:
            _check(fname, x, accepts, what)
        return op(x, y)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`, elementwise with NumPy broadcasting and JAX promotion."
    return jitted_eagerly()(fn)


def _bool_as(op_for_bool, op):
    def apply(x, y):
        return (op_for_bool if is_bool(dtype_of(x)) else op)(x, y)
    return apply


add = _binary("add", _bool_as(lax.bitwise_or, lax.add))
multiply = _binary("multiply", _bool_as(lax.bitwise_and, lax.mul))
subtract = _binary("subtract", lax.sub, accepts=lambda d: not is_bool(d),
                   what="numeric (subtract bools with logical_xor)")
true_divide = _binary("true_divide", lax.div, promote=promote_args_inexact)
divide = true_divide
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, promote=promote_args_inexact,
                  accepts=lambda d: not is_complex(d), what="real")
atan2 = arctan2


def _floor_divmod(fname, x, y, want_div, want_mod):
    """NumPy's floor division and modulo for floats, from truncating `rem`."""
    mod = lax.rem(x, y)
    zero = like(x, 0)
    # The truncated remainder has the sign of x; NumPy's has the sign of y.
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(y, zero), lax.lt(mod, zero)))
    results = []
    if want_div:
        # x - mod is NaN when y == 0 (mod is NaN); x / 0 gives NumPy's +-inf (or NaN).
        x_minus_mod = lax.sub(x, mod)
        x_full = broadcast_to_shape(fname, x, shape_of(x_minus_mod))
        div = lax.div(lax.select(lax.eq(y, zero), x_full, x_minus_mod), y)
        div = lax.select(fix, lax.sub(div, like(x, 1)), div)
        results.append(lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN))
    if want_mod:
        results.append(lax.select(fix, lax.add(mod, y), mod))
    return results


def floor_divide(x, y, /):
    """`x // y`, rounding toward minus infinity for signed integers and floats."""
    x, y = promote_args_numeric("floor_divide", x, y)
    dtype = dtype_of(x)
    _check("floor_divide", x, lambda d: not is_complex(d), "real")
    if _unsigned(dtype):
        return lax.div(x, y)
    if is_integer(dtype):
        quotient = lax.div(x, y)
        # Truncation rounds up when the signs differ and the division is inexact.
        # (Signs as JAX compares them: a zero divisor, whose quotient XLA defines,
        # is adjusted as JAX adjusts it.)
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        inexact = lax.ne(lax.rem(x, y), like(x, 0))
        return lax.select(lax.bitwise_and(signs_differ, inexact),
                          lax.sub(quotient, like(x, 1)), quotient)
    return _floor_divmod("floor_divide", x, y, True, False)[0]


def remainder(x, y, /):
    """`x % y` with the sign of `y`, as NumPy (XLA's `rem` takes the sign of `x`)."""
    x, y = promote_args_numeric("remainder", x, y)
    dtype = dtype_of(x)
    _check("remainder", x, lambda d: not is_complex(d), "real")
    if is_integer(dtype):
        y = _nonzero_divisor(y)
    if _unsigned(dtype):
        return lax.rem(x, y)
    return _floor_divmod("remainder", x, y, False, True)[0]


mod = remainder


def fmod(x, y, /):
    """C's remainder: the sign of `x` (XLA's `rem`)."""
    # JAX's test, on the unpromoted operands: two bools are not divided safely
    integers = is_integer(result_type(x, y))
    x, y = promote_args_numeric("fmod", x, y)
    return lax.rem(x, _nonzero_divisor(y) if integers else y)


def _nonzero_divisor(y):
    """An integer divisor with its zeros made 1, so `x % 0` is 0, as in NumPy and JAX
    (XLA's integer `rem` by zero gives `x`)."""
    return lax.select(lax.eq(y, like(y, 0)), lax.full_like(y, 1), y)


@jitted_eagerly()
def divmod(x, y, /):
    return floor_divide(x, y), remainder(x, y)


def _concrete_int(y):
    """`y` as a Python int if it is a concrete integer scalar, else None."""
    if isinstance(y, Tracer) or isinstance(y, (float, complex)):
        return None
    if isinstance(y, int):
        return int(y)
    if getattr(y, "shape", None) == () and np.dtype(y.dtype).kind in "biu":
        return int(np.asarray(y))
    return None


def power(x, y, /):
    """`x ** y`, with JAX's cases:

    * a concrete integer exponent is `integer_pow` (exact repeated multiplication);
    * integer (or bool) base and exponent: binary exponentiation;
    * a float base with an integer exponent array keeps the base's dtype (and `pow`
      takes the exponent as an integer);
    * otherwise both operands are promoted and `pow` applies."""
    exponent = _concrete_int(y)
    if exponent is not None:
        x, = promote_dtypes("power", x)
        if is_bool(dtype_of(x)):
            x = convert("power", x, np.int32, is_weak(x))
        if is_integer(dtype_of(x)) and exponent < 0:
            raise ValueError(f"power: integers cannot be raised to the negative power "
                             f"{exponent}")
        return lax.integer_pow(x, exponent)
    x, y = as_operand("power", x), as_operand("power", y, 1)
    x_dtype, y_dtype = dtype_of(x), dtype_of(y)
    if is_inexact(x_dtype) and is_integer(y_dtype):
        shape = broadcast_shapes("power", shape_of(x), shape_of(y))
        x = broadcast_to_shape("power", x, shape, keep_scalar=True)
        # the exponent stays integer: `pow`'s jvp treats it as exact, as JAX's does
        y = broadcast_to_shape("power", y, shape, keep_scalar=True)
        return lax.pow(x, y)
    x, y = promote_args("power", x, y)
    dtype = dtype_of(x)
    if is_inexact(dtype):
        return lax.pow(x, y)
    if is_bool(dtype):
        x, y = convert("power", x, np.int32), convert("power", y, np.int32)
    return _integer_power(x, y)


pow = power


def _integer_power(x, y):
    """Integer `x ** y` for an integer array `y >= 0`, by binary exponentiation.

    Six squarings suffice: an exponent of 64 or more overflows every |x| > 1, and the
    remaining bases (0, 1, -1) are fixed points of squaring. The result is strong even
    for weak operands, as JAX's (its accumulator starts from strong constants)."""
    zero, one, two = (strong_like(x, v) for v in (0, 1, 2))
    shape = broadcast_shapes("power", shape_of(x), shape_of(y))
    x = broadcast_to_shape("power", x, shape)
    y = broadcast_to_shape("power", y, shape)
    # 0 ** 0 is 1 but 0 ** n is 0: start from 0 where the base is 0 and y != 0.
    acc = lax.select(lax.bitwise_and(lax.eq(x, zero), lax.ne(y, zero)),
                     broadcast_to_shape("power", zero, shape),
                     broadcast_to_shape("power", one, shape))
    for _ in range(6):
        acc = lax.select(lax.ne(lax.rem(y, two), zero), lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.div(y, two)
    return acc


def float_power(x, y, /):
    x, y = promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


def fmax(x, y, /):
    """`maximum` that ignores NaNs (returns the other operand)."""
    x, y = promote_args("fmax", x, y, keep_scalars=False)
    if not is_inexact(dtype_of(x)):
        return lax.max(x, y)
    return lax.select(lax.ne(x, x), y, lax.select(lax.ne(y, y), x, lax.max(x, y)))


def fmin(x, y, /):
    x, y = promote_args("fmin", x, y, keep_scalars=False)
    if not is_inexact(dtype_of(x)):
        return lax.min(x, y)
    return lax.select(lax.ne(x, x), y, lax.select(lax.ne(y, y), x, lax.min(x, y)))


def copysign(x, y, /):
    x, y = promote_args_inexact("copysign", x, y, keep_scalars=False)
    zero = like(x, 0)
    negative_y = lax.lt(y, zero)
    # -0.0 has a negative sign bit; test it through 1/y.
    negative_y = lax.bitwise_or(negative_y, lax.bitwise_and(
        lax.eq(y, zero), lax.lt(lax.integer_pow(y, -1), zero)))
    return lax.select(negative_y, lax.neg(lax.abs(x)), lax.abs(x))


# -- comparisons and logic ----------------------------------------------------------------

def _comparison(fname, op, ordered):
    def fn(x, y, /):
        x, y = promote_args(fname, x, y)
        if ordered:
            _check(fname, x, lambda d: not is_complex(d), "real (complex numbers are "
                   "unordered)")
        return op(x, y)
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}`: a bool array, elementwise."
    return jitted_eagerly()(fn)


equal = _comparison("equal", lax.eq, False)
not_equal = _comparison("not_equal", lax.ne, False)
less = _comparison("less", lax.lt, True)
less_equal = _comparison("less_equal", lax.le, True)
greater = _comparison("greater", lax.gt, True)
greater_equal = _comparison("greater_equal", lax.ge, True)


def _as_bool(fname, x):
    """Truthiness of each element (`x != 0`), as NumPy's logical functions use."""
    x = as_operand(fname, x)
    if is_bool(dtype_of(x)):
        return x
    # JAX's zero here is weak only for a weak scalar, so a weak array's truth is strong.
    return lax.ne(x, lax_const_like(x, 0))


def _logical(fname, op):
    def fn(x, y, /):
        # Promoted first, as JAX: a weak number and a Python bool give a weak bool.
        x, y = promote_args(fname, x, y)
        return op(_as_bool(fname, x), _as_bool(fname, y))
    fn.__name__ = fname
    fn.__doc__ = f"`jnp.{fname}` of the truthiness of each element (no short-circuit)."
    return jitted_eagerly()(fn)


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    return lax.bitwise_not(_as_bool("logical_not", x))


def _bitwise(fname, op):
    return _binary(fname, op, accepts=lambda d: is_integer(d) or is_bool(d),
                   what="integer or bool")


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)


left_shift = bitwise_left_shift = _binary(
    "left_shift", lax.shift_left, accepts=is_integer, what="integer")


def _right_shift(x, y):
    # NumPy's >> copies the sign bit of signed integers and shifts zeros into unsigned.
    signed = np.dtype(dtype_of(x)).kind == "i"
    return (lax.shift_right_arithmetic if signed else lax.shift_right_logical)(x, y)


right_shift = bitwise_right_shift = _binary("right_shift", _right_shift, accepts=is_integer,
                                            what="integer")


@jitted_eagerly()
def bitwise_count(x, /):
    """`jnp.bitwise_count`: set bits of each element of |x|, as uint8 (NumPy's rule)."""
    x = as_operand("bitwise_count", x)
    _check("bitwise_count", x, lambda d: is_integer(d) or is_bool(d), "integer or bool")
    if np.dtype(dtype_of(x)).kind == "i":
        x = lax.abs(x)
    if is_bool(dtype_of(x)):   # population_count takes integers; True has one bit
        x = lax.convert_element_type(x, np.uint8)
    return lax.convert_element_type(lax.population_count(x), np.uint8)


def invert(x, /):
    x = as_operand("invert", x)
    _check("invert", x, lambda d: is_integer(d) or is_bool(d), "integer or bool")
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


# -- selection -----------------------------------------------------------------------------

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`jnp.where(c, x, y)`: `x` where `c` is true, else `y` (broadcast together).

    The one-argument form `where(c)` is `nonzero(c)`: the indices of nonzero entries,
    whose count depends on the values, so it needs a concrete `c` or a static `size`
    (padded with `fill_value`), as in JAX."""
    if x is not None and y is not None and size is None and fill_value is None:
        return _where(condition, x, y)     # (the common case first: it is run eagerly)
    if x is None and y is None:
        from ._sorting import nonzero  # not at the top: _sorting imports this module (a cycle)
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value are only accepted by the "
                         "one-argument form where(condition)")
    raise ValueError("where: pass both x and y, or neither")


@jitted_eagerly()
def _where(condition, x, y, /):
    """The three-argument `where`, one cached program eagerly as JAX's `_where` (its
    jitted helper, whose name the program takes); op by op it cost 6x JAX's call."""
    condition = _as_bool("where", condition)
    x, y = promote_dtypes("where", x, y)
    shape = broadcast_shapes("where", shape_of(condition), shape_of(x), shape_of(y))
    # select_n needs equal case shapes; a rank-0 predicate may stay rank-0.
    x = broadcast_to_shape("where", x, shape)
    y = broadcast_to_shape("where", y, shape)
    condition = broadcast_to_shape("where", condition, shape, keep_scalar=True)
    return lax.select(condition, x, y)


@jitted_eagerly()
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """`jnp.clip`: `minimum(maximum(arr, min), max)`, either bound optional."""
    arr = a if arr is None else arr
    min = a_min if min is None else min
    max = a_max if max is None else max
    arr = as_operand("clip", arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return as_array(arr)


# The other functions JAX jits, made `jitted_eagerly` in one place (aliases bound anew).
rint, reciprocal, deg2rad, rad2deg, positive, fabs, fmod, float_power = map(
    jitted_eagerly(), (rint, reciprocal, deg2rad, rad2deg, positive, fabs, fmod, float_power))
floor_divide, remainder, fmax, fmin, copysign, invert, logical_not = map(
    jitted_eagerly(), (floor_divide, remainder, fmax, fmin, copysign, invert, logical_not))
radians, degrees, mod, bitwise_not, bitwise_invert = deg2rad, rad2deg, remainder, invert, invert

__all__ = [
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "exp", "exp2", "expm1", "log", "log1p", "sqrt", "cbrt", "rint", "log2", "log10",
    "reciprocal", "deg2rad", "rad2deg", "radians", "degrees", "floor", "ceil", "trunc",
    "round", "around", "negative", "positive", "absolute", "abs", "fabs", "sign",
    "square", "add", "multiply", "subtract", "true_divide", "divide", "maximum",
    "minimum", "arctan2", "atan2", "floor_divide", "remainder", "mod", "fmod", "divmod",
    "power", "pow", "float_power", "fmax", "fmin", "copysign", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "bitwise_left_shift", "right_shift",
    "bitwise_right_shift", "bitwise_count", "invert", "bitwise_not", "bitwise_invert",
    "where", "clip"
]
