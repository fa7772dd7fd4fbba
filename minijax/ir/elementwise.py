"""The elementwise primitives and the dynamic slices: their declarations and type rules.

Unary ops keep their operand's type; n-ary ops need equal dtypes and equal shapes
(or rank-0 operands, which broadcast). Read `registry.py` first.
"""
from __future__ import annotations

import numpy as np

from .registry import Primitive, type_rules, _fail, _array, _check_axes
from .types import (ShapedArray, is_float, is_integer, is_bool, is_inexact, is_complex,
                    is_key)


# -- elementwise ----------------------------------------------------------------------

def _reject_keys(name, dtypes):
    # Keys are opaque: they are split and consumed by `minijax.random`, never computed on.
    if any(is_key(dtype) for dtype in dtypes):
        _fail(name, "does not accept key arrays (dtype key<fry>); use minijax.random to "
              "split keys and draw values from them")


def _unary(name, accepts, out_dtype=None, accepts_keys=False):
    prim = Primitive(name, accepts_keys=accepts_keys)

    def rule(x, **params):
        _array(name, x)
        if not prim.accepts_keys:
            _reject_keys(name, [x.dtype])
        if not accepts(x.dtype):
            _fail(name, f"does not accept dtype {x.dtype.name}")
        if out_dtype is None:
            return [x]
        return [ShapedArray(x.shape, out_dtype, x.weak_type)]   # weak as its operand
    type_rules[prim] = rule
    return prim


def _binary_shape(name, avals):
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        # JAX's words; the IR also lets a rank-0 operand stand for a splat.
        raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                        + ", ".join(str(a.shape) for a in avals) + ".")
    return shapes.pop() if shapes else ()


def _nary(name, accepts, out_dtype=None, arity=2):
    prim = Primitive(name)

    def rule(*avals, **params):
        if len(avals) != arity:
            _fail(name, f"takes {arity} operands, got {len(avals)}")
        for aval in avals:
            _array(name, aval)
        _reject_keys(name, [a.dtype for a in avals])
        dtypes = {a.dtype for a in avals}
        if len(dtypes) != 1:
            _fail(name, "operands must have equal dtypes, got "
                  + ", ".join(str(a) for a in avals))
        dtype = dtypes.pop()
        if not accepts(dtype):
            _fail(name, f"does not accept dtype {dtype.name}")
        shape = _binary_shape(name, avals)
        # A comparison of weak operands is weak too (a weak bool), as JAX types it.
        return [ShapedArray(shape, dtype if out_dtype is None else out_dtype,
                            all(a.weak_type for a in avals))]
    type_rules[prim] = rule
    return prim


def _any(dtype):
    return True


def _numeric(dtype):
    return not is_bool(dtype)


def _int_or_bool(dtype):
    return is_integer(dtype) or is_bool(dtype)


def _real(dtype):
    return not is_complex(dtype)


sin_p = _unary("sin", is_inexact)
cos_p = _unary("cos", is_inexact)
tan_p = _unary("tan", is_inexact)
asin_p = _unary("asin", is_inexact)
acos_p = _unary("acos", is_inexact)
atan_p = _unary("atan", is_inexact)
sinh_p = _unary("sinh", is_inexact)
cosh_p = _unary("cosh", is_inexact)
tanh_p = _unary("tanh", is_inexact)
asinh_p = _unary("asinh", is_inexact)
acosh_p = _unary("acosh", is_inexact)
atanh_p = _unary("atanh", is_inexact)
exp_p = _unary("exp", is_inexact)
exp2_p = _unary("exp2", is_inexact)
log_p = _unary("log", is_inexact)
# JAX 0.11 made log2 a primitive (before, jnp.log2 was log(x) / log(2)).
log2_p = _unary("log2", is_inexact)
log1p_p = _unary("log1p", is_inexact)
expm1_p = _unary("expm1", is_inexact)
logistic_p = _unary("logistic", is_inexact)
sqrt_p = _unary("sqrt", is_inexact)
rsqrt_p = _unary("rsqrt", is_inexact)
cbrt_p = _unary("cbrt", is_float)
erf_p = _unary("erf", is_float)
floor_p = _unary("floor", is_float)
ceil_p = _unary("ceil", is_float)
neg_p = _unary("neg", _numeric)
abs_p = Primitive("abs")


def _abs_rule(x):
    _array("abs", x)
    # As JAX's lax.abs: unsigned integers are refused (|x| of them is x; jnp.abs
    # returns them unchanged without an abs equation).
    if is_bool(x.dtype) or x.dtype.kind == "u":
        _fail("abs", f"does not accept dtype {x.dtype.name}. Accepted dtypes are "
              "subtypes of floating, complexfloating, signedinteger.")
    if is_complex(x.dtype):  # |z| is real
        real = np.dtype("float32") if x.dtype == np.dtype("complex64") else np.dtype("float64")
        return [x.update(dtype=real)]
    return [x]


type_rules[abs_p] = _abs_rule
sign_p = _unary("sign", _numeric)
square_p = _unary("square", _numeric)
# 1 - x**2, computed as (1 + x) * (1 - x) and differentiated as -2x (JAX 0.11's
# primitive of that name): exact near |x| = 1, and no cancellation in its derivative
# near 0. The derivatives of tanh, atanh, asin and acos use it, as JAX's do since 0.11.
one_minus_square_p = _unary("one_minus_square", _numeric)
round_p = _unary("round", is_float)            # params: rounding_method (0 away, 1 even)
is_finite_p = _unary("is_finite", is_float, out_dtype=np.dtype(bool))
not_p = _unary("not", _int_or_bool)
stop_gradient_p = _unary("stop_gradient", _any, accepts_keys=True)

integer_pow_p = Primitive("integer_pow")       # params: y (a Python int)


def _integer_pow_rule(x, *, y):
    _array("integer_pow", x)
    if not isinstance(y, (int, np.integer)):
        _fail("integer_pow", f"exponent must be an int, got {y!r}")
    if is_bool(x.dtype) or (is_integer(x.dtype) and y < 0):
        _fail("integer_pow", f"cannot raise {x.dtype.name} to the power {y}")
    return [x]


type_rules[integer_pow_p] = _integer_pow_rule

add_p = _nary("add", _numeric)
sub_p = _nary("sub", _numeric)
mul_p = _nary("mul", _numeric)
div_p = _nary("div", _numeric)
rem_p = _nary("rem", _numeric)
pow_p = Primitive("pow")


def _pow_rule(x, y):
    # As JAX's pow: x inexact; y of x's dtype or an integer (kept integer, so the jvp
    # can treat an integer exponent as exact: its derivative in x is 0 where y == 0).
    for aval in (x, y):
        _array("pow", aval)
    _reject_keys("pow", [x.dtype, y.dtype])
    if not is_inexact(x.dtype):
        _fail("pow", f"does not accept dtype {x.dtype.name}")
    if y.dtype != x.dtype and not is_integer(y.dtype):
        _fail("pow", f"the exponent must be of the base's dtype or an integer, got {x} "
              f"and {y}")
    return [ShapedArray(_binary_shape("pow", [x, y]), x.dtype, x.weak_type and y.weak_type)]


type_rules[pow_p] = _pow_rule
max_p = _nary("max", _any)
min_p = _nary("min", _any)
atan2_p = _nary("atan2", is_float)
and_p = _nary("and", _int_or_bool)
or_p = _nary("or", _int_or_bool)
xor_p = _nary("xor", _int_or_bool)
eq_p = _nary("eq", _any, out_dtype=np.dtype(bool))
ne_p = _nary("ne", _any, out_dtype=np.dtype(bool))
lt_p = _nary("lt", _real, out_dtype=np.dtype(bool))
le_p = _nary("le", _real, out_dtype=np.dtype(bool))
gt_p = _nary("gt", _real, out_dtype=np.dtype(bool))
ge_p = _nary("ge", _real, out_dtype=np.dtype(bool))

comparison_primitives = (eq_p, ne_p, lt_p, le_p, gt_p, ge_p)

select_n_p = Primitive("select_n")


def _select_n_rule(which, *cases):
    _array("select_n", which, "predicate")
    if not cases:
        _fail("select_n", "needs at least one case")
    if not (is_bool(which.dtype) or which.dtype == np.int32):
        _fail("select_n", f"predicate must be bool or int32, got {which}")
    if is_bool(which.dtype) and len(cases) > 2:
        _fail("select_n", "a bool predicate selects between at most two cases")
    for case in cases:
        _array("select_n", case, "case")
        if (case.shape, case.dtype) != (cases[0].shape, cases[0].dtype):
            _fail("select_n", "cases must have equal types, got "
                  + ", ".join(str(c) for c in cases))
    if which.shape not in ((), cases[0].shape):
        _fail("select_n", f"predicate {which} must be rank-0 or shaped like the cases "
              f"{cases[0]}")
    return [cases[0].update(weak_type=all(c.weak_type for c in cases))]


type_rules[select_n_p] = _select_n_rule

clamp_p = Primitive("clamp")


def _clamp_rule(lo, x, hi):
    for aval in (lo, x, hi):
        _array("clamp", aval)
    if not lo.dtype == x.dtype == hi.dtype:
        _fail("clamp", f"operands must have equal dtypes, got {lo}, {x}, {hi}")
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            _fail("clamp", f"bound {bound} must be rank-0 or shaped like {x}")
    return [x]


type_rules[clamp_p] = _clamp_rule

convert_element_type_p = Primitive("convert_element_type")


def _convert_rule(x, *, new_dtype, weak_type=False):
    _array("convert_element_type", x)
    _reject_keys("convert_element_type", [x.dtype, new_dtype])
    return [ShapedArray(x.shape, new_dtype, weak_type)]


type_rules[convert_element_type_p] = _convert_rule


# -- shape manipulation -----------------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_rule(x, *, shape, broadcast_dimensions):
    _array("broadcast_in_dim", x)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim:
        _fail("broadcast_in_dim", f"broadcast_dimensions {dims} must have one entry per "
              f"operand axis of {x}")
    if list(dims) != sorted(set(dims)) or any(not 0 <= d < len(shape) for d in dims):
        _fail("broadcast_in_dim", f"broadcast_dimensions {dims} must be strictly "
              f"increasing axes of the result shape {tuple(shape)}")
    for axis, dim in enumerate(dims):
        if x.shape[axis] not in (1, shape[dim]):
            _fail("broadcast_in_dim", f"operand axis {axis} of size {x.shape[axis]} cannot "
                  f"broadcast to size {shape[dim]} of {tuple(shape)}")
    return [x.update(shape=shape)]


type_rules[broadcast_in_dim_p] = _broadcast_in_dim_rule

reshape_p = Primitive("reshape")


def _reshape_rule(x, *, new_sizes, dimensions=None):
    _array("reshape", x)
    if dimensions is not None:
        _fail("reshape", "the dimensions parameter is not supported; transpose first")
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        _fail("reshape", f"cannot reshape {x} to {tuple(new_sizes)}")
    return [x.update(shape=new_sizes)]


type_rules[reshape_p] = _reshape_rule

transpose_p = Primitive("transpose")


def _transpose_rule(x, *, permutation):
    _array("transpose", x)
    if sorted(permutation) != list(range(x.ndim)):
        _fail("transpose", f"permutation {permutation} is not a permutation of the axes "
              f"of {x}")
    return [x.update(shape=tuple(x.shape[p] for p in permutation))]


type_rules[transpose_p] = _transpose_rule

squeeze_p = Primitive("squeeze")


def _squeeze_rule(x, *, dimensions):
    _array("squeeze", x)
    _check_axes("squeeze", dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dimensions):
        _fail("squeeze", f"can only squeeze axes of size 1; {dimensions} of {x}")
    return [x.update(shape=tuple(n for i, n in enumerate(x.shape) if i not in dimensions))]


type_rules[squeeze_p] = _squeeze_rule

expand_dims_p = Primitive("expand_dims")


def _expand_dims_rule(x, *, dimensions):
    _array("expand_dims", x)
    out_ndim = x.ndim + len(dimensions)
    _check_axes("expand_dims", dimensions, out_ndim)
    sizes = iter(x.shape)
    return [x.update(shape=tuple(1 if i in dimensions else next(sizes)
                                 for i in range(out_ndim)))]


type_rules[expand_dims_p] = _expand_dims_rule

rev_p = Primitive("rev")                        # params: dimensions (the axes reversed)


def _rev_rule(x, *, dimensions):
    _array("rev", x)
    _check_axes("rev", dimensions, x.ndim)
    return [x]


type_rules[rev_p] = _rev_rule

concatenate_p = Primitive("concatenate")


def _concatenate_rule(*operands, dimension):
    if not operands:
        _fail("concatenate", "needs at least one operand")
    first = _array("concatenate", operands[0])
    if not 0 <= dimension < first.ndim:
        _fail("concatenate", f"dimension {dimension} out of range for {first}")
    for x in operands:
        _array("concatenate", x)
        if x.dtype != first.dtype or x.ndim != first.ndim or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension):
            _fail("concatenate", "operands must agree in dtype and in every axis but "
                  f"{dimension}, got " + ", ".join(str(o) for o in operands))
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in operands)
    return [first.update(shape=shape, weak_type=all(x.weak_type for x in operands))]


type_rules[concatenate_p] = _concatenate_rule

pad_p = Primitive("pad")


def _pad_rule(x, padding_value, *, padding_config):
    _array("pad", x)
    if padding_value.shape != () or padding_value.dtype != x.dtype:
        _fail("pad", f"padding value must be a rank-0 {x.dtype.name}, got {padding_value}")
    if len(padding_config) != x.ndim:
        _fail("pad", f"padding_config needs one (low, high, interior) per axis of {x}")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            _fail("pad", f"interior padding must be >= 0, got {interior}")
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            _fail("pad", f"padding {padding_config} leaves a negative size for {x}")
        shape.append(size)
    # weak only when the padding value is too, as in JAX (a strong 0 makes it strong)
    return [x.update(shape=shape, weak_type=x.weak_type and padding_value.weak_type)]


type_rules[pad_p] = _pad_rule

slice_p = Primitive("slice")


def _slice_rule(x, *, start_indices, limit_indices, strides=None):
    _array("slice", x)
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        _fail("slice", f"needs one start, limit and stride per axis of {x}")
    shape = []
    for n, start, limit, stride in zip(x.shape, start_indices, limit_indices, strides):
        if not 0 <= start <= limit <= n or stride < 1:
            _fail("slice", f"start {tuple(start_indices)} limit {tuple(limit_indices)} "
                  f"strides {tuple(strides)} are out of bounds for {x}")
        shape.append(-(-(limit - start) // stride))
    return [x.update(shape=shape)]


type_rules[slice_p] = _slice_rule


def _check_start_indices(name, x, indices):
    if len(indices) != x.ndim:
        _fail(name, f"needs {x.ndim} start indices for {x}, got {len(indices)}")
    for index in indices:
        if not isinstance(index, ShapedArray) or index.shape != () or not is_integer(index.dtype):
            _fail(name, f"start indices must be integer scalars, got {index}")


dynamic_slice_p = Primitive("dynamic_slice")


def _dynamic_slice_rule(x, *start_indices, slice_sizes):
    _array("dynamic_slice", x)
    _check_start_indices("dynamic_slice", x, start_indices)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        _fail("dynamic_slice", f"slice_sizes {tuple(slice_sizes)} do not fit in {x}")
    return [x.update(shape=slice_sizes)]


type_rules[dynamic_slice_p] = _dynamic_slice_rule

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dynamic_update_slice_rule(x, update, *start_indices):
    _array("dynamic_update_slice", x)
    _array("dynamic_update_slice", update, "update")
    _check_start_indices("dynamic_update_slice", x, start_indices)
    if update.dtype != x.dtype or update.ndim != x.ndim or any(
            u > n for u, n in zip(update.shape, x.shape)):
        _fail("dynamic_update_slice", f"update {update} does not fit in {x}")
    return [x]


type_rules[dynamic_update_slice_p] = _dynamic_update_slice_rule
