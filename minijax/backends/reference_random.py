"""NumPy rules of the bit operations, `erf_inv` and the key primitives.

Read `reference_rules.py` first. Shifts follow XLA: the shift amount is read as
unsigned, and a shift by the bit width or more gives 0 (the sign fill for
`shift_right_arithmetic`). `erf_inv` is Giles' polynomial approximation polished by
Newton steps on `math.erf` in float64, then rounded once; `random_gamma_grad` sums
the series of the incomplete gamma function and of its derivative. Keys are NumPy
arrays of their key dtype here, so wrapping and unwrapping are views of the same bytes;
`threefry2x32` runs the shared description of the cipher
(`ir/random_primitives.threefry2x32_rounds`) on NumPy uint32 arrays.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..ir import random_primitives as R
from ..ir.types import KEY_DTYPES, key_tag, keys_as_numpy
from .reference_rules import reference_rules, _rule, _wide


def _unsigned(dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def _signed(dtype) -> np.dtype:
    return np.dtype(f"i{np.dtype(dtype).itemsize}")


def _shift(x, n, shift_bits, fill):
    """`shift_bits(x, amount)` where the amount is in range, `fill(x)` elsewhere."""
    x, n = np.broadcast_arrays(x, n)
    bits = 8 * x.dtype.itemsize
    amount = n.astype(_unsigned(n.dtype))
    in_range = amount < bits
    shifted = shift_bits(x, np.where(in_range, amount, 0).astype(_unsigned(x.dtype)))
    return np.where(in_range, shifted, fill(x)).astype(x.dtype)


@_rule(R.shift_left_p)
def _shift_left(x, n):
    return _shift(x, n, lambda x, k: (x.view(_unsigned(x.dtype)) << k).view(x.dtype),
                  np.zeros_like)


@_rule(R.shift_right_logical_p)
def _shift_right_logical(x, n):
    return _shift(x, n, lambda x, k: (x.view(_unsigned(x.dtype)) >> k).view(x.dtype),
                  np.zeros_like)


@_rule(R.shift_right_arithmetic_p)
def _shift_right_arithmetic(x, n):
    signed = _signed(x.dtype)
    sign_fill = lambda x: (x.view(signed) >> (8 * x.dtype.itemsize - 1)).view(x.dtype)
    return _shift(x, n, lambda x, k: (x.view(signed) >> k.astype(signed)).view(x.dtype),
                  sign_fill)


def _contiguous(x):
    # np.ascontiguousarray makes a 0-d array 1-d; keep the shape
    x = np.asarray(x)
    return np.ascontiguousarray(x).reshape(x.shape)


@_rule(R.population_count_p)
def _population_count(x):
    x = _contiguous(x)
    flat = x.reshape(-1)      # (a 0-d array cannot be viewed as bytes)
    bits = np.unpackbits(flat.view(np.uint8).reshape(flat.size, x.dtype.itemsize), axis=-1)
    return bits.sum(axis=-1).astype(x.dtype).reshape(x.shape)


@_rule(R.bitcast_convert_type_p)
def _bitcast_convert_type(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    x = _contiguous(x)
    if x.dtype.itemsize > new_dtype.itemsize:
        return x[..., None].view(new_dtype)
    if x.dtype.itemsize < new_dtype.itemsize:
        return x.view(new_dtype)[..., 0]
    return x.view(new_dtype)


@_rule(R.reduce_precision_p)
def _reduce_precision(x, *, exponent_bits, mantissa_bits):
    """Round the bits as XLA does: the mantissa to nearest (ties to even) by adding
    a bias and masking, then magnitudes outside the narrower exponent range to
    infinity (above) or zero (at or below its smallest normal exponent); NaN stays."""
    x = _contiguous(x)
    info = ml_dtypes.finfo(x.dtype)     # NumPy's finfo does not know bfloat16
    src_mantissa, src_exponent = info.nmant, info.nexp
    width = x.dtype.itemsize * 8
    uint = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(uint).astype(np.uint64)
    if mantissa_bits < src_mantissa:
        drop = src_mantissa - mantissa_bits
        last_kept = np.uint64(1) << np.uint64(drop)
        bias = (last_kept >> np.uint64(1)) - np.uint64(1) + ((bits & last_kept) >> np.uint64(drop))
        bits = (bits + bias) & ~(last_kept - np.uint64(1))
    if exponent_bits < src_exponent:
        exponent_mask = np.uint64(((1 << src_exponent) - 1) << src_mantissa)
        sign = bits & np.uint64(1 << (width - 1))
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflows = exponent > np.uint64((bias + reduced_bias) << src_mantissa)
        underflows = exponent <= np.uint64((bias - reduced_bias) << src_mantissa)
        bits = np.where(overflows, sign | exponent_mask, np.where(underflows, sign, bits))
    bits = (bits & np.uint64((1 << width) - 1)).astype(uint)
    out = bits.view(x.dtype).reshape(x.shape)
    return np.where(np.isnan(x), x, out)


@_rule(R.nextafter_p)
def _nextafter(x, y):
    return np.nextafter(x, y)


# Giles, "Approximating the erfinv function" (2010): coefficients in w = -log(1 - y^2),
# for the central region (w < 5, around w = 2.5) and the tails (around sqrt(w) = 3).
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf_inv64(y):
    y = np.asarray(y, np.float64)
    inside = np.abs(y) < 1
    safe = np.where(inside, y, 0.0)
    w = -np.log((1 - safe) * (1 + safe))
    central, tail = w - 2.5, np.sqrt(w) - 3
    p_central, p_tail = np.zeros_like(w), np.zeros_like(w)
    for c_central, c_tail in zip(_GILES_CENTRAL, _GILES_TAIL):
        p_central, p_tail = p_central * central + c_central, p_tail * tail + c_tail
    x = np.where(w < 5, p_central, p_tail) * safe
    for _ in range(2):  # Newton on erf(x) = y: each step doubles the correct digits
        x = x - (_erf64(x) - safe) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    edge = np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan)
    return np.where(inside, x, edge)


@_rule(R.erf_inv_p)
def _erf_inv(x):
    return _wide(_erf_inv64, x)


_lgamma64 = np.vectorize(math.lgamma, otypes=[np.float64])


def _digamma64(a):
    """psi(a) for a > 0: recurrence psi(a) = psi(a + 1) - 1/a up to a >= 6, then the
    asymptotic series."""
    a, result = np.array(a, np.float64), np.zeros(np.shape(a))
    for _ in range(6):
        small = a < 6
        result = result - np.where(small, 1 / a, 0.0)
        a = np.where(small, a + 1, a)
    inv2 = 1 / (a * a)
    tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return result + np.log(a) - 0.5 / a - tail


def _random_gamma_grad64(a, x):
    """dx/da at a fixed value of the Gamma(a) CDF P(a, x): -(dP/da) / (dP/dx), with
    P(a, x) = exp(-x) x^a / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)) and
    its a-derivative summed term by term alongside."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    log_x = np.log(x)
    term, series, d_series, d_log_term = (np.ones(a.shape), np.ones(a.shape),
                                          np.zeros(a.shape), np.zeros(a.shape))
    for n in range(1, 100_000):
        term = term * x / (a + n)
        d_log_term = d_log_term - 1 / (a + n)
        series, d_series = series + term, d_series + term * d_log_term
        if np.all(term <= 1e-17 * series):
            break
    prefactor = np.exp(-x + a * log_x - _lgamma64(a + 1))
    d_p_d_a = prefactor * ((log_x - _digamma64(a + 1)) * series + d_series)
    density = np.exp(-x + (a - 1) * log_x - _lgamma64(a))
    return -d_p_d_a / density


@_rule(R.random_gamma_grad_p)
def _random_gamma_grad(a, x):
    return _wide(_random_gamma_grad64, a, x)


@_rule(R.random_wrap_p)
def _random_wrap(words, impl="threefry2x32"):
    return np.ascontiguousarray(words, np.uint32).view(KEY_DTYPES[impl])[..., 0]


@_rule(R.random_unwrap_p)
def _random_unwrap(keys):
    keys = keys_as_numpy(keys)
    return np.array(keys[key_tag(keys.dtype)])


@_rule(R.random_consume_p)
def _random_consume(keys):
    return keys_as_numpy(keys)


@_rule(R.random_clone_p)
def _random_clone(keys):
    return keys_as_numpy(keys).copy()


def _threefry2x32(k1, k2, x1, x2):
    with np.errstate(over="ignore"):   # uint32 arithmetic wraps around, as intended
        return [np.asarray(y, np.uint32)
                for y in R.threefry2x32_rounds(k1, k2, x1, x2, np.uint32)]


reference_rules[R.threefry2x32_p] = _threefry2x32
