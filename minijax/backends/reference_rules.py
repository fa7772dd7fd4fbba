"""What each array primitive computes, written out in NumPy: the reference rules.

Read `reference.py` first (the evaluator, refs and calls); this module holds the
rules for the pure array primitives. Each rule has the one signature of the table,

    reference_rules[prim](*values, **params) -> list of NumPy arrays

where the values are NumPy arrays of exactly the dtypes the type rules give
(`ml_dtypes.bfloat16` for bf16), and the results are arrays of exactly the output
avals' dtypes. Nothing here calls JAX: this is an independent statement of XLA's
semantics, checked against `jax.lax` in `tests/test_reference.py`.

Floating point: a float op is computed in a wider dtype and rounded once to the
result dtype (f16 and bf16 via f32, f32 via f64, c64 via c128). For +, -, *, / and
sqrt that *is* the IEEE result in the narrow dtype -- rounding twice is harmless when
the wide type has at least 2p+2 bits of precision -- so those agree with XLA bit for
bit; transcendental functions come out (nearly) correctly rounded, which XLA
approximates to a few ulps. Integer arithmetic wraps, as in XLA.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..ir import primitives as P
from ..ir.catalogue import dot_general_result_dtype
from ..ir.types import bfloat16, float0, is_bool, is_complex, is_inexact, is_integer

reference_rules: dict = P.register_rule_table("reference", {})


def _rule(*prims):
    """Register `fn(*values, **params) -> array` as the rule of single-result `prims`.

    IEEE special cases (overflow to inf, 0/0 = NaN) are the intended results, so
    NumPy's warnings about them are silenced here rather than at every call site."""
    def register(fn):
        def rule(*values, **params):
            with np.errstate(all="ignore"):
                return [np.asarray(fn(*values, **params))]
        rule.__name__ = rule.__qualname__ = fn.__name__
        rule.__doc__ = fn.__doc__
        for prim in prims:
            reference_rules[prim] = rule
        return fn
    return register


_WIDER = {np.dtype(np.float16): np.dtype(np.float32), bfloat16: np.dtype(np.float32),
          np.dtype(np.float32): np.dtype(np.float64),
          np.dtype(np.complex64): np.dtype(np.complex128)}


def _wide(fn, *xs, out_dtype=None):
    """`fn` on `xs` computed in the wider dtype of their (common) dtype, rounded once
    to `out_dtype` (default: that dtype). Non-float dtypes are computed as they are."""
    dtype = xs[0].dtype
    wide = _WIDER.get(dtype, dtype)
    result = fn(*(x.astype(wide) for x in xs))
    return np.asarray(result).astype(dtype if out_dtype is None else out_dtype)


def _float_type(dtype):
    """Floats that NumPy cannot order or test natively (bf16, f16) are lifted to f32;
    the lift is exact and order preserving."""
    return _WIDER[dtype] if dtype in (bfloat16, np.dtype(np.float16)) else dtype


# -- elementwise: float functions ----------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])

_FLOAT_FUNCTIONS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp,
    "exp2": np.exp2, "log": np.log, "log2": np.log2, "log1p": np.log1p, "expm1": np.expm1,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "erf": _erf,
    "floor": np.floor, "ceil": np.ceil,
}


def _float_function(fn):
    return lambda x: _wide(fn, x)


for _name, _fn in _FLOAT_FUNCTIONS.items():
    _rule(P.primitives_by_name[_name])(_float_function(_fn))


@_rule(P.round_p)
def _round(x, *, rounding_method=0):
    """0: halves away from zero; 1: halves to even. `x - trunc(x)` is exact, so the
    away-from-zero test cannot be fooled by rounding (unlike `floor(x + 0.5)`)."""
    def away_from_zero(x):
        truncated = np.trunc(x)
        return np.where(np.abs(x - truncated) >= 0.5, truncated + np.sign(x), truncated)
    return _wide(away_from_zero if int(rounding_method) == 0 else np.rint, x)


@_rule(P.is_finite_p)
def _is_finite(x):
    return np.isfinite(x.astype(_float_type(x.dtype)))


# -- elementwise: arithmetic --------------------------------------------------------------

@_rule(P.neg_p)
def _neg(x):
    return _wide(np.negative, x)


@_rule(P.abs_p)
def _abs(x):
    # |complex| is real, as in XLA.
    return _wide(np.abs, x, out_dtype=x.real.dtype if is_complex(x.dtype) else None)


@_rule(P.sign_p)
def _sign(x):
    # np.sign(-0.0) is +0.0; XLA keeps the zero's sign, so zeros pass through.
    return _wide(lambda x: np.where(x == 0, x, np.sign(x)), x)


@_rule(P.square_p)
def _square(x):
    return _wide(lambda x: x * x, x)


@_rule(P.one_minus_square_p)
def _one_minus_square(x):
    # (1 + x) * (1 - x) in the wider type, rounded once; integers wrap, and the product
    # equals 1 - x*x modulo 2**bits.
    return _wide(lambda x: (1 + x) * (1 - x), x)


@_rule(P.integer_pow_p)
def _integer_pow(x, *, y):
    # Integers wrap; the result modulo 2**bits does not depend on the order of the
    # multiplications, so NumPy's power agrees with XLA's repeated squaring exactly.
    return _wide(lambda x: np.power(x, x.dtype.type(y) if is_integer(x.dtype) else int(y)), x)


_rule(P.add_p)(lambda x, y: _wide(np.add, x, y))
_rule(P.sub_p)(lambda x, y: _wide(np.subtract, x, y))
_rule(P.mul_p)(lambda x, y: _wide(np.multiply, x, y))
_rule(P.pow_p)(lambda x, y: _wide(np.power, x, y))
_rule(P.atan2_p)(lambda x, y: _wide(np.arctan2, x, y))
_rule(P.max_p)(lambda x, y: _wide(np.maximum, x, y))   # NaN-propagating, as XLA
_rule(P.min_p)(lambda x, y: _wide(np.minimum, x, y))
_rule(P.and_p)(np.bitwise_and)
_rule(P.or_p)(np.bitwise_or)
_rule(P.xor_p)(np.bitwise_xor)
_rule(P.not_p)(np.invert)                               # logical not on bool
_rule(P.stop_gradient_p)(lambda x: x)


def _integer_div(x, y):
    """XLA's integer division: rounds toward zero; x / 0 is -1 (all bits set for
    unsigned); INT_MIN / -1 wraps to INT_MIN."""
    zero = y == 0
    safe_y = np.where(zero, 1, y).astype(y.dtype)
    quotient = np.floor_divide(x, safe_y)             # rounds down, wraps INT_MIN // -1
    inexact = (np.remainder(x, safe_y) != 0) & ((x < 0) != (safe_y < 0))
    quotient = quotient + inexact.astype(x.dtype)     # down -> toward zero
    return np.where(zero, np.invert(np.zeros((), x.dtype)), quotient).astype(x.dtype)


def _integer_rem(x, y):
    """XLA's integer remainder: the sign of the dividend; x % 0 is x."""
    zero = y == 0
    safe_y = np.where(zero, 1, y).astype(y.dtype)
    remainder = x - _integer_div(x, safe_y) * safe_y  # wrapping makes INT_MIN % -1 == 0
    return np.where(zero, x, remainder).astype(x.dtype)


@_rule(P.div_p)
def _div(x, y):
    return _integer_div(x, y) if is_integer(x.dtype) else _wide(np.true_divide, x, y)


@_rule(P.rem_p)
def _rem(x, y):
    # np.fmod is C's fmod: the sign of the dividend, like XLA (np.remainder is Python's %).
    return _integer_rem(x, y) if is_integer(x.dtype) else _wide(np.fmod, x, y)


for _prim, _fn in [(P.eq_p, np.equal), (P.ne_p, np.not_equal), (P.lt_p, np.less),
                   (P.le_p, np.less_equal), (P.gt_p, np.greater),
                   (P.ge_p, np.greater_equal)]:
    _rule(_prim)(lambda x, y, _fn=_fn: _wide(_fn, x, y, out_dtype=np.bool_))


@_rule(P.select_n_p)
def _select_n(which, *cases):
    """`cases[which]` elementwise. An int32 `which` outside [0, n) picks the nearest
    case, as XLA's lowering (a tree of two-way selects) does."""
    which = np.broadcast_to(np.clip(which.astype(np.int64), 0, len(cases) - 1),
                            cases[0].shape)
    out = np.array(cases[0])
    for i, case in enumerate(cases[1:], start=1):
        np.copyto(out, case, where=which == i)
    return out


@_rule(P.clamp_p)
def _clamp(lo, x, hi):
    return _wide(lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), lo, x, hi)


@_rule(P.convert_element_type_p)
def _convert_element_type(x, *, new_dtype, weak_type=False):
    """XLA's conversions: float -> int truncates toward zero, saturates at the
    integer's range and sends NaN to 0; int -> narrower int wraps; complex -> real
    keeps the real part; anything -> bool is `!= 0`."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == float0:
        return np.zeros(x.shape, float0)
    if is_complex(x.dtype) and not is_complex(new_dtype):
        x = x.real
    if is_bool(new_dtype):
        return x != 0
    if is_inexact(x.dtype) and is_integer(new_dtype):
        info = ml_dtypes.iinfo(new_dtype)     # NumPy's iinfo knows no int4
        truncated = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        high, low = truncated >= float(info.max), truncated <= float(info.min)
        inside = np.where(high | low, 0, truncated).astype(new_dtype)
        return np.where(high, new_dtype.type(info.max),
                        np.where(low, new_dtype.type(info.min), inside))
    return x.astype(new_dtype)


# -- shapes ----------------------------------------------------------------------------

@_rule(P.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions):
    aligned = [1] * len(shape)
    for axis, dim in enumerate(broadcast_dimensions):
        aligned[dim] = x.shape[axis]
    return np.broadcast_to(x.reshape(aligned), tuple(shape))


_rule(P.reshape_p)(lambda x, *, new_sizes, dimensions=None: x.reshape(tuple(new_sizes)))
_rule(P.transpose_p)(lambda x, *, permutation: np.transpose(x, tuple(permutation)))
_rule(P.squeeze_p)(lambda x, *, dimensions: np.squeeze(x, axis=tuple(dimensions)))
_rule(P.expand_dims_p)(lambda x, *, dimensions: np.expand_dims(x, tuple(dimensions)))
_rule(P.rev_p)(lambda x, *, dimensions: np.flip(x, axis=tuple(dimensions)))
_rule(P.concatenate_p)(lambda *xs, dimension: np.concatenate(xs, axis=dimension))


@_rule(P.pad_p)
def _pad(x, padding_value, *, padding_config):
    """Interior padding spreads the elements apart; then positive low/high padding
    adds `padding_value` at the ends and negative padding crops."""
    lows, highs, interiors = zip(*padding_config) if padding_config else ((), (), ())
    spread = [n + max(n - 1, 0) * interior for n, interior in zip(x.shape, interiors)]
    grown = [max(lo, 0) + size + max(hi, 0) for lo, size, hi in zip(lows, spread, highs)]
    out = np.full(grown, padding_value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + size, interior + 1)
              for lo, size, interior in zip(lows, spread, interiors))] = x
    return out[tuple(slice(max(-lo, 0), n - max(-hi, 0))
                     for lo, hi, n in zip(lows, highs, grown))]


@_rule(P.slice_p)
def _slice(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(map(slice, start_indices, limit_indices, strides))]


def _clamped_starts(shape, starts, sizes):
    """XLA's rule for start indices: each is clamped so the window fits. (Counting a
    negative index from the end is `minijax.lax.dynamic_slice`'s job, before the
    primitive, as in JAX; the primitive itself only clamps.)"""
    return [min(max(int(start), 0), n - size) for n, start, size in zip(shape, starts, sizes)]


@_rule(P.dynamic_slice_p)
def _dynamic_slice(x, *starts, slice_sizes):
    starts = _clamped_starts(x.shape, starts, slice_sizes)
    return x[tuple(slice(s, s + size) for s, size in zip(starts, slice_sizes))]


@_rule(P.dynamic_update_slice_p)
def _dynamic_update_slice(x, update, *starts):
    starts = _clamped_starts(x.shape, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(s, s + size) for s, size in zip(starts, update.shape))] = update
    return out


# -- reductions ---------------------------------------------------------------------------

def _identity_reduction(ufunc, initial_of=None):
    def rule(x, *, axes):
        return _wide(lambda x: ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype,
                                            **({} if initial_of is None else
                                               {"initial": initial_of(x.dtype)})), x)
    return rule


def _lowest(dtype):
    if is_bool(dtype):
        return False
    return -np.inf if is_inexact(dtype) else np.iinfo(dtype).min


def _highest(dtype):
    if is_bool(dtype):
        return True
    return np.inf if is_inexact(dtype) else np.iinfo(dtype).max


def _all_ones(dtype):
    return np.invert(np.zeros((), dtype)).item()


_rule(P.reduce_sum_p)(_identity_reduction(np.add))
_rule(P.reduce_prod_p)(_identity_reduction(np.multiply))
_rule(P.reduce_max_p)(_identity_reduction(np.maximum, _lowest))   # empty: -inf / INT_MIN
_rule(P.reduce_min_p)(_identity_reduction(np.minimum, _highest))
_rule(P.reduce_and_p)(_identity_reduction(np.bitwise_and, _all_ones))
_rule(P.reduce_or_p)(_identity_reduction(np.bitwise_or, lambda dtype: 0))


def _arg_reduction(np_fn):
    def rule(x, *, axes, index_dtype):
        # NumPy and XLA agree: the first occurrence wins, and NaN beats every number
        # (for argmin as well as argmax).
        return np_fn(x.astype(_float_type(x.dtype)), axis=axes[0]).astype(index_dtype)
    return rule


_rule(P.argmax_p)(_arg_reduction(np.argmax))
_rule(P.argmin_p)(_arg_reduction(np.argmin))


# -- contraction, iota, scans, sort ---------------------------------------------------------

@_rule(P.dot_general_p)
def _dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                 preferred_element_type=None):
    """Batch axes, then lhs free axes, then rhs free axes. Operands are converted to
    the result dtype first (so i8 . i8 -> i32 accumulates in i32, as XLA does)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    out_dtype = np.dtype(dot_general_result_dtype(lhs.dtype, rhs.dtype,
                                                  preferred_element_type))
    lhs_free = [i for i in range(lhs.ndim) if i not in lhs_contract and i not in lhs_batch]
    rhs_free = [i for i in range(rhs.ndim) if i not in rhs_contract and i not in rhs_batch]
    sizes = lambda x, axes: [x.shape[a] for a in axes]  # noqa: E731
    batch, contract = sizes(lhs, lhs_batch), sizes(lhs, lhs_contract)
    l_free, r_free = sizes(lhs, lhs_free), sizes(rhs, rhs_free)
    compute = _WIDER.get(out_dtype, out_dtype)
    lhs3 = np.transpose(lhs, [*lhs_batch, *lhs_free, *lhs_contract]).astype(compute)
    rhs3 = np.transpose(rhs, [*rhs_batch, *rhs_contract, *rhs_free]).astype(compute)
    product = np.matmul(lhs3.reshape(math.prod(batch), math.prod(l_free), math.prod(contract)),
                        rhs3.reshape(math.prod(batch), math.prod(contract), math.prod(r_free)))
    return product.reshape(batch + l_free + r_free).astype(out_dtype)


@_rule(P.iota_p)
def _iota(*, dtype, shape, dimension):
    aligned = [1] * len(shape)
    aligned[dimension] = shape[dimension]
    values = np.arange(shape[dimension]).astype(dtype).reshape(aligned)
    return np.broadcast_to(values, tuple(shape))


def _cumulative(ufunc):
    def rule(x, *, axis, reverse=False):
        def scan(x):
            x = np.flip(x, axis) if reverse else x
            out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
            return np.flip(out, axis) if reverse else out
        return _wide(scan, x)
    return rule


_rule(P.cumsum_p)(_cumulative(np.add))
_rule(P.cumprod_p)(_cumulative(np.multiply))
_rule(P.cummax_p)(_cumulative(np.maximum))
_rule(P.cummin_p)(_cumulative(np.minimum))


def _sort(*operands, dimension, is_stable=True, num_keys=1):
    """Sorts all operands by the first `num_keys` (lexicographically), stably. As in
    XLA's sort: -0.0 and 0.0 tie, NaNs go last."""
    keys = [np.moveaxis(k.astype(_float_type(k.dtype)), dimension, -1)
            for k in operands[:num_keys]]
    order = np.lexsort(keys[::-1], axis=-1)           # lexsort's primary key is last
    return [np.asarray(np.moveaxis(
                np.take_along_axis(np.moveaxis(x, dimension, -1), order, axis=-1),
                -1, dimension))
            for x in operands]


reference_rules[P.sort_p] = _sort


# -- gather and scatter ---------------------------------------------------------------------
#
# Both address windows of the operand. For window b, `indices[b]` gives the start of
# the window along the axes in `start_index_map` (`scatter_dims_to_operand_dims`);
# the other axes start at 0. 'clip' clamps the start so the window fits; 'fill'
# (gather) gives a window of fill values and (scatter) drops the whole update when
# the window does not fit.

def _operand_starts(indices, index_map, ndim):
    """(number of windows, operand rank) start positions."""
    batch = math.prod(indices.shape[:-1])
    starts = np.zeros((batch, ndim), dtype=np.int64)
    starts[:, list(index_map)] = indices.reshape(batch, len(index_map)).astype(np.int64)
    return starts


def _window_grid(starts, window_shape):
    """Index arrays that pick window b at `starts[b]`: operand[grid] has shape
    (number of windows, *window_shape)."""
    ndim = len(window_shape)
    grid = []
    for axis, size in enumerate(window_shape):
        offsets = np.arange(size).reshape([1] + [size if a == axis else 1 for a in range(ndim)])
        grid.append(starts[:, axis].reshape([-1] + [1] * ndim) + offsets)
    return tuple(grid)


def _window_fits(starts, operand_shape, window_shape):
    limit = np.array(operand_shape, dtype=np.int64) - np.array(window_shape, dtype=np.int64)
    return np.all((starts >= 0) & (starts <= limit), axis=1), np.maximum(limit, 0)


def _gather_fill_value(dtype):
    """jax.lax.gather's default fill: NaN for inexact dtypes, the most negative value
    for signed integers, the largest for unsigned ones, True for bool."""
    if is_inexact(dtype):
        return np.nan
    if is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.min if info.min < 0 else info.max


@_rule(P.gather_p)
def _gather(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
            slice_sizes, mode="clip"):
    starts = _operand_starts(indices, start_index_map, operand.ndim)
    fits, limit = _window_fits(starts, operand.shape, slice_sizes)
    windows = operand[_window_grid(np.clip(starts, 0, limit), slice_sizes)]
    if mode == "fill":
        fill = np.asarray(_gather_fill_value(operand.dtype), dtype=operand.dtype)
        windows = np.where(fits.reshape([-1] + [1] * operand.ndim), windows, fill)
    # (windows, *slice) -> (*batch, *offset): collapsed axes have size 1 and vanish.
    batch_shape = indices.shape[:-1]
    offset_sizes = [s for i, s in enumerate(slice_sizes) if i not in collapsed_slice_dims]
    windows = windows.reshape(tuple(batch_shape) + tuple(offset_sizes))
    # Offset axis j goes to output axis offset_dims[j]; batch axes fill the rest, in order.
    batch_axes = iter(range(len(batch_shape)))
    permutation = [len(batch_shape) + list(offset_dims).index(i) if i in offset_dims
                   else next(batch_axes) for i in range(windows.ndim)]
    return np.transpose(windows, permutation)


def _scatter(combine):
    def rule(operand, indices, updates, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, mode="fill"):
        # Window shape in operand axes: inserted axes have size 1; the others take the
        # update window axes in order.
        window_sizes = iter(updates.shape[a] for a in update_window_dims)
        window_shape = [1 if d in inserted_window_dims else next(window_sizes)
                        for d in range(operand.ndim)]
        scatter_axes = [a for a in range(updates.ndim) if a not in update_window_dims]
        starts = _operand_starts(indices, scatter_dims_to_operand_dims, operand.ndim)
        windows = np.transpose(updates, scatter_axes + list(update_window_dims)).reshape(
            [len(starts)] + window_shape)
        fits, limit = _window_fits(starts, operand.shape, window_shape)
        if mode == "clip":
            starts = np.clip(starts, 0, limit)
        else:
            starts, windows = starts[fits], windows[fits]
        return combine(operand, _window_grid(starts, window_shape), windows)
    return rule


def _scatter_replace(operand, grid, windows):
    out = np.array(operand)
    out[grid] = windows     # duplicate indices: the last update wins (XLA: unspecified)
    return out


def _scatter_combining(ufunc):
    """Combine each update into the operand with `ufunc`, unbuffered: duplicate
    indices all take part (add for scatter_add, multiply, maximum, minimum)."""
    def combine(operand, grid, windows):
        def combine_at(operand, windows):
            out = np.array(operand)
            ufunc.at(out, grid, windows)
            return out
        return _wide(combine_at, operand, windows)
    return combine


_rule(P.scatter_p)(_scatter(_scatter_replace))
_rule(P.scatter_add_p)(_scatter(_scatter_combining(np.add)))
_rule(P.scatter_mul_p)(_scatter(_scatter_combining(np.multiply)))
_rule(P.scatter_max_p)(_scatter(_scatter_combining(np.maximum)))   # NaN-propagating
_rule(P.scatter_min_p)(_scatter(_scatter_combining(np.minimum)))
