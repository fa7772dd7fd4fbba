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
    - `DynamicSlice(size, stride)`: `r[minijax.ds(i, size, stride)]`, a slice whose
      start is the next dynamic index input (a rank-0 integer) and whose size and
      stride are static. It is a slice, not an advanced index: its axis stays where
      it is. The start is taken as `lax.dynamic_slice` takes one: a negative start
      counts from the end, then the start is clamped so that the whole slice fits,
      into [0, n - span] where span = (size - 1) * stride + 1 (`DynamicSlice.span`).
  A concrete boolean mask in a Python index becomes the integer arrays of its true
  positions, so it is never an item itself. `ref_python_index.py` turns a Python
  index (`r[1:3, i, None]`, `minijax.ds`) into an `Index`.
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
A `DynamicSlice` prints as JAX prints one, start repeated: `r[i:i+3]` (3 elements
from i), `r[i:i+5:2]` (3 elements, 2 apart: the stop is start + span, so the text
means what the Python slice would if nothing were clamped).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .types import ShapedArray, is_integer

__all__ = ["Slice", "NEW_AXIS", "DYNAMIC", "NewAxis", "Dynamic", "DynamicSlice", "Index",
           "Transpose", "Reshape", "RefIndexer", "index_shape", "indexer_shape",
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
class DynamicSlice:
    """A slice of one axis from a start known at run time (the next dynamic index
    input): `size` elements, `stride` apart, both static. Built only when the slice
    can select something and need not be the whole axis (`ref_python_index.py`
    makes the other cases static `Slice`s), and with stride 1 when size <= 1, so
    each set of positions has one spelling."""
    size: int
    stride: int = 1

    @property
    def span(self) -> int:
        """How many positions the slice stretches over: from its start to its last
        element, inclusive."""
        return (self.size - 1) * self.stride + 1 if self.size else 0


@dataclass(frozen=True)
class Index:
    items: tuple = ()

    @property
    def num_dynamic(self) -> int:
        return sum(1 for item in self.items if isinstance(item, (Dynamic, DynamicSlice)))


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
    if isinstance(item, DynamicSlice):
        return ("dslice", item.size, item.stride)
    return int(item)


def _decode_item(code):
    if code is None:
        return NEW_AXIS
    if code == "dyn":
        return DYNAMIC
    if isinstance(code, tuple) and len(code) == 4 and code[0] == "slice":
        return Slice(*code[1:])
    if isinstance(code, tuple) and len(code) == 3 and code[0] == "dslice":
        return DynamicSlice(*code[1:])
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
                raise ValueError("fewer dynamic index inputs than dynamic items")
            if not isinstance(aval, ShapedArray) or not is_integer(aval.dtype):
                raise ValueError(f"dynamic indices must be integer arrays, got {aval}")
            dyn_shapes.append(aval.shape)
            is_array.append(aval.ndim > 0)
        elif isinstance(item, DynamicSlice):
            aval = next(dyn, None)
            if aval is None:
                raise ValueError("fewer dynamic index inputs than dynamic items")
            if not isinstance(aval, ShapedArray) or not is_integer(aval.dtype) or aval.ndim:
                raise ValueError(f"the start of a dynamic slice must be an integer "
                                 f"scalar, got {aval}")
            if item.size < 1 or item.stride < 1 or item.span > n:
                raise ValueError(f"a dynamic slice of size {item.size} and stride "
                                 f"{item.stride} does not fit axis {axis} of size {n}")
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
        raise ValueError("more dynamic index inputs than dynamic items")
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
        if isinstance(item, (Slice, DynamicSlice)):
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
    """`dynamic` (one per dynamic item of the whole indexer: DYNAMIC, DynamicSlice)
    cut into one list per step."""
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
        elif isinstance(item, DynamicSlice):
            start = next(dynamic_texts)
            step = f":{item.stride}" if item.stride != 1 else ""
            parts.append(f"{start}:{start}+{item.span}{step}")
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
