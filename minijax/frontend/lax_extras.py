"""More of `jax.lax`: selection, scans, generic reductions and shape helpers.

Two are primitives of their own (`ir/selection_primitives.py`): `top_k` and
`optimization_barrier`. Everything else is what JAX's own definition is, or means,
written with minijax's primitives, so every transformation applies:

* `approx_max_k` / `approx_min_k` -- `top_k` (of `-x` for the minimum): exact, which
  is what JAX computes on CPU and GPU.
* `associative_scan` -- JAX's parallel prefix scan (combine odd/even pairs, recurse on
  the half, interleave), step for step, so sums come out in JAX's order.
* `cumlogsumexp` -- that scan with a stable log-add-exp whose derivative is JAX's
  (each input's weight is its share exp(x_i - out) of the sum).
* `reduce`, `reduce_xor` -- in `lax_reduce.py`.
* `split`, `tile`, `stack`, `unstack`, `dynamic_index_in_dim`,
  `dynamic_update_index_in_dim`, `collapse`, `broadcast_to_rank`, `batch_matmul`,
  `index_take`, `scatter_sub`, `scatter_apply`, `empty`, `clz`, `mulhi`: slices,
  broadcasts, reshapes, a dot_general, a gather, a scatter, zeros and bit operations
  (mulhi multiplies half-width pieces), as JAX's docs define each.

Those that are one primitive in JAX (`cumlogsumexp`, `clz`, `mulhi`, `approx_min_k`,
`stack`, `empty`; `reduce` and `reduce_xor` in `lax_reduce.py`) run an eager call as
one cached compiled program (`jitted_eagerly`), as JAX's eager primitive does, instead
of dispatching each operation of the composition on its own; so do the two that JAX
jits (`dynamic_index_in_dim`, `dynamic_update_index_in_dim`), and `index_take` (five
programs in JAX). Traced, each records its operations inline (`make_jaxpr` shows no
nested call).

Programs of one eager call (first, repeat) and microseconds per repeated call, minijax
and JAX (`PYTHONPATH=tests:benchmarks .venv/bin/python benchmarks/eager_lax_programs.py
[--time]`, 2-core shared machine, CPU, jax 0.10.2; two runs agreed within 3 %; "main"
is the same script on the code before these changes):

    call                           programs        us per call         main
                                 minijax  jax    minijax   jax  ratio  programs  ratio
    reduce, one computation        1 0    1 0      13.7   42.6  0.32    15 0     2.34
    reduce, lambda in the call     1 0    1 1       13 *  27500 0.001   15 0     0.01
    approx_min_k                   1 0    1 0       9.1   14.8  0.61     3 0     1.52
    stack                          1 0    2 0       8.6   38.5  0.22     2 0     0.61
    index_take                     1 0    5 0      12.0   85.8  0.14     7 0     1.43
    empty                          1 0    1 0       4.6    7.6  0.60     2 0     1.82
    imported program of 7 JAX
      primitives minijax composes  (`docs/cross_check.md`)   58.6  129.4  0.45     6.53

(* the function's only key; a second static value of any `minijax.jit` function misses
JAX's C++ cache, about 45 us more a call: reported to the owner of frontend/jit.py.)
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Callable, Sequence

import numpy as np
from jax import lax as _jax_lax
from jax import tree_util

from ..ir import random_primitives as R
from ..ir import selection_primitives as SEL
from ..ir.dtype_args import canonical_dtype_argument
from ..ir.elementwise import convert_element_type_p
from ..ir.trace import Tracer, bind, aval_of, current_trace, stages_a_program
from ..ir.types import is_complex, is_float, is_integer
from ..transforms.custom_derivatives import custom_jvp
from . import int_params as ip, lax_ops as lax
from .eager_jit import jitted_eagerly

# JAX's own names for these, as `Precision` is (lax_ops.py): values from either library
# mean the same thing to both.
GatherScatterMode = _jax_lax.GatherScatterMode
DotDimensionNumbers = _jax_lax.DotDimensionNumbers


def _canonical_axis(axis, ndim, what="axis"):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what} {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


# -- selection -----------------------------------------------------------------------------

def top_k(operand, k: int, *, axis: int = -1, is_stable: bool = True):
    """The `k` largest entries along `axis`, in descending order, and their indices;
    with `is_stable=False` equal entries may come in any order (JAX >= 0.11's param)."""
    aval = aval_of(operand)
    if is_complex(aval.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    k = ip.index("top_k", "k", k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = _canonical_axis(axis, aval.ndim)
    if k > aval.shape[axis]:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; "
                         f"got k={k} with shape={list(aval.shape)} and axis={axis}")
    return list(bind(SEL.top_k_p, operand, k=k, axis=axis,
                     is_stable=bool(is_stable)))  # a list, as JAX's


def _approx_k(operand, k, reduction_dimension, largest):
    k = ip.index("approx_max_k", "k", k)
    if k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    if largest:
        return top_k(operand, k, axis=reduction_dimension)
    values, indices = top_k(lax.neg(operand), k, axis=reduction_dimension)
    return [lax.neg(values), indices]


def approx_max_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """The `k` largest entries along `reduction_dimension` and their indices. JAX's
    approximation is exact off TPU, and so is this (`recall_target` cannot be missed)."""
    return _approx_k(operand, k, reduction_dimension, True)


@jitted_eagerly("k", "reduction_dimension", "recall_target",
                "reduction_input_size_override", "aggregate_to_topk")
def approx_min_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """The `k` smallest entries along `reduction_dimension` and their indices (exact)."""
    return _approx_k(operand, k, reduction_dimension, False)


def optimization_barrier(operand, /):
    """`operand` (any pytree of arrays) unchanged; XLA may not move computation across."""
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    return tree_util.tree_unflatten(tree, bind(SEL.optimization_barrier_p, *leaves))


# -- associative scans -------------------------------------------------------------------

def _interleave(evens, odds, axis):
    """e0 o0 e1 o1 ... along `axis` (evens has as many entries as odds, or one more):
    each is spread out with zeros between its entries, and the two are added."""
    n_even, n_odd = aval_of(evens).shape[axis], aval_of(odds).shape[axis]
    ndim = aval_of(evens).ndim
    even_pad, odd_pad = [(0, 0, 0)] * ndim, [(0, 0, 0)] * ndim
    even_pad[axis] = (0, 1 if n_even == n_odd else 0, 1)
    odd_pad[axis] = (1, 0 if n_even == n_odd else 1, 1)
    combine = lax.bitwise_or if aval_of(evens).dtype == np.bool_ else lax.add
    zero = np.zeros((), aval_of(evens).dtype)
    return combine(lax.pad(evens, zero, even_pad), lax.pad(odds, zero, odd_pad))


def _prefix_scan(combine, elems, axis):
    n = aval_of(elems[0]).shape[axis]
    if n < 2:
        return elems
    pairs = combine([lax.slice_in_dim(e, 0, n - 1, 2, axis) for e in elems],
                    [lax.slice_in_dim(e, 1, n, 2, axis) for e in elems])
    odds = _prefix_scan(combine, pairs, axis)
    later = [lax.slice_in_dim(e, 2, n, 2, axis) for e in elems]
    if n % 2 == 0:
        evens = combine([lax.slice_in_dim(o, 0, aval_of(o).shape[axis] - 1, 1, axis)
                         for o in odds], later)
    else:
        evens = combine(odds, later)
    evens = [lax.concatenate([lax.slice_in_dim(e, 0, 1, 1, axis), r], axis)
             for e, r in zip(elems, evens)]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds)]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """All prefix combinations `fn(...fn(fn(e0, e1), e2)..., ei)` along `axis`, for an
    associative `fn` on pytrees of arrays, in O(log n) rounds of vectorised calls."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        return elems
    axis = _canonical_axis(axis, aval_of(leaves[0]).ndim)
    n = aval_of(leaves[0]).shape[axis]
    if any(aval_of(x).shape[axis] != n for x in leaves[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[aval_of(x).shape for x in leaves]})")
    if reverse:
        leaves = [lax.rev(x, [axis]) for x in leaves]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return tree_util.tree_leaves(out)
    scanned = _prefix_scan(combine, leaves, axis)
    if reverse:
        scanned = [lax.rev(x, [axis]) for x in scanned]
    return tree_util.tree_unflatten(tree, scanned)


@custom_jvp
def _logaddexp(x1, x2):
    delta = lax.sub(x1, x2)
    safe = lax.add(lax.max(x1, x2), lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    # Equal infinities make delta NaN; their sum is then the answer.
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), safe)


def _inf_to_zero(x):
    return lax.select(lax.eq(x, lax.full_like(x, np.inf)), lax.full_like(x, 0), x)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp(x1, x2)
    share = lambda x: lax.exp(lax.sub(_inf_to_zero(x), _inf_to_zero(out)))  # noqa: E731
    return out, lax.add(lax.mul(t1, share(x1)), lax.mul(t2, share(x2)))


@jitted_eagerly("axis", "reverse")
def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """log(cumsum(exp(operand))) along `axis`, computed without overflow."""
    dtype = aval_of(operand).dtype
    if not is_float(dtype):
        raise TypeError(f"cumlogsumexp does not accept dtype {np.dtype(dtype).name}. "
                        f"Accepted dtypes are subtypes of floating.")
    # (JAX takes an integral float axis here, as in cumsum.)
    return associative_scan(_logaddexp, operand, reverse=reverse, axis=int(axis))


# -- shapes -----------------------------------------------------------------------------------

def split(operand, sizes: Sequence[int], axis: int = 0):
    """`operand` cut along `axis` into consecutive pieces of the given sizes."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(axis, len(shape))
    sizes = list(ip.indices("split", "sizes", sizes))
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    if sum(sizes) != shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(shape)}")
    starts = np.cumsum([0] + sizes).tolist()
    return [lax.slice_in_dim(operand, start, start + size, 1, axis)
            for start, size in zip(starts, sizes)]


def tile(operand, reps: Sequence[int]):
    """`operand` repeated `reps[i]` times along each axis i (one broadcast, one reshape)."""
    shape = aval_of(operand).shape
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={len(shape)}.")
    if any(r < 0 for r in reps):
        raise ValueError(f"reps must be non-negative, got {reps}")
    interleaved = tuple(n for pair in zip(reps, shape) for n in pair)
    spread = lax.broadcast_in_dim(operand, interleaved, tuple(range(1, 2 * len(shape), 2)))
    return lax.reshape(spread, tuple(r * n for r, n in zip(reps, shape)))


def stack(operands: Sequence, axis: int = 0):
    """Arrays of one shape stacked along a new axis `axis`."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack needs at least one array")
    return _stack(*operands, axis=axis)


@jitted_eagerly("axis")
def _stack(*operands, axis):
    shapes = [aval_of(x).shape for x in operands]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(map(str, shapes))}.")
    axis = _canonical_axis(axis, len(shapes[0]) + 1)
    return lax.concatenate([lax.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis: int = 0):
    """The slices of `x` along `axis`, as a tuple of arrays of one rank less."""
    shape = aval_of(x).shape
    axis = _canonical_axis(axis, len(shape))
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


# JAX jits these two compositions of a dynamic slice (its other `*_in_dim` helpers
# are plain Python), so they live here, with the other jitted compositions. Jitted,
# JAX's index is a traced value even when the caller passes a Python int: a negative
# one with allow_negative_indices=False is clamped to 0, not the static ValueError of
# `dynamic_slice_in_dim`; `_traced_like` keeps that when minijax traces the body
# with the int itself.
@jitted_eagerly("axis", "keepdims", "allow_negative_indices")
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    out = lax.dynamic_slice_in_dim(operand, _traced_like(index, allow_negative_indices),
                                   1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else lax.squeeze(out, (axis,))


@jitted_eagerly("axis", "allow_negative_indices")
def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
    if aval_of(update).ndim == aval_of(operand).ndim - 1:
        update = lax.expand_dims(update, (axis,))
    return lax.dynamic_update_slice_in_dim(
        operand, update, _traced_like(index, allow_negative_indices), axis,
        allow_negative_indices=allow_negative_indices)


def _traced_like(index, allow_negative_indices):
    # The start a traced negative index gets when negatives are not allowed: the
    # primitive's clamp takes it to 0.
    if isinstance(index, (int, np.integer)) and index < 0 and not allow_negative_indices:
        return np.int32(0)
    return index


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """`operand` with axes [start_dimension, stop_dimension) merged into one."""
    shape = aval_of(operand).shape
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    return lax.reshape(operand, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def broadcast_to_rank(x, rank: int):
    """`x` with leading axes of size 1 added up to rank `rank`."""
    ndim = aval_of(x).ndim
    if ndim == rank:
        return x
    return lax.broadcast(x, (1,) * (rank - ndim))


def stage(x, /):
    """`x` as a value of the current trace (`jax.lax.stage`): a traced value as it is;
    a Python scalar (weakly typed), NumPy value or array becomes a `jax.Array`, and
    under a trace that stages a program a tracer, by a conversion to its own type
    that folds back into the constant (as `jnp.array` of host data does there)."""
    if isinstance(x, Tracer):
        return x
    try:
        aval = None if isinstance(x, (list, tuple)) else aval_of(x)
    except TypeError:
        aval = None
    if aval is None:
        raise TypeError(f"Error interpreting argument to stage as a JAX value. The "
                        f"problematic value is of type {type(x)} and was passed to stage "
                        f"at position 0.")
    if stages_a_program(current_trace()):
        return bind(convert_element_type_p, x, new_dtype=aval.dtype, weak_type=aval.weak_type)
    return lax.convert_element_type(x, aval.dtype, weak_type=aval.weak_type)


def broadcast_like(arr, like_arr):
    """`arr` broadcast to `like_arr`'s shape, new axes leading and each of `arr`'s
    axes of size 1 or of the size it meets (as `jax.lax.broadcast_like`; minijax's
    values carry no sharding to match)."""
    aval, shape = aval_of(arr), aval_of(like_arr).shape
    nlead = len(shape) - aval.ndim
    if nlead < 0:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={aval.shape} shape={shape}")
    if any(n not in (1, m) for n, m in zip(aval.shape, shape[nlead:])):
        raise ValueError(f"Incompatible types for broadcasting: input type={aval.str_short()} "
                         f"and requested type={aval.update(shape=shape).str_short()}")
    if aval.shape == shape:
        # an array (of a Python scalar or NumPy value too), of arr's type, weak or not
        return lax.convert_element_type(arr, aval.dtype, weak_type=aval.weak_type)
    return lax.broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of `shapes` (tuples of ints), as a tuple; a ValueError if
    they are incompatible."""
    shapes = [tuple(operator.index(n) for n in s) for s in shapes]
    if not shapes:
        return ()
    rank = builtins.max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    result = []
    for sizes in zip(*padded):
        others = {n for n in sizes if n != 1}
        if len(others) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        result.append(others.pop() if others else 1)
    return tuple(result)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the last two axes, the leading axes being a batch."""
    lhs_ndim, rhs_ndim = aval_of(lhs).ndim, aval_of(rhs).ndim
    if builtins.min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return lax.dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                           precision=precision)


# -- indexing ---------------------------------------------------------------------------------

def index_take(src, idxs, axes: Sequence[int]):
    """src[idxs[0], idxs[1], ...] over `axes` (indices wrap modulo the axis size),
    the remaining axes kept after the index axis: one gather."""
    return _index_take(src, *idxs, axes=tuple(axes))


@jitted_eagerly("axes")
def _index_take(src, *idxs, axes):
    shape = aval_of(src).shape
    columns = [lax.expand_dims(i, (1,)) for i in idxs]
    indices = lax.concatenate(columns, 1)
    index_dtype = aval_of(indices).dtype
    sizes = lax.broadcast_in_dim(np.array([shape[a] for a in axes], index_dtype),
                                 aval_of(indices).shape, (1,))
    indices = lax.rem(lax.add(lax.rem(indices, sizes), sizes), sizes)
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=axes, start_index_map=axes)
    return lax.gather(src, indices, dnums, slice_sizes)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
    """`operand` with `updates` subtracted at the scattered positions (repeats add up)."""
    return lax.scatter_add(operand, scatter_indices, lax.neg(updates), dimension_numbers,
                           mode=mode)


def _check_update_shape(update_shape, indices_shape, d):
    """`update_shape` must be the shape of the updates that `d` and the indices ask
    for: the indices' batch axes (all but the last, the index vectors) with the
    window axes at `d.update_window_dims`."""
    rank = len(indices_shape) - 1 + len(d.update_window_dims)
    if len(update_shape) != rank:
        raise TypeError(f"scatter_apply: the updates of this scatter have rank {rank}, "
                        f"got update_shape {update_shape} of rank {len(update_shape)}")
    batch_axes = [i for i in range(rank) if i not in d.update_window_dims]
    for k, (axis, bound) in enumerate(zip(batch_axes, indices_shape[:-1])):
        if update_shape[axis] != bound:
            raise TypeError(f"scatter_apply: update_shape {update_shape} has bound "
                            f"{update_shape[axis]} in scatter dimension {k}, where the "
                            f"indices have bound {bound}")


def scatter_apply(operand, scatter_indices, func: Callable, dimension_numbers, *,
                  update_shape=(), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode=None):
    """`operand` with `func` applied to each scattered element: the values gathered,
    transformed and scattered back (so a repeated index is transformed once).
    `update_shape` is the shape the scatter's updates would have; JAX scatters a
    placeholder of that shape, so a wrong one is the same TypeError here."""
    d = dimension_numbers
    _check_update_shape(tuple(update_shape), aval_of(scatter_indices).shape, d)
    ndim = aval_of(operand).ndim
    slice_sizes = [1] * ndim
    window_dims = [i for i in range(ndim) if i not in d.inserted_window_dims]
    for operand_dim, update_dim in zip(window_dims, d.update_window_dims):
        slice_sizes[operand_dim] = tuple(update_shape)[update_dim]
    gathered = lax.gather(operand, scatter_indices, lax.GatherDimensionNumbers(
        offset_dims=d.update_window_dims, collapsed_slice_dims=d.inserted_window_dims,
        start_index_map=d.scatter_dims_to_operand_dims), slice_sizes, mode=mode)
    return lax.scatter(operand, scatter_indices, func(gathered), dimension_numbers,
                       mode=mode)


# -- creation and bits ------------------------------------------------------------------------

def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents do not matter (zeros here)."""
    from .sharding import apply_out_sharding     # (sharding imports this module's kin)
    return apply_out_sharding(_zeros(tuple(shape), canonical_dtype_argument(dtype, "empty")),
                              out_sharding, "empty")


@jitted_eagerly("shape", "dtype")
def _zeros(shape, dtype):
    return lax.full(shape, 0, dtype)


@jitted_eagerly()
def clz(x):
    """The number of leading zero bits of each integer in `x`."""
    dtype = aval_of(x).dtype
    if not is_integer(dtype):
        raise TypeError(f"clz does not accept dtype {np.dtype(dtype).name}. Accepted "
                        f"dtypes are subtypes of integer.")
    bits = np.dtype(dtype).itemsize * 8
    # Smear the highest set bit into every lower position; the ones left are the
    # significant bits, and the rest are the leading zeros.
    smeared, shift = x, 1
    while shift < bits:
        smeared = lax.bitwise_or(smeared, bind(R.shift_right_logical_p, smeared,
                                               lax.full_like(smeared, shift)))
        shift *= 2
    significant = bind(R.population_count_p, smeared)
    return lax.sub(lax.full_like(significant, bits), significant)


def _unsigned_mulhi(x, y, bits):
    """The high half of the 2·bits-bit product of unsigned x and y, from half-width
    pieces whose products cannot overflow: x = a·2^h + b, y = c·2^h + d."""
    h = bits // 2
    const = lambda v: lax.full_like(x, v)  # noqa: E731
    shift = lambda v: bind(R.shift_right_logical_p, v, const(h))  # noqa: E731
    low = lambda v: lax.bitwise_and(v, const((1 << h) - 1))  # noqa: E731
    a, b, c, d = shift(x), low(x), shift(y), low(y)
    ad, bc = lax.mul(a, d), lax.mul(b, c)
    middle = lax.add(lax.add(shift(lax.mul(b, d)), low(ad)), low(bc))
    return lax.add(lax.add(lax.mul(a, c), lax.add(shift(ad), shift(bc))), shift(middle))


@jitted_eagerly()
def mulhi(x, y, /):
    """The high half of the full-width product of integers x and y: floor(x·y / 2^bits)."""
    x_dtype, y_dtype = aval_of(x).dtype, aval_of(y).dtype
    for position, dtype in enumerate((x_dtype, y_dtype)):
        if not is_integer(dtype):
            raise TypeError(f"mulhi does not accept dtype {np.dtype(dtype).name} at position "
                            f"{position}. Accepted dtypes at position {position} are subtypes "
                            f"of integer.")
    if x_dtype != y_dtype:
        raise TypeError(f"lax.mulhi requires arguments to have the same dtypes, got "
                        f"{np.dtype(x_dtype).name}, {np.dtype(y_dtype).name}.")
    bits = np.dtype(x_dtype).itemsize * 8
    if np.dtype(x_dtype).kind == "u":
        return _unsigned_mulhi(x, y, bits)
    # Signed: the unsigned high half of the same bits, less y for a negative x (its
    # unsigned reading is x + 2^bits) and x for a negative y, modulo 2^bits.
    unsigned = np.dtype(f"u{bits // 8}")
    ux, uy = lax.bitcast_convert_type(x, unsigned), lax.bitcast_convert_type(y, unsigned)
    high = _unsigned_mulhi(ux, uy, bits)
    zero = lax.full_like(ux, 0)
    high = lax.sub(high, lax.select(lax.lt(x, lax.full_like(x, 0)), uy, zero))
    high = lax.sub(high, lax.select(lax.lt(y, lax.full_like(y, 0)), ux, zero))
    return lax.bitcast_convert_type(high, x_dtype)


def mul_with_out_dtype(x, y, out_dtype):
    """`lax.mul(x, y, out_dtype=...)`: both operands converted to `out_dtype`, then
    multiplied, which is what JAX's lowering of its `out_dtype` parameter emits. So,
    as in JAX, the operands' dtypes need not agree (bools are refused), the result is
    weak only if both operands are, and the derivative of each operand comes back in
    its own dtype (through the conversion's transpose)."""
    out_dtype = canonical_dtype_argument(out_dtype, "mul")
    avals = [aval_of(x), aval_of(y)]
    for position, aval in enumerate(avals):
        if aval.dtype == np.dtype(bool) or not np.issubdtype(aval.dtype, np.number):
            raise TypeError(f"mul does not accept dtype {np.dtype(aval.dtype).name} at "
                            f"position {position}. Accepted dtypes at position {position} "
                            f"are subtypes of integer, floating, complexfloating.")
    weak_type = all(a.weak_type for a in avals)
    x, y = (lax.convert_element_type(v, out_dtype, weak_type=weak_type) for v in (x, y))
    if out_dtype == np.dtype(bool):      # a product of truth values is their `and`
        return lax.bitwise_and(x, y)
    return lax.mul(x, y)
