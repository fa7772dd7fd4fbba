"""`top_k` and `optimization_barrier`: two primitives of `jax.lax` that pick or pass
values without computing new ones.

    top_k                 x[..., n, ...] -> values[..., k, ...], indices i32[..., k, ...]
                          params: k, axis (non-negative), is_stable
    optimization_barrier  x1, ..., xm -> x1, ..., xm   (any number of arrays)

`top_k` returns the k largest entries along `axis` in descending order (NaN above
everything, +0 above -0, ties in index order, as XLA sorts) and where they were.
`is_stable=False` (JAX 0.11 added the param) leaves the order of ties unspecified; minijax
keeps the param so a program says what its author allowed, and every backend may still
answer in index order.
`optimization_barrier` is the identity that XLA may not optimise across: it keeps a
computation from being moved, fused or recomputed through it (JAX uses it to keep
rematerialisation where the program put it). Their derivative and batching rules are
in `transforms/selection_rules.py`, lowerings in `backends/xla_selection.py`, NumPy
rules in `backends/reference_selection.py`.
"""
from __future__ import annotations

import numpy as np

from .types import is_complex
from .registry import Primitive, type_rules, _array, _fail

__all__ = ["top_k_p", "optimization_barrier_p", "selection_primitives"]

top_k_p = Primitive("top_k", multiple_results=True)


def _top_k_rule(x, *, k, axis, is_stable=True):
    _array("top_k", x)
    if is_complex(x.dtype):
        _fail("top_k", f"operand must not be complex, got {x}")
    if not 0 <= axis < x.ndim:
        _fail("top_k", f"axis {axis} is out of range for operand {x}")
    if not 0 <= k <= x.shape[axis]:
        _fail("top_k", f"k={k} must be between 0 and the size {x.shape[axis]} of axis "
              f"{axis} of operand {x}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    # JAX's indices are weakly typed when the operand is (its rule updates x's type)
    return [x.update(shape=shape), x.update(shape=shape, dtype=np.dtype(np.int32))]


type_rules[top_k_p] = _top_k_rule

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


def _optimization_barrier_rule(*operands):
    for i, x in enumerate(operands):
        _array("optimization_barrier", x, f"operand {i}")
    return list(operands)


type_rules[optimization_barrier_p] = _optimization_barrier_rule

selection_primitives = (top_k_p, optimization_barrier_p)
