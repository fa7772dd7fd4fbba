"""The collectives as users call them: `lax.psum`, `pmean`, `all_gather`, ...

Each function takes a pytree of arrays (as JAX's do, where JAX's do) and an axis
name bound by an enclosing `vmap(..., axis_name=...)`. The names are looked up when
the collective is traced: walking from the current trace out through its parents,
the first batching trace with that name says how many members the axis has. That is
both the check JAX makes (an unbound name is a `NameError`) and where the shape-
dependent collectives (`all_gather`, `psum_scatter`, `all_to_all`) get the
`axis_size` their primitive records. A tuple of names is one axis numbered
row-major over them; `axis_index_groups` is taken where JAX takes it (inside a
`shard_map`; JAX's vmap raises `NotImplementedError` for it, and so does this one).
What each primitive means is in
`ir/collective_primitives.py`; how vmap carries it out, in
`transforms/collective_rules.py`.
"""
from __future__ import annotations

import math

import numpy as np
from jax import tree_util

from ..ir import collective_primitives as C
from ..ir import primitives as P
from ..ir.trace import bind, aval_of, current_trace
from ..ir.types import is_inexact, canonical_dtype
from ..transforms.batching import axis_binder, bound_axis_size
from . import lax_ops as lax

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "all_to_all", "axis_index", "axis_size", "bound_axis_env"]


def _bound_size(name) -> int:
    """The size of the axis named `name` around the current trace."""
    size = bound_axis_size(name)
    if size is None:
        raise NameError(f"unbound axis name: {name!r}. Collectives need an enclosing "
                        f"vmap(..., axis_name={name!r}) or shard_map over a mesh axis "
                        f"of that name")
    return size


def bound_axis_env() -> tuple:
    """The named axes bound around the current trace, innermost first, as
    `(name, size)` pairs. Part of `jit`'s cache key: a body traced under one binding
    of a name (its size recorded by `all_gather`, ...) is not reused under another."""
    env, trace = [], current_trace()
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name is not None:
            env.append((name, trace.axis_size))
        env.extend(sorted(getattr(trace, "mesh_axis_sizes", {}).items()))
        trace = trace.parent
    return tuple(env)


def _names(axis_name) -> tuple:
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return tuple(names)


def axis_size(axis_name) -> int:
    """The number of members of the named axis (a product for a tuple of names)."""
    return math.prod(_bound_size(name) for name in _names(axis_name))


def _axis_name_param(fn_name, axis_name):
    """The `axis_name` param: one bound name, or a tuple of several (one axis whose
    members are numbered row-major, the first name major)."""
    names = _names(axis_name)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{fn_name}: axis_name must be a name or a tuple of names, got "
                        f"{axis_name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"{fn_name}: axis_name {axis_name!r} names an axis twice")
    for name in names:
        _bound_size(name)
    return names[0] if len(names) == 1 else names


def _groups(fn_name, axis_index_groups, names, *, summed=False):
    """`axis_index_groups` as the param (a tuple of tuples), after JAX's checks: the
    groups must split the axis into equal parts, and JAX supports them only inside a
    `shard_map` (its vmap raises NotImplementedError, and so does its psum under
    `check_vma=True`)."""
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in group) for group in axis_index_groups)
    for name in names:
        binder = axis_binder(name)
        if name not in getattr(binder, "mesh_axis_sizes", ()):
            raise NotImplementedError(
                f"{fn_name}: axis_index_groups is not supported under vmap (axis "
                f"{name!r}), as in JAX; use it inside a shard_map")
        if summed and binder.check_vma:
            raise NotImplementedError(
                f"{fn_name}: axis_index_groups needs shard_map(..., check_vma=False), as "
                f"in JAX")
    size = axis_size(tuple(names))
    members = sorted(i for group in groups for i in group)
    if members != list(range(size)):
        raise ValueError(f"{fn_name}: axis_index_groups must cover all indices exactly "
                         f"once: {axis_index_groups!r} for the axis {_param(names)!r} of "
                         f"size {size}")
    if len({len(group) for group in groups}) != 1:
        raise ValueError(f"{fn_name}: axis_index_groups must all have the same size, got "
                         f"{axis_index_groups!r}")
    return groups


def _param(names):
    return names[0] if len(names) == 1 else tuple(names)


def _with_groups(params, groups) -> dict:
    # the param is present only when given, so ungrouped collectives print as before
    return params if groups is None else dict(params, axis_index_groups=groups)


def _array(x):
    """A leaf as an operand: arrays, tracers and Python scalars (weakly typed) as they
    are; anything else array-like (lists) through NumPy."""
    if isinstance(x, (bool, int, float, complex)) or hasattr(x, "dtype"):
        return x
    return np.asarray(x)


def _reduction(fn_name, prim, positional):
    def collective(x, axis_name, *, axis_index_groups=None):
        names = _names(axis_name)
        positions = tuple(a for a in names if isinstance(a, int))
        named = tuple(a for a in names if not isinstance(a, int))
        for name in named:
            _bound_size(name)
        if positions and axis_index_groups is not None:
            raise ValueError(f"{fn_name}: axis_index_groups only works over named axes, "
                             f"not the array axes {positions}")
        groups = _groups(fn_name, axis_index_groups, named, summed=prim is C.psum_p)

        def one(leaf):
            leaf = _array(leaf)
            if positions:     # integer "names" are array axes, reduced in place
                ndim = aval_of(leaf).ndim
                leaf = bind(positional, leaf, axes=tuple(sorted(a % ndim for a in positions)))
            return bind(prim, leaf, **_with_groups(dict(axes=named), groups)) if named \
                else leaf
        return tree_util.tree_map(one, x)
    collective.__name__ = fn_name
    collective.__doc__ = (f"`{fn_name}` of each array of the pytree `x` over the named "
                          f"axis (or axes) `axis_name`, as `jax.lax.{fn_name}`.")
    return collective


psum = _reduction("psum", C.psum_p, P.reduce_sum_p)
pmax = _reduction("pmax", C.pmax_p, P.reduce_max_p)
pmin = _reduction("pmin", C.pmin_p, P.reduce_min_p)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of each array of `x` over the named axis (integers give floats)."""
    count = math.prod(_bound_size(a) if not isinstance(a, int) else 1
                      for a in _names(axis_name))
    if axis_index_groups is not None:
        count = len(tuple(axis_index_groups)[0])

    def one(leaf):
        leaf = _array(leaf)
        shape = aval_of(leaf).shape        # integer "names" are array axes
        members = count * math.prod(shape[a] for a in _names(axis_name)
                                    if isinstance(a, int))
        total = psum(leaf, axis_name, axis_index_groups=axis_index_groups)
        if not is_inexact(aval_of(total).dtype):
            total = lax.convert_element_type(total, canonical_dtype(np.float64))
        # A constant of the sum's own dtype, as in JAX: the count is a literal of the
        # program, never a value that derivatives would save as a residual.
        return lax.div(total, np.asarray(members, aval_of(total).dtype))
    return tree_util.tree_map(one, x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every member's `x`, stacked along a new axis `axis` (concatenated along the
    existing axis `axis` if `tiled`), on every member."""
    name = _axis_name_param("all_gather", axis_name)
    groups = _groups("all_gather", axis_index_groups, _names(name))
    size = axis_size(name) if groups is None else len(groups[0])

    def one(leaf):
        leaf = _array(leaf)
        ndim = aval_of(leaf).ndim
        limit = ndim if tiled else ndim + 1
        if not -limit <= axis < limit:
            raise ValueError(f"all_gather: axis {axis} is out of range for an operand of "
                             f"rank {ndim}")
        return bind(C.all_gather_p, leaf, **_with_groups(dict(
            axis_name=name, axis=axis % limit, tiled=bool(tiled), axis_size=size), groups))
    return tree_util.tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
    """The sum of `x` over the axis, of which member k keeps block k along
    `scatter_dimension` (that dimension is removed unless `tiled`)."""
    name = _axis_name_param("psum_scatter", axis_name)
    groups = _groups("psum_scatter", axis_index_groups, _names(name))
    size = axis_size(name) if groups is None else len(groups[0])

    def one(leaf):
        leaf = _array(leaf)
        ndim = aval_of(leaf).ndim
        return bind(C.psum_scatter_p, leaf, **_with_groups(dict(
            axis_name=name, scatter_dimension=scatter_dimension % max(ndim, 1),
            tiled=bool(tiled), axis_size=size), groups))
    return tree_util.tree_map(one, x)


def ppermute(x, axis_name, perm):
    """Send `x` from member `source` to member `destination` for each pair of `perm`;
    a member that receives nothing gets zeros."""
    name = _axis_name_param("ppermute", axis_name)
    size = axis_size(name)
    pairs = tuple((int(s), int(d)) for s, d in perm)
    for pair in pairs:
        if not all(0 <= i < size for i in pair):
            raise ValueError(f"ppermute: perm {list(perm)} names a member outside the axis "
                             f"{name!r} of size {size}")
    return tree_util.tree_map(
        lambda leaf: bind(C.ppermute_p, _array(leaf), axis_name=name, perm=pairs), x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Split `x` along `split_axis` into one block per member, send block j to member
    j, and lay the blocks received along `concat_axis`."""
    name = _axis_name_param("all_to_all", axis_name)
    groups = _groups("all_to_all", axis_index_groups, _names(name))
    size = axis_size(name) if groups is None else len(groups[0])

    def one(leaf):
        leaf = _array(leaf)
        ndim = aval_of(leaf).ndim
        return bind(C.all_to_all_p, leaf, **_with_groups(dict(
            axis_name=name, split_axis=split_axis % ndim, concat_axis=concat_axis % ndim,
            tiled=bool(tiled), axis_size=size), groups))
    return tree_util.tree_map(one, x)


def pshuffle(x, axis_name, perm):
    """`ppermute` with the permutation given by sources: member i receives from
    member `perm[i]`; `perm` must list every member once."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"pshuffle: perm must be a permutation of range({len(perm)}), "
                         f"got {list(perm)}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pbroadcast(x, axis_name, source):
    """Member `source`'s `x` on every member (a collective broadcast): that member's
    row of an `all_gather`. JAX documents it as `psum` of `x` masked to the source;
    the gather gives the same values and is exact for every dtype (no adds of zeros,
    so -0.0 and NaN stay), and every pass already has its rules. (JAX's own primitive
    lowers on accelerators only, and its vmap and transpose rules fail: registered
    as pbroadcast_vmap_and_transpose_fail.)"""
    name = _axis_name_param("pbroadcast", axis_name)
    size = axis_size(name)
    if not isinstance(source, (int, np.integer)) or isinstance(source, bool):
        raise TypeError(f"pbroadcast: source must be an int, the position of a member, "
                        f"got {source!r}")
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast: source {source} is not a member of the axis "
                         f"{name!r} of size {size}")
    return tree_util.tree_map(lambda leaf: lax.index_in_dim(
        all_gather(leaf, name), int(source), axis=0, keepdims=False), x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Exchange the named axis with `x`'s axis `axis` (of the same size): `all_to_all`
    that splits and concatenates along that one axis."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def axis_index(axis_name):
    """This member's position along the named axis, an int32 scalar (for a tuple of
    names, the position on their product, numbered row-major)."""
    return bind(C.axis_index_p, axis_name=_axis_name_param("axis_index", axis_name))
