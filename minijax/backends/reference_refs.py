"""The reference evaluator's rules for indexed ref access, in NumPy.

Read `reference.py` (the evaluator and `RefBox`) and `ir/ref_indexing.py` (what an
indexer means) first. This module replaces the whole-ref rules of `get`, `swap`
and `addupdate` with ones that follow an `indexer` param.

It is written independently of `transforms/discharge_indexing.py` on purpose: that
module spells accesses as XLA-style slices, gathers and scatters; this one hands
each `Index` step to NumPy's own indexing (a static item as itself, a `Slice` as a
Python slice, `NEW_AXIS` as None, a dynamic index wrapped and clamped, a
`DynamicSlice` as the Python slice from its start, wrapped and clamped so that the
slice fits). When the
two agree, both are probably right.

Writes through views go step by step, as in discharge, because NumPy's integer-array
indexing makes a copy rather than a view: to write `x.at[i].T[j] = y`, compute
`v = x[i]`, write `v.T[j] = y` into a copy, and write `v` back into a copy of `x`.
A box's value is replaced, never modified in place, so earlier reads keep theirs.
`addupdate` accumulates with `np.add.at`, which adds once per repetition of an
index; a write keeps NumPy's last-write-wins.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir.types import ShapedArray
from ..ir.ref_indexing import (Index, Transpose, Slice, NewAxis, Dynamic, DynamicSlice,
                               split_dynamic, plan_index)
from .reference import RefBox, reference_rules


def _numpy_index(shape, index: Index, dynamic) -> tuple:
    plan_index(shape, index.items, [_aval(d) for d in dynamic])   # validates the index
    dyn = iter(dynamic)
    out, axis = [], 0
    for item in index.items:
        if isinstance(item, NewAxis):
            out.append(None)
            continue
        n = shape[axis]
        if isinstance(item, Slice):
            out.append(slice(item.start, item.start + item.size * item.stride, item.stride))
        elif isinstance(item, Dynamic):
            out.append(_wrap_and_clip(next(dyn), n, 1))
        elif isinstance(item, DynamicSlice):
            start = int(_wrap_and_clip(next(dyn), n, item.span))
            out.append(slice(start, start + item.size * item.stride, item.stride))
        else:
            out.append(int(item))
        axis += 1
    return tuple(out)


def _wrap_and_clip(i, n, span):
    """JAX's dynamic positions: negative counts from the end, then clipped into
    [0, n - span], where a slice spanning `span` positions still fits."""
    i = np.asarray(i).astype(np.int64)
    return np.clip(np.where(i < 0, i + n, i), 0, max(n - span, 0))


def _aval(value):
    array = np.asarray(value)
    return ShapedArray(array.shape, array.dtype)


def _read(x, step, dynamic):
    if isinstance(step, Index):
        return np.asarray(x[_numpy_index(x.shape, step, dynamic)])
    if isinstance(step, Transpose):
        return np.transpose(x, step.permutation)
    return np.reshape(x, step.sizes)


def _write(x, step, dynamic, view_value, accumulate=False):
    if isinstance(step, Index):
        out = np.array(x)
        index = _numpy_index(x.shape, step, dynamic)
        if accumulate:
            np.add.at(out, index, view_value)
        else:
            out[index] = view_value
        return out
    if isinstance(step, Transpose):
        return np.transpose(view_value, np.argsort(step.permutation))
    return np.reshape(view_value, x.shape)


def read_path(x, indexer, dynamic):
    if indexer is None:
        return x
    for step, dyn in zip(indexer.steps, split_dynamic(indexer, dynamic)):
        x = _read(x, step, dyn)
    return x


def update_path(x, indexer, dynamic, y, accumulate):
    if indexer is None:
        return np.asarray(x + y, x.dtype) if accumulate else np.array(y, x.dtype)

    def update(x, steps, dynamics):
        if len(steps) == 1:
            return _write(x, steps[0], dynamics[0], y, accumulate)
        view = _read(x, steps[0], dynamics[0])
        return _write(x, steps[0], dynamics[0], update(view, steps[1:], dynamics[1:]))
    return update(x, list(indexer.steps), split_dynamic(indexer, dynamic))


def _get(ref: RefBox, *dynamic, indexer=None):
    return [np.array(read_path(ref.read("get"), indexer, dynamic))]


def _swap(ref: RefBox, value, *dynamic, indexer=None):
    current = ref.read("swap")
    old = np.array(read_path(current, indexer, dynamic))
    ref.value = update_path(current, indexer, dynamic, np.asarray(value), False)
    return [old]


def _addupdate(ref: RefBox, value, *dynamic, indexer=None):
    current = ref.read("addupdate")
    ref.value = update_path(current, indexer, dynamic, np.asarray(value), True)
    return []


reference_rules[P.get_p] = _get
reference_rules[P.swap_p] = _swap
reference_rules[P.addupdate_p] = _addupdate
