"""Dtype names and dtype queries for `minijax.numpy`: `jnp.float32`, `jnp.dtype`, ...

`jnp.float32` is both a dtype and a constructor, as in JAX: `x.dtype == jnp.float32`
holds, `jnp.zeros(3, jnp.float32)` works, and `jnp.float32(2)` makes a strongly typed
rank-0 array (through `minijax.numpy.asarray`, so it also works on tracers).

With x64 off (JAX's default, and the only mode minijax has) the 64-bit names exist but
mean their 32-bit counterparts once a value is made, exactly as in JAX.

The promotion lattice itself is JAX's (`jax.dtypes.result_type`); see `_promotion.py`.
"""
from __future__ import annotations

import warnings

import numpy as np
import jax
import jax.numpy as _jax_numpy

from ..ir.dtype_args import canonical_dtype_argument
from ..ir.trace import Tracer
from ..ir.types import bfloat16 as _bfloat16_dtype, canonical_dtype
from ..ir.types import NARROW_FLOAT_NAMES as _NARROW_FLOAT_NAMES
from ..ir.types import NARROW_INT_NAMES as _NARROW_INT_NAMES


class _ScalarType:
    """A dtype name that is also a constructor: `jnp.float32(x)` is an f32 array.

    NumPy turns any object with a `.dtype` attribute into that dtype, so these compare
    equal to dtypes and can be passed wherever NumPy or minijax expects a dtype."""

    def __init__(self, name: str, dtype):
        self.__name__ = self.name = name
        self.dtype = np.dtype(dtype)
        self.type = self.dtype.type  # the NumPy scalar type, for issubdtype

    def __call__(self, value=0):
        from ._creation import asarray  # not at the top: _creation imports this module (a cycle)
        return asarray(value, dtype=self.dtype)

    def __eq__(self, other):
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"minijax.numpy.{self.name}"


bool_ = _ScalarType("bool_", np.bool_)
int8 = _ScalarType("int8", np.int8)
int16 = _ScalarType("int16", np.int16)
int32 = _ScalarType("int32", np.int32)
int64 = _ScalarType("int64", np.int64)
uint8 = _ScalarType("uint8", np.uint8)
uint16 = _ScalarType("uint16", np.uint16)
uint32 = _ScalarType("uint32", np.uint32)
uint64 = _ScalarType("uint64", np.uint64)
float16 = _ScalarType("float16", np.float16)
bfloat16 = _ScalarType("bfloat16", _bfloat16_dtype)
float32 = _ScalarType("float32", np.float32)
float64 = _ScalarType("float64", np.float64)
complex64 = _ScalarType("complex64", np.complex64)
complex128 = _ScalarType("complex128", np.complex128)
# JAX's narrow dtypes (quantization formats, from ml_dtypes): jnp.float8_e4m3fn, jnp.int4,
# ... Bound one by one so that linters and readers see each name.
_NARROW = {name: _ScalarType(name, np.dtype(name))
           for name in (*_NARROW_FLOAT_NAMES, *_NARROW_INT_NAMES)}
float8_e4m3fn, float8_e5m2 = _NARROW["float8_e4m3fn"], _NARROW["float8_e5m2"]
float8_e4m3fnuz, float8_e5m2fnuz = _NARROW["float8_e4m3fnuz"], _NARROW["float8_e5m2fnuz"]
float8_e4m3b11fnuz, float8_e4m3 = _NARROW["float8_e4m3b11fnuz"], _NARROW["float8_e4m3"]
float8_e3m4, float8_e8m0fnu = _NARROW["float8_e3m4"], _NARROW["float8_e8m0fnu"]
float4_e2m1fn = _NARROW["float4_e2m1fn"]
float6_e2m3fn, float6_e3m2fn = _NARROW["float6_e2m3fn"], _NARROW["float6_e3m2fn"]
int4, uint4, int2, uint2 = _NARROW["int4"], _NARROW["uint4"], _NARROW["int2"], _NARROW["uint2"]
int1, uint1 = _NARROW["int1"], _NARROW["uint1"]
# NumPy's default-width names are the 64-bit types, in JAX as in NumPy: `jnp.int_` is
# `jnp.int64`, so `jnp.finfo(jnp.float_).eps` is float64's, and an array asked for
# with one of them is 32-bit with JAX's warning, like any 64-bit request with x64 off.
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128

# NumPy's C-style names for the same types, as JAX exports them.
single, double, csingle, cdouble = float32, float64, complex64, complex128

# The abstract scalar hierarchy is NumPy's (bfloat16 is placed in it by `issubdtype`).
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
character, flexible, object_ = np.character, np.flexible, np.object_
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger

finfo = _jax_numpy.finfo  # re-exported: they describe dtypes and compute nothing
iinfo = _jax_numpy.iinfo


class _ArrayMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, (jax.Array, Tracer))

    def __subclasscheck__(cls, subclass):
        return subclass is cls or issubclass(subclass, (jax.Array, Tracer))


class Array(metaclass=_ArrayMeta):
    """`minijax.Array`, also `minijax.numpy.ndarray` (JAX's `jax.Array` is its
    `jnp.ndarray`): `isinstance(x, Array)` holds for jax arrays and for minijax tracers,
    as JAX's holds for its tracers, so a function can tell arrays from other leaves
    (equinox's and optax's `isinstance(leaf, jax.Array)`) the same way inside `jit`,
    `grad` or `vmap` as outside. JAX's own class cannot say so: its instance check
    knows only JAX's tracer class."""


Array.__module__ = "minijax"
ndarray = Array



def _as_dtype_like(obj):
    """What NumPy's dtype functions take for `obj`: a tracer stands for its dtype, as
    JAX's tracers do there (their `.dtype`, with no warning), and a minijax scalar
    type for its dtype. A jax.Array goes on as it is, so that NumPy's conversion gives
    JAX's DeprecationWarning (a concrete array as a dtype)."""
    if isinstance(obj, (_ScalarType, Tracer)):
        return obj.dtype
    return obj


def dtype(dtype, align: bool = False, copy: bool = False) -> np.dtype:
    """`numpy.dtype`, which is what `jax.numpy.dtype` is, also taking minijax's scalar
    types and tracers. A concrete jax.Array gives its dtype with JAX's
    DeprecationWarning, a NumPy array is NumPy's TypeError, and `None` is float64, as
    NumPy has it. Functions' `dtype=` arguments are stricter (`ir/dtype_args.py`)."""
    if isinstance(dtype, jax.Array) and not isinstance(dtype, Tracer):
        warnings.warn(_ARRAY_TO_DTYPE, DeprecationWarning, stacklevel=2)
        return dtype.dtype
    dtype = _as_dtype_like(dtype)
    if isinstance(dtype, str) and dtype == "bfloat16":
        return _bfloat16_dtype
    return np.dtype(dtype, align=align, copy=copy)


# JAX's words (jax.Array's `__numpy_dtype__`, jax 0.10.2 to 0.12.0.1).
_ARRAY_TO_DTYPE = ("Implicit conversion of an array to a dtype is deprecated; rather than "
                   "dtype=arr use dtype=arr.dtype. In the future this will result in an "
                   "error.")


def canonicalize_dtype(dtype, fun_name: str | None = None) -> np.dtype:
    """The dtype a `dtype=` argument gets (x64 off: 64-bit -> 32-bit); arrays and
    dtypes JAX has no arrays of are refused as JAX refuses them."""
    return canonical_dtype_argument(dtype, fun_name)


def issubdtype(arg1, arg2) -> bool:
    """`numpy.issubdtype` with bfloat16 counted as a floating type (as JAX does)."""
    arg1, arg2 = _as_dtype_like(arg1), _as_dtype_like(arg2)
    if isinstance(arg2, np.dtype):
        arg2 = arg2.type
    return bool(_jax_numpy.issubdtype(arg1, arg2))


_as_numpy_dtype = dtype     # for the functions below, whose parameter is named `dtype`


def isdtype(dtype, kind) -> bool:
    """The array-API `isdtype` (kinds such as 'real floating', 'integral', 'bool')."""
    return bool(_jax_numpy.isdtype(canonical_dtype(_as_numpy_dtype(dtype)), kind))


def can_cast(from_, to, casting: str = "safe") -> bool:
    return bool(np.can_cast(dtype(from_), dtype(to), casting))


__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int_",
    "uint", "float_", "complex_", "generic", "number", "inexact", "floating",
    "complexfloating", "integer", "single", "double", "csingle", "cdouble", "character",
    "flexible", "object_", "signedinteger", "unsignedinteger", "finfo", "iinfo",
    "ndarray", "dtype", "issubdtype", "isdtype",
    "can_cast", *_NARROW,
]
