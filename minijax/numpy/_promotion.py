"""Dtype promotion and NumPy broadcasting for `minijax.numpy`.

Read this before the rest of the package: every jnp function first calls one of
`promote_args*` here, which

1. checks its operands are array-likes (arrays, tracers, Python scalars, lists),
2. finds the result dtype with JAX's own lattice (`jax.dtypes.result_type`), where
   a *weakly typed* operand (a Python scalar, or a value computed only from them)
   is represented by a Python scalar of its kind -- `0`, `0.0` or `0j` -- so that
   `x_f16 * 2.0` stays f16 and `x_i32 + 2.5` becomes a weak f32, as in JAX,
3. converts each operand to that dtype, and
4. broadcasts shapes with NumPy's rules.

Two choices keep programs as lean as JAX's:

* A Python scalar is converted in Python, never with an equation: it stays a Python
  scalar when its own weak dtype is the target (`2.0` meeting f32), and otherwise
  becomes a NumPy scalar of the target dtype. Tracing then records an inline literal.
* A rank-0 operand of an elementwise op is not broadcast: the IR lets a rank-0
  operand stand for a splat of itself (`add a 2.0:f32[]`).
"""
from __future__ import annotations

import warnings

import numpy as np
import jax

from .. import lax
from ..frontend.config_flags import dtype_promotion, rank_promotion
from ..ir.errors import ConcretizationTypeError
from ..ir.trace import Tracer, aval_of
from ..ir.types import (PYTHON_SCALAR_AVALS, ShapedArray, canonical_dtype, is_complex,
                        is_float, is_inexact, is_integer, is_bool, is_key)
from ._dtypes import _ScalarType
from ._dtypes import dtype as as_dtype

PY_SCALARS = (bool, int, float, complex)
_WEAK_REPRESENTATIVE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}
_SUPPORTED_KINDS = set("biufc")


def is_half_float(dtype) -> bool:
    """float16 or bfloat16: formats JAX computes sums and ranges of in float32."""
    return is_float(dtype) and np.dtype(dtype).itemsize < 4


def is_python_scalar(x) -> bool:
    return isinstance(x, PY_SCALARS)



def aval(x) -> ShapedArray:
    """The aval of an operand (tracing calls this a lot, so the cases are ordered by
    frequency and Python scalars' avals are shared constants)."""
    if isinstance(x, Tracer):
        return x.aval
    scalar = PYTHON_SCALAR_AVALS.get(type(x))
    return scalar if scalar is not None else aval_of(x)


def as_operand(fname: str, x, position: int = 0):
    """`x` as something `bind` accepts: tracers, Python scalars and arrays pass as
    they are; anything else is a clear TypeError. Lists and tuples are refused, as
    JAX refuses them (a list of traced values would silently become a copy); only
    `jnp.array`/`jnp.asarray` and the few functions JAX documents take them.
    `position`: the operand's place among the function's array arguments, which the
    error names, as JAX's does."""
    if isinstance(x, Tracer) or type(x) in PYTHON_SCALAR_AVALS:
        return x
    if isinstance(x, np.generic):
        # NumPy scalars are strongly typed (np.float64 subclasses float, yet is no
        # Python scalar to JAX): a 0-d array of the canonical dtype says so.
        return np.asarray(x, dtype=canonical_dtype(x.dtype))
    if isinstance(x, PY_SCALARS):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{fname} requires ndarray or scalar arguments, got "
                        f"{type(x)} at position {position}.")
    dtype = getattr(x, "dtype", None)
    if dtype is not None and hasattr(x, "shape") and not isinstance(x, type):
        # A key dtype is no NumPy dtype; testing that first spares formatting every
        # array's dtype as text.
        if not isinstance(dtype, np.dtype) and str(dtype).startswith("key<"):
            return x                        # a jax.Array of keys (minijax.random)
        if np.dtype(dtype).kind not in _SUPPORTED_KINDS and not is_float(dtype) \
                and not is_integer(dtype):
            raise TypeError(f"{fname}: arrays of dtype {np.dtype(dtype)} are not "
                            f"supported (minijax handles bool, int, float and complex)")
        return x
    raise TypeError(f"{fname}: expected an array, a Python scalar or a list, got "
                    f"{type(x).__name__} {x!r}")


def as_array(x):
    """`x` as an array value: tracers and jax arrays as they are, NumPy data and Python
    scalars as concrete jax arrays (for functions that would return their input)."""
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    from ._creation import asarray  # not at the top: _creation imports this module (a cycle)
    return asarray(x)


def shape_of(x) -> tuple:
    return aval(x).shape


def ndim_of(x) -> int:
    return len(aval(x).shape)


def dtype_of(x) -> np.dtype:
    return aval(x).dtype


def is_weak(x) -> bool:
    return aval(x).weak_type


def _representative(x):
    """What stands for `x` in `jax.dtypes.result_type`: a dtype, or a Python scalar of
    the same kind for a weakly typed value (its value is irrelevant, so 0 of that kind
    also avoids overflow complaints about large Python ints)."""
    if isinstance(x, _ScalarType):
        return x.dtype
    if isinstance(x, PY_SCALARS):
        return type(x)(0)
    if isinstance(x, (np.dtype, type, str)):
        if isinstance(x, type) and issubclass(x, PY_SCALARS):
            return x
        return canonical_dtype(np.dtype(x))
    return _aval_representative(aval(x))


def _aval_representative(a):
    if is_key(a.dtype):
        raise TypeError("jax.numpy functions do not accept key arrays (dtype key<fry>); "
                        "use minijax.random to split keys and draw values, or "
                        "random.key_data for their uint32 words")
    if a.weak_type and a.dtype.kind in _WEAK_REPRESENTATIVE:
        return _WEAK_REPRESENTATIVE[a.dtype.kind]
    return a.dtype


_promotion_cache: dict = {}


def result_type_and_weak(*args) -> tuple[np.dtype, bool]:
    """JAX's promotion of `args` (values, dtypes or Python types): (dtype, weak).

    Answers are cached by the operands' representatives (keyed with their types, as
    `0 == 0.0 == False` in Python), since tracing asks the same few questions often."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    return _result_of_representatives(tuple(map(_representative, args)))


def _result_of_representatives(reps):
    strict = dtype_promotion.value == "strict"
    key = (strict, *((type(r), r) for r in reps))
    found = _promotion_cache.get(key)
    if found is None:
        if strict:
            found = _strict_result(reps)
        else:
            dtype, weak = jax.dtypes.result_type(*reps, return_weak_type_flag=True)
            found = (canonical_dtype(dtype), bool(weak))
        _promotion_cache[key] = found
    return found


# Under jax_numpy_dtype_promotion='strict' JAX's lattice has no edge between two
# concrete dtypes; a weak int may become any number type, a weak float any inexact
# one, a weak complex any complex one (and weak int < weak float < weak complex).
_WEAK_DTYPES = {int: np.dtype(np.int32), float: np.dtype(np.float32),
                complex: np.dtype(np.complex64)}
_WEAK_REACHES = {int: "ifc", float: "fc", complex: "c"}


def _python_type(rep):
    """int, float or complex for a weak representative (a Python scalar or type);
    None for a dtype (a Python bool is a concrete bool to JAX)."""
    kind = rep if isinstance(rep, type) and issubclass(rep, PY_SCALARS) else type(rep)
    return kind if kind in _WEAK_DTYPES else None


def _strong_dtype(rep):
    return np.dtype(np.bool_ if rep is bool or type(rep) is bool else rep)


def _strict_result(reps):
    weak = [w for w in map(_python_type, reps) if w is not None]
    strong = {_strong_dtype(r) for r in reps if _python_type(r) is None}
    if not strong:
        return max(map(_WEAK_DTYPES.get, weak), key=lambda d: "ifc".index(d.kind)), True
    if len(strong) == 1:
        (dtype,) = strong
        category = ("c" if is_complex(dtype) else "f" if is_float(dtype)
                    else "i" if is_integer(dtype) else "b")
        if all(category in _WEAK_REACHES[w] for w in weak):
            return canonical_dtype(dtype), False
    shown = ", ".join(repr(str(_strong_dtype(r))) if _python_type(r) is None
                      else repr(str(_python_type(r))) for r in reps)
    raise jax.dtypes.TypePromotionError(
        f"Input dtypes ({shown}) have no available implicit dtype promotion path when "
        f"jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        f"output type, or set jax_numpy_dtype_promotion=standard.")


def result_type(*args) -> np.dtype:
    """`jnp.result_type`: the dtype JAX's promotion gives these operands."""
    return result_type_and_weak(*args)[0]


def promote_types(a, b) -> np.dtype:
    """`jnp.promote_types`: JAX's promotion of two dtype specifiers, as JAX's does it.
    Two things set it apart from `result_type`: the Python types `int`, `float` and
    `complex` stand for weakly typed values (`promote_types('uint8', int)` is uint8,
    as JAX documents), and the answer is not canonicalized (`promote_types('int64',
    'int8')` is int64 with x64 off, `promote_types(int, float)` float64), since it
    names a dtype, not one an array of this configuration can have."""
    with jax.numpy_dtype_promotion(dtype_promotion.value):
        return jax.numpy.promote_types(_dtype_specifier(a), _dtype_specifier(b))


def _dtype_specifier(x):
    # By identity: np.dtype('int64') == int is True, yet a dtype is strongly typed.
    if any(x is t for t in (int, float, complex)):
        return x
    return np.dtype(as_dtype(x))


def _convert_python_scalar(fname, value, dtype, weak):
    """A Python scalar as an operand of dtype `dtype`, without emitting an equation."""
    if weak:
        # A weak target is i32, f32 or c64: keep a Python scalar of that kind, which
        # traces to an inline weak literal exactly as in JAX.
        kind = dtype.kind
        if kind == "i" and dtype == np.int32 and isinstance(value, int):
            return _check_int32(fname, int(value))
        if kind == "f" and dtype == np.float32 and isinstance(value, (int, float)):
            return float(value)
        if kind == "c" and dtype == np.complex64:
            return complex(value)
    if type(value) is int and dtype.kind in "iu":
        return _wrapped_int(fname, value, dtype)
    with np.errstate(over="ignore"):
        return np.array(value, dtype=dtype)[()]


def _wrapped_int(fname, value, dtype):
    # JAX converts a Python int to a narrower integer dtype the way a C cast does
    # (`int8_array + 300` adds 44); only an int no 64-bit integer holds is refused.
    if not -2**63 <= value < 2**64:
        raise OverflowError(f"{fname}: Python int {value} is too large to convert to "
                            f"{dtype.name}")
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return np.array(value, dtype=dtype)[()]


def _check_int32(fname, value):
    if not -2**31 <= value < 2**31:
        raise OverflowError(f"{fname}: Python int {value} is too large to convert to "
                            f"int32")
    return value


def convert(fname, x, dtype, weak=False):
    """`x` as dtype `dtype`, weakly typed or not. A no-op when it already has that
    type; a weak value asked to be strong is converted (as JAX does), since not every
    op's result is weak exactly when all operands are (`where` ignores its predicate)."""
    dtype = np.dtype(dtype)
    if isinstance(x, PY_SCALARS):
        return _convert_python_scalar(fname, x, dtype, weak)
    a = aval(x)
    if not a.shape and a.dtype != dtype and not isinstance(x, Tracer):
        # A concrete scalar (NumPy or jax) is converted here, so it stays a literal.
        return _convert_python_scalar(fname, np.asarray(x).item(), dtype, weak)
    if a.dtype == dtype and (a.weak_type == weak or not a.weak_type):
        return x
    return lax.convert_element_type(x, dtype, weak_type=weak)


def like(x, value):
    """A constant operand for an op on `x`: `x`'s dtype, and weak when `x` is, so the
    constant never changes the result type (nor adds an equation)."""
    a = aval(x)
    return convert("constant", value, a.dtype, a.weak_type)


def strong_like(x, value):
    """A strongly typed constant of `x`'s dtype (JAX's `_constant_like`). jnp functions
    that JAX writes with such constants give a strong result even for a weak `x` (an
    op is weak only when all its operands are), so they use this instead of `like`."""
    return convert("constant", value, aval(x).dtype)


def lax_const_like(x, value):
    """A constant of `x`'s dtype, weak only when `x` is a weak rank-0 value (JAX's
    `lax._const`). jnp functions JAX writes with it are weak for weak scalars but
    strong for weakly typed arrays (a Python scalar broadcast against a bool or int
    array), so they use this to give JAX's result types."""
    a = aval(x)
    return convert("constant", value, a.dtype, a.weak_type and not a.shape)


def to_inexact(dtype, weak):
    """The float dtype an integer or bool computation is carried out in (f32)."""
    return (dtype, weak) if is_inexact(dtype) else (np.dtype(np.float32), weak)


def _promote(fname, args, adjust=None):
    """Convert operands to their common (dtype, weak); `adjust` may change that target."""
    return _promote_with_shapes(fname, args, adjust)[0]


def _promote_with_shapes(fname, args, adjust=None):
    """`_promote`, and the operands' shapes (which conversion keeps) for broadcasting,
    so an elementwise op reads each operand's aval once. Operands that already agree
    (the usual case when tracing) skip the lattice."""
    if not args:
        return [], []
    args = [as_operand(fname, a, i) for i, a in enumerate(args)]
    for a in args:
        if type(a) is int:
            # JAX's jnp functions are jitted, and a Python int argument must fit the
            # weak int32 it is passed as, whatever dtype it then meets.
            _check_int32(fname, a)
    avals = [aval(a) for a in args]
    first = avals[0]
    if all(a.dtype == first.dtype and a.weak_type == first.weak_type for a in avals):
        # JAX's lattice has no weak bool: weak bools promoted together become strong
        # (one operand alone keeps its type).
        dtype = first.dtype
        weak = first.weak_type and (len(avals) == 1 or not is_bool(dtype))
    else:
        dtype, weak = _result_of_representatives(tuple(
            type(x)(0) if type(x) in PYTHON_SCALAR_AVALS else _aval_representative(a)
            for x, a in zip(args, avals)))
    if adjust is not None:
        dtype, weak = adjust(dtype, weak)
    return ([x if a.dtype == dtype and (a.weak_type == weak or not a.weak_type)
             and type(x) not in PYTHON_SCALAR_AVALS else convert(fname, x, dtype, weak)
             for x, a in zip(args, avals)], [a.shape for a in avals])


def promote_dtypes(fname, *args):
    """The operands converted to their common dtype (no broadcasting)."""
    return _promote(fname, args)


def promote_dtypes_inexact(fname, *args):
    """Operands converted to their common dtype, made floating if it is not."""
    return _promote(fname, args, to_inexact)


def _numeric(dtype, weak):
    return (np.dtype(np.int32), weak) if is_bool(dtype) else (dtype, weak)


def promote_dtypes_numeric(fname, *args):
    """Operands converted to their common dtype, with bool made int32 (for sums)."""
    return _promote(fname, args, _numeric)


# -- broadcasting -----------------------------------------------------------------------

def broadcast_shapes(fname, *shapes) -> tuple:
    """NumPy's broadcast of shapes, or a ValueError naming `fname` and the shapes."""
    distinct = {tuple(s) for s in shapes if len(s)}
    if len(distinct) <= 1:  # the common case: equal shapes and scalars
        return distinct.pop() if distinct else ()
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(f"{fname}: shapes {', '.join(map(str, map(tuple, shapes)))} "
                             f"cannot be broadcast together (axis {axis - ndim} has sizes "
                             f"{sorted(sizes)})")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _promoting_ranks(fname, shapes):
    """`jax_numpy_rank_promotion` at work: operands of different ranks (rank-0 ones
    aside, as in JAX) are a warning ('warn') or JAX's ValueError ('raise')."""
    shown = " ".join(str(tuple(s)) for s in shapes)
    if rank_promotion.value == "raise":
        raise ValueError(f"{fname}: operands of shapes {shown} have different ranks, and "
                         f"jax_numpy_rank_promotion='raise' forbids broadcasting them "
                         f"together; expand the lower-rank operand's dimensions yourself")
    warnings.warn(f"{fname}: broadcasting operands of shapes {shown}, which have different "
                  f"ranks (jax_numpy_rank_promotion='warn'; set it to 'allow' to silence "
                  f"this)", stacklevel=4)


def broadcast_to_shape(fname, x, shape, keep_scalar=False):
    """`x` broadcast to `shape` (NumPy rules: align trailing axes). With `keep_scalar`
    a rank-0 operand is returned as is, for ops that splat rank-0 operands."""
    shape = tuple(shape)
    x_shape = aval(x).shape
    if x_shape == shape or (keep_scalar and x_shape == ()):
        return x
    if len(x_shape) > len(shape) or any(
            n not in (1, m) for n, m in zip(x_shape[::-1], shape[::-1])):
        raise ValueError(f"{fname}: cannot broadcast an operand of shape {x_shape} to "
                         f"shape {shape}")
    lead = len(shape) - len(x_shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote_args(fname, *args, keep_scalars=True):
    """Operands of an elementwise op: common dtype, common shape (rank-0 kept)."""
    return _broadcast_all(fname, *_promote_with_shapes(fname, args), keep_scalars)


def promote_args_inexact(fname, *args, keep_scalars=True):
    return _broadcast_all(fname, *_promote_with_shapes(fname, args, to_inexact),
                          keep_scalars)


def promote_args_numeric(fname, *args, keep_scalars=True):
    return _broadcast_all(fname, *_promote_with_shapes(fname, args, _numeric),
                          keep_scalars)


def _broadcast_all(fname, args, shapes, keep_scalars):
    if keep_scalars and all(s == shapes[0] or not s for s in shapes):
        return args  # equal shapes, or rank-0 operands that the op splats
    if rank_promotion.value != "allow" and len({len(s) for s in shapes if s}) > 1:
        _promoting_ranks(fname, shapes)
    try:
        shape = broadcast_shapes(fname, *shapes)
    except ValueError as error:
        # JAX's exception type: operands of one rank reach the lax op, whose shape rule
        # raises TypeError ("add got incompatible shapes"); of different ranks, JAX's
        # rank promotion raises the ValueError first.
        if len({len(s) for s in shapes if s}) == 1:
            raise TypeError(str(error)) from None
        raise
    return [broadcast_to_shape(fname, a, shape, keep_scalars) for a in args]


# -- axes -------------------------------------------------------------------------------

def canonicalize_axis(fname, axis, ndim) -> int:
    """A non-negative axis, or the ValueError JAX raises (NumPy's AxisError, also an
    IndexError, would not be JAX's exception type)."""
    try:
        axis = int(axis.__index__()) if not isinstance(axis, int) else axis
    except (AttributeError, TypeError):
        if isinstance(axis, Tracer):    # JAX's exception for a value known only later
            raise ConcretizationTypeError(
                f"{fname}: the axis argument must be known statically, but it is the "
                f"traced value {axis!r}; pass a Python int (a static argument of "
                f"jit)") from None
        raise TypeError(f"{fname}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for array of dimension "
                         f"{ndim}")
    return axis % ndim if ndim else 0


def canonicalize_axes(fname, axis, ndim) -> tuple:
    """`axis` (None, an int or a sequence) as a sorted tuple of distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(canonicalize_axis(fname, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    return (canonicalize_axis(fname, axis, ndim),)


def static_int(fname, value, what) -> int:
    """A Python int from a static argument, or a clear error naming `what`."""
    if isinstance(value, Tracer):
        value = value._concrete_or_raise(f"{fname}: argument {what!r}")
    try:
        return int(value.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"{fname}: {what} must be an integer, got {value!r}") from None


__all__ = [
    "PY_SCALARS", "aval", "as_operand", "as_array", "shape_of", "ndim_of", "dtype_of",
    "is_weak", "result_type", "result_type_and_weak", "promote_types", "convert",
    "promote_dtypes", "promote_dtypes_inexact", "promote_dtypes_numeric",
    "broadcast_shapes", "broadcast_to_shape", "promote_args", "promote_args_inexact",
    "promote_args_numeric", "canonicalize_axis", "canonicalize_axes", "static_int",
    "is_python_scalar", "to_inexact", "ShapedArray", "like", "is_float", "is_complex",
    "is_integer", "is_bool", "is_inexact", "is_half_float"
]
