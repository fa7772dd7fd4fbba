"""The test inputs of tests/test_reference.py: one `Case` per primitive, shape and dtype,
each with the `jax.lax` oracle it is compared with and the tolerance the comparison allows
(exact unless rounding legitimately differs; see that module's docstring)."""
from __future__ import annotations

from dataclasses import dataclass, field

import jax
import jax.extend.random
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from minijax.ir import ShapedArray, bind, primitives as P, trace_to_jaxpr
from minijax.ir.types import aval_of_value
from minijax.ir.export_primitive import SavedProgram
from minijax.testing import JAX_VERSION

EXACT = None
# Collectives, shard_map and sharding constraints mean something only inside a named
# axis or a mesh; tests/shard_map_cases.py (run by test_shard_map.py on 8 host devices)
# compares the reference evaluator with XLA and with JAX for each of them.
NAMED_AXIS_PRIMITIVES = {"psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                         "all_to_all", "axis_index", "shard_map", "sharding_constraint"}
ROUNDING = (1e-5, 1e-6)          # sums, products and matmuls in another order
TRANSCENDENTAL = (2e-6, 1e-7)    # about 16 ulps; XLA's f32 approximations are within ~5
BF16 = (1e-2, 1e-2)

f32, i32, bf16 = np.float32, np.int32, ml_dtypes.bfloat16


@dataclass
class Case:
    prim_name: str
    args: list
    oracle: object          # (*jax-compatible args) -> value, or list for many results
    params: dict = field(default_factory=dict)
    tol: tuple | None = EXACT
    # (JAX release, fn(args, expected) -> expected): on an older JAX, the oracle's values
    # at the edges that XLA changed in that release, made the newer XLA's (which the
    # reference evaluator follows)
    newer_edges: tuple | None = None

    @property
    def id(self):
        types = ",".join(aval_of_value(a).type_text() for a in self.args)
        return f"{self.prim_name}({types})"


CASES: list[Case] = []


def case(prim_name, args, oracle, tol=EXACT, newer_edges=None, **params):
    CASES.append(Case(prim_name, list(args), oracle, params, tol, newer_edges))


_rng = np.random.default_rng(0)


def floats(*shape, lo=-3.0, hi=3.0, dtype=f32):
    return _rng.uniform(lo, hi, shape).astype(dtype)


def ints(*shape, lo=-10, hi=10, dtype=i32):
    return _rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def bools(*shape):
    return _rng.random(shape) < 0.5


SPECIAL_F32 = np.array([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 1e-30,
                        3e38, -3e38, np.inf, -np.inf, np.nan], f32)
SPECIAL_I32 = np.array([0, 1, -1, 7, -7, 2**31 - 1, -2**31], i32)


def named(name, fn):
    """`fn` with `__name__` `name`: `jax.jit` names its program after it."""
    fn.__name__ = fn.__qualname__ = name
    return fn


def splat(fn):
    """`jax.lax` wants equal shapes; the IR lets a rank-0 operand stand for a splat."""
    def oracle(*xs):
        shape = np.broadcast_shapes(*(np.shape(x) for x in xs))
        return fn(*(jnp.broadcast_to(x, shape) for x in xs))
    return oracle


# -- elementwise -----------------------------------------------------------------------

_DOMAINS = {"asin": (-1, 1), "acos": (-1, 1), "atanh": (-0.99, 0.99), "acosh": (1, 4),
            "log": (0.01, 4), "log1p": (-0.99, 4), "sqrt": (0, 4), "rsqrt": (0.01, 4)}
FLOAT_FUNCTIONS = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                   "asinh", "acosh", "atanh", "exp", "exp2", "log", "log1p", "expm1",
                   "logistic", "sqrt", "rsqrt", "cbrt", "erf", "floor", "ceil"]
for _name in FLOAT_FUNCTIONS:
    _fn = getattr(lax, _name)
    _lo, _hi = _DOMAINS.get(_name, (-3, 3))
    _tol = EXACT if _name in ("floor", "ceil") else TRANSCENDENTAL
    case(_name, [floats(2, 3, lo=_lo, hi=_hi)], _fn, _tol)
    case(_name, [SPECIAL_F32], _fn, _tol)
for _name in ("sin", "exp", "log", "tanh", "logistic"):
    case(_name, [floats(4, lo=0.1, dtype=bf16)], getattr(lax, _name), BF16)
# log2 (a primitive since JAX 0.11) draws from a generator of its own, so the inputs of
# the cases after it are as before. jax.lax has no log2 before 0.11: there the oracle is
# jnp.log2, which is log(x) / log(2).
_log2 = lax.log2 if JAX_VERSION >= (0, 11) else jnp.log2
_log2_inputs = np.random.default_rng(2).uniform(0.01, 4, (2, 3)).astype(f32)
case("log2", [_log2_inputs], _log2, TRANSCENDENTAL)
case("log2", [SPECIAL_F32], _log2, TRANSCENDENTAL)
case("log2", [_log2_inputs[0].astype(bf16)], _log2, BF16)

for _name in ("neg", "abs", "sign", "square"):
    for _x in (floats(2, 3), SPECIAL_F32, ints(2, 3), SPECIAL_I32):
        case(_name, [_x], getattr(lax, _name))
# JAX 0.11's one_minus_square is (1 + x) * (1 - x) in the operand's type; before it,
# JAX has no primitive of the name and the oracle is that formula. The reference
# rounds the product once from the wider type: up to an ulp away.
_one_minus_square = (lax.one_minus_square if JAX_VERSION >= (0, 11)
                     else lambda x: lax.mul(lax.add(lax.full_like(x, 1), x),
                                            lax.sub(lax.full_like(x, 1), x)))
for _x in (floats(2, 3), SPECIAL_F32, floats(3, lo=0.99, hi=1.0)):
    case("one_minus_square", [_x], _one_minus_square, ROUNDING)
for _x in (ints(2, 3), SPECIAL_I32):
    case("one_minus_square", [_x], _one_minus_square)
for _method in (0, 1):
    case("round", [SPECIAL_F32], lambda x, m=_method: lax.round(x, lax.RoundingMethod(m)),
         rounding_method=_method)
    case("round", [floats(2, 3, lo=-4, hi=4)],
         lambda x, m=_method: lax.round(x, lax.RoundingMethod(m)), rounding_method=_method)
case("is_finite", [SPECIAL_F32], lax.is_finite)
case("is_finite", [floats(4, dtype=bf16)], lax.is_finite)
for _x in (ints(2, 3), SPECIAL_I32, bools(4)):
    case("not", [_x], lax.bitwise_not)
for _x in (floats(3), bools(2, 2), ints(3)):
    case("stop_gradient", [_x], lambda x: x)
for _y in (0, 1, 2, 3, -2, 7):
    case("integer_pow", [floats(2, 3, lo=-2, hi=2)], lambda x, y=_y: lax.integer_pow(x, y),
         ROUNDING, y=_y)
for _y in (0, 3, 25):
    case("integer_pow", [ints(5)], lambda x, y=_y: lax.integer_pow(x, y), y=_y)

_BINARY = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
           "max": lax.max, "min": lax.min, "pow": lax.pow, "atan2": lax.atan2,
           "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
           "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt,
           "ge": lax.ge}
_FLOAT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2",
                 "eq", "ne", "lt", "le", "gt", "ge"]
_INT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor",
               "eq", "ne", "lt", "le", "gt", "ge"]
_BOOL_BINARY = ["and", "or", "xor", "max", "min", "eq", "ne", "lt", "ge"]
for _name in _FLOAT_BINARY:
    _tol = TRANSCENDENTAL if _name in ("pow", "atan2") else EXACT
    _lo = 0.0 if _name == "pow" else -3.0
    for _shapes in [((2, 3), (2, 3)), ((), (2, 3)), ((2, 3), ())]:
        _x, _y = floats(*_shapes[0], lo=_lo), floats(*_shapes[1])
        case(_name, [_x, _y], splat(_BINARY[_name]), _tol)
    _x, _y = np.meshgrid(SPECIAL_F32, SPECIAL_F32)
    case(_name, [_x, _y], _BINARY[_name], _tol)
for _name in ("add", "mul", "div", "max"):
    case(_name, [floats(4, dtype=bf16), floats(4, dtype=bf16)], _BINARY[_name])
for _name in _INT_BINARY:
    case(_name, [ints(2, 3), ints(2, 3)], _BINARY[_name])
    case(_name, [ints(), ints(2, 3)], splat(_BINARY[_name]))
    _x, _y = np.meshgrid(SPECIAL_I32, SPECIAL_I32)   # overflow, INT_MIN / -1, x / 0
    case(_name, [_x, _y], _BINARY[_name])
for _name in _BOOL_BINARY:
    case(_name, [bools(2, 3), bools(2, 3)], _BINARY[_name])

# Special functions (minijax/backends/reference_special.py): XLA's f32 approximations of
# these are looser than of exp or sin, so the tolerance is too.
SPECIAL_FUNCTION = (1e-4, 1e-6)
# XLA's edge values that JAX 0.11 changed (minijax/backends/reference_special.py).
_NEWER_EDGES = {
    "digamma": lambda x, out: np.where(x == 0, -np.inf, out),
    "igamma": lambda a, x, out: np.where((a == np.inf) & (x >= 0),
                                         np.where(x == np.inf, np.nan, 0), out),
    "igammac": lambda a, x, out: np.where((a == np.inf) & (x >= 0),
                                          np.where(x == np.inf, np.nan, 1), out),
}


def _newer(name):
    fix = _NEWER_EDGES.get(name)
    return fix and ((0, 11), lambda args, out: fix(*args, out).astype(out.dtype))


for _name in ("lgamma", "digamma", "erfc"):
    case(_name, [floats(2, 3, lo=-4, hi=6)], getattr(lax, _name), SPECIAL_FUNCTION)
    case(_name, [SPECIAL_F32[:-3]], getattr(lax, _name), SPECIAL_FUNCTION,
         newer_edges=_newer(_name))
    case(_name, [np.array([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan], f32)],
         getattr(lax, _name), SPECIAL_FUNCTION, newer_edges=_newer(_name))
case("polygamma", [np.array([0, 1, 1, 2, 3, 1.5, -1, 1, 1], f32),
                   np.array([2.5, 0.7, -1.5, -1.5, 4.0, 2.0, 2.0, 0.0, -3.0], f32)],
     lax.polygamma, SPECIAL_FUNCTION)
case("polygamma", [np.float32(1), floats(2, 3, lo=0.2, hi=5)], splat(lax.polygamma),
     SPECIAL_FUNCTION)
for _name in ("igamma", "igammac", "igamma_grad_a"):
    case(_name, [floats(2, 3, lo=0.1, hi=6), floats(2, 3, lo=0.01, hi=12)],
         getattr(lax, _name), SPECIAL_FUNCTION)
    # (jitted and named as the primitive: the lowering test's scalar-operand program,
    # big for these functions, has this module text and is compiled once)
    case(_name, [np.float32(2.5), floats(4, lo=0.01, hi=8)],
         jax.jit(named(_name, splat(getattr(lax, _name)))), SPECIAL_FUNCTION)
for _name in ("igamma", "igammac"):
    case(_name, [np.array([0, 1, 1, -1, 2, 2, np.inf, np.nan, np.inf, np.inf], f32),
                 np.array([1, 0, -1, 1, np.inf, np.nan, 1, 1, 0, np.inf], f32)],
         getattr(lax, _name), SPECIAL_FUNCTION, newer_edges=_newer(_name))
case("regularized_incomplete_beta", [floats(2, 3, lo=0.1, hi=5), floats(2, 3, lo=0.1, hi=5),
                                     floats(2, 3, lo=0, hi=1)], lax.betainc, SPECIAL_FUNCTION)
case("regularized_incomplete_beta",
     [np.array([0, 1, 1, -1, 2, 2, 2, 2], f32), np.array([2, 2, 2, 2, 2, 2, 2, 0], f32),
      np.array([0.5, 0, 1, 0.5, -0.1, 1.1, np.nan, 0.5], f32)], lax.betainc, SPECIAL_FUNCTION)

_select = splat(lambda which, *cases: lax.select_n(which, *cases))
case("select_n", [bools(2, 3), floats(2, 3), floats(2, 3)], _select)
case("select_n", [bools(), ints(3), ints(3)], _select)
case("select_n", [ints(2, 3, lo=0, hi=2), floats(2, 3), floats(2, 3), floats(2, 3)], _select)
case("select_n", [np.array([-1, 0, 1, 2, 5], i32), *(floats(5) for _ in range(3))], _select)
case("clamp", [np.float32(-1), floats(2, 3), np.float32(1)], lax.clamp)
case("clamp", [floats(4), SPECIAL_F32[:4], floats(4)], lax.clamp)
case("clamp", [np.float32(np.nan), floats(3), np.float32(1)], lax.clamp)
case("clamp", [np.int32(-3), ints(2, 3), np.int32(4)], lax.clamp)

def _fits(x, int_dtype):
    """The floats of `x` whose conversion to `int_dtype` is defined: finite, and in
    range once truncated. (XLA leaves the rest to the platform, and its answer has
    changed between jax releases and differs between CPU and GPU.)"""
    info = np.iinfo(int_dtype)
    keep = np.isfinite(x) & (np.trunc(x) >= info.min) & (np.trunc(x) <= info.max)
    return x[keep]


for _x, _new in [(_fits(SPECIAL_F32, i32), i32), (_fits(SPECIAL_F32, np.uint8), np.uint8),
                 (SPECIAL_F32, np.bool_),
                 (SPECIAL_F32, bf16), (SPECIAL_F32, np.float16), (SPECIAL_I32, f32),
                 (SPECIAL_I32, np.uint8), (SPECIAL_I32, np.int8), (SPECIAL_I32, np.bool_),
                 (bools(4), f32), (bools(4), i32), (floats(4, dtype=bf16), i32),
                 (_fits(floats(6, lo=-300, hi=300), np.int8), np.int8)]:
    case("convert_element_type", [_x],
         lambda x, new=_new: lax.convert_element_type(x, new),
         new_dtype=np.dtype(_new), weak_type=False)


# -- shapes ----------------------------------------------------------------------------

for _x, _shape, _dims in [(floats(3), (2, 3), (1,)), (ints(3, 1), (3, 4), (0, 1)),
                          (floats(), (2, 2), ()), (bools(1, 3), (2, 1, 3), (1, 2))]:
    case("broadcast_in_dim", [_x], lambda x, s=_shape, d=_dims: lax.broadcast_in_dim(x, s, d),
         shape=_shape, broadcast_dimensions=_dims)
for _x, _sizes in [(floats(2, 3), (3, 2)), (ints(6), (1, 2, 3)), (floats(1), ())]:
    case("reshape", [_x], lambda x, s=_sizes: lax.reshape(x, s), new_sizes=_sizes,
         dimensions=None)
for _x, _perm in [(floats(2, 3), (1, 0)), (ints(2, 3, 4), (2, 0, 1)), (bools(2), (0,))]:
    case("transpose", [_x], lambda x, p=_perm: lax.transpose(x, p), permutation=_perm)
for _x, _dims in [(floats(1, 3, 1), (0, 2)), (ints(2, 1), (1,)), (floats(3), ())]:
    case("squeeze", [_x], lambda x, d=_dims: lax.squeeze(x, d), dimensions=_dims)
for _x, _dims in [(floats(2, 3), (0, 1)), (ints(3, 4), (1,)), (bools(2), ()), (floats(), ())]:
    case("rev", [_x], lambda x, d=_dims: lax.rev(x, d), dimensions=_dims)
for _x, _dims in [(floats(2, 3), (0, 3)), (ints(3), (1,)), (floats(), (0,))]:
    case("expand_dims", [_x], lambda x, d=_dims: lax.expand_dims(x, d), dimensions=_dims)
for _xs, _dim in [((floats(2, 3), floats(2, 1)), 1), ((ints(1, 2), ints(3, 2), ints(0, 2)), 0),
                  ((bools(2),), 0)]:
    case("concatenate", _xs, lambda *xs, d=_dim: lax.concatenate(xs, d), dimension=_dim)
for _shape, _config in [((5,), ((1, 2, 0),)), ((5,), ((-1, 2, 1),)), ((4,), ((2, -3, 2),)),
                        ((2, 3), ((0, 0, 1), (-1, -1, 0))), ((0,), ((2, 1, 3),)),
                        ((3,), ((-2, -4, 2),))]:
    case("pad", [floats(*_shape), np.float32(-9)],
         lambda x, v, c=_config: lax.pad(x, v, c), padding_config=_config)
case("pad", [ints(2, 2), np.int32(7)], lambda x, v: lax.pad(x, v, ((1, 0, 1), (0, 1, 0))),
     padding_config=((1, 0, 1), (0, 1, 0)))
for _x, _start, _limit, _strides in [(floats(7), (1,), (6,), (2,)),
                                     (ints(4, 5), (1, 0), (3, 5), None),
                                     (floats(4, 5), (0, 1), (4, 5), (3, 2)),
                                     (floats(3), (2,), (2,), None)]:
    case("slice", [_x], lambda x, s=_start, l=_limit, st=_strides: lax.slice(x, s, l, st),
         start_indices=_start, limit_indices=_limit, strides=_strides)
for _starts, _sizes in [((1, 2), (2, 2)), ((-1, 0), (2, 3)), ((7, -9), (1, 2)),
                        ((0, 3), (4, 0)), ((-3, -2), (1, 1))]:
    _starts = [np.int32(s) for s in _starts]
    # The primitives clamp only (negative starts are the wrapper's business), so the
    # oracle is jax.lax with negative-index wrapping off.
    # (Under jax.jit, so that jax.lax sees traced starts and clamps rather than refusing.)
    # (Named as the primitive, as test_reference_rule_matches_xla_lowering names the
    # lowering's program, so that the two compile once.)
    case("dynamic_slice", [floats(4, 5), *_starts],
         jax.jit(named("dynamic_slice", lambda x, *s, sz=_sizes: lax.dynamic_slice(
             x, s, sz, allow_negative_indices=False))),
         slice_sizes=_sizes)
    case("dynamic_update_slice", [ints(4, 5), ints(*_sizes), *_starts],
         jax.jit(named("dynamic_update_slice", lambda x, u, *s: lax.dynamic_update_slice(
             x, u, s, allow_negative_indices=False))))


# -- reductions, contractions, scans, sort ----------------------------------------------

_REDUCE = {"reduce_sum": lax.reduce_sum, "reduce_prod": lax.reduce_prod,
           "reduce_max": lax.reduce_max, "reduce_min": lax.reduce_min,
           "reduce_and": lax.reduce_and, "reduce_or": lax.reduce_or}
for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
    for _x in (floats(2, 3, 4), ints(2, 3, 4, lo=-3, hi=3)):
        for _axes in [(), (1, 2), (0, 1, 2)]:
            case(_name, [_x], lambda x, a=_axes, fn=_REDUCE[_name]: fn(x, a),
                 ROUNDING if _x.dtype == f32 else EXACT, axes=_axes)
    for _x in (floats(3, 0), ints(0, 2)):                  # empty: the identity
        case(_name, [_x], lambda x, fn=_REDUCE[_name]: fn(x, (0, 1)), axes=(0, 1))
    case(_name, [SPECIAL_F32], lambda x, fn=_REDUCE[_name]: fn(x, (0,)), axes=(0,))
for _name in ("reduce_max", "reduce_min"):
    case(_name, [bools(3, 2)], lambda x, fn=_REDUCE[_name]: fn(x, (0,)), axes=(0,))
for _name in ("reduce_and", "reduce_or"):
    for _x in (bools(3, 4), ints(3, 4, lo=0, hi=255), bools(0, 2), ints(2, 0)):
        case(_name, [_x], lambda x, fn=_REDUCE[_name]: fn(x, (1,)), axes=(1,))
for _name, _fn in [("argmax", lax.argmax), ("argmin", lax.argmin)]:
    for _x, _axis in [(floats(3, 4), 1), (ints(4, 3, lo=0, hi=2), 0), (bools(5), 0),
                      (np.array([1, np.nan, 0, np.nan, -np.inf], f32), 0),
                      (np.array([[2, 2], [1, 1]], i32), 1)]:
        case(_name, [_x], lambda x, a=_axis, fn=_fn: fn(x, a, np.int32),
             axes=(_axis,), index_dtype=np.dtype(i32))

for _lhs, _rhs, _dims in [((2, 3), (3, 4), (((1,), (0,)), ((), ()))),         # matmul
                          ((3, 2), (3, 4), (((0,), (0,)), ((), ()))),
                          ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched
                          ((4, 2, 3), (3, 5, 2), (((2,), (0,)), ((1,), (2,)))),
                          ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ()))),
                          ((3,), (4,), (((), ()), ((), ())))]:                   # outer
    for _make, _preferred, _tol in [(floats, None, ROUNDING), (ints, None, EXACT),
                                    (ints, f32, EXACT)]:
        case("dot_general", [_make(*_lhs), _make(*_rhs)],
             lambda l, r, d=_dims, p=_preferred: lax.dot_general(l, r, d,
                                                               preferred_element_type=p),
             _tol, dimension_numbers=_dims, precision=None,
             preferred_element_type=None if _preferred is None else np.dtype(_preferred))
# Operands of two dtypes: the result has the one XLA ranks higher (f32 over bf16 and i8).
_MATMUL = (((1,), (0,)), ((), ()))
for _l, _r in [(floats(2, 3), floats(3, 4, dtype=bf16)), (ints(2, 3, dtype=np.int8), floats(3, 2))]:
    case("dot_general", [_l, _r], lambda l, r: lax.dot_general(l, r, _MATMUL), ROUNDING,
         dimension_numbers=_MATMUL, precision=None, preferred_element_type=None)
for _dtype, _shape, _dim in [(i32, (2, 3), 1), (f32, (4,), 0), (np.uint8, (2, 2, 3), 0)]:
    case("iota", [], lambda d=_dtype, s=_shape, k=_dim: lax.broadcasted_iota(d, s, k),
         dtype=np.dtype(_dtype), shape=_shape, dimension=_dim)
for _name, _fn in [("cumsum", lax.cumsum), ("cumprod", lax.cumprod), ("cummax", lax.cummax),
                   ("cummin", lax.cummin)]:
    for _x, _axis in [(floats(2, 5, lo=0.5, hi=1.5), 1), (ints(4, 3, lo=-3, hi=3), 0)]:
        for _reverse in (False, True):
            case(_name, [_x], lambda x, a=_axis, r=_reverse, fn=_fn: fn(x, a, r), ROUNDING,
                 axis=_axis, reverse=_reverse)

_with_ties = np.array([3, 1, 2, 1, 3, 0, 2, 1], i32)
for _xs, _dim, _keys in [
        ((floats(2, 5),), 1, 1), ((SPECIAL_F32,), 0, 1), ((floats(4, 3), ints(4, 3)), 0, 1),
        ((_with_ties, floats(8)), 0, 1), ((_with_ties, ints(8, lo=0, hi=1), floats(8)), 0, 2),
        ((bools(6), ints(6)), 0, 1)]:
    case("sort", _xs, lambda *xs, d=_dim, k=_keys: list(lax.sort(xs, dimension=d,
                                                                   num_keys=k)),
         dimension=_dim, is_stable=True, num_keys=_keys)


# -- gather and scatter ---------------------------------------------------------------------

def gather_oracle(offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode):
    dnums = lax.GatherDimensionNumbers(offset_dims, collapsed_slice_dims, start_index_map)
    return lambda x, i: lax.gather(x, i, dnums, slice_sizes, mode=mode)


_GATHERS = [  # operand shape, indices, offset_dims, collapsed, start_index_map, slice_sizes
    ((5,), [[0], [4], [2], [7], [-1]], (), (0,), (0,), (1,)),              # x[i]
    ((4, 3), [[1], [3], [5]], (1,), (0,), (0,), (1, 3)),                   # rows
    ((5, 6), [[0, 1], [3, 4], [4, 5]], (1, 2), (), (0, 1), (2, 3)),        # 2-d windows
    ((4, 3), [[2], [0]], (0,), (1,), (1,), (4, 1)),                        # columns, first
    ((3, 4), [[[0, 1], [2, 3]], [[1, 0], [2, 9]]], (), (0, 1), (0, 1), (1, 1)),  # x[i, j]
    ((3, 4), [[1, 0], [0, 2]], (1,), (0,), (1, 0), (1, 2)),                # reversed map
]
for _shape, _indices, *_dnums in _GATHERS:
    for _mode in ("clip", "fill"):
        for _make in (floats, ints):
            _params = dict(zip(("offset_dims", "collapsed_slice_dims", "start_index_map",
                                "slice_sizes"), _dnums), mode=_mode)
            case("gather", [_make(*_shape), np.array(_indices, i32)],
                 gather_oracle(*_dnums, _mode), **_params)
case("gather", [bools(5), np.array([[1], [9]], i32)], gather_oracle((), (0,), (0,), (1,), "fill"),
     offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), slice_sizes=(1,),
     mode="fill")

_SCATTERS = [  # operand, indices, updates, update_window_dims, inserted, scatter_to_operand
    ((5,), [[0], [4], [2], [7], [-1]], (5,), (), (0,), (0,)),
    ((4, 3), [[1], [3], [5]], (3, 3), (1,), (0,), (0,)),
    ((5, 6), [[0, 1], [3, 4], [4, 5]], (3, 2, 3), (1, 2), (), (0, 1)),
    ((4, 3), [[2], [0]], (4, 2), (0,), (1,), (1,)),
    ((3, 4), [[1, 0], [0, 2]], (2, 2), (1,), (0,), (1, 0)),
]
for _shape, _indices, _updates, *_dnums in _SCATTERS:
    for _mode in ("clip", "fill"):
        _params = dict(zip(("update_window_dims", "inserted_window_dims",
                            "scatter_dims_to_operand_dims"), _dnums), mode=_mode)
        _sdn = lax.ScatterDimensionNumbers(*_dnums)
        for _name, _fn in [("scatter", lax.scatter), ("scatter_add", lax.scatter_add),
                           ("scatter_mul", lax.scatter_mul), ("scatter_min", lax.scatter_min),
                           ("scatter_max", lax.scatter_max)]:
            # 'clip' can send two windows to one place; only scatter_add is then defined.
            if _name == "scatter" and _mode == "clip":
                continue
            case(_name, [floats(*_shape), np.array(_indices, i32), floats(*_updates)],
                 lambda x, i, u, fn=_fn, d=_sdn, m=_mode: fn(x, i, u, d, mode=m),
                 ROUNDING, **_params)
for _name in ("scatter_add", "scatter_mul", "scatter_min", "scatter_max"):
    case(_name, [ints(4), np.array([[1], [1], [3], [1]], i32), ints(4, lo=-3, hi=3)],
         lambda x, i, u, fn=getattr(lax, _name): fn(
             x, i, u, lax.ScatterDimensionNumbers((), (0,), (0,)), mode="fill"),
         update_window_dims=(), inserted_window_dims=(0,),
         scatter_dims_to_operand_dims=(0,), mode="fill")


# -- windows: convolution and windowed reductions ------------------------------------------

def conv_oracle(**params):
    dnums = lax.ConvDimensionNumbers(*params.pop("dimension_numbers"))
    precision = params.pop("precision")
    return lambda x, w: lax.conv_general_dilated(x, w, dimension_numbers=dnums, **params,
                                                 precision=precision)


_CONVS = [  # lhs shape, rhs shape, strides, padding, lhs dil, rhs dil, dnums, groups, bgroups
    ((2, 4, 5, 6), (3, 4, 3, 2), (2, 1), ((1, 0), (2, -1)), (2, 1), (1, 2),
     ((0, 1, 2, 3),) * 3, 1, 1),
    ((2, 5, 4, 4), (3, 2, 2, 6), (1, 1), ((1, 1), (0, 1)), (1, 1), (1, 1),
     ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), 2, 1),
    ((4, 3, 7), (6, 3, 2), (2,), ((0, 0),), (1,), (2,), ((0, 1, 2),) * 3, 1, 2),
]
for _l, _r, _s, _p, _ld, _rd, _dn, _g, _bg in _CONVS:
    _params = dict(window_strides=_s, padding=_p, lhs_dilation=_ld, rhs_dilation=_rd,
                   dimension_numbers=_dn, feature_group_count=_g, batch_group_count=_bg,
                   precision=None, preferred_element_type=None)
    case("conv_general_dilated", [floats(*_l), floats(*_r)], conv_oracle(**_params),
         ROUNDING, **_params)
    case("conv_general_dilated", [ints(*_l, lo=-3, hi=3), ints(*_r, lo=-3, hi=3)],
         conv_oracle(**_params), **_params)
case("conv_general_dilated", [floats(1, 2, 5, dtype=bf16), floats(3, 2, 2, dtype=bf16)],
     lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 0),),
                                           preferred_element_type=np.float32),
     ROUNDING, window_strides=(1,), padding=((1, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
     dimension_numbers=((0, 1, 2),) * 3, feature_group_count=1, batch_group_count=1,
     precision=None, preferred_element_type=np.dtype(np.float32))

_WINDOWS = [  # window, strides, padding, base dilation, window dilation
    ((2, 2), (1, 2), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((3, 2), (2, 1), ((1, 1), (0, 1)), (2, 1), (1, 2)),
    ((1, 3), (1, 1), ((0, 0), (2, -1)), (1, 1), (1, 1)),
]
for _name, _monoid, _init in [("reduce_window_sum", lax.add, 0),
                              ("reduce_window_max", lax.max, -np.inf),
                              ("reduce_window_min", lax.min, np.inf)]:
    for _w, _s, _p, _bd, _wd in _WINDOWS:
        _params = dict(window_dimensions=_w, window_strides=_s, padding=_p,
                       base_dilation=_bd, window_dilation=_wd)
        for _x in (floats(4, 5), ints(4, 5)):
            _identity = np.asarray(_init if _x.dtype == f32 else
                                   {0: 0, -np.inf: -2**31, np.inf: 2**31 - 1}[_init],
                                   _x.dtype)
            case(_name, [_x], lambda x, p=_params, m=_monoid, i=_identity:
                 lax.reduce_window(x, i, m, p["window_dimensions"], p["window_strides"],
                                   p["padding"], p["base_dilation"], p["window_dilation"]),
                 ROUNDING if _x.dtype == f32 else EXACT, **_params)


# -- complex numbers -------------------------------------------------------------------------

_Z = (floats(2, 3) + 1j * floats(2, 3)).astype(np.complex64)
case("real", [_Z], lax.real)
case("imag", [_Z], lax.imag)
case("conj", [_Z], lax.conj)
case("complex", [floats(2, 3), floats(2, 3)], lax.complex)
case("complex", [np.array([np.inf, -0.0, np.nan], f32), np.array([np.inf, 1.0, 2.0], f32)],
     lax.complex)

case("zeta", [np.array([1, 0.5, 2, 2, 2, np.inf, 3, 2, 1.5, np.nan, 4, 2.5, 7], f32),
              np.array([1, 1, 0, -1, -1.5, 2, np.inf, 1e-3, 30, 1, -0.5, 0.3, 2.2], f32)],
     lax.zeta, SPECIAL_FUNCTION)
case("zeta", [floats(2, 3, lo=1.1, hi=6), floats(2, 3, lo=0.1, hi=8)], lax.zeta,
     SPECIAL_FUNCTION)
_BESSEL_POINTS = np.array([0, -0.0, 1e-30, 1, -3, 50, 499, 501, 1e4, np.inf, -np.inf,
                           np.nan], f32)
for _name in ("bessel_i0e", "bessel_i1e"):
    case(_name, [_BESSEL_POINTS], getattr(lax, _name), SPECIAL_FUNCTION)
    case(_name, [floats(2, 3, lo=-20, hi=20)], getattr(lax, _name), SPECIAL_FUNCTION)

_ROUNDED = np.array([0, -0.0, 1.5, 2.5, 1e-40, 65504, 65520, 3.4e38, -1e-8, np.inf, np.nan], f32)
for _bits in [(5, 10), (8, 7), (4, 3), (2, 0)]:
    case("reduce_precision", [_ROUNDED], lambda x, b=_bits: lax.reduce_precision(x, *b),
         exponent_bits=_bits[0], mantissa_bits=_bits[1])
case("reduce_precision", [floats(2, 3).astype(np.float16)],
     lambda x: lax.reduce_precision(x, 4, 3), exponent_bits=4, mantissa_bits=3)


# -- the Fourier transform (numpy.fft in double precision, rounded once) -------------------

# (The oracles are jax.jit calls of `lax.fft`, itself a jitted function, named as the
# primitive: the module text of test_reference_rule_matches_xla_lowering's program,
# so that the two compile once.)
_C = (floats(2, 4, 6) + 1j * floats(2, 4, 6)).astype(np.complex64)
for _type, _lengths in [("FFT", (6,)), ("IFFT", (4, 6)), ("FFT", (2, 4, 6))]:
    case("fft", [_C], jax.jit(named("fft", lambda x, t=_type, n=_lengths: lax.fft(x, t, n))),
         ROUNDING, fft_type=_type, fft_lengths=_lengths)
for _lengths in [(6,), (4, 6), (5,)]:
    _real = floats(3, *_lengths)
    case("fft", [_real], jax.jit(named("fft", lambda x, n=_lengths: lax.fft(x, "RFFT", n))),
         ROUNDING, fft_type="RFFT", fft_lengths=_lengths)
    _half = np.fft.rfftn(_real, axes=range(1, _real.ndim)).astype(np.complex64)
    case("fft", [_half], jax.jit(named("fft", lambda x, n=_lengths: lax.fft(x, "IRFFT", n))),
         ROUNDING, fft_type="IRFFT", fft_lengths=_lengths)


# -- top_k and optimization_barrier (ir/selection_primitives.py) ------------------------------

_TIES = np.array([[1.0, np.nan, 3.0, -np.inf, np.nan, 3.0], [0.0, -0.0, 0.0, 2.0, 2.0, -1.0]],
                 f32)
case("top_k", [_TIES], lambda x: lax.top_k(x, 4), k=4, axis=1)
case("top_k", [floats(4, 3)], lambda x: lax.top_k(x, 2, axis=0), k=2, axis=0)
case("top_k", [ints(3, 5)], lambda x: lax.top_k(x, 5), k=5, axis=1)
case("top_k", [bools(2, 3)], lambda x: lax.top_k(x, 1), k=1, axis=1)
case("optimization_barrier", [floats(2, 3), ints(4)], lambda x, y: lax.optimization_barrier((x, y)))


# -- call_exported (ir/export_primitive.py): a saved StableHLO program ------------------------

# For both platforms: the reference tests run it on the CPU device beside a GPU.
_SAVED = jax.export.export(jax.jit(lambda x, n: (jnp.sin(x) * n, n + 1)),
                          platforms=("cpu", "cuda"))(
    jax.ShapeDtypeStruct((3,), f32), jax.ShapeDtypeStruct((), i32))
case("call_exported", [floats(3), np.int32(4)], lambda x, n: list(_SAVED.call(x, n)),
     exported=SavedProgram(_SAVED))


# -- bit operations, erf_inv, keys (ir/random_primitives.py) ------------------------------

_U32 = np.array([0, 1, 7, 0x80000000, 0xFFFFFFFF, 12345], np.uint32)
_SHIFTS = {"shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
           "shift_right_arithmetic": lax.shift_right_arithmetic}
for _name, _fn in _SHIFTS.items():
    # Amounts past the bit width and negative ones: XLA's rule (0 or the sign fill).
    _x, _n = np.meshgrid(SPECIAL_I32, np.array([0, 1, 5, 31, 32, 40, -1], i32))
    case(_name, [_x, _n], _fn)
    _x, _n = np.meshgrid(_U32, np.array([0, 3, 31, 32, 99], np.uint32))
    case(_name, [_x, _n], _fn)
    case(_name, [ints(2, 3, dtype=np.int8), np.int8(3)], splat(_fn))
case("population_count", [SPECIAL_I32], lax.population_count)
case("population_count", [_U32], lax.population_count)
for _x, _to in [(floats(2, 3), np.uint32), (SPECIAL_F32, i32), (_U32, f32),
                (floats(3), np.uint8), (ints(3, 2, dtype=np.uint16), f32),
                (floats(4, dtype=bf16), np.int16), (ints(2, 4, dtype=np.int8), i32)]:
    case("bitcast_convert_type", [_x], lambda x, to=_to: lax.bitcast_convert_type(x, to),
         new_dtype=np.dtype(_to))
case("nextafter", [floats(2, 3), floats(2, 3)], lax.nextafter)
case("nextafter", [SPECIAL_F32, np.full(SPECIAL_F32.shape, np.inf, f32)], lax.nextafter)
case("nextafter", [floats(4, dtype=bf16), floats(4, dtype=bf16)], lax.nextafter)
case("erf_inv", [floats(2, 3, lo=-0.999, hi=0.999)], lax.erf_inv, TRANSCENDENTAL)
case("erf_inv", [np.array([0.0, -0.0, 1.0, -1.0, 1.5, np.nan, 1e-6], f32)], lax.erf_inv,
     TRANSCENDENTAL)
case("erf_inv", [floats(4, lo=-0.9, hi=0.9, dtype=bf16)], lax.erf_inv, BF16)
# JAX's oracle under one jax.jit (the comparison has a tolerance): eagerly,
# lax.random_gamma_grad is a composition that compiles ~30 programs per shape. Named
# as the primitive: the lowering test's program then has the same module text.
case("random_gamma_grad", [np.float32([0.3, 1.0, 4.5, 2.0, 10.0]),
                           np.float32([0.05, 1.2, 3.0, 0.5, 14.0])],
     jax.jit(named("random_gamma_grad", lambda a, x: lax.random_gamma_grad(a, x))),
     (1e-5, 1e-6))
case("random_gamma_grad", [np.float32(2.5), floats(2, 3, lo=0.1, hi=6)],
     jax.jit(named("random_gamma_grad", splat(lax.random_gamma_grad))), (1e-5, 1e-6))
_words = ints(3, 2, lo=0, hi=2**31 - 1).astype(np.uint32)
case("random_wrap", [_words], lambda w: jax.random.wrap_key_data(w, impl="threefry2x32"))
case("random_unwrap", [jax.random.wrap_key_data(_words, impl="threefry2x32")],
     jax.random.key_data)
# The key-reuse checker's marks (bound only under jax_debug_key_reuse): the key as it is.
_keys = jax.random.wrap_key_data(_words, impl="threefry2x32")
case("random_clone", [_keys], jax.random.clone)
case("random_consume", [_keys], lambda k: k)     # no JAX primitive: the identity
_threefry = jax.extend.random.threefry2x32_p.bind
case("threefry2x32", [np.uint32(0), np.uint32(42), _U32[:4], _U32[2:]], lambda *a: _threefry(
    *(np.broadcast_to(x, (4,)) for x in a)))
case("threefry2x32", [*(ints(2, 3, lo=0, hi=2**31 - 1).astype(np.uint32) for _ in range(4))],
     _threefry)
_rbg_words = ints(2, 4, lo=0, hi=2**31 - 1).astype(np.uint32)
case("random_wrap", [_rbg_words], lambda w: jax.random.wrap_key_data(w, impl="rbg"), impl="rbg")
case("random_unwrap", [jax.random.wrap_key_data(_rbg_words, impl="unsafe_rbg")],
     jax.random.key_data)
# XLA's RngBitGenerator, bit for bit: Threefry's halved-and-interleaved layout on an odd
# shape, Philox with a counter that carries into the key word, 64-bit words.
_state = np.array([7, 9, 0xFFFFFFFF, 0xFFFFFFFF], np.uint32)
for _shape, _dtype, _algorithm in [((3, 5), np.uint8, 1), ((2, 3), np.uint32, 2),
                                   ((5,), np.uint16, 0)]:
    case("rng_bit_generator", [_state], lambda k, s=_shape, d=_dtype, a=_algorithm:
         lax.rng_bit_generator(k, s, d, lax.RandomAlgorithm(a)),
         shape=_shape, dtype=np.dtype(_dtype), algorithm=_algorithm)
# A range of one value is the one draw of XLA's stateful generator anyone can predict.
case("rng_uniform", [np.int32(5), np.int32(6)], lambda a, b: lax.rng_uniform(a, b, (3,)),
     shape=(3,))


# -- calls --------------------------------------------------------------------------------

_body = trace_to_jaxpr(lambda x, y: [bind(P.mul_p, bind(P.sin_p, x), y), bind(P.neg_p, y)],
                       [ShapedArray((3,), f32)] * 2).jaxpr
case("jit", [floats(3), floats(3)], lambda x, y: [lax.sin(x) * y, -y], TRANSCENDENTAL,
     jaxpr=_body, name="body")
