"""A `dtype=` argument as JAX takes it: a dtype, a scalar type or a dtype's name.

JAX refuses a value where it wants a dtype (`jnp.zeros(2, dtype=x)`): a `jax.Array`
or a tracer is a ValueError that says to write `x.dtype`, a NumPy array is NumPy's
own TypeError, and a dtype JAX has no arrays of (`object`, strings, dates, a Python
class that is no scalar type) is a TypeError naming the function. Every public
function with a dtype parameter goes through `dtype_argument`, so all of them refuse
the same things. minijax's own values count as arrays here: its tracers, as JAX's
tracers are jax.Arrays, and its refs and ref views (JAX takes a ref's dtype: see the
divergence record `ref_as_a_dtype_argument_is_taken`).

A 64-bit dtype asked for while x64 is off is truncated to its 32-bit kin with JAX's
UserWarning, naming the function (`canonical_dtype_argument`): only a dtype the user
gave is checked, never a default or an input's own dtype, and Python's `int`, `float`
and `complex` (JAX's "default type" spellings) pass silently.

`jnp.dtype` itself is NumPy's constructor in JAX and is more lenient; it lives in
`minijax/numpy/_dtypes.py`.
"""
from __future__ import annotations

import warnings

import jax
import numpy as np

from .ref_box import Ref
from .source_info import user_stacklevel
from .trace import Tracer
from .types import KEY_DTYPE, NARROW_FLOATS, NARROW_INTS, bfloat16, canonical_dtype, float0

ARRAY_AS_DTYPE = ("Passing an array as a dtype argument is no longer supported; "
                  "instead of dtype=arr use dtype=arr.dtype.")

# The value types a dtype argument refuses; `frontend/refs.py` adds its RefView (ir
# cannot import the front end).
_ARRAY_TYPES: list[type] = [jax.Array, Tracer, Ref]
_OTHER_DTYPES = frozenset({bfloat16, float0, KEY_DTYPE, *NARROW_FLOATS, *NARROW_INTS})


def counts_as_array(cls: type) -> type:
    """Class decorator: values of `cls` are refused as dtype arguments."""
    _ARRAY_TYPES.append(cls)
    return cls


def is_array_value(obj) -> bool:
    return isinstance(obj, tuple(_ARRAY_TYPES))


def refuse_array(obj) -> None:
    if is_array_value(obj):
        raise ValueError(ARRAY_AS_DTYPE)


def dtype_argument(dtype, fun_name: str | None = None) -> np.dtype:
    """The dtype a user's `dtype=` argument asks for, before x64 canonicalization;
    JAX's extended dtypes (key dtypes) pass as they are. `None` is refused: callers
    that have a default put it in first."""
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype, np.dtype):
        wanted = dtype
    elif isinstance(dtype, (str, type)):
        wanted = bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    else:
        refuse_array(dtype)
        inner = getattr(dtype, "dtype", None)
        if isinstance(inner, np.dtype) and not isinstance(dtype, np.ndarray):
            wanted = inner     # a scalar type such as jnp.float32
        elif _is_extended(dtype):
            return dtype
        else:
            wanted = np.dtype(dtype)
    if wanted.kind in "biufc" or wanted in _OTHER_DTYPES:
        return wanted
    where = f" in {fun_name}" if fun_name else ""
    raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype "
                    f"{dtype}{where}")


def canonical_dtype_argument(dtype, fun_name: str | None = None, *,
                             name_in_warning: bool = True) -> np.dtype:
    """`dtype_argument`, then what minijax makes of it with x64 off (64 -> 32 bits),
    with JAX's warning when that truncates it (naming `fun_name` unless
    `name_in_warning` is False: JAX's samplers do not name themselves there)."""
    wanted = dtype_argument(dtype, fun_name)
    if not isinstance(wanted, np.dtype):
        return wanted
    canonical = canonical_dtype(wanted)
    # Python's own `int`, `float` and `complex` mean "the default type" to JAX, which
    # truncates them without a word.
    if canonical != wanted and not (type(dtype) is type and dtype in _PYTHON_SCALAR_TYPES):
        where = f" requested in {fun_name}" if fun_name and name_in_warning else ""
        warnings.warn(f"Explicitly requested dtype {wanted}{where} is not available, and "
                      f"will be truncated to dtype {canonical}. {_X64_HINT}",
                      stacklevel=user_stacklevel())
    return canonical


_PYTHON_SCALAR_TYPES = (int, float, complex)

# JAX's words after the truncation warning (jax 0.10.2 to 0.12.0.1).
_X64_HINT = ("To enable more dtypes, set the jax_enable_x64 configuration option or the "
             "JAX_ENABLE_X64 shell environment variable. See "
             "https://github.com/jax-ml/jax#current-gotchas for more.")


def _is_extended(dtype) -> bool:
    try:
        return bool(jax.dtypes.issubdtype(dtype, jax.dtypes.extended))
    except TypeError:      # not a dtype at all: np.dtype's own error says so
        return False
