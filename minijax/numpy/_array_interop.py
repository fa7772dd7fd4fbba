"""Indexing a concrete `jax.Array` with a minijax tracer: `xs[i]` in a traced body.

An eager minijax result is a real `jax.Array`, and closing over one is how a table of
constants enters a loop body or a jitted function. Arithmetic between such an array
and a tracer already works: JAX's operators answer `NotImplemented` for an operand
they do not know, and Python then runs the tracer's reflected operator. Indexing has
no reflected form, so `xs[i]` with `i` traced would reach JAX's own indexing, which
cannot read a minijax tracer -- and `lax.fori_loop(0, n, lambda i, c: c + xs[i], 0.)`,
one of the most common JAX idioms, would fail.

JAX offers no extension point for a foreign index object (it refuses to abstractify
one), so this needs a hook on `jax.Array.__getitem__` and `jax.Array.at`. The hook
exists only while a minijax transformation is running: `ir/trace.py`'s
`transformation_scope` installs it when the first minijax trace starts and removes
it when the last one ends. Importing minijax changes nothing in JAX, and JAX running
its own programs -- the oracle minijax is tested against -- never meets the hook
(`tests/test_oracle_integrity.py`). While installed, it is a no-op for every index
that holds no minijax tracer: one scan of the index, then JAX's own method
(`benchmarks/array_interop_hook.py` measures it). An index (or, for `.at[...]`, an
update value) that holds a minijax tracer goes to minijax's indexing, which stages
a gather or scatter.
"""
from __future__ import annotations

from ..ir.ref_python_index import is_ds
from ..ir.trace import Tracer, transformation_scope
from ..ir.types import jax_array_type
from . import _indexing

_jax_methods: dict = {}      # JAX's own methods, while ours are installed


def _holds_tracer(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, slice):
            if any(isinstance(b, Tracer) for b in (part.start, part.stop, part.step)):
                return True
        elif is_ds(part):
            if any(isinstance(b, Tracer) for b in (part.start, part.size)):
                return True
        elif isinstance(part, Tracer):
            return True
        elif isinstance(part, list) and _holds_tracer(tuple(part)):
            return True
    return False


def _getitem(self, index):
    if _holds_tracer(index):
        return _indexing.getitem(self, index)
    return _jax_methods["__getitem__"](self, index)


class _UpdateAt:
    """`xs.at[index]` of a concrete array: minijax's updates when a tracer is
    involved (in the index or in the values), JAX's otherwise."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __getattr__(self, method):
        def update(*args, **kwargs):
            if _holds_tracer(self.index) or _holds_tracer(args):
                target = _indexing._IndexUpdateRef(self.array, self.index)
            else:
                target = _jax_methods["at"].fget(self.array)[self.index]
            return getattr(target, method)(*args, **kwargs)
        update.__name__ = method
        return update


class _At:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _UpdateAt(self.array, index)


def install():
    if not _jax_methods:
        array_type = jax_array_type()
        _jax_methods.update(__getitem__=array_type.__getitem__, at=array_type.at)
        array_type.__getitem__ = _getitem
        array_type.at = property(_At)


def uninstall():
    """Give `jax.Array` its own `__getitem__` and `at` back."""
    if _jax_methods:
        array_type = jax_array_type()
        array_type.__getitem__ = _jax_methods.pop("__getitem__")
        array_type.at = _jax_methods.pop("at")


transformation_scope.register(install, uninstall)
