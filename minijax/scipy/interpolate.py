"""`minijax.scipy.interpolate`: `RegularGridInterpolator`, as `jax.scipy.interpolate`.

Linear or nearest-neighbour interpolation on a rectilinear grid (each axis's points
strictly increasing; JAX does not check this, nor does minijax: a check would need
the values). Along each axis a query falls in the cell `searchsorted` finds, clamped
to the first and last cells, so points outside the grid extrapolate -- unless
`fill_value` (NaN by default) replaces them; `fill_value=None` keeps the
extrapolation. JAX refuses `bounds_error=True` (raising inside a jitted program is not
possible), and so does minijax.

The interpolator is a pytree, as JAX's: its leaves are the grid, the values and the
fill value, its static data the method and bounds_error, so it can be passed through
`jit`, `vmap` and `grad`. A call is compiled whole for an eager call (JAX runs it op
by op; minijax would compile a program per operation).
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import numpy as jnp
from ..numpy._dtypes import can_cast
from ..numpy._promotion import as_operand, promote_dtypes_inexact
from ..tree_util import register_pytree_node
from ..frontend.eager_jit import jitted_eagerly

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim):
    """xi as a (..., ndim) array: a tuple of coordinate arrays is stacked on a last
    axis; a 1-d array is read as a list of points."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*[jnp.asarray(as_operand("RegularGridInterpolator", p))
                                       for p in xi])
        # JAX fills an array of the default float dtype, whatever the parts' dtypes
        return jnp.stack([p.astype(float) for p in parts], axis=-1)
    xi = jnp.asarray(as_operand("RegularGridInterpolator", xi))
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolate `values` given on the grid `points` (a sequence of 1-d arrays, one
    per leading axis of `values`); call it with query points of shape (..., ndim)."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = jnp.asarray(as_operand("RegularGridInterpolator", values))
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        values, = promote_dtypes_inexact("RegularGridInterpolator", values)
        if fill_value is not None:
            fill_value = jnp.asarray(as_operand("RegularGridInterpolator", fill_value))
            if not can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(as_operand("RegularGridInterpolator", p))
                          for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        # a tuple of coordinate arrays travels as a list (the compiled call's operands)
        stacked = isinstance(xi, tuple)
        fill = self.fill_value is not None
        return _evaluate(list(self.grid), self.values, self.fill_value if fill else 0.0,
                         list(xi) if stacked else xi, method, fill, stacked)


@jitted_eagerly("method", "fill", "stacked", nested_lists=True)
def _evaluate(grid, values, fill_value, xi, method, fill, stacked):
    ndim = len(grid)
    xi = _query_points(tuple(xi) if stacked else xi, ndim)
    if xi.shape[-1] != ndim:
        raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                         f"but this RegularGridInterpolator has dimension {ndim}")
    batch = xi.shape[:-1]
    xi = xi.reshape(-1, ndim)
    cells, fractions, outside = _locate(grid, xi)
    if method == "linear":
        result = _linear(values, cells, fractions)
    else:
        result = values[tuple(jnp.where(f <= 0.5, i, i + 1) for i, f in zip(cells, fractions))]
    if fill:
        outside = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
        result = jnp.where(outside, fill_value, result)
    return result.reshape(batch + values.shape[ndim:])


def _locate(grid, xi):
    """Per axis: the cell's lower index, the fraction of the cell the query lies at;
    and whether any coordinate lies outside the grid."""
    cells, fractions = [], []
    outside = jnp.zeros((xi.shape[0],), dtype=bool)
    for x, g in zip(xi.T, grid):
        i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
        cells.append(i)
        fractions.append((x - g[i]) / (g[i + 1] - g[i]))
        outside = outside | (x < g[0]) | (x > g[-1])
    return cells, fractions, outside


def _linear(values, cells, fractions):
    # trailing value axes broadcast against the per-query weights
    spread = (slice(None),) + (None,) * (values.ndim - len(cells))
    total = jnp.asarray(0.0)
    for corner in itertools.product(*[(i, i + 1) for i in cells]):
        weight = jnp.asarray(1.0)
        for index, lower, fraction in zip(corner, cells, fractions):
            weight = weight * ((1 - fraction) if index is lower else fraction)
        total = total + values[corner] * weight[spread]
    return total


def _unflatten(static, children):
    # bypasses __init__: tree operations rebuild with leaves of any kind (axis specs,
    # sentinels), which the constructor's checks would refuse
    grid, values, fill_value = children
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = grid, values, fill_value
    obj.method, obj.bounds_error = static
    return obj


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    _unflatten)
