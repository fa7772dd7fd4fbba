"""Index-expression builders: `mgrid`, `ogrid`, `r_`, `c_`.

Each is an object indexed with slices: `mgrid[0:3, 0:4]` is the dense (ij-indexed)
grid, `ogrid[...]` the open one (one array per axis, broadcastable), and `r_[...]` /
`c_[...]` concatenate their items along the first / last axis. A slice `a:b:s` is
`arange(a, b, s)`; an imaginary step `a:b:nj` is `linspace(a, b, n)` (n points, both
ends included), as in NumPy. The slice bounds must be static. `r_` and `c_` accept
NumPy's leading string directive ('r', 'c', or 'axis,ndmin,trans1d').
"""
from __future__ import annotations

import operator

import numpy as np

from ..ir.trace import Tracer
from ._creation import arange, array, linspace, meshgrid
from ._promotion import shape_of
from ._shape import concatenate, reshape, stack, transpose

__all__ = ["mgrid", "ogrid", "r_", "c_"]


def _static(value, name, where):
    if isinstance(value, Tracer):
        value = value._concrete_or_raise(f"{where}: the slice {name}")
    return value


def _grid_from_slice(s: slice, where: str):
    start = _static(s.start, "start", where)
    stop = _static(s.stop, "stop", where)
    step = _static(s.step, "step", where)
    start = 0 if start is None else start
    step = 1 if step is None else step
    if np.iscomplexobj(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _DenseGrid:
    """`mgrid[...]`: the stacked dense grid of its slices."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        axes = [_grid_from_slice(k, "mgrid") for k in key]
        if not axes:
            return arange(0)
        return stack(meshgrid(*axes, indexing="ij", sparse=False), 0)

    def __repr__(self):
        return "minijax.numpy.mgrid"


class _OpenGrid:
    """`ogrid[...]`: one array per slice, shaped to broadcast against the others."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        axes = [_grid_from_slice(k, "ogrid") for k in key]
        return meshgrid(*axes, indexing="ij", sparse=True)

    def __repr__(self):
        return "minijax.numpy.ogrid"


class _Concatenator:
    """`r_[...]` and `c_[...]`: NumPy's AxisConcatenator. `axis` is where the items
    are joined, `ndmin` the rank each is raised to, and `trans1d` where an item's own
    axes go when it is raised (-1: at the end)."""

    def __init__(self, name, axis, ndmin, trans1d):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def _directive(self, directive):
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if directive == "r":
            params[-1] = 0
        elif directive == "c":
            params[-1] = 1
        else:
            given = directive.split(",")
            given = given + params[len(given):] if len(given) < 4 else given[:3] + [-1]
            try:
                params = [int(p) for p in given]
            except ValueError:
                raise ValueError(f"{self.name}: could not understand directive "
                                 f"{directive!r}") from None
        return params

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
        if key and isinstance(key[0], str):
            axis, ndmin, trans1d, matrix = self._directive(key[0])
            key = key[1:]
        parts = []
        for item in key:
            if isinstance(item, slice):
                part, item_ndim = _grid_from_slice(item, self.name), 0
            elif isinstance(item, str):
                raise ValueError(f"{self.name}: a string directive must come first, got "
                                 f"{item!r}")
            else:
                part = array(item, copy=False)
                item_ndim = len(shape_of(part))
            part = array(part, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                # The item's axes start at position trans1d instead of at the end.
                order = list(range(ndmin))
                shift = ndmin - operator.abs(trans1d + 1) % ndmin
                part = transpose(part, order[shift:] + order[:shift])
            parts.append(part)
        result = concatenate(parts, axis=axis)
        if matrix != -1 and len(shape_of(result)) == 1:
            shape = list(shape_of(result))
            shape.insert(matrix, 1)
            result = reshape(result, shape)
        return result

    def __repr__(self):
        return f"minijax.numpy.{self.name}"


mgrid = _DenseGrid()
ogrid = _OpenGrid()
r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)
