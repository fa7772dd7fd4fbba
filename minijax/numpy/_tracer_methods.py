"""Operators and array methods on tracers: `x + y`, `x @ w`, `x[i]`, `x.sum()`, `x.at`...

`minijax.ir.trace.Tracer` is deliberately bare (the IR layer knows nothing of NumPy);
importing `minijax.numpy` attaches these, so a traced value behaves like a jax.Array
inside a traced function. Concrete eager results are real `jax.Array`s, whose own
operators are JAX's; minijax's functions accept both.

Each operator is the jnp function of the same meaning, so promotion and broadcasting
are the same whichever way a computation is written. Reflected operators
(`2 * x`) swap the operands back.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir.errors import ConcretizationTypeError
from ..ir.trace import Tracer
from . import (_array_edit, _complex, _creation, _dtypes, _indexing, _linalg, _reductions,
               _shape, _sorting, _take, _ufuncs)


def _swap(fn):
    return lambda self, other: fn(other, self)


def _defer_to(fn):
    """A binary operator that answers NotImplemented for operands it cannot take, so
    Python tries the other operand's reflected method."""
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(self, other)
    return op


def _is_operand(x) -> bool:
    return isinstance(x, (Tracer, bool, int, float, complex, list, tuple, np.ndarray,
                          np.generic)) or hasattr(x, "__jax_array__") or hasattr(x, "aval")


_BINARY = {
    "add": _ufuncs.add, "sub": _ufuncs.subtract, "mul": _ufuncs.multiply,
    "truediv": _ufuncs.true_divide, "floordiv": _ufuncs.floor_divide,
    "mod": _ufuncs.remainder, "pow": _ufuncs.power, "matmul": _linalg.matmul,
    "and": _ufuncs.bitwise_and, "or": _ufuncs.bitwise_or, "xor": _ufuncs.bitwise_xor,
    "divmod": _ufuncs.divmod, "lshift": _ufuncs.left_shift, "rshift": _ufuncs.right_shift,
}
_COMPARISONS = {
    "eq": _ufuncs.equal, "ne": _ufuncs.not_equal, "lt": _ufuncs.less,
    "le": _ufuncs.less_equal, "gt": _ufuncs.greater, "ge": _ufuncs.greater_equal,
}


def _reshape_method(self, *shape, order="C", out_sharding=None):
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` both work, as in NumPy."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return _placed(_shape.reshape(self, shape, order), out_sharding, "reshape")


def _placed(out, out_sharding, name):
    """A method's result placed by JAX's `out_sharding=` (reshape, ravel, flatten,
    repeat take it, as jax.Array's methods do)."""
    from ..frontend.sharding import apply_out_sharding
    return apply_out_sharding(out, out_sharding, name)


def _transpose_method(self, *axes):
    if not axes or axes == (None,):
        return _shape.transpose(self)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return _shape.transpose(self, axes)


def _item(self, *args):
    value = self._concrete_or_raise("item()")
    return np.asarray(value).item(*args)


def _tolist(self):
    return np.asarray(self._concrete_or_raise("tolist()")).tolist()


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    return (_indexing.getitem(self, i) for i in range(self.shape[0]))


def _setitem(self, index, value):
    raise TypeError("minijax arrays are immutable: use x = x.at[idx].set(value) (or "
                    ".add(value)) instead of x[idx] = value")


def _round_operator(self, ndigits=None):
    """`round(x)`: like Python's round of a float, no ndigits gives integers."""
    rounded = _ufuncs.round(self, ndigits or 0)
    return rounded if ndigits is not None else _creation.astype(rounded, int)


def _contains(self, value):
    return _reductions.any(_ufuncs.equal(self, value))


def _view(self, dtype=None, type=None):
    """`x.view(dtype)`: the same bits read as `dtype`. A change of item size changes
    the last axis' length by the ratio; bool counts as one byte, complex as two floats."""
    if type is not None:
        raise NotImplementedError("view: the `type` argument is not supported (as in JAX)")
    if dtype is None:
        return self
    target = _dtypes.canonicalize_dtype(dtype, "view")
    source = np.dtype(self.dtype)
    if self.ndim == 0:
        if source.itemsize != target.itemsize:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return _shape.squeeze(_view(_shape.expand_dims(self, 0), target))
    if (self.shape[-1] * source.itemsize) % target.itemsize:
        raise ValueError(f"view: cannot view the last axis of {self.shape[-1]} x "
                         f"{source.itemsize} bytes as items of {target.itemsize} bytes")
    if source == target:
        return self
    # bitcast_convert_type takes neither bool nor complex: go through uint8 / float pairs.
    if source == np.bool_:
        return _view(_creation.astype(self, np.uint8), target)
    if source.kind == "c":
        parts = _shape.stack([_complex.real(self), _complex.imag(self)], axis=-1)
        return _view(_shape.reshape(parts, self.shape[:-1] + (2 * self.shape[-1],)), target)
    if target == np.bool_:
        return _creation.astype(_view(self, np.uint8), np.bool_)
    if target.kind == "c":
        floats = _view(self, np.dtype(f"f{target.itemsize // 2}"))
        pairs = _shape.reshape(floats, floats.shape[:-1] + (floats.shape[-1] // 2, 2))
        return lax.complex(pairs[..., 0], pairs[..., 1])
    ratio_out, ratio_in = target.itemsize // source.itemsize, source.itemsize // target.itemsize
    if ratio_out > 1:  # several source items make one target item
        grouped = _shape.reshape(self, self.shape[:-1] + (self.shape[-1] // ratio_out,
                                                          ratio_out))
        return lax.bitcast_convert_type(grouped, target)
    split = lax.bitcast_convert_type(self, target)
    if ratio_in > 1:
        return _shape.reshape(split, self.shape[:-1] + (self.shape[-1] * ratio_in,))
    return split


def _byteswap(self, inplace=False):
    """The bytes of each element in reverse order (the value read with the other
    endianness)."""
    if inplace:
        raise ValueError("byteswap: inplace=True is not possible: JAX arrays are immutable")
    if np.dtype(self.dtype).itemsize == 1:
        return self
    as_bytes = _view(_shape.expand_dims(self, -1), np.uint8)
    return _shape.squeeze(_view(_shape.flip(as_bytes, -1), self.dtype), -1)


def _refuse_concrete(what):
    """A jax.Array query about a concrete buffer (its device, shards, bytes...): a traced
    value has no buffer, so it raises ConcretizationTypeError."""
    def refuse(self, *args, **kwargs):
        raise ConcretizationTypeError(f"The {what} is not available on a traced array of type "
                          f"{self.aval}: it has no buffer while it is traced. Query it on "
                          f"the concrete result, outside the traced function.")
    return refuse


def _refuse_attribute(name, hint):
    def refuse(self):
        raise AttributeError(f"The '{name}' attribute is not available on a traced array "
                             f"of type {self.aval}. {hint}")
    return property(refuse)


def _no_memory_space(self):
    # JAX (>= 0.11) raises ValueError, not AttributeError, so hasattr() does not hide it.
    raise ValueError(f"The 'memory_space' attribute is not available on a traced array "
                     f"of type {self.aval}: minijax keeps every array in device memory "
                     f"(JAX users query jax.typeof(x).memory_space).")


def _no_flat(self):
    raise NotImplementedError("JAX arrays do not implement the arr.flat property: use "
                              "arr.flatten() instead.")


def _tobytes(self, order="C"):
    return np.asarray(self._concrete_or_raise("tobytes()")).tobytes(order)


_BUFFER_QUERIES = {  # method or property name -> whether it is a property
    "addressable_shards": True, "global_shards": True, "committed": True,
    "is_fully_addressable": True, "is_fully_replicated": True, "traceback": True,
    "addressable_data": False, "delete": False, "devices": False, "is_deleted": False,
    "on_device_size_in_bytes": False, "unsafe_buffer_pointer": False,
    "__dlpack__": False, "__dlpack_device__": False,
}

_METHODS = {
    "__getitem__": _indexing.getitem,
    "__setitem__": _setitem,
    "__iter__": _iter,
    "__neg__": _ufuncs.negative, "__pos__": _ufuncs.positive,
    "__abs__": _ufuncs.absolute, "__invert__": _ufuncs.invert,
    "at": property(_indexing._IndexUpdateHelper),
    "T": property(lambda self: _shape.transpose(self)),
    "mT": property(_shape.matrix_transpose),
    "reshape": _reshape_method,
    "transpose": _transpose_method,
    "astype": lambda self, dtype, copy=False: _creation.astype(self, dtype),
    "sum": _reductions.sum, "prod": _reductions.prod, "mean": _reductions.mean,
    "max": _reductions.max, "min": _reductions.min, "var": _reductions.var,
    "std": _reductions.std, "all": _reductions.all, "any": _reductions.any,
    "argmax": _reductions.argmax, "argmin": _reductions.argmin,
    "cumsum": _reductions.cumsum, "cumprod": _reductions.cumprod,
    "ptp": _reductions.ptp,
    "squeeze": _shape.squeeze,
    "ravel": lambda self, order="C", *, out_sharding=None: _placed(
        _shape.ravel(self, order), out_sharding, "ravel"),
    "flatten": lambda self, order="C", *, out_sharding=None: _placed(
        _shape.ravel(self, order), out_sharding, "flatten"),
    "swapaxes": _shape.swapaxes,
    "repeat": lambda self, repeats, axis=None, *, total_repeat_length=None,
    out_sharding=None: _placed(_shape.repeat(self, repeats, axis,
                                             total_repeat_length=total_repeat_length),
                               out_sharding, "repeat"),
    "diagonal": _shape.diagonal, "trace": _shape.trace,
    "clip": _ufuncs.clip, "round": _ufuncs.round, "dot": _linalg.dot,
    "take": _take.take, "sort": _sorting.sort, "argsort": _sorting.argsort,
    "nonzero": _sorting.nonzero, "copy": _creation.copy,
    "item": _item, "tolist": _tolist,
    "real": property(_complex.real), "imag": property(_complex.imag),
    "conj": _complex.conjugate, "conjugate": _complex.conjugate,
    "searchsorted": _sorting.searchsorted,
    "argpartition": _array_edit.argpartition,
    "choose": lambda self, choices, out=None, mode="raise": _array_edit.choose(
        self, choices, out=out, mode=mode),
    "compress": lambda self, condition, axis=None, *, out=None, size=None, fill_value=0:
        _array_edit.compress(condition, self, axis, out=out, size=size,
                             fill_value=fill_value),
    "view": _view, "byteswap": _byteswap, "tobytes": _tobytes,
    "flat": property(_no_flat),
    "__round__": _round_operator, "__contains__": _contains,
    "__reversed__": lambda self: reversed(list(_iter(self))),
    "__copy__": _creation.copy, "__deepcopy__": lambda self, memo: _creation.copy(self),
    "__complex__": lambda self: complex(self._concrete_or_raise("complex()")),
    "__array_namespace__": lambda self, api_version=None: _array_namespace(),
    "device": _refuse_attribute("device", "Query the device of the concrete result."),
    "sharding": _refuse_attribute("sharding", "To query sharding information on a "
                                  "traced value, use jax.typeof(x)."),
    "memory_space": property(_no_memory_space),
    "to_device": lambda self, device, *, stream=None: _to_device(self, device),
    "nbytes": property(lambda self: self.size * self.dtype.itemsize),
    "itemsize": property(lambda self: self.dtype.itemsize),
}


def _to_device(x, device):
    """`x.to_device(d)` (the array API's), as `device_put(x, d)`: a traced value's
    placement is the program's, so it is `x` itself."""
    from ..frontend.devices import device_put   # (the frontend imports this package)
    return device_put(x, device)


def _array_namespace():
    from .. import numpy  # this module's own package: not importable while it loads
    return numpy


def attach_methods(cls=Tracer):
    """Give `cls` (the Tracer base class) NumPy's operators and methods."""
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _defer_to(fn))
        setattr(cls, f"__r{name}__", _defer_to(_swap(fn)))
    for name, fn in _COMPARISONS.items():
        setattr(cls, f"__{name}__", _defer_to(fn))
    for name, value in _METHODS.items():
        setattr(cls, name, value)
    for name, is_property in _BUFFER_QUERIES.items():
        refuse = _refuse_concrete(f"'{name}' attribute" if is_property else f"{name}() method")
        setattr(cls, name, property(refuse) if is_property else refuse)

