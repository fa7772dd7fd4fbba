"""Shared pieces of the autodiff tests: the per-primitive case table and comparisons.

Each `OpCase` is one primitive applied to random inputs, written once against a `lax`
module so the same program runs through `minijax.lax` and `jax.lax`; the tests run
`jvp` and `vjp` of it with minijax and with JAX (the oracle) and compare.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import numpy as np

import minijax
from minijax import lax as mlax
from minijax.testing import JAX_VERSION
from minijax.ir.verify import verify_jaxpr
from minijax.testing import JAX_VERSION

rng = np.random.default_rng(0)


def randn(*shape, low=None, high=None):
    if low is not None:
        return rng.uniform(low, high, size=shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def assert_close(ours, theirs, tol=2e-5):
    ours_leaves, ours_tree = jax.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
    assert ours_tree == theirs_tree, (ours_tree, theirs_tree)
    for a, b in zip(ours_leaves, theirs_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        if a.dtype == jax.dtypes.float0:
            continue
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def verify(closed):
    verify_jaxpr(closed)
    return closed


class OpCase(NamedTuple):
    name: str                    # the primitive under test
    fun: Callable                # fun(lax, *args)
    args: Callable               # () -> tuple of NumPy inputs
    tol: float = 2e-5


def _unary(name, low=None, high=None, shapes=((), (3,), (2, 3))):
    return [OpCase(name, lambda lax, x, n=name: getattr(lax, n)(x),
                   lambda s=s: (randn(*s, low=low, high=high),)) for s in shapes]


def _binary(name, low=None, high=None, shapes=((), (3,), (2, 3))):
    return [OpCase(name, lambda lax, x, y, n=name: getattr(lax, n)(x, y),
                   lambda s=s: (randn(*s, low=low, high=high), randn(*s, low=low, high=high)))
            for s in shapes]


def _dnums(lax, kind, *args):
    return getattr(lax, kind)(*args)


def _gather(lax, x, idx):
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    return lax.gather(x, idx, dn, (1, 3), mode="clip")


def _scatter(name):
    def fun(lax, x, upd):
        idx = np.array([[0], [2]], np.int32)
        dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
        return getattr(lax, name)(x, idx, upd, dn, mode="clip")
    return fun


MATMUL = (((1,), (0,)), ((), ()))
BATCHED = (((2,), (1,)), ((0,), (0,)))

OP_CASES: list[OpCase] = [
    *_unary("sin"), *_unary("cos"), *_unary("tan", -1, 1), *_unary("asin", -0.9, 0.9),
    *_unary("acos", -0.9, 0.9), *_unary("atan"), *_unary("sinh"), *_unary("cosh"),
    *_unary("tanh"), *_unary("asinh"), *_unary("acosh", 1.2, 3), *_unary("atanh", -0.9, 0.9),
    *_unary("exp"), *_unary("exp2"), *_unary("log", 0.2, 3), *_unary("log1p", -0.5, 3),
    *_unary("expm1"), *_unary("logistic"), *_unary("sqrt", 0.2, 3), *_unary("rsqrt", 0.2, 3),
    *_unary("cbrt", 0.2, 3), *_unary("erf"), *_unary("square"), *_unary("abs"),
    *_unary("neg"), *_unary("floor"), *_unary("ceil"), *_unary("sign"), *_unary("round"),
    *_unary("stop_gradient"),
    # jax.lax has one_minus_square since JAX 0.11
    *(_unary("one_minus_square") if JAX_VERSION >= (0, 11) else []),
    *[OpCase("integer_pow", lambda lax, x, y=y: lax.integer_pow(x, y), lambda: (randn(2, 3),))
      for y in (0, 1, 2, 3, -2)],
    *_binary("add"), *_binary("sub"), *_binary("mul"), *_binary("div", 0.5, 2),
    *_binary("rem", 0.5, 3), *_binary("pow", 0.5, 2), *_binary("max"), *_binary("min"),
    *_binary("atan2"),
    OpCase("add", lambda lax, x, y: lax.add(x, lax.broadcast_in_dim(y, (3,), ())),
           lambda: (randn(3), randn())),
    OpCase("select_n", lambda lax, x, y: lax.select_n(lax.gt(x, y), x, y),
           lambda: (randn(4), randn(4))),
    OpCase("clamp", lambda lax, lo, x, hi: lax.clamp(lo, x, hi),
           lambda: (randn(5) - 1, randn(5) * 2, randn(5) + 1)),
    OpCase("convert_element_type",
           lambda lax, x: lax.convert_element_type(lax.convert_element_type(x, np.float16),
                                                   np.float32), lambda: (randn(3),), 1e-2),
    OpCase("eq", lambda lax, x, y: lax.mul(x, lax.convert_element_type(lax.lt(x, y),
                                                                       np.float32)),
           lambda: (randn(4), randn(4))),
    OpCase("is_finite", lambda lax, x: lax.select_n(lax.is_finite(x), lax.neg(x), x),
           lambda: (randn(3),)),
    OpCase("broadcast_in_dim", lambda lax, x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)),
           lambda: (randn(3),)),
    OpCase("broadcast_in_dim", lambda lax, x: lax.broadcast_in_dim(x, (2, 3), (0, 1)),
           lambda: (randn(1, 3),)),
    OpCase("reshape", lambda lax, x: lax.reshape(x, (3, 2)), lambda: (randn(2, 3),)),
    OpCase("transpose", lambda lax, x: lax.transpose(x, (2, 0, 1)), lambda: (randn(2, 3, 4),)),
    OpCase("squeeze", lambda lax, x: lax.squeeze(x, (1,)), lambda: (randn(2, 1, 3),)),
    OpCase("rev", lambda lax, x: lax.rev(x, (0, 2)), lambda: (randn(2, 3, 4),)),
    OpCase("expand_dims", lambda lax, x: lax.expand_dims(x, (0, 2)), lambda: (randn(2, 3),)),
    OpCase("concatenate", lambda lax, x, y: lax.concatenate([x, y, x], 1),
           lambda: (randn(2, 3), randn(2, 2))),
    OpCase("pad", lambda lax, x, v: lax.pad(x, v, ((1, 2, 1), (-1, 1, 0))),
           lambda: (randn(3, 4), randn())),
    OpCase("slice", lambda lax, x: lax.slice(x, (1, 0), (4, 5), (2, 2)),
           lambda: (randn(5, 5),)),
    OpCase("dynamic_slice", lambda lax, x: lax.dynamic_slice(x, (np.int32(1), np.int32(2)),
                                                             (2, 2)), lambda: (randn(4, 5),)),
    OpCase("dynamic_update_slice",
           lambda lax, x, u: lax.dynamic_update_slice(x, u, (np.int32(1), np.int32(0))),
           lambda: (randn(4, 3), randn(2, 3))),
    OpCase("gather", lambda lax, x: _gather(lax, x, np.array([[1], [0], [1]], np.int32)),
           lambda: (randn(3, 3),)),
    OpCase("scatter_add", _scatter("scatter_add"), lambda: (randn(4, 3), randn(2, 3))),
    OpCase("scatter", _scatter("scatter"), lambda: (randn(4, 3), randn(2, 3))),
    OpCase("reduce_sum", lambda lax, x: lax.reduce_sum(x, (0, 2)), lambda: (randn(2, 3, 4),)),
    OpCase("reduce_max", lambda lax, x: lax.reduce_max(x, (1,)), lambda: (randn(2, 5),)),
    OpCase("reduce_min", lambda lax, x: lax.reduce_min(x, (0, 1)), lambda: (randn(2, 5),)),
    OpCase("reduce_prod", lambda lax, x: lax.reduce_prod(x, (1,)), lambda: (randn(3, 4),)),
    OpCase("reduce_prod", lambda lax, x: lax.reduce_prod(x, (0, 2)),
           lambda: (randn(2, 3, 2),)),
    OpCase("argmax", lambda lax, x: lax.mul(x, lax.convert_element_type(
        lax.argmax(x, 0, np.int32), np.float32)), lambda: (randn(3),)),
    OpCase("cumsum", lambda lax, x: lax.cumsum(x, 1), lambda: (randn(2, 4),)),
    OpCase("cumsum", lambda lax, x: lax.cumsum(x, 0, reverse=True), lambda: (randn(4, 2),)),
    OpCase("cumprod", lambda lax, x: lax.cumprod(x, 1), lambda: (randn(2, 4, low=0.5, high=2),)),
    # One zero, two zeros and none in a row: the rule is exact at zeros, as JAX's.
    OpCase("cumprod", lambda lax, x: lax.cumprod(x, 1, reverse=True),
           lambda: (np.array([[2., 0., 3., .5], [0., 1.5, 0., 2.], [1., 2., 3., 4.]],
                             np.float32),)),
    OpCase("cummax", lambda lax, x: lax.cummax(x, 0), lambda: (randn(6, 2),)),
    OpCase("cummin", lambda lax, x: lax.cummin(x, 1, reverse=True), lambda: (randn(2, 6),)),
    OpCase("sort", lambda lax, x: lax.sort(x, 0), lambda: (randn(5, 2),)),
    OpCase("sort", lambda lax, x, y: lax.sort((x, y), 1, num_keys=1)[1],
           lambda: (randn(2, 5), randn(2, 5))),
    OpCase("dot_general", lambda lax, x, y: lax.dot_general(x, y, MATMUL),
           lambda: (randn(2, 3), randn(3, 4))),
    OpCase("dot_general", lambda lax, x, y: lax.dot_general(x, y, BATCHED),
           lambda: (randn(2, 3, 4), randn(2, 4, 5))),
    OpCase("dot_general", lambda lax, x, y: lax.dot_general(x, y, (((0, 2), (2, 1)), ((), ()))),
           lambda: (randn(3, 2, 4), randn(5, 4, 3))),
]
# jax.lax has log2 from 0.11 (appended, so the strided subsets above stay the same).
OP_CASES += _unary("log2", 0.2, 3) if JAX_VERSION >= (0, 11) else []


def run_both(case: OpCase, build):
    """`build(api, lax, fun)` -> result; run with minijax and jax."""
    ours = build(minijax, mlax, lambda *a: case.fun(mlax, *a))
    theirs = build(jax, jax.lax, lambda *a: case.fun(jax.lax, *a))
    return ours, theirs


def case_id(case: OpCase) -> str:
    shapes = "_".join("x".join(map(str, np.shape(a))) or "s" for a in case.args())
    return f"{case.name}-{shapes}"
