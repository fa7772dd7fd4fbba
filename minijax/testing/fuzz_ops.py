"""The fuzzer's table of operations: how to make a valid equation of each primitive.

`OPS` maps an operation name to an `Op`: the primitives it exercises, the feature it
belongs to (`--features` picks features), a weight, and `build(b)`, which takes
operands from the `Builder` `b` (fuzz_builder.py), calls minijax's public API on
them -- so every equation is made by the primitive's own type rule -- and returns
the new values (or None when nothing in scope fits). Ops whose primitive is
undefined on part of its domain make their operand safe first (`safe_positive`,
`safe_nonzero`), so a disagreement is never just an undefined point.

Adding a primitive is adding one entry to a table module; `python -m minijax fuzz
--list-primitives` lists the coverage.
Control flow, calls, refs, checkpoint and custom derivatives live in
`fuzz_structured.py`, special functions, bit operations, complex numbers, the scatter
variants and random numbers in `fuzz_ops_special.py`, linear algebra, convolutions,
window reductions and collectives in `fuzz_ops_linalg.py`; they add their entries to
the same table (`load_entries`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import minijax
import minijax.lax as lax
import minijax.numpy as jnp
from ..ir.types import is_bool, is_float, is_integer


@dataclass(frozen=True)
class Op:
    name: str
    primitives: tuple        # primitive names the op's equations use
    feature: str
    build: Callable          # build(builder) -> list of new values, or None
    weight: float = 1.0
    smooth: bool = True      # differentiable everywhere on safe inputs (finite differences)


OPS: dict[str, Op] = {}


def op(name, primitives, feature, weight=1.0, smooth=True):
    def register(build):
        if name in OPS:
            raise ValueError(f"fuzz op {name!r} defined twice")
        OPS[name] = Op(name, tuple(primitives), feature, build, weight, smooth)
        return build
    return register


# -- operand predicates and safe domains --------------------------------------------------------

def floating(aval):
    return is_float(aval.dtype)


def integral(aval):
    return is_integer(aval.dtype)


def boolean(aval):
    return is_bool(aval.dtype)


def numeric(aval):
    return not is_bool(aval.dtype)


def weak_constant(value, like):
    """The Python scalar `value` as an operand of a lax op on `like`. A lax op takes
    operands of one dtype and a Python scalar has its own (float32 for a float), so it
    becomes a weak constant of `like`'s dtype -- unless that is its dtype already, when
    it stays an inline literal."""
    dtype = jnp.result_type(like)
    if jnp.result_type(value) == dtype:
        return value
    return lax.convert_element_type(value, dtype, weak_type=True)


def safe_positive(x):
    """|x| + 0.5: the operand of log, sqrt, negative powers (finite inputs stay finite)."""
    magnitude = lax.abs(x)
    return lax.add(magnitude, weak_constant(0.5, magnitude))


def safe_nonzero(x):
    """A divisor: |x| + 0.5 for floats, max(|x|, 1) for integers."""
    if is_float(jnp.result_type(x)):
        return safe_positive(x)
    magnitude = x if jnp.result_type(x).kind == "u" else lax.abs(x)  # lax.abs refuses uint
    return lax.max(magnitude, lax.full((), 1, jnp.result_type(x)) if np.ndim(x) == 0
                   else jnp.ones_like(x))


def bounded(x, limit=0.9):
    """limit * tanh(x): inside (-1, 1) for asin/acos/atanh."""
    return lax.mul(lax.tanh(x), weak_constant(limit, x))


# -- elementwise ------------------------------------------------------------------------------------

_SMOOTH_UNARY = {
    "sin": lax.sin, "cos": lax.cos, "tanh": lax.tanh, "logistic": lax.logistic,
    "atan": lax.atan, "sinh": lambda x: lax.sinh(bounded(x, 3.0)),
    "cosh": lambda x: lax.cosh(bounded(x, 3.0)), "asinh": lax.asinh, "erf": lax.erf,
    "exp": lambda x: lax.exp(bounded(x, 4.0)), "exp2": lambda x: lax.exp2(bounded(x, 4.0)),
    "expm1": lambda x: lax.expm1(bounded(x, 4.0)), "square": lax.square, "neg": lax.neg,
    "log": lambda x: lax.log(safe_positive(x)), "log1p": lambda x: lax.log1p(lax.abs(x)),
    "log2": lambda x: lax.log2(safe_positive(x)), "one_minus_square": lax.one_minus_square,
    "sqrt": lambda x: lax.sqrt(safe_positive(x)), "rsqrt": lambda x: lax.rsqrt(safe_positive(x)),
    "cbrt": lambda x: lax.cbrt(safe_positive(x)), "tan": lambda x: lax.tan(bounded(x, 1.2)),
    "asin": lambda x: lax.asin(bounded(x)), "acos": lambda x: lax.acos(bounded(x)),
    "atanh": lambda x: lax.atanh(bounded(x)),
    "acosh": lambda x: lax.acosh(lax.add(safe_positive(x), weak_constant(1.0, x))),
}
_KINKED_UNARY = {"abs": lax.abs, "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil,
                 "round": lax.round, "is_finite": lax.is_finite,
                 "stop_gradient": lax.stop_gradient}
_INTEGER_UNARY = {"neg": lax.neg, "abs": lax.abs, "sign": lax.sign, "square": lax.square,
                  "not": lax.bitwise_not}


def _unary_float(name, fn, smooth):
    @op(f"unary:{name}", [name], "elementwise", weight=0.4, smooth=smooth)
    def build(b):
        x = b.pick(floating)
        return None if x is None else [fn(x)]


for _name, _fn in _SMOOTH_UNARY.items():
    _unary_float(_name, _fn, True)
for _name, _fn in _KINKED_UNARY.items():
    _unary_float(_name, _fn, False)


@op("unary:integer", list(_INTEGER_UNARY), "elementwise", weight=0.6)
def _integer_unary(b):
    x = b.pick(integral)
    if x is None:
        return None
    name = b.rng.choice(list(_INTEGER_UNARY))
    if name == "not" or name == "abs" and b.aval(x).dtype == np.uint32:
        name = "not"
    return [_INTEGER_UNARY[name](x)]


@op("integer_pow", ["integer_pow"], "elementwise", weight=0.5)
def _integer_pow(b):
    x = b.pick(floating)
    if x is None:
        return None
    power = b.rng.choice([-2, -1, 0, 1, 2, 3])
    return [lax.integer_pow(safe_positive(x) if power < 0 else x, power)]


_FLOAT_BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum,
    "min": jnp.minimum, "atan2": jnp.arctan2,
    "div": lambda x, y: jnp.divide(x, safe_nonzero(y)),
    "pow": lambda x, y: jnp.power(safe_positive(x), y),
    "rem": lambda x, y: jnp.remainder(x, safe_nonzero(y)),
}
_INT_BINARY = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum,
               "min": jnp.minimum, "and": jnp.bitwise_and, "or": jnp.bitwise_or,
               "xor": jnp.bitwise_xor,
               "floor_divide": lambda x, y: jnp.floor_divide(x, safe_nonzero(y))}
_COMPARISONS = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less, "le": jnp.less_equal,
                "gt": jnp.greater, "ge": jnp.greater_equal}


@op("binary:float", list(_FLOAT_BINARY), "elementwise", weight=3.0)
def _float_binary(b):
    x = b.pick(floating)
    if x is None:
        return None
    name = b.rng.choice(list(_FLOAT_BINARY))
    y = b.partner(x, floating)
    b.note_smooth(name not in ("max", "min", "rem"))
    return [_FLOAT_BINARY[name](x, y)]


@op("binary:integer", [n for n in _INT_BINARY if n != "floor_divide"] + ["div", "rem"],
    "elementwise", weight=0.8)
def _int_binary(b):
    x = b.pick(lambda a: integral(a) or boolean(a))
    if x is None:
        return None
    names = ["and", "or", "xor"] if boolean(b.aval(x)) else list(_INT_BINARY)
    y = b.partner(x, lambda a: a.dtype == b.aval(x).dtype)
    return [_INT_BINARY[b.rng.choice(names)](x, y)]


@op("compare", list(_COMPARISONS), "elementwise", weight=0.8)
def _compare(b):
    x = b.pick(numeric)
    if x is None:
        return None
    y = b.partner(x, lambda a: a.dtype == b.aval(x).dtype)
    return [_COMPARISONS[b.rng.choice(list(_COMPARISONS))](x, y)]


@op("python_scalar", ["mul", "add"], "weak_types", weight=0.8)
def _python_scalar(b):
    x = b.pick(numeric)
    if x is None:
        return None
    floating_x = is_float(b.aval(x).dtype)
    scalar = b.rng.choice([2, -1, 0.5, 3.0]) if floating_x else b.rng.choice([1, 2, 3])
    fn = b.rng.choice([jnp.multiply, jnp.add, lax.mul, lax.add])
    if fn in (lax.mul, lax.add):
        # lax does not promote: a Python scalar of another dtype than x's (an int next
        # to floats, a float next to bfloat16) is a TypeError in JAX; jnp's functions
        # promote it, which is the weak-type case they test
        scalar = weak_constant(float(scalar) if floating_x else scalar, x)
    return [fn(x, scalar)]


@op("select_n", ["select_n"], "elementwise", weight=1.0, smooth=False)
def _select(b):
    x = b.pick(numeric)
    if x is None:
        return None
    y = b.same_type(x)
    predicate = b.predicate_like(x)
    if b.rng.random() < 0.5:
        return [jnp.where(predicate, x, y)]
    return [lax.select_n(predicate, x, y)]


@op("clamp", ["clamp"], "elementwise", weight=0.4, smooth=False)
def _clamp(b):
    x = b.pick(floating)
    if x is None:
        return None
    return [lax.clamp(weak_constant(-0.5, x), x, weak_constant(0.75, x))
            if b.rng.random() < 0.5 else jnp.clip(x, -1.0, 1.0)]


@op("convert_element_type", ["convert_element_type"], "dtypes", weight=1.0)
def _convert(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    target = b.rng.choice(b.dtypes)
    source = b.aval(x).dtype
    if is_float(source) and not is_float(target):
        # float -> int of nan or out-of-range values is platform-defined: clamp first
        limited = lax.clamp(weak_constant(-100.0, x), x, weak_constant(100.0, x))
        x = jnp.where(lax.is_finite(x), limited, 0.0).astype(source)
        if np.dtype(target) == np.uint32:
            x = lax.abs(x)
    if is_integer(source) and np.dtype(target) == np.uint32:
        x = jnp.abs(x) if source != np.uint32 else x
    return [lax.convert_element_type(x, target)]


# -- shapes -----------------------------------------------------------------------------------------

@op("reshape", ["reshape"], "shapes", weight=0.6)
def _reshape(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    size = int(np.prod(b.aval(x).shape))
    shapes = [(size,), (1, size)] + ([(size // 2, 2)] if size % 2 == 0 and size else [])
    return [jnp.reshape(x, b.rng.choice(shapes))]


@op("transpose", ["transpose"], "shapes", weight=0.5)
def _transpose(b):
    x = b.pick(lambda a: len(a.shape) >= 2)
    if x is None:
        return None
    permutation = list(range(np.ndim(x)))
    b.rng.shuffle(permutation)
    return [lax.transpose(x, permutation)]


@op("rev", ["rev"], "shapes", weight=0.4)
def _rev(b):
    x = b.pick(lambda a: len(a.shape) >= 1)
    if x is None:
        return None
    axes = [d for d in range(np.ndim(x)) if b.rng.random() < 0.5] or [0]
    return [lax.rev(x, axes)]


@op("broadcast", ["broadcast_in_dim", "expand_dims", "squeeze"], "shapes", weight=0.6)
def _broadcast(b):
    x = b.pick(lambda a: True)
    if x is None:
        return None
    shape = b.aval(x).shape
    choice = b.rng.randrange(3)
    if choice == 0:
        return [jnp.broadcast_to(x, (2,) + shape)]
    if choice == 1:
        return [jnp.expand_dims(x, b.rng.randrange(len(shape) + 1))]
    ones = [i for i, d in enumerate(shape) if d == 1]
    return [lax.squeeze(x, [b.rng.choice(ones)])] if ones else [jnp.expand_dims(x, 0)]


@op("concatenate", ["concatenate"], "shapes", weight=0.5)
def _concatenate(b):
    x = b.pick(lambda a: len(a.shape) >= 1)
    if x is None:
        return None
    y = b.same_type(x)
    return [jnp.concatenate([x, y], axis=b.rng.randrange(np.ndim(x)))]


@op("pad", ["pad"], "shapes", weight=0.4)
def _pad(b):
    x = b.pick(lambda a: len(a.shape) >= 1 and numeric(a))
    if x is None:
        return None
    config = []
    for d in b.aval(x).shape:
        low = b.rng.choice([0, 1, -1]) if d >= 1 else b.rng.choice([0, 1])
        config.append((low, b.rng.choice([0, 1]), b.rng.choice([0, 1]) if d > 1 else 0))
    return [lax.pad(x, lax.convert_element_type(0, b.aval(x).dtype), config)]


@op("slice", ["slice"], "indexing", weight=0.6)
def _slice(b):
    x = b.pick(lambda a: len(a.shape) >= 1)
    if x is None:
        return None
    starts = [b.rng.randrange(d + 1) for d in b.aval(x).shape]
    limits = [b.rng.randint(s, d) for s, d in zip(starts, b.aval(x).shape)]
    strides = [b.rng.choice([1, 2]) for _ in starts]
    return [lax.slice(x, starts, limits, strides)]


@op("iota", ["iota"], "shapes", weight=0.2)
def _iota(b):
    dtype = b.rng.choice([d for d in b.dtypes if not is_bool(d)] or [np.dtype(np.int32)])
    return [lax.broadcasted_iota(dtype, (b.rng.choice([0, 1, 3]), 2), b.rng.randrange(2))]


# -- reductions, contractions, scans over an axis, sorting -----------------------------------------

@op("reduce", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
               "reduce_or", "argmax", "argmin"], "reductions", weight=1.2, smooth=False)
def _reduce(b):
    x = b.pick(lambda a: len(a.shape) >= 1)
    if x is None:
        return None
    axis = b.rng.randrange(np.ndim(x))
    if boolean(b.aval(x)):
        return [b.rng.choice([jnp.any, jnp.all])(x, axis=axis)]
    kind = b.rng.choice(["sum", "sum", "prod", "max", "min", "argmax", "argmin"])
    if kind in ("max", "min", "argmax", "argmin") and b.aval(x).shape[axis] == 0:
        kind = "sum"      # no identity-free reduction of an empty axis
    b.note_smooth(kind == "sum")
    return [getattr(jnp, kind)(x, axis=axis)]


@op("dot_general", ["dot_general"], "contractions", weight=1.0)
def _dot_general(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1)
    if x is None:
        return None
    shape = b.aval(x).shape
    dims = list(range(len(shape)))
    batch = [dims[0]] if len(dims) >= 2 and b.rng.random() < 0.5 else []
    free = [d for d in dims if d not in batch]
    contract = [free[-1]] if b.rng.random() < 0.8 else []
    other_free = b.rng.choice([(), (2,), (1,)])
    other_shape = tuple(shape[d] for d in batch) + tuple(shape[d] for d in contract) + other_free
    y = b.value_of(other_shape, b.aval(x).dtype)
    nb = len(batch)
    numbers = ((tuple(contract), tuple(range(nb, nb + len(contract)))),
               (tuple(batch), tuple(range(nb))))
    return [lax.dot_general(x, y, numbers)]


@op("cumulative", ["cumsum", "cumprod", "cummax", "cummin"], "reductions", weight=0.6,
    smooth=False)
def _cumulative(b):
    x = b.pick(lambda a: numeric(a) and len(a.shape) >= 1)
    if x is None:
        return None
    fn = b.rng.choice([lax.cumsum, lax.cumprod, lax.cummax, lax.cummin])
    b.note_smooth(fn is lax.cumsum)
    return [fn(x, axis=b.rng.randrange(np.ndim(x)), reverse=b.rng.random() < 0.5)]


@op("sort", ["sort"], "sorting", weight=0.6, smooth=False)
def _sort(b):
    x = b.pick(lambda a: numeric(a) and len(a.shape) >= 1)
    if x is None:
        return None
    dimension = b.rng.randrange(np.ndim(x))
    kind = b.rng.randrange(3)
    if kind == 0:
        return [lax.sort(x, dimension=dimension)]
    if kind == 1:
        return list(lax.sort_key_val(x, b.same_type(x), dimension=dimension))
    return [jnp.argsort(x, axis=dimension)]


# -- indexing ---------------------------------------------------------------------------------------

def _index_array(b, size, shape=(2,)):
    """Indices into an axis of `size` (size > 0), including negative ones."""
    values = np.array([b.rng.randrange(-size, size) for _ in range(int(np.prod(shape)))],
                      np.int32).reshape(shape)
    return jnp.asarray(values)


@op("gather", ["gather"], "indexing", weight=1.0, smooth=False)
def _gather(b):
    x = b.pick(lambda a: len(a.shape) >= 1 and a.shape[0] > 0)
    if x is None:
        return None
    size = b.aval(x).shape[0]
    kind = b.rng.randrange(3)
    if kind == 0:
        return [x[b.rng.randrange(-size, size)]]
    if kind == 1:
        return [x[_index_array(b, size)]]
    return [x[b.traced_index(size)]]


@op("scatter", ["scatter", "scatter_add"], "indexing", weight=0.8, smooth=False)
def _scatter(b):
    x = b.pick(lambda a: numeric(a) and len(a.shape) >= 1 and a.shape[0] > 0)
    if x is None:
        return None
    size = b.aval(x).shape[0]
    index = _index_array(b, size) if b.rng.random() < 0.5 else b.traced_index(size)
    update = b.value_of(tuple(np.shape(x[index])), b.aval(x).dtype)
    at = x.at[index]
    return [at.add(update) if b.rng.random() < 0.5 else at.set(update)]


@op("dynamic_slice", ["dynamic_slice", "dynamic_update_slice"], "indexing", weight=0.6,
    smooth=False)
def _dynamic_slice(b):
    x = b.pick(lambda a: len(a.shape) >= 1 and a.shape[0] > 0)
    if x is None:
        return None
    shape = b.aval(x).shape
    start = b.traced_index(shape[0])
    starts = [start] + [0] * (len(shape) - 1)
    sizes = (b.rng.randint(0, shape[0]),) + shape[1:]
    if b.rng.random() < 0.5:
        return [lax.dynamic_slice(x, starts, sizes)]
    update = b.value_of(sizes, b.aval(x).dtype)
    return [lax.dynamic_update_slice(x, update, starts)]


def load_entries():
    """Add the entries of the other op modules to `OPS` (they import this one, so
    they are imported here, on first use, rather than at the top)."""
    from . import fuzz_ops_linalg, fuzz_ops_more, fuzz_ops_special, fuzz_structured  # noqa: F401


def feature_names() -> list:
    load_entries()
    return sorted({o.feature for o in OPS.values()})


__all__ = ["Op", "OPS", "op", "feature_names", "floating", "integral", "boolean", "numeric",
           "safe_positive", "safe_nonzero", "bounded", "load_entries", "minijax"]
