"""`minijax.scipy.ndimage`: `map_coordinates`, as `jax.scipy.ndimage` has it.

Interpolation of order 0 (nearest) or 1 (linear) at arbitrary coordinates: along
each axis a coordinate gives one or two integer nodes with weights; the result sums
the input at every combination of nodes, weighted by the product of the weights.
Nodes outside the input are brought back in by the boundary mode; 'constant' reads
`cval` there instead. JAX's modes are SciPy's documented ones, which for 'wrap' and
'constant' are SciPy's 'grid-wrap' and 'grid-constant' (SciPy's older modes keep a
bug for compatibility; JAX fixed it in place), and so are minijax's.
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # a triangular wave of period 2(size-1): ... 1 0 1 2 ... size-1 size-2 ...
    half = size - 1
    return jnp.abs((index + half) % (2 * half) - half)


def _reflect(index, size):
    # as mirror, on the half-integer grid: the edge sample repeats (... 1 0 0 1 ...)
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_MODES = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(x):
    # lax.round rounds half away from zero, as SciPy's nearest-neighbour does
    return x if jnp.issubdtype(x.dtype, np.integer) else lax.round(x)


def _nearest_nodes(coordinate):
    return [(_round(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear_nodes(coordinate):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@jitted_eagerly("order", "mode", nested_lists=True)
def _map_coordinates(input, coordinates, order, mode, cval):
    image = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, image.dtype)
    if len(coords) != image.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {image.ndim}")
    fix = _MODES.get(mode)
    if fix is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_MODES)}.")
    if order == 0:
        nodes_of = _nearest_nodes
    elif order == 1:
        nodes_of = _linear_nodes
    else:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coordinate, size in zip(coords, image.shape):
        per_axis.append([(fix(index, size),
                          (index >= 0) & (index < size) if mode == "constant" else None,
                          weight)
                         for index, weight in nodes_of(coordinate)])
    total = None
    for combination in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in combination)
        value = image[indices]
        inside = [ok for _, ok, _ in combination if ok is not None]
        if inside:
            all_inside = inside[0]
            for ok in inside[1:]:
                all_inside = all_inside & ok
            value = jnp.where(all_inside, value, cval)
        weight = combination[0][2]
        for _, _, w in combination[1:]:
            weight = weight * w
        term = weight * value
        total = term if total is None else total + term
    if jnp.issubdtype(image.dtype, np.integer):
        total = _round(total)
    return total.astype(image.dtype)


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
    """The input interpolated at `coordinates` (a sequence of input.ndim arrays of one
    shape): order 0 (nearest) or 1 (linear); `mode` one of 'constant', 'nearest',
    'wrap', 'mirror', 'reflect'; `cval` fills outside the input for 'constant'."""
    return _map_coordinates(input, coordinates, order, mode, cval)
