"""`minijax.dtypes`: what `jax.dtypes` offers, for minijax's values.

minijax's types are JAX's with x64 off (`ir/types.py`, `canonical_dtype`), so
`canonicalize_dtype` maps 64-bit requests to 32-bit ones, and `result_type` is
`minijax.numpy`'s promotion (JAX's lattice, weak types included). Tracers are
accepted wherever an array is. A minijax key array's dtype while traced (the words
of a threefry key) counts as JAX's `prng_key`, as the `key<fry>` dtype does eagerly.
The scalar and info types (`bfloat16`, `float0`, `finfo`, `iinfo`) and the
abstract dtype classes (`extended`, `prng_key`) describe dtypes and compute nothing;
they are JAX's own.
"""
import jax
import numpy as np

from .ir.trace import Tracer
from .ir.types import float0, is_key, is_bool, is_integer, is_float, is_complex
from .ir.dtype_args import is_array_value
from .ir.types import canonical_dtype
from .numpy._dtypes import dtype as _dtype_of
from .numpy._dtypes import issubdtype as _numpy_issubdtype, finfo, iinfo
from .numpy._promotion import result_type_and_weak

bfloat16 = jax.dtypes.bfloat16
extended = jax.dtypes.extended
prng_key = jax.dtypes.prng_key
TypePromotionError = jax.dtypes.TypePromotionError


def _is_key_dtype(dtype) -> bool:
    if isinstance(dtype, Tracer):
        dtype = dtype.dtype
    if isinstance(dtype, np.dtype) and is_key(dtype):
        return True
    try:
        return bool(jax.dtypes.issubdtype(dtype, extended))
    except TypeError:       # not a dtype at all: the caller's checks name it
        return False


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """The dtype a value requested as `dtype` gets (64-bit requests become 32-bit).
    A key dtype is returned as it is with `allow_extended_dtype=True`, and refused
    (ValueError) otherwise, as in JAX."""
    # JAX's is cached on its argument, so an array (or a list) is a TypeError there.
    hash(dtype)
    if is_array_value(dtype):
        raise TypeError(f"unhashable type: {type(dtype).__name__!r}")
    if _is_key_dtype(dtype):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"canonicalize_dtype called on extended dtype {dtype} with "
                         f"allow_extended_dtype=False")
    return canonical_dtype(_dtype_of(dtype))


def issubdtype(a, b) -> bool:
    """Whether dtype `a` is below `b` in JAX's hierarchy (bfloat16 is a floating type,
    a key dtype is a `prng_key`, an `extended` dtype)."""
    if _is_key_dtype(a):
        return b in (prng_key, extended) or _is_key_dtype(b)
    if _is_key_dtype(b) or b in (prng_key, extended):
        return False
    return _numpy_issubdtype(a, b)


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX's promotion gives `args` (arrays, tracers, scalars or dtypes);
    with `return_weak_type_flag=True`, the pair (dtype, weak)."""
    dtype, weak = result_type_and_weak(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x) -> type:
    """The Python scalar type of `x`'s kind: bool, int, float or complex."""
    if type(x) in (bool, int, float, complex):
        return type(x)
    # An array's own dtype: making a dtype of the array itself is deprecated in JAX.
    dtype = x.dtype if hasattr(x, "dtype") and not isinstance(x, type) else _dtype_of(x)
    for test, kind in ((is_bool, bool), (is_integer, int), (is_float, float),
                       (is_complex, complex)):
        if test(dtype):
            return kind
    raise TypeError(f"Invalid scalar value {x!r}")


def itemsize_bits(dtype) -> int:
    """The size of one element of `dtype`, in bits."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    return int(jax.dtypes.itemsize_bits(_dtype_of(dtype)))


__all__ = ["bfloat16", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of",
           "TypePromotionError"]
