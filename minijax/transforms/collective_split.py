"""Collectives over a tuple of axis names, split into collectives over one name each.

`all_gather(x, ('i', 'j'))` treats the axes 'i' and 'j' as one axis whose members are
numbered row-major (member `(a, b)` is number `a * size_j + b`). Under `vmap` each name
is bound by its own trace, and a trace can only rewrite the collectives over its own
name (`collective_rules.py`). So when a trace meets a collective over several names,
it binds these equivalent programs instead, made of collectives over one name each
(the one over its own name it rewrites at once, the others reach the traces that bind
them). The lowering keeps the tuple: JAX's collectives take it as it is.

    axis_index((a, b))      axis_index(a) * size_b + axis_index(b)
    all_gather(x, (a, b))   gather over b, then over a, at the same axis: the blocks
                            arrive as (size_a, size_b, ...), which is row-major order
    psum_scatter            scatter over a, then over b, tiled: a keeps its chunk,
                            b its block within the chunk
    all_to_all              the split axis cut into (size_a, size_b, block); an
                            untiled all_to_all over each name exchanges its sub-axis,
                            which then numbers the senders; those move to the concat axis
    ppermute                the gathered value of every member, permuted as the pairs
                            say, of which each member keeps its own row

The sizes of the names come from the traces that bind them (`bound_axis_size`).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import collective_primitives as C
from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from .ad_util import add, mul, const_like, reshape, zeros
from .batching import BatchingError, bound_axis_size, moveaxis

__all__ = ["split_rules", "pick_rows", "bound_sizes"]


def pick_rows(x, sources):
    """Rows `sources[0], sources[1], ...` of `x` along axis 0 (zeros for None)."""
    shape = aval_of(x).shape
    rows = []
    for source in sources:
        if source is None:
            rows.append(zeros(aval_of(x).update(shape=(1,) + shape[1:])))
        else:
            rows.append(bind(P.slice_p, x, start_indices=(source,) + (0,) * (len(shape) - 1),
                             limit_indices=(source + 1,) + shape[1:], strides=None))
    return bind(P.concatenate_p, *rows, dimension=0)


def bound_sizes(names) -> list:
    """The sizes of the axes `names`, from the traces that bind them."""
    sizes = [bound_axis_size(name) for name in names]
    unbound = [n for n, s in zip(names, sizes) if s is None]
    if unbound:
        raise BatchingError(f"the axis names {unbound} of a collective over {names} are "
                            f"not bound around it")
    return sizes


def _axis_index(*, axis_name):
    total, stride = None, 1
    for name, size in reversed(list(zip(axis_name, bound_sizes(axis_name)))):
        term = bind(C.axis_index_p, axis_name=name)
        if stride != 1:
            term = mul(term, const_like(term, stride))
        total = term if total is None else add(total, term)
        stride *= size
    return total


def _all_gather(x, *, axis_name, axis, tiled, axis_size):
    sizes = bound_sizes(axis_name)
    if math.prod(sizes) != axis_size:
        raise BatchingError(f"all_gather was traced for axes of size {axis_size}, but "
                            f"{axis_name} have sizes {sizes}")
    shape = aval_of(x).shape
    y = x
    for name, size in reversed(list(zip(axis_name, sizes))):
        y = bind(C.all_gather_p, y, axis_name=name, axis=axis, tiled=False, axis_size=size)
    if tiled:
        return reshape(y, shape[:axis] + (axis_size * shape[axis],) + shape[axis + 1:])
    return reshape(y, shape[:axis] + (axis_size,) + shape[axis:])


def _psum_scatter(x, *, axis_name, scatter_dimension, tiled, axis_size):
    d, shape = scatter_dimension, aval_of(x).shape
    y = x if tiled else reshape(x, shape[:d] + (shape[d], 1) + shape[d + 1:])
    for name, size in zip(axis_name, bound_sizes(axis_name)):
        y = bind(C.psum_scatter_p, y, axis_name=name, scatter_dimension=d, tiled=True,
                 axis_size=size)
    return y if tiled else reshape(y, shape[:d] + shape[d + 1:])


def _all_to_all(x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    sizes = bound_sizes(axis_name)
    s, c, shape = split_axis, concat_axis, aval_of(x).shape
    block = shape[s] // axis_size
    y = reshape(x, shape[:s] + tuple(sizes) + (block,) + shape[s + 1:])
    for i, (name, size) in enumerate(zip(axis_name, sizes)):
        # sub-axis s + i: which member along `name` a block goes to -> came from
        y = bind(C.all_to_all_p, y, axis_name=name, split_axis=s + i, concat_axis=s + i,
                 tiled=False, axis_size=size)
    y = reshape(y, shape[:s] + (axis_size, block) + shape[s + 1:])   # senders at s
    if not tiled:
        y = reshape(y, shape[:s] + (axis_size,) + shape[s + 1:])
        return moveaxis(y, s, c)
    concat_in_y = c if c < s else c + 1                    # the concat axis in y
    target = concat_in_y - 1 if concat_in_y > s else concat_in_y
    y = moveaxis(y, s, target)                             # senders just before it
    out = aval_of(y).shape
    return reshape(y, out[:target] + (out[target] * out[target + 1],) + out[target + 2:])


def _ppermute(x, *, axis_name, perm):
    n = math.prod(bound_sizes(axis_name))
    shape = aval_of(x).shape
    everyone = _all_gather(x, axis_name=axis_name, axis=0, tiled=False, axis_size=n)
    source_of = {destination: source for source, destination in perm}
    received = pick_rows(everyone, [source_of.get(i) for i in range(n)])
    me = _axis_index(axis_name=axis_name)
    starts = [me] + [np.int32(0)] * len(shape)
    mine = bind(P.dynamic_slice_p, received, *starts, slice_sizes=(1,) + shape)
    return reshape(mine, shape)


split_rules = {
    C.axis_index_p: _axis_index,
    C.all_gather_p: _all_gather,
    C.psum_scatter_p: _psum_scatter,
    C.all_to_all_p: _all_to_all,
    C.ppermute_p: _ppermute,
}
