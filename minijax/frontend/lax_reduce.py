"""`lax.reduce` and `lax.reduce_xor`: generic reductions written with minijax's
primitives.

`reduce` turns JAX's monoids (`add`/`mul`/`max`/`min`/`bitwise_and/or` with their
identity as init) into one reduction primitive; any other computation is applied as
a balanced tree over the reduced axes, then once with the init value. JAX hands such
a computation to XLA, whose order is unspecified: it must be associative and
commutative either way. `reduce_xor` is the tree with `bitwise_xor`.

JAX's `reduce` is one primitive, compiled once per (computation, operand types), so an
eager call of the tree is one cached compiled program here too (`_reduce_tree`, a
`jitted_eagerly` function with the computation static), not one per operation: the
`reduce_generic` case of `tests/test_lax_more.py` (four reductions) makes 4 programs,
as JAX, where it made 55, and 2 on a repeat call (JAX 3: its lambdas are new). The
program is keyed by the computation as JAX keys it (its `==`: identity for a
function), except that lambdas made from one code that read no global and close over
Python scalars only share one (`_Computation`): a lambda written in the call, new on
every call, does not trace and compile on every call as it does in JAX (13 us a call;
JAX 27 ms; op by op before 0.11 ms). The computations stay referenced by
`minijax.jit`'s cache until `minijax.clear_caches()` (and by JAX's bounded compile
caches until `jax.clear_caches()`, as JAX's own). Traced (`make_jaxpr`, `jit`), the
tree's equations are recorded inline, as before. Figures:
`minijax/frontend/lax_extras.py`'s table (`benchmarks/eager_lax_programs.py`).
"""
from __future__ import annotations

import math
import types
from typing import Callable, Sequence

import numpy as np
from jax import tree_util

from ..ir import primitives as P
from ..ir.trace import bind, aval_of, Tracer
from ..ir.types import canonical_dtype, is_inexact, is_integer
from . import lax_ops as lax
from .eager_jit import jitted_eagerly
from .lax_extras import _canonical_axis


def _monoid(computation, init):
    """The reduction primitive for `computation` when it is one of lax's monoids and
    `init` (a concrete scalar) its identity, as JAX recognises them; else None."""
    if isinstance(init, Tracer):
        return None
    value = np.asarray(init)
    if value.shape != ():
        return None
    dtype = canonical_dtype(aval_of(init).dtype)
    intlike = dtype == np.bool_ or is_integer(dtype)
    if computation is lax.add and value == 0:
        return P.reduce_sum_p
    if computation is lax.mul and value == 1:
        return P.reduce_prod_p
    if computation is lax.max and value == _max_identity(dtype):
        return P.reduce_max_p
    if computation is lax.min and value == _min_identity(dtype):
        return P.reduce_min_p
    if intlike and computation is lax.bitwise_or and value == _or_identity(dtype):
        return P.reduce_or_p
    if intlike and computation is lax.bitwise_and and value == ~_or_identity(dtype):
        return P.reduce_and_p
    return None


def _max_identity(dtype):
    if is_inexact(dtype):
        return -np.inf
    return np.iinfo(dtype).min if is_integer(dtype) else False


def _min_identity(dtype):
    if is_inexact(dtype):
        return np.inf
    return np.iinfo(dtype).max if is_integer(dtype) else True


def _or_identity(dtype):
    return np.zeros((), dtype)[()]


def _tree_reduce(combine, flat, inits, dimensions):
    """Combine the entries of the reduced axes pairwise, halving their number each
    round (an odd one out waits for the next round), then combine the init value
    with the result once, as XLA on CPU does."""
    ndim = aval_of(flat[0]).ndim
    kept = [d for d in range(ndim) if d not in dimensions]
    shape = aval_of(flat[0]).shape
    count = math.prod(shape[d] for d in dimensions)
    rest = tuple(shape[d] for d in kept)
    fill = [lax.broadcast_in_dim(lax.convert_element_type(i, aval_of(x).dtype), rest, ())
            for i, x in zip(inits, flat)]
    if count == 0:
        return fill
    rows = [lax.reshape(lax.transpose(x, tuple(dimensions) + tuple(kept)), (count,) + rest)
            for x in flat]
    while count > 1:
        half = count // 2
        paired = combine([lax.slice_in_dim(r, 0, half, 1, 0) for r in rows],
                         [lax.slice_in_dim(r, half, 2 * half, 1, 0) for r in rows])
        if count % 2:
            paired = [lax.concatenate([p, lax.slice_in_dim(r, 2 * half, count, 1, 0)], 0)
                      for p, r in zip(paired, rows)]
        rows, count = paired, half + count % 2
    return combine(fill, [lax.squeeze(r, (0,)) for r in rows])


def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]):
    """Reduce `operands` (a pytree of arrays of one shape) over `dimensions` with
    `computation`, a function of two such pytrees, starting from `init_values`."""
    flat, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(flat) != len(inits):
        raise ValueError(f"Must have same total number of operands as init_values:  "
                         f"{len(flat)} vs. {len(inits)}")
    ndim = aval_of(flat[0]).ndim
    dimensions = tuple(sorted(_canonical_axis(d, ndim, "dimension") for d in dimensions))
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: duplicate dimensions {dimensions}")
    prim = _monoid(computation, inits[0]) if len(flat) == 1 else None
    if prim is not None:
        x = flat[0]
        weak = aval_of(x).weak_type and aval_of(inits[0]).weak_type
        out = bind(prim, x, axes=dimensions)
        return tree_util.tree_unflatten(tree, [lax.convert_element_type(
            out, aval_of(out).dtype, weak_type=weak)])

    for x, init in zip(flat, inits):
        init_aval = aval_of(init)
        if not init_aval.weak_type and init_aval.dtype != aval_of(x).dtype:
            raise TypeError(f"reduce operand dtypes should match corresponding initial "
                            f"value dtypes, got {aval_of(x).dtype} and {init_aval.dtype}")
    return tree_util.tree_unflatten(tree, _reduce_tree(
        *flat, *inits, computation=_Computation(computation), tree=tree,
        dimensions=dimensions))


_IMMUTABLE_SCALARS = (bool, int, float, complex, str, type(None))


class _Computation:
    """A reduction's computation as a static argument of `_reduce_tree`: equal to
    another as JAX compares them (the function's own `==`, identity for functions),
    and also where both are the same code closing over nothing but equal Python
    scalars and reading no global name -- a lambda written in the call, made anew
    each time, such as `lambda a, b: a + b * a`. Such a function computes the same
    as any other made from its code, so calls share one program where JAX traces and
    compiles on every call (about 30 ms each); any other fresh function compiles per
    call, as in JAX."""
    __slots__ = ("fn", "_key")

    def __init__(self, fn):
        self.fn = fn
        self._key = _pure_code_key(fn)

    def __eq__(self, other):
        if not isinstance(other, _Computation):
            return NotImplemented
        if self._key is not None:
            return self._key == other._key
        return other._key is None and self.fn == other.fn

    def __hash__(self):
        return hash(self._key if self._key is not None else self.fn)


def _pure_code_key(fn):
    """(code, closed-over and default values) of a plain function that reads no global
    or attribute name, defines no nested function and holds only Python scalars;
    else None."""
    if type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    if code.co_names or any(isinstance(c, types.CodeType) for c in code.co_consts):
        return None
    try:
        values = [cell.cell_contents for cell in fn.__closure__ or ()]
    except ValueError:         # a cell not yet filled
        return None
    values += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    if not all(type(v) in _IMMUTABLE_SCALARS for v in values):
        return None
    # (The repr tells -0.0 from 0.0, which compare equal.)
    return code, tuple((type(v), v, repr(v)) for v in values)


@jitted_eagerly("computation", "tree", "dimensions")
def _reduce_tree(*operands_then_inits, computation, tree, dimensions):
    """`reduce`'s tree of `computation` over checked, flattened operands and their
    init values: one cached program per (computation, tree, avals, dimensions) when
    called eagerly, as JAX's `reduce` primitive is compiled once per computation."""
    half = len(operands_then_inits) // 2
    flat, inits = operands_then_inits[:half], operands_then_inits[half:]
    computation = computation.fn

    def combine(a, b):
        out = computation(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"reduce: computation must return the operands' structure "
                            f"{tree}, got {out_tree}")
        return out_flat
    outs = _tree_reduce(combine, flat, inits, dimensions)
    # As JAX's rule has it: weak only where the operand and its init value both are.
    return [lax.convert_element_type(out, aval_of(out).dtype, weak_type=aval_of(x).weak_type
                                     and aval_of(init).weak_type)
            for out, x, init in zip(outs, flat, inits)]


@jitted_eagerly("axes")
def reduce_xor(operand, axes: Sequence[int]):
    """The bitwise xor of the entries along `axes` (booleans: odd parity)."""
    dtype = aval_of(operand).dtype
    if not (dtype == np.bool_ or is_integer(dtype)):
        raise TypeError(f"reduce_xor does not accept dtype {np.dtype(dtype).name}")
    return reduce(operand, np.zeros((), dtype), lax.bitwise_xor, axes)
