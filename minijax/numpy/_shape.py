"""Shape functions: reshape, transpose, squeeze, broadcast, concatenate/stack/split,
flip, tile, repeat, roll, diagonal, and the `shape`/`ndim`/`size` queries.

Each is a handful of shape primitives (`reshape`, `transpose`, `broadcast_in_dim`,
`slice`, `concatenate`, `pad`, `gather`) and does nothing at all when the answer is
the input (a reshape to the same shape, an identity permutation), as in JAX.

minijax has no `rev` primitive, so `flip` is a `gather` whose index vector counts
down; the index vector is a constant, so a flip is still one equation.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as np

from .. import lax
from ..frontend.eager_jit import jitted_eagerly
from ..ir.trace import Tracer, refuse_traced_dims
from ..ir.types import jax_array_type
from ._promotion import (as_operand, as_array, shape_of, dtype_of, convert, promote_dtypes,
                         broadcast_shapes as _broadcast_shapes, broadcast_to_shape,
                         canonicalize_axis, canonicalize_axes, static_int)
from ._dtypes import canonicalize_dtype
from ._reductions import sum as array_sum
from ._ufuncs import remainder, subtract, where


def _shape_of_argument(fname, a) -> tuple:
    # As in JAX 0.10, a nested list still has a shape, with a warning (naming the
    # function called, at the caller's line) that lists will be refused here too.
    if isinstance(a, (list, tuple)):
        warnings.warn(f"{fname} requires ndarray or scalar arguments, got {type(a)} at "
                      f"position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)
        return np.shape(a)
    return shape_of(as_operand(fname, a))


def shape(a) -> tuple:
    return _shape_of_argument("shape", a)


def ndim(a) -> int:
    return len(_shape_of_argument("ndim", a))


def size(a, axis=None) -> int:
    """The number of elements of `a`, or along `axis` (an int or a sequence of ints)."""
    dims = _shape_of_argument("size", a)
    if axis is None:
        return math.prod(dims)
    if isinstance(axis, (tuple, list)):
        return math.prod(dims[canonicalize_axis("size", ax, len(dims))] for ax in axis)
    return dims[canonicalize_axis("size", axis, len(dims))]


def broadcast_shapes(*shapes) -> tuple:
    return _broadcast_shapes("broadcast_shapes", *(tuple(s) if isinstance(s, (list, tuple))
                                                   else (s,) for s in shapes))


# -- reshaping ------------------------------------------------------------------------------

def _resolve_shape(fname, old_shape, new_shape) -> tuple:
    if not isinstance(new_shape, (list, tuple)):
        new_shape = (new_shape,)
    refuse_traced_dims(fname, new_shape)
    dims = [static_int(fname, d, "shape") for d in new_shape]
    total = math.prod(old_shape)
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1 or builtins.any(d < -1 for d in dims):
        raise ValueError(f"{fname}: invalid shape {tuple(dims)} (at most one -1, no other "
                         f"negative sizes)")
    if unknown:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"{fname}: cannot reshape array of shape {old_shape} (size "
                             f"{total}) into shape {tuple(dims)}")
        dims[unknown[0]] = total // known
    if math.prod(dims) != total:
        raise ValueError(f"{fname}: cannot reshape array of shape {old_shape} (size "
                         f"{total}) into shape {tuple(dims)}")
    return tuple(dims)


def reshape(a, shape, order: str = "C", *, copy=None):
    """`jnp.reshape`; one size may be -1. `order='F'` reads and writes the elements
    with the first index changing fastest: the C-order reshape of the transposes.
    (NumPy's old `newshape=` keyword is gone, as from JAX's since 0.10.)"""
    if order == "A":
        raise NotImplementedError("reshape: order='A' is not implemented (as in JAX)")
    if order not in ("C", "F"):
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
    a = as_operand("reshape", a)
    old = shape_of(a)
    new = _resolve_shape("reshape", old, shape)
    if new == old:
        return as_array(a)
    if order == "F" and (len([d for d in old if d != 1]) > 1
                         or len([d for d in new if d != 1]) > 1):
        reversed_old = tuple(range(len(old)))[::-1]
        reversed_new = tuple(range(len(new)))[::-1]
        flipped = lax.reshape(lax.transpose(a, reversed_old), new[::-1])
        return lax.transpose(flipped, reversed_new)
    return lax.reshape(a, new)  # a C-order reshape when neither order matters


@jitted_eagerly("order")
def ravel(a, order: str = "C"):
    a = as_operand("ravel", a)
    if order == "K":
        raise NotImplementedError("ravel: order='K' is not implemented (as in JAX)")
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """`jnp.transpose`: reverse the axes, or permute them as `axes` says."""
    a = as_operand("transpose", a)
    n = len(shape_of(a))
    if axes is None:
        perm = tuple(range(n))[::-1]
    else:
        perm = tuple(canonicalize_axis("transpose", ax, n) for ax in axes)
        if sorted(perm) != list(range(n)):     # TypeError, as lax.transpose's in JAX
            raise TypeError(f"transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{n} axes of an array of shape {shape_of(a)}")
    return as_array(a) if perm == tuple(range(n)) else lax.transpose(a, perm)


permute_dims = transpose


def matrix_transpose(x):
    """Swap the last two axes (`x.mT`)."""
    x = as_operand("matrix_transpose", x)
    n = len(shape_of(x))
    if n < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 axes, got shape {shape_of(x)}")
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


@jitted_eagerly("axis1", "axis2")
def swapaxes(a, axis1, axis2):
    a = as_operand("swapaxes", a)
    n = len(shape_of(a))
    perm = list(range(n))
    i, j = canonicalize_axis("swapaxes", axis1, n), canonicalize_axis("swapaxes", axis2, n)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """Move axes `source` to positions `destination`, keeping the others in order."""
    a = as_operand("moveaxis", a)
    n = len(shape_of(a))
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must "
                         f"have the same number of elements")
    source = [canonicalize_axis("moveaxis", s, n) for s in source]
    destination = [canonicalize_axis("moveaxis", d, n) for d in destination]
    rest = [i for i in range(n) if i not in source]
    perm = [None] * n
    for s, d in zip(source, destination):
        perm[d] = s
    it = iter(rest)
    perm = [next(it) if p is None else p for p in perm]
    return transpose(a, perm)


def squeeze(a, axis=None):
    """Remove axes of size 1 (all of them, or those named, which must have size 1)."""
    a = as_operand("squeeze", a)
    dims = shape_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(dims) if d == 1)
    else:
        axes = canonicalize_axes("squeeze", axis, len(dims))
        bad = [i for i in axes if dims[i] != 1]
        if bad:
            raise ValueError(f"squeeze: cannot squeeze axis {bad[0]} of shape {dims}: its "
                             f"size is not one")
    return lax.squeeze(a, axes) if axes else as_array(a)


def expand_dims(a, axis):
    """Insert axes of size 1 at positions `axis` (counted in the result)."""
    a = as_operand("expand_dims", a)
    n = len(shape_of(a))
    axis = (axis,) if not isinstance(axis, (list, tuple)) else axis
    axes = canonicalize_axes("expand_dims", axis, n + len(axis))
    return lax.expand_dims(a, axes)


def broadcast_to(array, shape):
    """`array` broadcast to `shape` with NumPy's rules (trailing axes aligned)."""
    array = as_operand("broadcast_to", array)
    refuse_traced_dims("broadcast_to", shape)
    shape = tuple(static_int("broadcast_to", d, "shape") for d in (
        shape if isinstance(shape, (list, tuple)) else (shape,)))
    return as_array(broadcast_to_shape("broadcast_to", array, shape))


def broadcast_arrays(*args):
    args = [as_operand("broadcast_arrays", a) for a in args]
    out_shape = _broadcast_shapes("broadcast_arrays", *(shape_of(a) for a in args))
    return [as_array(broadcast_to_shape("broadcast_arrays", a, out_shape)) for a in args]


def _atleast(fname, arys, ndim_min, new_shape):
    out = []
    for a in arys:
        a = as_operand(fname, a)
        dims = shape_of(a)
        out.append(as_array(a) if len(dims) >= ndim_min else lax.reshape(a, new_shape(dims)))
    # several arrays come back as a tuple, as in NumPy 2 and JAX 0.12 (0.10/0.11: a list)
    return out[0] if len(out) == 1 else tuple(out)


@jitted_eagerly()
def atleast_1d(*arys):
    return _atleast("atleast_1d", arys, 1, lambda s: (1,))


@jitted_eagerly()
def atleast_2d(*arys):
    return _atleast("atleast_2d", arys, 2, lambda s: (1,) + s if s else (1, 1))


@jitted_eagerly()
def atleast_3d(*arys):
    return _atleast("atleast_3d", arys, 3,
                    lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1 else s + (1,))


# -- joining and splitting ------------------------------------------------------------------

def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (None: flatten them first)."""
    if isinstance(arrays, Tracer) or hasattr(arrays, "dtype"):
        arrays = [arrays[i] for i in range(shape_of(arrays)[0])]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    arrays = promote_dtypes("concatenate", *arrays)
    if dtype is not None:
        arrays = [convert("concatenate", a, canonicalize_dtype(dtype, "concatenate")) for a in arrays]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    shapes = [shape_of(a) for a in arrays]
    # JAX's exception types: ValueError for a rank-0 first array or a bad axis, TypeError
    # (lax.concatenate's) for operands whose ranks or other dimensions disagree.
    if len(shapes[0]) == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    n = len(shapes[0])
    axis = canonicalize_axis("concatenate", axis, n)
    listed = ', '.join(map(str, shapes))
    if builtins.any(len(s) != n for s in shapes):
        raise TypeError(f"concatenate: the arrays have different numbers of dimensions: "
                        f"{listed}")
    for s in shapes:
        if builtins.any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
            raise TypeError(f"concatenate: all input shapes must match except on axis "
                            f"{axis}, got {listed}")
    if len(arrays) == 1:
        return as_array(arrays[0])
    # Python scalars cannot occur here (they are rank-0), so every operand is an array.
    return lax.concatenate(arrays, axis)


def stack(arrays, axis=0, dtype=None):
    """Join arrays of equal shape along a new axis."""
    if isinstance(arrays, Tracer) or hasattr(arrays, "dtype"):
        arrays = [arrays[i] for i in range(shape_of(arrays)[0])]
    return _stack_operands(*arrays, axis=axis, dtype=dtype)


# JAX jits `stack` (the sequence is one pytree argument); spread as operands here, the
# arrays make an eager call one cached program too, not an expand_dims per array and
# a concatenate.
@jitted_eagerly("axis", "dtype")
def _stack_operands(*arrays, axis, dtype):
    arrays = [as_operand("stack", a) for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array to stack")
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got "
                         f"{', '.join(str(shape_of(a)) for a in arrays)}")
    axis = canonicalize_axis("stack", axis, len(shape_of(arrays[0])) + 1)
    arrays = promote_dtypes("stack", *arrays)
    if dtype is not None:
        arrays = [convert("stack", a, canonicalize_dtype(dtype, "stack")) for a in arrays]
    return concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis)


stack.eager_jit = _stack_operands.eager_jit     # the cached program, as on the others


def vstack(tup, dtype=None):
    arrays = [atleast_2d(a) for a in tup]
    return concatenate(arrays, 0, dtype)


def hstack(tup, dtype=None):
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if len(shape_of(arrays[0])) == 1 else 1, dtype)


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(a) for a in tup], 2, dtype)


def column_stack(tup):
    arrays = []
    for a in tup:
        a = as_operand("column_stack", a)
        arrays.append(lax.reshape(a, (shape_of(a)[0], 1)) if len(shape_of(a)) < 2 else a)
    return concatenate(arrays, 1)


def _split(fname, ary, indices_or_sections, axis, even):
    ary = as_operand(fname, ary)
    dims = shape_of(ary)
    axis = canonicalize_axis(fname, axis, len(dims))
    n = dims[axis]
    if isinstance(indices_or_sections, Tracer):     # the number of outputs is static
        indices_or_sections = indices_or_sections._concrete_or_raise(
            f"{fname}: the indices_or_sections argument")
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{fname}: number of sections must be positive")
        if even and n % sections:
            raise ValueError(f"{fname}: array split does not result in an equal division "
                             f"({n} elements along axis {axis} into {sections} sections)")
        size, extra = divmod(n, sections)
        bounds = [i * size + builtins.min(i, extra) for i in range(sections + 1)]
    else:
        points = [static_int(fname, i, "indices") for i in indices_or_sections]
        bounds = [0] + points + [n]
    out = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        start, stop, _ = slice(start, stop).indices(n)
        out.append(lax.slice_in_dim(ary, start, builtins.max(start, stop), 1, axis))
    return out


def split(ary, indices_or_sections, axis: int = 0):
    """Split into equal sections (an int) or at the given indices, along `axis`."""
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis: int = 0):
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary, indices_or_sections):
    ary = as_operand("hsplit", ary)
    return split(ary, indices_or_sections, 0 if len(shape_of(ary)) == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


# -- reordering -------------------------------------------------------------------------------

def flip(m, axis=None):
    m = as_operand("flip", m)
    return as_array(lax.rev(m, canonicalize_axes("flip", axis, len(shape_of(m)))))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Shift elements along `axis` (None: the flattened array), wrapping around.

    A static shift is two slices and a concatenate; a traced one is a dynamic slice
    of the array concatenated with itself. As in JAX, a concrete integer shift -- a
    NumPy or JAX array or scalar, or a list of ints -- is read as Python ints first,
    so an eager call is one cached program with the shift static (an array is
    unhashable, so it would otherwise run op by op)."""
    return _roll(a, _static_shift(shift), axis)


def _static_shift(shift):
    """`shift` as an int or a tuple of ints when it is a concrete integer scalar or
    1-d sequence; otherwise unchanged (a tracer: the dynamic roll; anything else: the
    body's checks and errors)."""
    if isinstance(shift, Tracer):
        return shift
    if isinstance(shift, list) and all(isinstance(s, (int, np.integer))
                                       and not isinstance(s, (bool, np.bool_)) for s in shift):
        return tuple(int(s) for s in shift)
    # (A JAX array: only a concrete one, not a tracer of JAX's own transformations.)
    if (isinstance(shift, (np.ndarray, np.generic)) or type(shift) is jax_array_type()) \
            and np.dtype(shift.dtype).kind in "iu" and np.ndim(shift) <= 1:
        values = np.asarray(shift)
        return int(values) if values.ndim == 0 else tuple(int(s) for s in values)
    return shift


# JAX's roll jits its body with a static (Python int) shift and axis; a traced shift
# is not hashable, so it keeps the direct path (JAX's dynamic roll).
@jitted_eagerly("shift", "axis")
def _roll(a, shift, axis=None):
    a = as_operand("roll", a)
    if axis is None:
        return reshape(_roll(ravel(a), shift, 0), shape_of(a))
    shifts, axes = _roll_pairs(shift, axis)
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis("roll", ax, len(shape_of(a)))
        n = shape_of(a)[ax]
        if n == 0:
            continue
        if isinstance(s, Tracer):
            start = remainder(subtract(n, remainder(s, n)), n)
            doubled = lax.concatenate([a, a], ax)
            a = lax.dynamic_slice_in_dim(doubled, convert("roll", start, np.int32), n, ax)
            continue
        s = operator.index(s) % n
        if s:
            a = lax.concatenate([lax.slice_in_dim(a, n - s, n, 1, ax),
                                 lax.slice_in_dim(a, 0, n - s, 1, ax)], ax)
    return as_array(a)


roll.eager_jit = _roll.eager_jit     # the cached program of an eager call


def _roll_pairs(shift, axis):
    """`shift` and `axis` broadcast against each other, as JAX does: one shift per
    listed axis, or one axis rolled by each listed shift (so by their total); an
    axis may repeat."""
    shift_shape = (shape_of(shift) if isinstance(shift, Tracer)
                   else (len(shift),) if isinstance(shift, (list, tuple)) else np.shape(shift))
    try:
        (count,) = np.broadcast_shapes(shift_shape, np.shape(axis), (1,))
    except ValueError:
        raise ValueError(f"roll: 'shift' and 'axis' must be scalars or 1-d sequences of "
                         f"the same length (or one of them of length 1), got "
                         f"shift={shift!r} and axis={axis!r}") from None
    shifts = [shift] * count if not shift_shape else [shift[i] for i in range(shift_shape[0])]
    if any(shape_of(s) if isinstance(s, Tracer) else np.ndim(s) for s in shifts):
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D "
                         "arrays")
    axes = np.broadcast_to(np.asarray(axis), (count,)).tolist()
    return shifts * (count // len(shifts)), axes


@jitted_eagerly("k", "axes")
def rot90(m, k: int = 1, axes=(0, 1)):
    m = as_operand("rot90", m)
    ax0, ax1 = (canonicalize_axis("rot90", ax, len(shape_of(m))) for ax in axes)
    k = k % 4
    if k == 0:
        return as_array(m)
    if k == 2:
        return flip(flip(m, ax0), ax1)
    if k == 1:
        return swapaxes(flip(m, ax1), ax0, ax1)
    return flip(swapaxes(m, ax0, ax1), ax1)


# -- tiling ------------------------------------------------------------------------------------

def tile(A, reps):
    """Repeat the whole of `A` `reps` times along each axis: one broadcast to an
    interleaved (reps, size) shape and one reshape."""
    A = as_operand("tile", A)
    reps = (reps,) if not isinstance(reps, (list, tuple)) else tuple(reps)
    reps = tuple(static_int("tile", r, "reps") for r in reps)
    dims = shape_of(A)
    n = builtins.max(len(reps), len(dims))
    dims = (1,) * (n - len(dims)) + dims
    reps = (1,) * (n - len(reps)) + reps
    if builtins.all(r == 1 for r in reps):
        return as_array(A) if len(shape_of(A)) == n else lax.reshape(A, dims)
    A = lax.reshape(A, dims) if len(shape_of(A)) != n else A
    interleaved = tuple(x for pair in zip(reps, dims) for x in pair)
    out = lax.broadcast_in_dim(A, interleaved, tuple(range(1, 2 * n, 2)))
    return lax.reshape(out, tuple(r * d for r, d in zip(reps, dims)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element `repeats` times (an int, or one count per element).
    With `total_repeat_length` the output's length is that static number, so
    `repeats` may be traced (JAX's way to repeat under `jit`): a longer total is cut,
    a shorter one padded with the last element."""
    a = as_operand("repeat", a)
    if axis is None:
        a, axis = ravel(a), 0
    dims = shape_of(a)
    axis = canonicalize_axis("repeat", axis, len(dims))
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, axis, total_repeat_length)
    if isinstance(repeats, Tracer):
        repeats = repeats._concrete_or_raise("repeat: the repeats argument")
    counts = np.asarray(repeats)
    if counts.ndim == 0:
        r = int(counts)
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {r}")
        expanded = dims[:axis + 1] + (r,) + dims[axis + 1:]
        keep = tuple(i if i <= axis else i + 1 for i in range(len(dims)))
        out = lax.broadcast_in_dim(a, expanded, keep)
        return lax.reshape(out, dims[:axis] + (dims[axis] * r,) + dims[axis + 1:])
    if counts.shape != (dims[axis],):
        raise ValueError(f"repeat: {counts.shape[0]} repeats for axis {axis} of size "
                         f"{dims[axis]} (shape {dims})")
    from ._take import take  # not at the top: _take imports this module (a cycle)
    return take(a, np.repeat(np.arange(dims[axis], dtype=np.int32), counts), axis=axis)


def _repeat_to_length(a, repeats, axis, total):
    """`repeat` with a static output length `total` along `axis`: the position each
    element starts at is the running sum of the counts before it; a scatter-add of
    ones at those starts and a running sum of that give each output position the
    index of its element, which one `take` reads (starts past `total` are dropped)."""
    from ._creation import zeros, ones_like  # not at the top: import cycles
    from ._indexing import _scatter
    from ._reductions import cumsum
    from ._take import take
    total = static_int("repeat", total, "total_repeat_length")
    dims = shape_of(a)
    counts = ravel(as_operand("repeat", repeats))
    counts = broadcast_to_shape("repeat", counts, (dims[axis],))
    if total == 0 or dims[axis] == 0:
        return lax.slice_in_dim(a, 0, 0, axis=axis) if total == 0 else as_array(a)
    starts = cumsum(lax.concatenate([lax.full((1,), 0, dtype_of(counts)),
                                     lax.slice_in_dim(counts, 0, dims[axis] - 1)], 0))
    marks = _scatter(zeros((total,), np.int32), starts,
                     ones_like(starts, dtype=np.int32), "add")
    return take(a, cumsum(marks) - 1, axis=axis)


# -- diagonals --------------------------------------------------------------------------------

@jitted_eagerly("offset", "axis1", "axis2")
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The `offset` diagonal of the (axis1, axis2) planes, as a last axis."""
    from ._indexing import getitem  # not at the top: _indexing imports this module (a cycle)
    a = as_operand("diagonal", a)
    n = len(shape_of(a))
    axis1 = canonicalize_axis("diagonal", axis1, n)
    axis2 = canonicalize_axis("diagonal", axis2, n)
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = shape_of(a)[-2:]
    k = builtins.max(0, builtins.min(rows + builtins.min(offset, 0),
                                     cols - builtins.max(offset, 0)))
    start = np.arange(k, dtype=np.int32)
    return getitem(a, (Ellipsis, start - builtins.min(offset, 0),
                       start + builtins.max(offset, 0)))


# JAX traces `offset` (it masks with `eye(k=offset)`); here it picks the diagonal's
# static positions, so it is static too: an int offset is one program per value, an
# array offset (unhashable) keeps the direct path that needs it concrete, as before.
@jitted_eagerly("offset", "axis1", "axis2", "dtype")
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    return array_sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k: int = 0):
    """A 1-d `v` on the `k`-th diagonal of a square matrix, or a 2-d `v`'s diagonal."""
    from ._creation import eye  # not at the top: _creation imports this module (a cycle)
    v = as_operand("diag", v)
    dims = shape_of(v)
    if len(dims) == 2:
        return diagonal(v, k)
    if len(dims) != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {dims}")
    n = dims[0] + builtins.abs(k)
    zero = convert("diag", 0, dtype_of(v))   # (a Python 0 would make a bool v int)
    padded = lax.pad(v, zero, [(builtins.max(k, 0), builtins.max(-k, 0), 0)])
    rows = lax.broadcast_in_dim(padded, (n, n), (1,))
    return where(eye(n, k=k, dtype=bool), rows, zero)


__all__ = ["shape", "ndim", "size", "broadcast_shapes", "reshape", "ravel", "transpose",
           "permute_dims", "matrix_transpose", "swapaxes", "moveaxis", "squeeze",
           "expand_dims", "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d",
           "atleast_3d", "concatenate", "stack", "vstack", "hstack",
           "dstack", "column_stack", "split", "array_split", "hsplit", "vsplit", "flip",
           "fliplr", "flipud", "roll", "rot90", "tile", "repeat", "diagonal",
           "trace", "diag"]
