"""The fuzzer's numeric operations beyond the basic elementwise set: special functions,
bit operations, complex numbers, the scatter variants and random numbers.

Entries of the same table as fuzz_ops.py (see its docstring). Each special function
gets operands inside its domain, away from its poles and branch points, in float32
(XLA computes float16/bfloat16 special functions by upcasting, NumPy's reference does
not, and their last-bit differences are not what this is for):

* lgamma, digamma, polygamma: arguments in [0.5, ...) (`safe_positive`), away from
  the poles at 0, -1, ...; polygamma's order is a small constant integer;
* igamma, igammac, igamma_grad_a, random_gamma_grad: both arguments positive;
* betainc: a, b positive, x inside (0.1, 0.9);
* erf_inv: inside (-0.9, 0.9); erfc: anywhere.

Operands with respect to which neither JAX nor minijax has a derivative (the order of
polygamma, betainc's a and b, the operands of igamma_grad_a, random_gamma_grad and
nextafter) go through `stop_gradient`, so the differentiating rows compare the
derivatives that exist instead of two identical "not differentiable" errors.

Complex values stay inside one operation: it builds `complex(x, y)`, computes with it
(`conj`, products) and returns real values (`real`, `imag`), so the pool -- and every
row that differentiates it -- stays real.
"""
from __future__ import annotations

import numpy as np

import minijax.lax as lax
import minijax.numpy as jnp
import minijax.random as random
from ..ir.types import is_float
from .fuzz_ops import bounded, floating, integral, op, safe_positive, weak_constant


def as_float32(x):
    """`x` in float32 with non-finite values replaced by 0 (edge values are for the
    elementwise ops; these operations get finite operands inside their domain)."""
    if np.dtype(jnp.result_type(x)) != np.float32:
        x = lax.convert_element_type(x, np.float32)
    return jnp.where(lax.is_finite(x), x, 0.0)


def _float32_operand(b):
    x = b.pick(floating)
    return None if x is None else as_float32(x)


def _float32_pair(b):
    """Two float32 operands of one shape (lax's binary operations do not broadcast)."""
    x = b.pick(floating)
    if x is None:
        return None, None
    return jnp.broadcast_arrays(as_float32(x), as_float32(b.partner(x, floating)))


# -- special functions ----------------------------------------------------------------------------

def _positive(x):
    return safe_positive(lax.clamp(weak_constant(-20.0, x), x, weak_constant(20.0, x)))


def _unit_interval(x):
    """x mapped into (0.1, 0.9)."""
    return lax.add(lax.mul(lax.logistic(x), weak_constant(0.8, x)), weak_constant(0.1, x))


_SPECIAL_UNARY = {
    "lgamma": lambda x: lax.lgamma(_positive(x)),
    "digamma": lambda x: lax.digamma(_positive(x)),
    "erfc": lambda x: lax.erfc(lax.clamp(weak_constant(-4.0, x), x, weak_constant(4.0, x))),
    "erf_inv": lambda x: lax.erf_inv(bounded(x)),
}


@op("special:unary", list(_SPECIAL_UNARY), "special", weight=0.8)
def _special_unary(b):
    x = _float32_operand(b)
    if x is None:
        return None
    return [_SPECIAL_UNARY[b.rng.choice(list(_SPECIAL_UNARY))](x)]


@op("special:polygamma", ["polygamma"], "special", weight=0.3)
def _polygamma(b):
    x = _float32_operand(b)
    if x is None:
        return None
    order = jnp.full_like(x, float(b.rng.choice([0, 1, 2])))
    return [lax.polygamma(lax.stop_gradient(order), _positive(x))]


@op("special:igamma", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"], "special",
    weight=0.5)
def _igamma(b):
    x, y = _float32_pair(b)
    if x is None:
        return None
    a, z = _positive(x), _positive(y)
    kind = b.rng.choice(["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
    if kind in ("igamma_grad_a", "random_gamma_grad"):
        b.note_smooth(False)
        return [getattr(lax, kind)(lax.stop_gradient(a), lax.stop_gradient(z))]
    return [getattr(lax, kind)(a, z)]


@op("special:betainc", ["regularized_incomplete_beta"], "special", weight=0.3)
def _betainc(b):
    x, y = _float32_pair(b)
    if x is None:
        return None
    a = lax.stop_gradient(_positive(y))
    other = lax.stop_gradient(lax.add(_positive(x), weak_constant(0.25, x)))
    return [lax.betainc(a, other, _unit_interval(x))]


# -- bit operations ---------------------------------------------------------------------------------

@op("bits:shift", ["shift_left", "shift_right_arithmetic", "shift_right_logical"],
    "bits", weight=0.5)
def _shift(b):
    x = b.pick(integral)
    if x is None:
        return None
    dtype = b.aval(x).dtype
    x, amount = jnp.broadcast_arrays(x, b.partner(x, lambda a: a.dtype == dtype))
    # shifts by the bit width or more are defined by XLA (0 or the sign) and kept rare
    width = 32 if b.rng.random() < 0.9 else 64
    amount = lax.rem(lax.abs(amount) if dtype != np.uint32 else amount,
                     lax.convert_element_type(width, dtype))
    fn = b.rng.choice([lax.shift_left, lax.shift_right_arithmetic, lax.shift_right_logical])
    return [fn(x, amount)]


@op("bits:population_count", ["population_count"], "bits", weight=0.3)
def _population_count(b):
    x = b.pick(integral)
    return None if x is None else [lax.population_count(x)]


@op("bits:bitcast", ["bitcast_convert_type"], "bits", weight=0.4, smooth=False)
def _bitcast(b):
    x = b.pick(lambda a: a.dtype in (np.float32, np.int32, np.uint32))
    if x is None:
        return None
    source = np.dtype(b.aval(x).dtype)
    if source == np.float32:
        return [lax.bitcast_convert_type(x, b.rng.choice([np.int32, np.uint32]))]
    # integers -> float32 only from small magnitudes: their bits are finite floats
    # (tiny subnormals and zeros), never nan payloads whose printing or quieting differs
    small = lax.bitwise_and(x, lax.convert_element_type(0x3FFFFFFF, source))
    return [lax.bitcast_convert_type(small, np.float32)]


@op("bits:nextafter", ["nextafter"], "bits", weight=0.3, smooth=False)
def _nextafter(b):
    x = b.pick(lambda a: a.dtype == np.float32)
    if x is None:
        return None
    # neither JAX nor minijax differentiates nextafter
    x, y = jnp.broadcast_arrays(x, b.partner(x, lambda a: a.dtype == np.float32))
    return [lax.nextafter(lax.stop_gradient(x), lax.stop_gradient(y))]


# -- complex numbers --------------------------------------------------------------------------------

@op("complex", ["complex", "real", "imag", "conj"], "complex", weight=0.6)
def _complex(b):
    x, y = _float32_pair(b)
    if x is None:
        return None
    z = lax.complex(x, y)
    kind = b.rng.randrange(3)
    if kind == 0:
        w = lax.mul(z, lax.conj(z))             # |z|^2 + 0j
    elif kind == 1:
        w = lax.mul(z, lax.complex(0.5, lax.neg(lax.imag(z))))
    else:
        w = lax.add(lax.conj(z), z)
    return [lax.real(w), lax.imag(lax.mul(w, z))]


# -- the scatter variants ---------------------------------------------------------------------------

@op("scatter:combine", ["scatter_mul", "scatter_min", "scatter_max"], "indexing", weight=0.5,
    smooth=False)
def _scatter_combine(b):
    from .fuzz_ops import _index_array
    x = b.pick(lambda a: not np.dtype(a.dtype) == np.bool_ and len(a.shape) >= 1
               and a.shape[0] > 0)
    if x is None:
        return None
    size = b.aval(x).shape[0]
    # distinct static indices: where indices repeat, the order of a scatter's
    # combinations is unspecified (and multiply's rounding depends on it)
    index = _index_array(b, size, (1,)) if b.rng.random() < 0.5 else b.traced_index(size)
    update = b.value_of(tuple(np.shape(x[index])), b.aval(x).dtype)
    at = x.at[index]
    return [b.rng.choice([at.multiply, at.min, at.max])(update)]


# -- random numbers ---------------------------------------------------------------------------------

@op("random", ["random_wrap", "random_unwrap", "threefry2x32"], "random", weight=0.5)
def _random(b):
    seed = b.traced_index(1 << 20)
    key = random.key(seed) if b.rng.random() < 0.5 else random.PRNGKey(seed)
    if b.rng.random() < 0.4:
        key = random.split(key)[1]
    if b.rng.random() < 0.3:
        key = random.fold_in(key, 7)
    shape = b.rng.choice([(), (3,), (2, 2)])
    kind = b.rng.choice(["bits", "uniform", "normal", "randint"])
    if kind == "bits":
        return [random.bits(key, shape)]
    if kind == "randint":
        return [random.randint(key, shape, -3, 9)]
    values = getattr(random, kind)(key, shape)
    x = b.pick(lambda a: is_float(a.dtype) and a.dtype == np.float32 and a.shape == shape)
    # a random value times a float in scope, so the program's derivatives pass through it
    return [values if x is None else lax.mul(values, x)]


@op("random:rbg", ["rng_bit_generator"], "random", weight=0.2)
def _random_rbg(b):
    # rbg keys: threefry splits and folds, bits from XLA's RngBitGenerator
    key = random.key(b.traced_index(1 << 20), impl=b.rng.choice(["rbg", "unsafe_rbg"]))
    if b.rng.random() < 0.4:
        key = random.split(key)[1]
    if b.rng.random() < 0.3:
        key = random.fold_in(key, 7)
    shape = b.rng.choice([(), (3,), (2, 3)])
    if b.rng.random() < 0.5:
        return [random.bits(key, shape)]
    return [random.uniform(key, shape)]


__all__ = ["as_float32"]
