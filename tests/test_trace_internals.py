"""Mechanisms that keep tracing cheap, pinned: NumPy leaves share their avals (and
`clear_caches` forgets them), and `set_current_trace`, a small class rather than a
generator, puts the previous trace back however its block ends (`docs/design.md`,
section 10)."""
from __future__ import annotations

import numpy as np
import pytest

import minijax
from minijax.ir.staging import StagingTrace
from minijax.ir.trace import (EvalTrace, current_trace, set_current_trace,
                              transformation_scope)
from minijax.ir.types import ShapedArray, aval_of_value, forget_shared_avals


def test_numpy_arrays_of_one_shape_and_dtype_share_one_aval():
    a, b = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    assert aval_of_value(a) is aval_of_value(b)
    assert aval_of_value(a) == ShapedArray((2, 3), np.float32)
    # x64 is off: an f64 array's aval is f32, weak_type False, like a fresh one.
    wide = aval_of_value(np.ones((2, 3), np.float64))
    assert wide == ShapedArray((2, 3), np.float32) and not wide.weak_type
    assert aval_of_value(np.ones(3, np.int32)) != aval_of_value(np.ones(3, np.float32))
    shared = aval_of_value(a)
    forget_shared_avals()
    assert aval_of_value(a) is not shared and aval_of_value(a) == shared


def test_clear_caches_forgets_the_shared_avals():
    a = np.zeros(4, np.float32)
    shared = aval_of_value(a)
    minijax.clear_caches()
    assert aval_of_value(a) is not shared and aval_of_value(a) == shared


def test_jaxprs_traced_from_shared_avals_are_unchanged():
    params = [np.ones((3, 3), np.float32) for _ in range(3)]

    def f(ws, x):
        for w in ws:
            x = minijax.lax.tanh(minijax.lax.dot(x, w))
        return x
    closed = minijax.make_jaxpr(f)(params, np.ones(3, np.float32))
    assert [str(v.aval) for v in closed.jaxpr.invars] == ["float32[3,3]"] * 3 + ["float32[3]"]
    assert len(closed.eqns) == 6


def test_set_current_trace_restores_the_previous_trace_on_an_exception():
    root = current_trace()
    assert type(root) is EvalTrace and transformation_scope.active == 0
    trace = StagingTrace(root)
    with pytest.raises(ValueError, match="inside"):
        with set_current_trace(trace) as entered:
            assert entered is trace and current_trace() is trace
            assert transformation_scope.active == 1       # leaving the root starts one
            raise ValueError("inside")
    assert current_trace() is root and transformation_scope.active == 0


def test_set_current_trace_nests():
    root = current_trace()
    outer, inner = StagingTrace(root), None
    with set_current_trace(outer):
        inner = StagingTrace(outer)
        with set_current_trace(inner):
            assert current_trace() is inner
            assert transformation_scope.active == 1       # one transformation, not two
        assert current_trace() is outer
    assert current_trace() is root and transformation_scope.active == 0
