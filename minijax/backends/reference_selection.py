"""The reference evaluator's rules for `top_k` (a stable sort in XLA's total order)
and `optimization_barrier` (the identity: NumPy has nothing to optimise)."""
from __future__ import annotations

import numpy as np

from ..ir import selection_primitives as S
from .reference import reference_rules


def _descending_key(values: np.ndarray):
    """Sort keys, smallest first, that order `values` as XLA's top_k does: NaN above
    everything, then larger values, +0 above -0; ties keep index order."""
    if values.dtype.kind == "f" or values.dtype.kind == "V":
        floats = values.astype(np.float64)
        nan = np.isnan(floats)
        return [(0 if n else 1, 0.0 if n else -v, bool(np.signbit(v)))
                for n, v in zip(nan, floats)]
    return [(-int(v),) for v in values]


def _top_k(x, *, k, axis, is_stable=True):  # index order satisfies both
    moved = np.moveaxis(np.asarray(x), axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    order = np.zeros((flat.shape[0], k), np.int32)
    for row, values in enumerate(flat):
        keys = _descending_key(values)
        order[row] = sorted(range(len(values)), key=keys.__getitem__)[:k]
    order = order.reshape(moved.shape[:-1] + (k,))
    values = np.take_along_axis(moved, order.astype(np.intp), axis=-1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis)]


reference_rules[S.top_k_p] = _top_k
reference_rules[S.optimization_barrier_p] = lambda *xs: [np.asarray(x) for x in xs]
