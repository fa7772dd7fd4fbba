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

from ..ir.trace import Tracer
from . import _creation, _indexing, _linalg, _reductions, _shape, _sorting, _take, _ufuncs


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


def _reshape_method(self, *shape, order="C"):
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` both work, as in NumPy."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return _shape.reshape(self, shape, order)


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
    "squeeze": _shape.squeeze, "ravel": _shape.ravel,
    "flatten": lambda self, order="C": _shape.ravel(self, order),
    "swapaxes": _shape.swapaxes, "repeat": _shape.repeat,
    "diagonal": _shape.diagonal, "trace": _shape.trace,
    "clip": _ufuncs.clip, "round": _ufuncs.round, "dot": _linalg.dot,
    "take": _take.take, "sort": _sorting.sort, "argsort": _sorting.argsort,
    "nonzero": _sorting.nonzero, "copy": _creation.copy,
    "item": _item, "tolist": _tolist,
    "nbytes": property(lambda self: self.size * self.dtype.itemsize),
    "itemsize": property(lambda self: self.dtype.itemsize),
}


def attach_methods(cls=Tracer):
    """Give `cls` (the Tracer base class) NumPy's operators and methods."""
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _defer_to(fn))
        setattr(cls, f"__r{name}__", _defer_to(_swap(fn)))
    for name, fn in _COMPARISONS.items():
        setattr(cls, f"__{name}__", _defer_to(fn))
    for name, value in _METHODS.items():
        setattr(cls, name, value)

