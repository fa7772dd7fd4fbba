"""Where in a ref an access lands: the `indexer` param of `get`, `swap` and `addupdate`.

Read `types.py` (RefType) and the ref section of `catalogue.py` first.

A ref op touches either the whole ref (no `indexer` param: `x <- r[...]`) or the part
a `RefIndexer` picks out. An indexer is a path of *steps*, applied left to right to
the ref's shape, ending in one `Index`:

    r.at[1:3].T[0, i]      steps: Index((1:3)), Transpose((1, 0)), Index((0, i))

* `Index(items)`: one NumPy-style index. Its items, one per axis they consume:
    - an `int`: a static position, already made non-negative and checked in range;
    - `Slice(start, size, stride)`: a static slice (stride >= 1), already clipped;
    - `NEW_AXIS`: `None` in NumPy, inserts an axis of size 1 (consumes none);
    - `DYNAMIC`: the next *dynamic index input* of the equation. A rank-0 integer is
      a dynamic position; an integer array is NumPy integer-array ("advanced")
      indexing. Dynamic positions are taken as JAX takes them: negative values count
      from the end, then the position is clamped into range.
  A concrete boolean mask in a Python index becomes the integer arrays of its true
  positions (`build_index`), so it is never an item itself.
  Axes the items do not reach are taken whole, as NumPy does, so `r[0]` of a
  `Ref{f32[2,3]}` is `Index((0,))`. Items never hold `...`: it is expanded when the
  index is built, and trailing whole-axis slices are dropped so that each access has
  one canonical indexer.
* `Transpose(permutation)` and `Reshape(sizes)`: the views `r.T`, `r.transpose(...)`
  and `r.reshape(...)`. `r.at[idx]` is an `Index` step that is not the last.

Why this shape of param: indexers are static, hashable and free of arrays, so they
can sit in jaxpr params, compare equal, key caches and be printed; everything that
varies at run time is an ordinary equation input, following the ref (and, for swap
and addupdate, the value):

    get(ref, *dynamic)             swap(ref, value, *dynamic)
    addupdate(ref, value, *dynamic)

The text form shows the whole path in the sugar: `x:f32[2] <- r.at[1:3].T[0, i]`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .types import ShapedArray, is_integer, is_bool

__all__ = ["Slice", "NEW_AXIS", "DYNAMIC", "NewAxis", "Dynamic", "Index", "Transpose",
           "Reshape", "RefIndexer", "index_shape", "indexer_shape", "build_index",
           "index_text", "view_text"]


@dataclass(frozen=True)
class Slice:
    """A static slice of one axis: `size` elements from `start`, `stride` apart."""
    start: int
    size: int
    stride: int = 1

    @property
    def stop(self) -> int:
        """The smallest Python `stop` that gives this slice."""
        return self.start + (self.size - 1) * self.stride + 1 if self.size else self.start

    def is_whole(self, axis_size: int) -> bool:
        return self.start == 0 and self.size == axis_size and self.stride == 1


@dataclass(frozen=True)
class NewAxis:
    def __repr__(self):
        return "NEW_AXIS"


@dataclass(frozen=True)
class Dynamic:
    def __repr__(self):
        return "DYNAMIC"


NEW_AXIS = NewAxis()
DYNAMIC = Dynamic()


@dataclass(frozen=True)
class Index:
    items: tuple = ()

    @property
    def num_dynamic(self) -> int:
        return sum(1 for item in self.items if item is DYNAMIC or isinstance(item, Dynamic))


@dataclass(frozen=True)
class Transpose:
    permutation: tuple

    @property
    def num_dynamic(self) -> int:
        return 0


@dataclass(frozen=True)
class Reshape:
    sizes: tuple

    @property
    def num_dynamic(self) -> int:
        return 0


@dataclass(frozen=True)
class RefIndexer:
    """The `indexer` param: view steps, then the final `Index`."""
    steps: tuple

    def __post_init__(self):
        if not self.steps or not isinstance(self.steps[-1], Index):
            raise ValueError(f"a RefIndexer ends in an Index step, got {self.steps!r}")

    @property
    def num_dynamic(self) -> int:
        return sum(step.num_dynamic for step in self.steps)

    @property
    def views(self) -> tuple:
        return self.steps[:-1]

    @property
    def final(self) -> Index:
        return self.steps[-1]

    # For `printer.register_param_type`: the generic (non-sugar) text of the param,
    # `indexer(('index', (0, 'dyn')),)`, used only where the sugar cannot be.
    def param_args(self) -> tuple:
        return tuple(_encode_step(step) for step in self.steps)


def _encode_step(step):
    if isinstance(step, Index):
        return ("index", tuple(_encode_item(item) for item in step.items))
    if isinstance(step, Transpose):
        return ("transpose", tuple(step.permutation))
    return ("reshape", tuple(step.sizes))


def _encode_item(item):
    if isinstance(item, Slice):
        return ("slice", item.start, item.size, item.stride)
    if isinstance(item, NewAxis):
        return None
    if isinstance(item, Dynamic):
        return "dyn"
    return int(item)


def _decode_item(code):
    if code is None:
        return NEW_AXIS
    if code == "dyn":
        return DYNAMIC
    if isinstance(code, tuple) and len(code) == 4 and code[0] == "slice":
        return Slice(*code[1:])
    if isinstance(code, int):
        return code
    raise ValueError(f"not an index item: {code!r}")


def decode_indexer(*steps) -> RefIndexer:
    """The inverse of `RefIndexer.param_args` (the parser's constructor)."""
    decoded = []
    for kind, payload in steps:
        if kind == "index":
            decoded.append(Index(tuple(_decode_item(c) for c in payload)))
        elif kind == "transpose":
            decoded.append(Transpose(tuple(payload)))
        elif kind == "reshape":
            decoded.append(Reshape(tuple(payload)))
        else:
            raise ValueError(f"unknown indexer step {kind!r}")
    return RefIndexer(tuple(decoded))


# -- shapes ----------------------------------------------------------------------------
#
# These are the type rules' arithmetic. They raise ValueError with a plain message;
# the type rule prefixes the primitive's name.

@dataclass(frozen=True)
class IndexPlan:
    """How one `Index` step maps its operand to its result, axis by axis.

    `axis_items[a]` is the item that indexes operand axis `a` (a whole `Slice` where
    the items stop short). `array_shape` is the broadcast shape of the integer-array
    items (None when there are none); per NumPy, its axes go where the first advanced
    item stands if the advanced items are adjacent, else first (`array_position`).
    `layout` lists the result's axes in order: ('slice', operand axis), ('new',) or
    ('array', k) for axis k of `array_shape`."""
    axis_items: tuple
    dynamic_shapes: tuple
    array_shape: tuple | None
    layout: tuple
    shape: tuple


def plan_index(shape, items, dynamic_avals) -> IndexPlan:
    dynamic_avals = list(dynamic_avals)
    consumed = sum(1 for item in items if not isinstance(item, NewAxis))
    if consumed > len(shape):
        raise ValueError(f"too many indices ({consumed}) for a ref of shape {tuple(shape)}")
    dyn = iter(dynamic_avals)
    axis_items, dyn_shapes, is_array = [], [], []
    for item in items:
        if isinstance(item, NewAxis):
            continue
        axis = len(axis_items)
        n = shape[axis]
        if isinstance(item, Dynamic):
            aval = next(dyn, None)
            if aval is None:
                raise ValueError("fewer dynamic index inputs than DYNAMIC items")
            if not isinstance(aval, ShapedArray) or not is_integer(aval.dtype):
                raise ValueError(f"dynamic indices must be integer arrays, got {aval}")
            dyn_shapes.append(aval.shape)
            is_array.append(aval.ndim > 0)
        elif isinstance(item, Slice):
            if item.start < 0 or item.size < 0 or item.stride < 1 or (
                    item.size and item.start + (item.size - 1) * item.stride >= n) or (
                    item.start > n):
                raise ValueError(f"slice {_slice_text(item, n)} (start {item.start}, "
                                 f"size {item.size}, stride {item.stride}) does not fit "
                                 f"axis {axis} of size {n}")
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < n:
                raise ValueError(f"index {item} is out of bounds for axis {axis} with "
                                 f"size {n}")
        else:
            raise ValueError(f"not an index item: {item!r}")
        axis_items.append(item)
    if next(dyn, None) is not None:
        raise ValueError("more dynamic index inputs than DYNAMIC items")
    axis_items += [Slice(0, n, 1) for n in shape[len(axis_items):]]
    any_array = any(is_array)
    array_shape = None
    if any_array:
        try:
            array_shape = tuple(np.broadcast_shapes(*dyn_shapes))
        except ValueError:
            raise ValueError(f"integer-array indices of shapes {dyn_shapes} do not "
                             f"broadcast together") from None
    # Lay the result out. Without arrays, ints drop their axis; with arrays every int
    # is an advanced index too (NumPy's rule), and the advanced block goes in place
    # if its items are adjacent, else at the front.
    layout, advanced_at, axis = [], [], 0
    for position, item in enumerate(items):
        if isinstance(item, NewAxis):
            layout.append(("new",))
            continue
        if isinstance(item, Slice):
            layout.append(("slice", axis))
        elif any_array:
            advanced_at.append(position)
            if len(advanced_at) == 1:
                layout.append(("advanced",))
        axis += 1
    layout += [("slice", a) for a in range(axis, len(shape))]
    if any_array:
        adjacent = advanced_at == list(range(advanced_at[0], advanced_at[-1] + 1))
        block = [("array", k) for k in range(len(array_shape))]
        at = layout.index(("advanced",))
        del layout[at]
        layout[at if adjacent else 0:at if adjacent else 0] = block
    out_shape = []
    for entry in layout:
        if entry[0] == "new":
            out_shape.append(1)
        elif entry[0] == "slice":
            out_shape.append(axis_items[entry[1]].size)
        else:
            out_shape.append(array_shape[entry[1]])
    return IndexPlan(tuple(axis_items), tuple(dyn_shapes), array_shape, tuple(layout),
                     tuple(out_shape))


def index_shape(shape, items, dynamic_avals) -> tuple:
    return plan_index(shape, items, dynamic_avals).shape


def step_shape(shape, step, dynamic_avals) -> tuple:
    """The shape a step gives a ref of `shape`."""
    if isinstance(step, Index):
        return index_shape(shape, step.items, dynamic_avals)
    if isinstance(step, Transpose):
        if sorted(step.permutation) != list(range(len(shape))):
            raise ValueError(f"transpose{tuple(step.permutation)} is not a permutation "
                             f"of the axes of a ref of shape {tuple(shape)}")
        return tuple(shape[p] for p in step.permutation)
    if isinstance(step, Reshape):
        if any(s < 0 for s in step.sizes) or int(np.prod(step.sizes, dtype=np.int64)) != \
                int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"cannot reshape a ref of shape {tuple(shape)} to "
                             f"{tuple(step.sizes)}")
        return tuple(step.sizes)
    raise ValueError(f"not an indexer step: {step!r}")


def split_dynamic(indexer: RefIndexer, dynamic) -> list:
    """`dynamic` (one per DYNAMIC item of the whole indexer) cut into one list per step."""
    out, k = [], 0
    for step in indexer.steps:
        out.append(list(dynamic[k:k + step.num_dynamic]))
        k += step.num_dynamic
    return out


def indexer_shapes(shape, indexer: RefIndexer | None, dynamic_avals) -> list:
    """The shape before each step and after the last: `[ref shape, ..., result]`."""
    shapes = [tuple(shape)]
    if indexer is None:
        return shapes
    if len(dynamic_avals) != indexer.num_dynamic:
        raise ValueError(f"the indexer takes {indexer.num_dynamic} dynamic index inputs, "
                         f"got {len(dynamic_avals)}")
    for step, avals in zip(indexer.steps, split_dynamic(indexer, dynamic_avals)):
        shapes.append(step_shape(shapes[-1], step, avals))
    return shapes


def indexer_shape(shape, indexer: RefIndexer | None, dynamic_avals) -> tuple:
    return indexer_shapes(shape, indexer, dynamic_avals)[-1]


# -- building an Index from a Python index -------------------------------------------------

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
                        f"{type(item).__name__}: use integers, slices, None, ..., integer "
                        f"arrays or boolean mask arrays")
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
                    f"axis {axis}; for a dynamic start use minijax.lax.dynamic_slice on the "
                    f"value read from the ref")
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


# -- text ---------------------------------------------------------------------------------

def _slice_text(item: Slice, n: int) -> str:
    if item.is_whole(n):
        return ":"
    text = f"{item.start}:{item.stop}"
    return text if item.stride == 1 else f"{text}:{item.stride}"


def index_text(items, shape, dynamic_texts) -> str:
    """The inside of `r[...]` for an Index step on a ref of `shape`; `dynamic_texts`
    yields the text of each dynamic input in turn."""
    if not items:
        return "..."
    parts, axis = [], 0
    for item in items:
        if isinstance(item, NewAxis):
            parts.append("None")
            continue
        if isinstance(item, Dynamic):
            parts.append(next(dynamic_texts))
        elif isinstance(item, Slice):
            parts.append(_slice_text(item, shape[axis]))
        else:
            parts.append(str(int(item)))
        axis += 1
    return ", ".join(parts)


def view_text(step, shape, dynamic_texts) -> str:
    """A view step as the printer writes it: `.at[1:3]`, `.T`, `.transpose(1, 0, 2)`,
    `.reshape(3, 2)`."""
    if isinstance(step, Index):
        return f".at[{index_text(step.items, shape, dynamic_texts)}]"
    if isinstance(step, Transpose):
        if tuple(step.permutation) == tuple(reversed(range(len(shape)))):
            return ".T"
        return f".transpose({', '.join(map(str, step.permutation))})"
    return f".reshape({', '.join(map(str, step.sizes))})"
