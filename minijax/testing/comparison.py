"""Comparing minijax's results with JAX's: `assert_trees_match`, `assert_same_results`,
and `check_jaxpr` (the verifier and text-form round trip every traced program goes
through in tests). `minijax.testing` re-exports everything here."""
from __future__ import annotations

from typing import Callable

import numpy as np
from jax import tree_util

from ..ir.types import bfloat16, is_narrow

# Tolerances by dtype, loose enough for XLA's transcendental approximations.
_TOLERANCES = {
    np.dtype("float16"): (2e-3, 2e-3), bfloat16: (2e-2, 2e-2),
    np.dtype("float32"): (2e-5, 2e-6), np.dtype("float64"): (1e-12, 1e-12),
    np.dtype("complex64"): (2e-5, 2e-6),
}


def _tolerance(dtype, rtol, atol):
    default_rtol, default_atol = _TOLERANCES.get(np.dtype(dtype), (0, 0))
    return (default_rtol if rtol is None else rtol), (default_atol if atol is None else atol)


def _declared_dtype(leaf, as_array):
    # A leaf's dtype is the one it declares: JAX returns some scalars as float
    # subclasses typed float32, which np.asarray makes float64.
    dtype = getattr(leaf, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else as_array.dtype


def assert_trees_match(actual, expected, *, rtol=None, atol=None, check_dtypes=True,
                       check_weak_types=True, what="result"):
    """Assert two pytrees of arrays agree in structure, shape, dtype and value."""
    actual_leaves, actual_tree = tree_util.tree_flatten(actual)
    expected_leaves, expected_tree = tree_util.tree_flatten(expected)
    if actual_tree != expected_tree:
        raise AssertionError(f"{what}: tree structures differ:\n  minijax: {actual_tree}\n"
                             f"  jax:     {expected_tree}")
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves)):
        where = f"{what} leaf {i}"
        a_np, e_np = np.asarray(a), np.asarray(e)
        if a_np.shape != e_np.shape:
            raise AssertionError(f"{where}: shape {a_np.shape} != jax's {e_np.shape}")
        a_dtype, e_dtype = _declared_dtype(a, a_np), _declared_dtype(e, e_np)
        if check_dtypes and a_dtype != e_dtype:
            raise AssertionError(f"{where}: dtype {a_dtype} != jax's {e_dtype}")
        if check_weak_types and hasattr(a, "weak_type") and hasattr(e, "weak_type") \
                and bool(a.weak_type) != bool(e.weak_type):
            raise AssertionError(f"{where}: weak_type {a.weak_type} != jax's {e.weak_type}")
        if is_narrow(e_np.dtype) and a_np.dtype == e_np.dtype:
            # Narrow formats are compared bit for bit: every value of one is exact,
            # and their NaNs and signed zeros are part of what a conversion decides.
            if not np.array_equal(a_np.view(np.uint8), e_np.view(np.uint8)):
                raise AssertionError(f"{where} differs from jax bit for bit:\n  minijax: "
                                     f"{a_np}\n  jax:     {e_np}")
            continue
        r, t = _tolerance(e_np.dtype, rtol, atol)
        if e_np.dtype == bfloat16 or a_np.dtype == bfloat16:
            a_np, e_np = a_np.astype(np.float32), e_np.astype(np.float32)
        if e_np.dtype.kind == "V":  # float0 tangents carry no values
            continue
        np.testing.assert_allclose(a_np, e_np, rtol=r, atol=t, equal_nan=True,
                                   err_msg=f"{where} differs from jax")


def assert_same_results(minijax_fun: Callable, jax_fun: Callable, *args,
                        rtol=None, atol=None, check_dtypes=True, check_weak_types=True):
    """Call both functions on `args` and assert their results match."""
    actual = minijax_fun(*args)
    expected = jax_fun(*args)
    assert_trees_match(actual, expected, rtol=rtol, atol=atol, check_dtypes=check_dtypes,
                       check_weak_types=check_weak_types)
    return actual, expected


def check_jaxpr(closed_jaxpr):
    """Verify a jaxpr and check that its text form round-trips.

    Raises the verifier's error for an ill-formed program, or `RoundTripError` naming
    the first differing line when print -> parse -> print is not the identity (and,
    for concrete consts, dumps -> loads -> dumps). Returns its argument."""
    from ..ir.checks import check_traced
    check_traced(closed_jaxpr)
    return closed_jaxpr
