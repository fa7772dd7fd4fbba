"""The contractions of `minijax.lax` (`dot_general`, `dot`) and their precision.

`precision=` says how exactly an accelerator multiplies (`Precision`, JAX's own
enum; the CPU ignores it). A contraction given none takes the thread's
`jax_default_matmul_precision` (`ir/matmul_precision.py`), so a trace records the
precision it ran with; `conv_general_dilated` (`windows.py`) reads it the same way,
through `canonicalize_precision`.
"""
from __future__ import annotations

import functools

from jax import lax as _jax_lax

from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.matmul_precision import default_precision
from . import int_params as ip

# The precision of a contraction on accelerators, JAX's own enum (DEFAULT, HIGH,
# HIGHEST; also spelt as strings such as 'highest' or 'float32'). CPU ignores it.
Precision = _jax_lax.Precision
# A named dot algorithm (JAX's enum, `precision=lax.DotAlgorithmPreset.F32_F32_F32` or
# its name): the param holds the name, one string for both operands.
DotAlgorithmPreset = _jax_lax.DotAlgorithmPreset
DotAlgorithm = _jax_lax.DotAlgorithm     # the name only: `precision=` refuses one


def canonicalize_precision(precision):
    """`precision=` as the `dot_general`/`conv` param: None, a pair of `Precision`
    names (one per operand), or a `DotAlgorithmPreset` name, which the text form prints
    and parses as strings. None takes `jax_default_matmul_precision` when that is set,
    as JAX's contractions do. A `lax.DotAlgorithm` is refused (minijax does not model
    it; JAX's CPU rejects every one)."""
    if precision is None:
        return default_precision()
    if isinstance(precision, DotAlgorithmPreset):
        return precision.name
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return precision        # upper case: JAX's Precision names are lower case
    pair = precision if isinstance(precision, (tuple, list)) else (precision, precision)
    if len(pair) != 2 or any(p is None for p in pair):
        raise ValueError(f"precision must be None, a lax.Precision value or its name, a "
                         f"pair of them, or a lax.DotAlgorithmPreset or its name; got "
                         f"{precision!r}")
    try:
        return tuple(Precision(p).name for p in pair)
    except (ValueError, TypeError):
        raise ValueError(f"precision must be None, a lax.Precision value or its name "
                         f"({', '.join(p.name.lower() for p in Precision)}), a pair of "
                         f"them, or a lax.DotAlgorithmPreset or its name; got "
                         f"{precision!r}") from None


def _dot_dimension_numbers(dimension_numbers):
    """`((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))` as tuples of ints."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (ip.indices("dot_general", "dimension_numbers", axes)
                      for axes in (lc, rc, lb, rb))
    return (lc, rc), (lb, rb)


# Tracing a network converts the same few dimension numbers at every layer.
_dot_dimension_numbers_memo = functools.lru_cache(maxsize=256)(_dot_dimension_numbers)


def _all_python_ints(dimension_numbers):
    # The memo must not serve `(1.0,)` the entry of `(1,)` (equal keys): only plain
    # ints go through it, the rest is checked one element at a time.
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return all(type(i) is int for axes in (lc, rc, lb, rb) for i in axes)
    except (TypeError, ValueError):
        return False


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    try:
        if not _all_python_ints(dimension_numbers):
            raise TypeError
        dnums = _dot_dimension_numbers_memo(dimension_numbers)
    except TypeError:       # lists are not hashable (or it is malformed: raise from here)
        dnums = _dot_dimension_numbers(dimension_numbers)
    pref = None if preferred_element_type is None else canonical_dtype_argument(
        preferred_element_type, "dot_general")
    return bind(P.dot_general_p, lhs, rhs, dimension_numbers=dnums,
                precision=canonicalize_precision(precision), preferred_element_type=pref)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product contracting the last axis of lhs with the first of rhs."""
    lhs_ndim, rhs_ndim = aval_of(lhs).ndim, aval_of(rhs).ndim
    if lhs_ndim not in (1, 2) or rhs_ndim not in (1, 2):
        raise TypeError(f"lax.dot takes rank-1 or rank-2 operands, got ranks "
                        f"{lhs_ndim} and {rhs_ndim}")
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)
