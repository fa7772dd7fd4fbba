"""`pure_callback`: call a Python function on the host from inside a program.

`pure_callback(f, result_shape_dtypes, *args)` binds one `pure_callback` equation
(`ir/control_flow_primitives.py`) whose `callback` param is `f` on flat values: it
rebuilds the arguments' pytrees, calls `f` with host arrays (what JAX's host callback
hands over; NumPy arrays in the reference evaluator), and flattens what `f`
returns, which must match `result_shape_dtypes` in structure, shapes and dtypes.
The equation has no effect: minijax may drop an unused call or make it more than once,
so `f` must be a pure function, as JAX asks. XLA runs it through JAX's own host
callback (`backends/xla_control_flow.py`); it has no derivative (wrap it in a
`custom_jvp`); under vmap it is called as `vmap_method` says
(`transforms/callback_rules.py`).
"""
from __future__ import annotations

import weakref
from typing import Callable

from jax import tree_util

from .pytrees import flatten_checked
from ..ir import control_flow_primitives as CF
from ..ir.trace import bind
from ..ir.types import canonical_dtype


class _FlatPureCallback:
    """`callback` on flat values: pytrees rebuilt on the way in, flattened on the way out."""
    __slots__ = ("callback", "in_tree", "out_tree", "__weakref__")
    # Held weakly, as debug.callback's: an entry lives while an equation or a compiled
    # program holds it, so eager calls reuse their program and the table needs no reset.
    _cache: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()

    def __init__(self, callback, in_tree, out_tree):
        self.callback, self.in_tree, self.out_tree = callback, in_tree, out_tree

    @classmethod
    def of(cls, callback, in_tree, out_tree):
        key = (callback, in_tree, out_tree)
        found = cls._cache.get(key)
        if found is None:
            found = cls._cache[key] = cls(callback, in_tree, out_tree)
        return found

    def __call__(self, *values):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, list(values))
        leaves, tree = tree_util.tree_flatten(self.callback(*args, **kwargs))
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {self.out_tree}")
        return leaves

    def __repr__(self):
        return getattr(self.callback, "__name__", type(self.callback).__name__)


def pure_callback(callback: Callable, result_shape_dtypes, *args, sharding=None,
                  vmap_method=None, **kwargs):
    """`callback(*args, **kwargs)` computed on the host, with results of the shapes and
    dtypes of `result_shape_dtypes` (a pytree of `ShapeDtypeStruct`s or arrays), as
    `jax.pure_callback`. `callback` must be pure: it may be skipped or called again."""
    if not callable(callback):
        raise TypeError(f"pure_callback: expected a callable, got {callback!r}")
    if vmap_method not in CF.VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{list(CF.VMAP_METHODS)}, but got: {vmap_method}")
    if sharding is not None and len(sharding.device_set) > 1:
        raise ValueError("pure_callback: minijax calls a callback once, on the host of one "
                         "device; a sharding over several devices is not supported")
    leaves, in_tree = flatten_checked((args, kwargs), "pure_callback: argument")
    results, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    for result in results:
        if not (hasattr(result, "shape") and hasattr(result, "dtype")):
            raise TypeError(f"pure_callback: result_shape_dtypes must hold "
                            f"ShapeDtypeStructs or arrays, got {result!r}")
    outs = bind(CF.pure_callback_p, *leaves,
                callback=_FlatPureCallback.of(callback, in_tree, out_tree),
                result_shapes=tuple(tuple(int(d) for d in r.shape) for r in results),
                result_dtypes=tuple(canonical_dtype(r.dtype) for r in results),
                vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)
