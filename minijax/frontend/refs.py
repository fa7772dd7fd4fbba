"""The public ref API: `new_ref`, `empty_ref`, `freeze`, `free_ref`, `minijax.ref.*`,
indexing and views on `Ref`s and on traced refs.

Read `ir/ref_indexing.py` (what an index means in the IR) and
`ir/ref_box.py` (the `Ref` box) first. Every function here ends in one
`bind` of a ref primitive, so the same code runs eagerly (on a `Ref` box), while
tracing for `jit` (on a tracer whose aval is a `RefType`) and under the other
transformations. What this module adds is the user-facing part:

* turning a Python index into a static `RefIndexer` plus dynamic index values,
  with NumPy's rules and errors (a static index out of range is an `IndexError`
  eagerly and under `jit` alike, because it is checked here, before any tracing
  decides anything);
* views: `r.at[idx]`, `r.T`, `r.transpose(...)`, `r.reshape(...)` build a `RefView`,
  a (ref, view steps, dynamic values) triple; nothing is read until it is indexed;
* writes follow NumPy assignment: the value is broadcast to the indexed shape, and
  its dtype must be the ref's (a Python scalar is converted, as a weak type);
* misuse checks that need to know the program's structure: a ref used after
  `freeze`/`free_ref`, and freezing a ref that this scope did not create.

Who may freeze a ref? Freezing ends a ref's life, so only the code that created it
may do it: an eager ref at the top level, a traced ref inside the very trace whose
`new_ref` made it. A ref that came in as an argument or a closure belongs to the
caller, who still holds it, so freezing it inside is an error.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as np

from ..ir.dtype_args import counts_as_array
from ..ir.ref_box import (Ref, RefError, check_live, describe_ref as _describe_box,
                          used_after_message, _user_frame)
from ..ir import primitives as P
from ..ir.core import WriteEffect, AccumEffect
from ..ir.ref_indexing import Index, RefIndexer, Reshape, Transpose, indexer_shape
from ..ir.ref_python_index import build_index, ds, DSlice
from ..ir.trace import EvalTrace, Tracer, aval_of, bind, current_trace, root_trace
from ..ir.types import RefType, ShapedArray, canonical_dtype, is_bool, is_float, is_complex

__all__ = ["Ref", "RefView", "RefError", "new_ref", "empty_ref", "freeze", "free_ref",
           "get", "set", "swap", "addupdate", "is_ref", "typeof", "ds"]

_PY_SCALARS = (bool, int, float, complex)


def is_ref(x) -> bool:
    """A `Ref` box or a tracer of a ref (not a view)."""
    return isinstance(x, Ref) or (isinstance(x, Tracer) and isinstance(x.aval, RefType))


def typeof(x):
    """The type minijax gives `x`, printed as JAX prints it: `Ref{float32[3]}` for a ref,
    `float32[3]` for an array, `~float32[]` for a weakly typed scalar."""
    if isinstance(x, RefView):
        raise RefError("a ref view has no type of its own; typeof its base ref, or "
                       "read it with v[...]")
    return aval_of(x)


# -- traced refs: who created them, which are used up, which refuse writes -----------
#
# The facts live in the `RefLedger` of the trace they are about (`ir/ref_ledger.py`):
# a ref tracer's own trace, or for a ref box the root trace. Nothing is kept here.

def _ledger_of(ref):
    return ref._trace.ref_ledger if isinstance(ref, Tracer) else root_trace().ref_ledger


def _note_created(ref):
    if isinstance(ref, Tracer):
        ref._trace.ref_ledger.note_created(ref, _user_frame())


def describe_ref(ref) -> str:
    """How messages name a ref: its type and where it came from."""
    if not isinstance(ref, Tracer):
        return _describe_box(ref)
    where = ref._trace.ref_ledger.where_created(ref)
    if where is not None:
        return f"the {ref.aval} created at {where}"
    return f"the {ref.aval} passed into the function being transformed"


def _check_usable(ref, doing: str):
    if isinstance(ref, Ref):
        check_live(ref, doing)
    elif isinstance(ref, Tracer):
        used = ref._trace.ref_ledger.consumption(ref)
        if used is not None:
            raise RefError(used_after_message(describe_ref(ref), used[0], used[1], doing))


def _consume(ref, how: str):
    _check_usable(ref, how)
    trace = current_trace()
    if isinstance(ref, Ref):
        owned = isinstance(trace, EvalTrace)
    else:
        owned = ref._trace is trace and trace.ref_ledger.where_created(ref) is not None
    # vmap makes a ref from a value that is the same for every example once, below
    # itself, and notes it as made by the vmapped code (`made_below`), which may
    # therefore freeze it.
    owned = owned or trace.ref_ledger.made_here(ref)
    if not owned:
        raise RefError(f"cannot {how} {describe_ref(ref)}: it was passed in (as an "
                       f"argument or a closure) rather than created here, and only the "
                       f"code that created a ref may {how} it. Read its value with "
                       f"r[...] instead, or create the ref inside with new_ref.")
    if isinstance(ref, Tracer):
        ref._trace.ref_ledger.note_consumed(ref, how, _user_frame())


# grad/vjp with respect to a ref argument differentiate with respect to its contents:
# the function runs on a fresh ref holding them, marked read-only while it runs so
# that a write to it is refused at once (nothing has been written anywhere yet).
# The mark is kept by the ledger of the ref's trace (frontend/autodiff.py sets it).

def refuse_writes(ref, message: str):
    """Until `allow_writes(ref)`, a write to `ref` raises `RefError(message)`, where
    `{doing}` in the message names the write."""
    _ledger_of(ref).refuse_writes(ref, message)


def allow_writes(ref):
    _ledger_of(ref).allow_writes(ref)


def _check_writable(ref, doing: str):
    message = _ledger_of(ref).write_refusal(ref)
    if message is not None:
        raise RefError(message.replace("{doing}", doing))


def check_call_writes(jaxpr, args, name: str):
    """A call (`jit`) whose body writes one of its ref inputs `args`: refused, before
    it runs, if that ref is read-only (see `refuse_writes`; inside the body the
    ref is a tracer of its own, which the checks on `r[idx] = v` cannot recognise)."""
    for effect in jaxpr.effects:
        if isinstance(effect, (WriteEffect, AccumEffect)):
            _check_writable(args[effect.input_index], f"writing it inside jit({name})")


# -- creating and ending refs -----------------------------------------------------------

def new_ref(init_val, *, memory_space: Any = None, kind: str | None = None):
    """A new ref holding (a copy of) the array `init_val`."""
    if is_ref(init_val) or isinstance(init_val, RefView):
        raise RefError(f"cannot make a ref of a ref ({describe_ref(_base(init_val))}): "
                       f"a ref holds an array. Read its value with r[...] first")
    if isinstance(init_val, jax.ShapeDtypeStruct):
        raise RefError(f"new_ref takes an initial value, got the type {init_val}; for a "
                       f"ref of that type with no initial value use empty_ref")
    if isinstance(init_val, (tuple, list, dict)) or (
            not isinstance(init_val, (Tracer, *_PY_SCALARS)) and not hasattr(init_val, "dtype")):
        raise RefError(f"new_ref takes one array, got a {type(init_val).__name__}; for a "
                       f"pytree of refs use jax.tree_util.tree_map(minijax.new_ref, tree)")
    ref = bind(P.new_ref_p, init_val)
    _note_created(ref)
    return ref


def empty_ref(ty, *, memory_space: Any = None):
    """A new ref of `ty`'s shape and dtype (a `ShapeDtypeStruct` or an array), with
    unspecified contents until written (minijax fills it with zeros)."""
    if not hasattr(ty, "shape") or not hasattr(ty, "dtype"):
        raise TypeError(f"empty_ref takes a ShapeDtypeStruct (or anything with .shape "
                        f"and .dtype), got {ty!r}")
    ref = bind(P.empty_ref_p, shape=tuple(int(d) for d in ty.shape),
               dtype=canonical_dtype(ty.dtype))
    _note_created(ref)
    return ref


def freeze(ref):
    """The ref's final value; the ref cannot be used afterwards."""
    ref = _plain_ref(ref, "freeze")
    _consume(ref, "freeze")
    return bind(P.freeze_p, ref)


def free_ref(ref):
    """End the ref's life without reading it; it cannot be used afterwards."""
    ref = _plain_ref(ref, "free_ref")
    _consume(ref, "free_ref")
    bind(P.free_ref_p, ref)


def _plain_ref(ref, what):
    if isinstance(ref, RefView):
        raise RefError(f"{what} takes a ref, not a view of one; {what} the ref itself")
    if not is_ref(ref):
        raise RefError(f"{what} expects a ref, got {_what_is(ref)}")
    return ref


def _what_is(x) -> str:
    try:
        return f"a value of type {aval_of(x)}"
    except TypeError:
        return f"a {type(x).__name__}"


# -- places: a ref, view steps, and an index ----------------------------------------------

class _Place:
    """Where an access lands: base ref, RefIndexer (or None) and dynamic indices."""
    __slots__ = ("ref", "indexer", "dynamic")

    def __init__(self, ref, indexer, dynamic):
        self.ref, self.indexer, self.dynamic = ref, indexer, dynamic

    @property
    def aval(self) -> ShapedArray:
        inner = self.ref.aval.inner
        if self.indexer is None:
            return inner
        return inner.update(shape=indexer_shape(inner.shape, self.indexer,
                                                [aval_of(d) for d in self.dynamic]))

    @property
    def params(self) -> dict:
        return {} if self.indexer is None else {"indexer": self.indexer}


def _index_error(cls, message):
    return _REF_INDEX_ERRORS[cls](message)


def _is_dynamic_index(x) -> bool:
    return isinstance(x, Tracer) or (hasattr(x, "dtype") and hasattr(x, "shape"))


def _concrete_index(x):
    """The NumPy value of an index known now (a NumPy or jax array), else None."""
    return None if isinstance(x, Tracer) else np.asarray(x)


def _place(ref_or_view, idx, doing: str) -> _Place:
    base = _base(ref_or_view)
    if not is_ref(base):
        raise RefError(f"{doing} expects a ref, got {_what_is(base)}")
    _check_usable(base, doing)
    steps = list(ref_or_view._steps) if isinstance(ref_or_view, RefView) else []
    dynamic = list(ref_or_view._dynamic) if isinstance(ref_or_view, RefView) else []
    shape = ref_or_view.shape
    if idx is None:
        idx = ...
    index, values = build_index(shape, idx, _is_dynamic_index, _index_error,
                                _concrete_index)
    if not steps and not index.items:
        return _Place(base, None, [])
    return _Place(base, RefIndexer(tuple(steps) + (index,)), dynamic + values)


def _base(x):
    return x._ref if isinstance(x, RefView) else x


def _prepare_value(place: _Place, value, doing: str):
    """`value` as the exact array the primitive needs: the ref's dtype, broadcast to
    the indexed shape as NumPy assignment does."""
    target = place.aval
    if is_ref(value) or isinstance(value, RefView):
        raise RefError(f"{doing}: cannot store a ref in a ref; store its value r[...]")
    if isinstance(value, _PY_SCALARS):
        if not _scalar_fits(value, target.dtype):
            raise RefError(f"{doing}: cannot store the Python {type(value).__name__} "
                           f"{value!r} in a ref of dtype {target.dtype.name}")
        try:
            with np.errstate(over="ignore"):     # 1e5 into float16 is inf, as in JAX
                value = np.asarray(value, target.dtype)
        except OverflowError:
            raise RefOverflowError(f"{doing}: the Python int {value} does not fit in a "
                                   f"ref of dtype {target.dtype.name}") from None
    try:
        aval = aval_of(value)
    except TypeError:
        raise RefError(f"{doing}: cannot store a {type(value).__name__} in a ref; store "
                       f"an array") from None
    if aval.dtype != target.dtype:
        # A weak value (from a Python scalar) takes the ref's dtype, as a Python scalar
        # would: only into a kind that holds it (an int into a float ref, not a float
        # into an int ref).
        if not aval.weak_type or _kind_rank(aval.dtype) > _kind_rank(target.dtype):
            raise RefError(f"{doing}: the value has dtype {aval.dtype.name} but the ref "
                           f"holds {target.dtype.name}; convert it first with "
                           f".astype({target.dtype.name})")
        value = bind(P.convert_element_type_p, value, new_dtype=target.dtype,
                     weak_type=False)
        aval = aval_of(value)
    if aval.shape != target.shape:
        try:
            ok = np.broadcast_shapes(aval.shape, target.shape) == target.shape
        except ValueError:
            ok = False
        if not ok:
            raise RefError(f"{doing}: cannot write a value of shape {aval.shape} to a "
                           f"place of shape {target.shape} in {describe_ref(place.ref)}")
        # NumPy broadcasting aligns axes on the right; broadcast_in_dim stretches the
        # size-1 ones.
        lead = len(target.shape) - len(aval.shape)
        value = bind(P.broadcast_in_dim_p, value, shape=target.shape,
                     broadcast_dimensions=tuple(range(lead, len(target.shape))))
    return value


def _kind_rank(dtype) -> int:
    return 0 if is_bool(dtype) else 2 if is_float(dtype) else 3 if is_complex(dtype) else 1


def _scalar_fits(value, dtype) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return not is_bool(dtype)
    if isinstance(value, float):
        return is_float(dtype) or is_complex(dtype)
    return is_complex(dtype)


# -- the operations (minijax.ref.get/set/swap/addupdate) -----------------------------------

def get(ref, idx=None):
    """`ref[idx]`: read (part of) a ref."""
    place = _place(ref, idx, "get")
    return bind(P.get_p, place.ref, *place.dynamic, **place.params)


def swap(ref, idx, value):
    """Write `value` at `ref[idx]` and return what was there."""
    place = _place(ref, idx, "swap")
    _check_writable(place.ref, "swap")
    value = _prepare_value(place, value, "swap")
    return bind(P.swap_p, place.ref, value, *place.dynamic, **place.params)


def set(ref, idx, value):  # noqa: A001 -- JAX's name
    """`ref[idx] = value` (broadcast to the indexed shape)."""
    place = _place(ref, idx, "set")
    _check_writable(place.ref, "set")
    value = _prepare_value(place, value, "set")
    bind(P.swap_p, place.ref, value, *place.dynamic, **place.params)


def addupdate(ref, idx, x):
    """`ref[idx] += x`, accumulating at repeated integer-array indices (where
    `ref[idx] += x` in Python reads, adds and writes, so the last write wins)."""
    place = _place(ref, idx, "addupdate")
    _check_writable(place.ref, "addupdate")
    x = _prepare_value(place, x, "addupdate")
    bind(P.addupdate_p, place.ref, x, *place.dynamic, **place.params)


# -- views -------------------------------------------------------------------------------

@counts_as_array
class RefView:
    """A view of a ref: `r.at[idx]`, `r.T`, `r.reshape(...)`, and views of views.

    Reads and writes through it go to the underlying ref (JAX calls this a
    TransformedRef). It holds no data: just the ref, the view steps and the dynamic
    index values they use."""
    __slots__ = ("_ref", "_steps", "_dynamic", "_shape")

    def __init__(self, ref, steps, dynamic, shape):
        self._ref, self._steps, self._dynamic, self._shape = ref, tuple(steps), \
            tuple(dynamic), tuple(shape)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._ref.aval.dtype)
    ndim = property(lambda self: len(self._shape))
    size = property(lambda self: int(np.prod(self._shape, dtype=np.int64)))

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of an unsized (rank-0) ref view")
        return self._shape[0]

    def __repr__(self):
        return f"RefView({self.dtype.name}{list(self._shape)} of {self._ref!r})"


def _view(x, step, dynamic=()):
    base = _base(x)
    steps = (x._steps if isinstance(x, RefView) else ()) + (step,)
    dyn = (x._dynamic if isinstance(x, RefView) else ()) + tuple(dynamic)
    shape = indexer_shape(base.aval.shape, RefIndexer(steps + (Index(()),)),
                          [aval_of(d) for d in dyn])
    return RefView(base, steps, dyn, shape)


class _At:
    """`r.at`: `r.at[idx]` is a view of that part of the ref."""
    __slots__ = ("_target",)

    def __init__(self, target):
        self._target = target

    def __getitem__(self, idx):
        target = self._target
        _check_usable(_base(target), "a view")
        index, values = build_index(target.shape, idx, _is_dynamic_index, _index_error,
                                    _concrete_index)
        if not index.items:
            return target if isinstance(target, RefView) else RefView(
                target, (), (), target.shape)
        return _view(target, index, values)


def _transpose(x, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    ndim = len(x.shape)
    perm = tuple(reversed(range(ndim))) if not axes else tuple(
        int(a) % ndim if ndim else int(a) for a in axes)
    if sorted(perm) != list(range(ndim)):
        raise RefError(f"transpose axes {axes} are not a permutation of the {ndim} axes "
                       f"of the ref")
    if perm == tuple(range(ndim)):
        return x if isinstance(x, RefView) else RefView(x, (), (), x.shape)
    return _view(x, Transpose(perm))


def _reshape(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    size = int(np.prod(x.shape, dtype=np.int64))
    shape = [int(s) for s in shape]
    if shape.count(-1) == 1:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape[shape.index(-1)] = size // known if known else 0
    if any(s < 0 for s in shape) or int(np.prod(shape, dtype=np.int64)) != size:
        raise RefError(f"cannot reshape a ref view of shape {tuple(x.shape)} to "
                       f"{tuple(shape)}")
    return _view(x, Reshape(tuple(shape)))


# -- methods shared by Ref, RefView and ref tracers ----------------------------------------

# In `r[None]`, None is NumPy's new axis; in `minijax.ref.get(r, None)` it means
# "the whole ref" (JAX's signature). The sugar spells the new axis out.

def ref_getitem(ref, idx):
    return get(ref, (None,) if idx is None else idx)


def ref_setitem(ref, idx, value):
    set(ref, (None,) if idx is None else idx, value)


_METHODS = {
    "__getitem__": ref_getitem,
    "__setitem__": ref_setitem,
    "get": lambda self, idx=None: get(self, idx),
    "set": lambda self, value, idx=None: set(self, idx, value),
    "swap": lambda self, value, idx=None: swap(self, idx, value),
    "addupdate": lambda self, x, idx=None: addupdate(self, idx, x),
    "transpose": _transpose,
    "reshape": _reshape,
}
_PROPERTIES = {
    "at": lambda self: _At(self),
    "T": lambda self: _transpose(self),
}

for _cls in (Ref, RefView):
    for _name, _fn in _METHODS.items():
        setattr(_cls, _name, _fn)
    for _name, _fn in _PROPERTIES.items():
        setattr(_cls, _name, property(_fn))


def _shallow_copy(self):
    raise RefError(f"copy.copy of {describe_ref(self)} would be a second name for the same "
                   f"contents (aliasing); use the ref itself, or new_ref(r[...]) for an "
                   f"independent ref (copy.deepcopy makes one too)")


def _deep_copy(self, memo):
    copied = memo[id(self)] = new_ref(get(self))
    return copied


# A deep copy of a ref (of a pytree holding refs, say) is a new ref with the same
# contents, as in JAX; a shallow one would alias, so it is refused.
Ref.__copy__ = _shallow_copy
Ref.__deepcopy__ = _deep_copy


def _refuse(self, *args, **kwargs):
    raise RefError("a ref view is not an array: read its value with v[...] first")


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__matmul__", "__neg__", "__array__",
              "__float__", "__int__", "__bool__", "__iter__"):
    setattr(RefView, _name, _refuse)


def install_tracer_dispatch():
    """Give ref tracers the ref methods while array tracers keep theirs.

    `minijax.numpy` attaches array methods (`__getitem__`, `reshape`, `T`, ...) to
    `Tracer`; a tracer whose aval is a `RefType` must index like a `Ref` instead. Each
    name gets a small dispatcher that looks at the aval and falls back to whatever
    was there before, so it runs after `numpy._tracer_methods.attach_methods` (both
    are called once, in that order, by `minijax/__init__.py`)."""
    for name, ref_fn in {**_METHODS, **_PROPERTIES}.items():
        previous = Tracer.__dict__.get(name)
        is_property = name in _PROPERTIES
        array_fn = previous.fget if isinstance(previous, property) else previous
        if getattr(array_fn, "_minijax_ref_dispatch", False):
            continue
        dispatch = _make_dispatch(name, ref_fn, array_fn)
        setattr(Tracer, name, property(dispatch) if is_property else dispatch)


def _make_dispatch(name, ref_fn, array_fn):
    def dispatch(self, *args, **kwargs):
        if isinstance(self.aval, RefType):
            return ref_fn(self, *args, **kwargs)
        if array_fn is None:
            raise AttributeError(f"{type(self).__name__} of type {self.aval} has no "
                                 f"attribute {name!r}")
        return array_fn(self, *args, **kwargs)
    dispatch.__name__ = name
    dispatch._minijax_ref_dispatch = True
    return dispatch



class RefIndexError(RefError, IndexError):
    """A static index out of range, or a malformed one: IndexError, as NumPy."""


class RefIndexTypeError(RefError, TypeError):
    """An index of the wrong kind (a float, a bare list, a boolean mask known only at
    run time, a traced slice bound)."""


class RefOverflowError(RefError, OverflowError):
    """A Python int written to a ref whose dtype cannot hold it."""


_REF_INDEX_ERRORS = {IndexError: RefIndexError, TypeError: RefIndexTypeError}


# `ds(i, 3)` is a pytree, as JAX's: a traced start (or size) is a leaf, so one can be
# passed into `jit` or `vmap`; a static int stays static.
def _ds_flatten(d: DSlice):
    def leaf(x):
        return None if isinstance(x, (int, np.integer)) else x
    return (leaf(d.start), leaf(d.size)), (d.start if leaf(d.start) is None else None,
                                           d.size if leaf(d.size) is None else None,
                                           d.stride)


def _ds_unflatten(aux, children):
    start, size = (a if a is not None else c for c, a in zip(children, aux[:2]))
    return DSlice(start, size, aux[2])


jax.tree_util.register_pytree_node(DSlice, _ds_flatten, _ds_unflatten)
