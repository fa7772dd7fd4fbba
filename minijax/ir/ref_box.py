"""`Ref`, the box: the concrete value of a `RefType`, as an array is of a `ShapedArray`.

A `Ref` outside any transformation holds a `jax.Array` (its current contents) and a
state: live, frozen or freed. It refuses to act as an array (arithmetic, NumPy
conversion, pickling), saying how to read its value instead. Running programs on
boxes is the eager runtime's job (`backends/eager_ref_runtime.py`); indexing and
views are the tracing front end's (`frontend/refs.py`). `RefError` is every error
about misusing a ref, wherever it is found.
"""
from __future__ import annotations

import numpy as np

from .source_info import user_location as _user_frame
from .trace import MinijaxError
from .types import RefType, aval_of_value, is_key, key_tag, keys_as_numpy


class RefError(MinijaxError, TypeError, ValueError):
    """Misuse of a ref: aliasing, use after freeze/free_ref, returning one, ..."""


class Ref:
    """A mutable array outside any transformation: what `minijax.new_ref` returns.

    A `Ref` is not an array: read it with `r[...]` (or `r[idx]`, `r.get()`), write
    it with `r[idx] = v`. `jax.Array` arithmetic, `jnp` functions and
    `np.asarray` reject it with a message saying so."""
    __slots__ = ("_value", "_state", "_origin", "_consumed_at", "__weakref__")
    __array_priority__ = 2000     # so `ndarray + ref` asks the ref (which refuses)

    def __init__(self, value, origin: str | None = None):
        self._value = value
        self._state = "live"
        self._origin = origin or _user_frame()
        self._consumed_at = None

    @property
    def aval(self) -> RefType:
        value = self._value
        if value is None:
            raise RefError(f"{describe_ref(self)} was {self._state}; it has no contents")
        return RefType(aval_of_value(value).strip_weak_type())

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of an unsized (rank-0) ref")
        return self.shape[0]

    def __repr__(self):
        if self._state != "live":
            return f"Ref(<{self._state}>)"
        if is_key(self.dtype):   # keys show their words, as JAX prints key arrays
            tag = key_tag(self.dtype)
            body = np.array2string(keys_as_numpy(self._value)[tag], separator=", ",
                                   prefix="Ref(")
            return f"Ref({body}, dtype=key<{tag}>)"
        body = np.array2string(np.asarray(self._value), separator=", ", prefix="Ref(")
        return f"Ref({body}, dtype={self.dtype.name})"

    def __array__(self, *args, **kwargs):
        raise RefError(f"{describe_ref(self)} cannot be converted to a NumPy array: a ref "
                       f"is not an array. Read its value first: np.asarray(r[...])")

    def __reduce__(self):
        raise RefError("refs cannot be pickled; pickle their value r[...] instead")


def _refuse_operator(name):
    def op(self, *args, **kwargs):
        raise RefError(f"{describe_ref(self)} does not support {name}: a ref is not an "
                       f"array. Read its value with r[...] (or write r[...] = value)")
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__pos__", "__abs__", "__invert__", "__and__", "__rand__", "__or__",
              "__ror__", "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__",
              "__float__", "__int__", "__complex__", "__index__", "__bool__", "__iter__",
              "__lshift__", "__rshift__"):
    setattr(Ref, _name, _refuse_operator(_name))


def describe_ref(ref) -> str:
    """How error messages name a ref: its type and where it was created."""
    if isinstance(ref, Ref):
        kind = "Ref" if ref._value is None else str(ref.aval)
        return f"the {kind} created at {ref._origin}"
    return f"the traced ref of type {getattr(ref, 'aval', '?')}"


def check_live(ref: Ref, doing: str):
    if ref._state != "live":
        how = "freeze" if ref._state == "frozen" else "free_ref"
        raise RefError(used_after_message(describe_ref(ref), how, ref._consumed_at, doing))


def used_after_message(ref_text, how, where, doing) -> str:
    keep = ("use the value freeze returned" if how == "freeze" else
            "free a ref only once you are done with it")
    return (f"{ref_text} is used after {how} (at {where}) by {doing}. A ref cannot be "
            f"used once frozen or freed: {keep}, or make a new ref with minijax.new_ref")
