"""From a Python index to an `Index`: `r[1:3, i, None]`, `r[minijax.ds(i, 3)]`.

Read `ref_indexing.py` (what an `Index` and its items mean) first. `build_index` is
the one place where a Python index on a ref becomes IR: `r[idx]` in Python
(`frontend/refs.py`) and a place in the text form (`parser.py`) both call it, so the
text means what the Python would.

`ds(start, size, stride)` is JAX's `jax.ds` (its `dslice`): a slice written by its
start and size, `ds(i, 3)` standing for `i:i+3`, so that the start may be a traced
integer. It is defined here, in the IR, because the parser builds one for each
`i:i+3` it reads; `minijax.ds` is this function. What a `ds` item becomes:

* a static start (a Python or NumPy int) gives the static `Slice` that `start:start+
  size` gives -- the program is the one a plain slice makes. A negative start counts
  from the end once, as a static int index does; a slice that then does not fit in
  the axis is an error (`IndexError`, which the frontend's error is also a
  `ValueError`, JAX's type), where a Python slice would quietly come out shorter;
* a start known only at run time (a tracer, a jax array, a variable in the text)
  gives a `DynamicSlice` item and one dynamic input, clamped at run time -- unless the
  slice selects nothing or must be the whole axis, which no start changes: those are
  static `Slice`s too;
* the size (and stride) must be static: they are the result's shape.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from .types import is_integer, is_bool
from .ref_indexing import (Slice, NEW_AXIS, DYNAMIC, NewAxis, DynamicSlice, Index)

__all__ = ["DSlice", "ds", "is_ds", "as_ds", "build_index", "canonical_items"]

# The class of JAX's `jax.ds` objects. `DSlice` extends it, and an index item of this
# class that JAX built (a program written with `jax.ds`) is taken as minijax's own.
_JAX_DS_CLASS = type(jax.ds(0, 1))


class DSlice(_JAX_DS_CLASS):
    """`minijax.ds(start, size, stride)`: `size` elements from `start`, `stride` apart.
    `start` may be a traced integer scalar; `size` and `stride` are static ints.

    A subclass of the class of JAX's `jax.ds` objects (its fields `start`, `size`,
    `stride`), so that indexing an eager value -- a `jax.Array`, indexed by JAX's own
    code as minijax's eager values are -- takes one too: `x[minijax.ds(2, 3)]`."""
    __slots__ = ()


def ds(start, size=None, stride=None):
    """A slice by its start and size, as JAX's `jax.ds`: `ds(i, n)` stands for
    `i:i+n`, `ds(i, n, s)` for `i:i+n*s:s`, `ds(n)` for `:n` and `ds(None)` for `:`.
    The start may be known only at run time (traced); it is then clamped as
    `lax.dynamic_slice` clamps, so that all `n` elements are inside the axis.

        r[minijax.ds(i, 2)] = v          # inside jit, with i traced
    """
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)):
        raise ValueError(f"ds: the stride must be a static int, got {stride!r}")
    if stride < 1:
        raise ValueError(f"ds: the stride must be at least 1, got {stride}")
    if size is None:
        start, size = 0, start
    return DSlice(start, size, int(stride))


def is_ds(item) -> bool:
    """Whether `item` is a ds object, minijax's or one JAX's `jax.ds` built (nothing
    converted or checked: JAX's own indexing may take what `as_ds` refuses)."""
    return isinstance(item, _JAX_DS_CLASS)


def as_ds(item):
    """`item` as a `DSlice` when it is a ds object -- minijax's, or one JAX's `jax.ds`
    built, whose stride is checked as `ds` checks it -- else None."""
    if isinstance(item, DSlice):
        return item
    if isinstance(item, _JAX_DS_CLASS):
        return ds(item.start, item.size, item.stride)
    return None


def build_index(shape, idx, is_dynamic, error, concrete=None) -> tuple[Index, list]:
    """A Python index (`r[...]`, `r[1:3, i, None]`) on a ref of `shape` -> (Index, the
    dynamic values in order). `is_dynamic(x)` says whether `x` is an array-like index
    value (a tracer, jax or NumPy array); `error(cls, message)` makes the user-facing
    exception (`cls` is IndexError or TypeError); `concrete(x)` gives the NumPy value
    of an array-like index known now (None when it is only known at run time).

    As for arrays: a bare list is refused (`r[[0, 1]]` once meant `r[0, 1]` in NumPy;
    write `r[np.array(seq)]`), a list inside a tuple is an integer array, and a
    concrete boolean mask stands for the integer arrays of its true positions."""
    if isinstance(idx, list):
        raise error(TypeError, "using a non-tuple sequence as a ref index is not allowed "
                    "(as for arrays): write r[np.array(seq)] for integer-array indexing, "
                    "or r[tuple(seq)] for one index per axis")
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(_mask_or_item(item, is_dynamic, concrete, error) for item in idx)
    n_ellipsis = sum(1 for item in idx if item is Ellipsis)
    if n_ellipsis > 1:
        raise error(IndexError, "an index can only have a single ellipsis ('...')")
    consuming = sum(item.ndim if isinstance(item, _Mask) else 1 for item in idx
                    if item is not None and item is not Ellipsis)
    if consuming > len(shape):
        raise error(IndexError, f"too many indices for a ref of shape {tuple(shape)}: "
                    f"{consuming} were given")
    items, dynamic, axis = [], [], 0
    empty_ellipsis_at = None
    for item in idx:
        if item is Ellipsis:
            if len(shape) == consuming:
                empty_ellipsis_at = len(items)
            for _ in range(len(shape) - consuming):
                items.append(Slice(0, shape[axis], 1))
                axis += 1
            continue
        if item is None:
            items.append(NEW_AXIS)
            continue
        if isinstance(item, _Mask):
            covered = tuple(shape[axis:axis + item.ndim])
            if item.mask.shape != covered:
                raise error(IndexError, f"boolean index of shape {item.mask.shape} does "
                            f"not match the indexed axes {covered} (from axis {axis})")
            for positions in np.nonzero(item.mask):
                items.append(DYNAMIC)
                dynamic.append(positions.astype(np.int32))
            axis += item.ndim
            continue
        n = shape[axis]
        if isinstance(item, slice):
            items.append(_static_slice(item, n, axis, is_dynamic, concrete, error))
        elif is_ds(item):
            item, start = _dynamic_slice(as_ds(item), n, axis, is_dynamic, concrete, error)
            items.append(item)
            dynamic += [] if start is None else [start]
        elif isinstance(item, (bool, np.bool_)):
            raise error(TypeError, "a boolean scalar is not a ref index; index with "
                        "integers, slices, None, integer arrays or a boolean mask array")
        elif isinstance(item, (int, np.integer)) or (
                isinstance(item, np.ndarray) and item.ndim == 0 and is_integer(item.dtype)):
            # A NumPy scalar or 0-d array is known now: a static position, as for arrays.
            item = int(item)
            if not -n <= item < n:
                raise error(IndexError, f"index {int(item)} is out of bounds for axis "
                            f"{axis} with size {n}")
            items.append(int(item) % n)
        elif isinstance(item, (list, tuple)) or is_dynamic(item):
            value = np.asarray(item) if isinstance(item, (list, tuple)) else item
            if isinstance(item, (list, tuple)) and value.size == 0:
                value = value.astype(np.int32)      # `[]` selects nothing, as NumPy
            dtype = getattr(getattr(value, "aval", value), "dtype", None)
            if dtype is None or not is_integer(dtype):
                raise error(TypeError, f"indices of dtype {getattr(dtype, 'name', dtype)} "
                            f"are not supported on refs: index with integers, slices, "
                            f"None, integer arrays or boolean mask arrays")
            items.append(DYNAMIC)
            dynamic.append(value)
        else:
            raise error(TypeError, f"cannot index a ref with {item!r} of type "
                        f"{type(item).__name__}: use integers, slices, minijax.ds, None, "
                        f"..., integer arrays or boolean mask arrays")
        axis += 1
    if empty_ellipsis_at is not None:
        _check_no_split_advanced(items, dynamic, empty_ellipsis_at, error)
    return Index(canonical_items(items, shape)), dynamic


def _check_no_split_advanced(items, dynamic, split_at, error):
    """NumPy counts an `...` that stands for no axes as a separator: integer-array
    indices on both sides of it put their axes first. The IR's index has no room for
    such an `...`, so that one spelling is refused rather than laid out wrongly."""
    any_array = any(len(np.shape(d)) if isinstance(d, np.ndarray) else len(d.aval.shape)
                    for d in dynamic)
    advanced = [k for k, item in enumerate(items)
                if item is DYNAMIC or isinstance(item, int)]
    # Only when something stands before the first advanced index do the two
    # layouts differ: otherwise the array axes come first either way.
    if any_array and advanced and 0 < advanced[0] < split_at <= advanced[-1]:
        raise error(IndexError, "integer-array indices separated only by an empty `...` "
                    "are not supported on refs (NumPy moves their axes first); read "
                    "the value and index it (r[...][idx]), or write the index without "
                    "the `...` and reorder the result's axes")


@dataclass(frozen=True, eq=False)
class _Mask:
    """A concrete boolean mask array among the items of a Python index."""
    mask: np.ndarray

    @property
    def ndim(self) -> int:
        return self.mask.ndim


def _static_bound(part, axis, is_dynamic, concrete, error):
    """A slice bound as a Python int: it must be known now (an int, or a concrete
    integer scalar such as `np.int32(1)` or `jnp.int32(1)` outside `jit`)."""
    if part is None or (isinstance(part, (int, np.integer)) and not isinstance(part, bool)):
        return part if part is None else int(part)
    value = concrete(part) if concrete is not None and is_dynamic(part) else None
    if value is None or np.ndim(value) != 0 or not is_integer(np.asarray(value).dtype):
        raise error(TypeError, f"slice bounds on refs must be static ints, got {part!r} on "
                    f"axis {axis}; for a start known only at run time write "
                    f"minijax.ds(start, size) (a static size)")
    return int(value)


def _mask_or_item(item, is_dynamic, concrete, error):
    """`item`, or a `_Mask` when it is a boolean array (which must be concrete: the
    number of positions it selects is the result's shape)."""
    if isinstance(item, (list, tuple)):
        value = np.asarray(item)
        return _Mask(value) if value.dtype == np.bool_ and value.ndim else item
    if isinstance(item, (bool, np.bool_, slice)) or item is None or item is Ellipsis \
            or not is_dynamic(item):
        return item
    dtype = getattr(getattr(item, "aval", item), "dtype", None)
    if dtype is None or not is_bool(dtype):
        return item
    value = concrete(item) if concrete is not None else None
    if value is None:
        raise error(TypeError, "a boolean mask index must be concrete (the number of "
                    "positions it selects is the shape of the result); this one is only "
                    "known at run time. Read the ref and use jnp.where(mask, r[...], 0)")
    value = np.asarray(value)
    if value.ndim == 0:
        raise error(TypeError, "a boolean scalar is not a ref index; index with "
                    "integers, slices, None, integer arrays or a boolean mask array")
    return _Mask(value)


def canonical_items(items, shape) -> tuple:
    """Drop trailing whole-axis slices (they are implicit)."""
    items = list(items)
    while items and isinstance(items[-1], Slice):
        axis = sum(1 for item in items if not isinstance(item, NewAxis)) - 1
        if not items[-1].is_whole(shape[axis]):
            break
        items.pop()
    return tuple(items)


def _static_slice(item: slice, n: int, axis: int, is_dynamic, concrete, error) -> Slice:
    parts = [_static_bound(part, axis, is_dynamic, concrete, error)
             for part in (item.start, item.stop, item.step)]
    item = slice(*parts)
    if item.step is not None and item.step <= 0:
        raise error(IndexError, f"slice steps on refs must be positive, got {item.step} "
                    f"on axis {axis}; read the ref and reverse the value instead")
    start, stop, stride = item.indices(n)
    size = max(0, -(-(stop - start) // stride))
    # One canonical form per set of positions: the stride of a 0- or 1-element slice
    # does not matter, so it is 1.
    return Slice(start if size else min(start, n), size, stride if size > 1 else 1)


def _static_int(x):
    """`x` as a Python int when it is a static integer (a Python or NumPy int, or a
    0-d NumPy integer array), else None."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray) and x.ndim == 0 and is_integer(x.dtype):
        return int(x)
    return None


def _dynamic_slice(item: DSlice, n: int, axis: int, is_dynamic, concrete, error):
    """(the item, its dynamic start or None) for `ds(start, size, stride)` on an axis
    of size `n`."""
    size = _static_int(item.size)
    if size is None and is_dynamic(item.size) and concrete is not None:
        value = concrete(item.size)
        size = None if value is None else _static_int(np.asarray(value))
    if size is None:
        raise error(TypeError, f"the size of minijax.ds(start, size) must be a static "
                    f"int (it is the length of the result), got {item.size!r} on axis "
                    f"{axis}; only the start may be known just at run time")
    if size < 0:
        raise error(IndexError, f"the size of minijax.ds(start, size) must be >= 0, got "
                    f"{size} on axis {axis}")
    stride = item.stride if size > 1 else 1
    span = (size - 1) * stride + 1 if size else 0
    start = _static_int(item.start)
    step = f", {item.stride}" if item.stride != 1 else ""
    written = f"minijax.ds({'start' if start is None else start}, {size}{step})"
    if start is not None:
        start = start + n if start < 0 else start
        if start < 0 or start + span > n:
            raise error(IndexError, f"{written} does not fit axis {axis} of size {n}: "
                        f"a static start must leave room for the whole slice (a negative "
                        f"start counts from the end); a traced start would be clamped")
        return Slice(start, size, stride), None
    value = item.start
    aval = getattr(value, "aval", value)
    dtype = getattr(aval, "dtype", None)
    if not is_dynamic(value) or dtype is None or not is_integer(dtype):
        what = getattr(dtype, "name", type(value).__name__)
        raise error(TypeError, f"the start of minijax.ds must be an integer scalar, got "
                    f"{value!r} ({what}) on axis {axis}")
    if len(getattr(aval, "shape", ())):
        raise error(TypeError, f"the start of minijax.ds must be a scalar, got an array "
                    f"of shape {tuple(aval.shape)} on axis {axis}; for one position per "
                    f"element, index with the integer array itself")
    if span > n:
        raise error(IndexError, f"{written} does not fit axis {axis} of size {n}: the "
                    f"slice spans {span} positions")
    # No start changes what these select, so they are static (and canonical).
    if size == 0:
        return Slice(0, 0, 1), None
    if span == n and stride == 1:
        return Slice(0, n, 1), None
    return DynamicSlice(size, stride), value
