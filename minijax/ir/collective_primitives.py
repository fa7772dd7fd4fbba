"""Collectives: operations that combine the values of every member of a named axis.

A *named axis* is a set of program instances running side by side: the examples of a
`vmap(..., axis_name="i")`, or the shards of a `shard_map` mesh axis. Inside the
program each instance sees only its own value; a collective lets it see the others':

    psum[axes=('i',)]            x -> the sum of x over the axis, on every member
    pmax / pmin[axes=...]        x -> the max / min over the axis
    all_gather[axis_name axis tiled axis_size]
                                 x -> every member's x, stacked along `axis`
                                      (concatenated if `tiled`)
    psum_scatter[axis_name scatter_dimension tiled axis_size]
                                 x -> member k's block of the sum of x
    ppermute[axis_name perm]     x -> for each (source, destination) pair of `perm`,
                                      destination gets source's x; others get zeros
    all_to_all[axis_name split_axis concat_axis tiled axis_size]
                                 x -> block j of member k's x goes to member j,
                                      which lays the blocks it gets along concat_axis
    axis_index[axis_name]        () -> i32[] this member's position on the axis

The names are strings in the params, so the text form prints them
(`psum[axes=('i',)] x`). `axis_name` is one name, or a tuple of two or more names
that act as one axis whose members are numbered row-major, the first name major
(`axis_index[axis_name=('x', 'y')]` on a 4 x 2 mesh is `2 * x + y`); its size is then
the product of theirs.

An optional param `axis_index_groups` (`psum`, `pmax`, `pmin`, `all_gather`,
`psum_scatter`, `all_to_all`; present only when given) splits the axis into groups of
equal size, e.g. `((0, 1), (2, 3))`: the collective then combines the members of each
group separately, and `axis_size` is the size of one group.

The size of an axis is not part of the IR -- it is whatever the transformation that
binds the name says -- except where the result's *shape* depends on it (`all_gather`,
`psum_scatter`, `all_to_all`): those carry `axis_size` in their params so that their
type rule, like every other, needs only the operands.

No pass here gives a name its meaning: `vmap` rewrites collectives on the axis it
binds into ordinary array ops (`transforms/collective_rules.py`), and inside a
`shard_map` they lower to JAX's collectives over the mesh (`backends/xla_collectives.py`).
"""
from __future__ import annotations

import numpy as np

from .types import ShapedArray
from .registry import Primitive, type_rules, _array, _fail

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "psum_scatter_p", "ppermute_p",
           "all_to_all_p", "axis_index_p", "collective_primitives", "axis_names_of",
           "reductions", "as_names", "check_groups"]


def _check_name(prim_name, name):
    if isinstance(name, tuple) and len(name) >= 2:
        for one in name:
            _check_name(prim_name, one)
        if len(set(name)) != len(name):
            _fail(prim_name, f"axis names {name} name an axis twice")
        return
    if not isinstance(name, str) or not name:
        _fail(prim_name, f"an axis name must be a non-empty string or a tuple of two or "
              f"more of them, got {name!r}")


def check_groups(prim_name, groups, axis_size=None):
    """`axis_index_groups`: None, or a tuple of equally long tuples of distinct member
    indices (that they cover the axis is checked where its size is known)."""
    if groups is None:
        return
    if (not isinstance(groups, tuple) or not groups
            or not all(isinstance(g, tuple) and g and all(type(i) is int and i >= 0
                                                         for i in g) for g in groups)):
        _fail(prim_name, f"axis_index_groups must be a tuple of non-empty tuples of "
              f"member indices, got {groups!r}")
    if len({len(g) for g in groups}) != 1:
        _fail(prim_name, f"axis_index_groups {groups} must all have the same size")
    members = [i for g in groups for i in g]
    if len(set(members)) != len(members):
        _fail(prim_name, f"axis_index_groups {groups} name a member twice")
    if axis_size is not None and axis_size != len(groups[0]):
        _fail(prim_name, f"axis_size {axis_size} is not the size {len(groups[0])} of one "
              f"of the axis_index_groups {groups}")


def _check_size(prim_name, axis_size):
    if not isinstance(axis_size, int) or axis_size < 1:
        _fail(prim_name, f"axis_size must be a positive int, got {axis_size!r}")


def _reduction(name):
    prim = Primitive(name)

    def rule(x, *, axes, axis_index_groups=None):
        _array(name, x)
        check_groups(name, axis_index_groups)
        if not isinstance(axes, tuple) or not axes:
            _fail(name, f"axes must be a non-empty tuple of axis names, got {axes!r}")
        for axis in axes:
            _check_name(name, axis)
        if len(set(axes)) != len(axes):
            _fail(name, f"axes {axes} name an axis twice")
        return [x]
    type_rules[prim] = rule
    return prim


psum_p = _reduction("psum")
pmax_p = _reduction("pmax")
pmin_p = _reduction("pmin")
reductions = (psum_p, pmax_p, pmin_p)

all_gather_p = Primitive("all_gather")


def _all_gather_rule(x, *, axis_name, axis, tiled, axis_size, axis_index_groups=None):
    _array("all_gather", x)
    _check_name("all_gather", axis_name)
    _check_size("all_gather", axis_size)
    check_groups("all_gather", axis_index_groups, axis_size)
    if tiled:
        if not 0 <= axis < x.ndim:
            _fail("all_gather", f"axis {axis} is out of range for a tiled gather of {x}")
        shape = x.shape[:axis] + (x.shape[axis] * axis_size,) + x.shape[axis + 1:]
    else:
        if not 0 <= axis <= x.ndim:
            _fail("all_gather", f"axis {axis} is out of range for a gather of {x}")
        shape = x.shape[:axis] + (axis_size,) + x.shape[axis:]
    return [x.update(shape=shape)]


type_rules[all_gather_p] = _all_gather_rule
psum_scatter_p = Primitive("psum_scatter")


def _psum_scatter_rule(x, *, axis_name, scatter_dimension, tiled, axis_size,
                      axis_index_groups=None):
    _array("psum_scatter", x)
    _check_name("psum_scatter", axis_name)
    _check_size("psum_scatter", axis_size)
    check_groups("psum_scatter", axis_index_groups, axis_size)
    d = scatter_dimension
    if not 0 <= d < x.ndim:
        _fail("psum_scatter", f"scatter_dimension {d} is out of range for {x}")
    if tiled:
        if x.shape[d] % axis_size:
            _fail("psum_scatter", f"dimension {d} of {x} must be divisible by the axis "
                  f"size {axis_size}")
        shape = x.shape[:d] + (x.shape[d] // axis_size,) + x.shape[d + 1:]
    else:
        if x.shape[d] != axis_size:
            _fail("psum_scatter", f"dimension {d} of {x} must equal the axis size "
                  f"{axis_size} (or pass tiled=True)")
        shape = x.shape[:d] + x.shape[d + 1:]
    return [x.update(shape=shape)]


type_rules[psum_scatter_p] = _psum_scatter_rule
ppermute_p = Primitive("ppermute")


def _ppermute_rule(x, *, axis_name, perm):
    _array("ppermute", x)
    _check_name("ppermute", axis_name)
    if not isinstance(perm, tuple) or not all(
            isinstance(p, tuple) and len(p) == 2 and all(isinstance(i, int) for i in p)
            for p in perm):
        _fail("ppermute", f"perm must be a tuple of (source, destination) int pairs, "
              f"got {perm!r}")
    sources = [s for s, _ in perm]
    destinations = [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        _fail("ppermute", f"perm {perm} sends from or to one member twice")
    return [x]


type_rules[ppermute_p] = _ppermute_rule
all_to_all_p = Primitive("all_to_all")


def all_to_all_shape(shape, split_axis, concat_axis, tiled, axis_size):
    if tiled:
        out = list(shape)
        out[split_axis] //= axis_size
        out[concat_axis] *= axis_size
        return tuple(out)
    rest = shape[:split_axis] + shape[split_axis + 1:]
    return rest[:concat_axis] + (axis_size,) + rest[concat_axis:]


def _all_to_all_rule(x, *, axis_name, split_axis, concat_axis, tiled, axis_size,
                     axis_index_groups=None):
    _array("all_to_all", x)
    _check_name("all_to_all", axis_name)
    _check_size("all_to_all", axis_size)
    check_groups("all_to_all", axis_index_groups, axis_size)
    if not 0 <= split_axis < x.ndim:
        _fail("all_to_all", f"split_axis {split_axis} is out of range for {x}")
    if not 0 <= concat_axis < x.ndim:
        _fail("all_to_all", f"concat_axis {concat_axis} is out of range for {x}")
    size = x.shape[split_axis]
    if (tiled and size % axis_size) or (not tiled and size != axis_size):
        _fail("all_to_all", f"split_axis {split_axis} of {x} has size {size}, which must "
              f"{'be divisible by' if tiled else 'equal'} the axis size {axis_size}")
    return [x.update(shape=all_to_all_shape(x.shape, split_axis, concat_axis, tiled,
                                            axis_size))]


type_rules[all_to_all_p] = _all_to_all_rule
axis_index_p = Primitive("axis_index")


def _axis_index_rule(*, axis_name):
    _check_name("axis_index", axis_name)
    return [ShapedArray((), np.dtype(np.int32))]


type_rules[axis_index_p] = _axis_index_rule

collective_primitives = (psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p,
                         ppermute_p, all_to_all_p, axis_index_p)


def as_names(axis_name) -> tuple:
    """An `axis_name` param (one name or a tuple of them) as a tuple of names."""
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def axis_names_of(prim, params) -> tuple:
    """The axis names a collective equation works over."""
    return params["axes"] if prim in reductions else as_names(params["axis_name"])
