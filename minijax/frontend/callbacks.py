"""`pure_callback` and `io_callback`: call a Python function on the host from inside a
program.

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

`io_callback(f, result_shape_dtypes, *args, ordered=False)` (JAX's
`jax.experimental.io_callback`, public as `minijax.experimental.io_callback`) binds an
`io_callback` equation instead: the same call, with the `Debug` effect, so it is never
dropped or duplicated and runs in program order. It has no derivative (JAX's error);
vmap calls an unordered one once per example and refuses an ordered one, as JAX does.
"""
from __future__ import annotations

import weakref
from typing import Callable

import jax
from jax import tree_util

from .pytrees import flatten_checked
from ..ir import control_flow_primitives as CF
from ..ir.trace import bind
from ..ir.types import canonical_dtype


class _FlatPureCallback:
    """`callback` on flat values: pytrees rebuilt on the way in, flattened on the way out."""
    __slots__ = ("callback", "in_tree", "out_tree", "api", "__weakref__")
    # Held weakly, as debug.callback's: an entry lives while an equation or a compiled
    # program holds it, so eager calls reuse their program and the table needs no reset.
    _cache: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()

    def __init__(self, callback, in_tree, out_tree, api):
        self.callback, self.in_tree, self.out_tree, self.api = callback, in_tree, out_tree, api

    @classmethod
    def of(cls, callback, in_tree, out_tree, api="pure_callback"):
        key = (callback, in_tree, out_tree, api)
        found = cls._cache.get(key)
        if found is None:
            found = cls._cache[key] = cls(callback, in_tree, out_tree, api)
        return found

    def __call__(self, *values):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, list(values))
        leaves, tree = tree_util.tree_flatten(self.callback(*args, **kwargs))
        if tree != self.out_tree:
            raise TypeError(f"{self.api}: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {self.out_tree}")
        return leaves

    def __repr__(self):
        return getattr(self.callback, "__name__", type(self.callback).__name__)


def pure_callback(callback: Callable, result_shape_dtypes, *args, sharding=None,
                  vmap_method=None, **kwargs):
    """`callback(*args, **kwargs)` computed on the host, with results of the shapes and
    dtypes of `result_shape_dtypes` (a pytree of `ShapeDtypeStruct`s or arrays), as
    `jax.pure_callback`. `callback` must be pure: it may be skipped or called again."""
    if vmap_method not in CF.VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{list(CF.VMAP_METHODS)}, but got: {vmap_method}")
    return _call_on_host("pure_callback", CF.pure_callback_p, callback, result_shape_dtypes,
                         args, kwargs, sharding, vmap_method=vmap_method)


def io_callback(callback: Callable, result_shape_dtypes, *args, sharding=None,
                ordered: bool = False, **kwargs):
    """`callback(*args, **kwargs)` called on the host for its side effects and results,
    as `jax.experimental.io_callback`: never dropped when its results are unused, and
    with `ordered=True` run in program order with the other ordered callbacks (minijax
    keeps unordered ones in program order too)."""
    return _call_on_host("io_callback", CF.io_callback_p, callback, result_shape_dtypes,
                         args, kwargs, sharding, ordered=bool(ordered))


def _call_on_host(api, prim, callback, result_shape_dtypes, args, kwargs, sharding, **params):
    """The call of a host callback (`pure_callback_p` or `io_callback_p`): checked,
    its arguments flattened, its results unflattened to `result_shape_dtypes`' tree."""
    if not callable(callback):
        raise TypeError(f"{api}: expected a callable, got {callback!r}")
    if sharding is not None and len(sharding.device_set) > 1:
        raise ValueError(f"{api}: minijax calls a callback once, on the host of one "
                         f"device; a sharding over several devices is not supported")
    leaves, in_tree, out_tree, shapes, dtypes = _flat_call(api, result_shape_dtypes, args,
                                                          kwargs)
    outs = bind(prim, *leaves, callback=_FlatPureCallback.of(callback, in_tree, out_tree, api),
                result_shapes=shapes, result_dtypes=dtypes, **params)
    return tree_util.tree_unflatten(out_tree, outs)


def effects_barrier():
    """Wait until every host callback of the programs launched so far has run, as
    `jax.effects_barrier`: minijax's programs are JAX's, so JAX's barrier covers them."""
    jax.effects_barrier()


def _flat_call(api, result_shape_dtypes, args, kwargs):
    """The flat arguments and their tree, and the declared results' tree, shapes, dtypes."""
    leaves, in_tree = flatten_checked((args, kwargs), f"{api}: argument")
    results, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    for result in results:
        if not (hasattr(result, "shape") and hasattr(result, "dtype")):
            raise TypeError(f"{api}: result_shape_dtypes must hold "
                            f"ShapeDtypeStructs or arrays, got {result!r}")
        if canonical_dtype(result.dtype) != result.dtype:
            # The results would silently be 32-bit; JAX refuses, with this ValueError.
            raise ValueError(f"{api}: result_shape_dtypes cannot specify 64-bit types "
                             f"when `jax_enable_x64` is disabled (got {result.dtype}); "
                             f"declare the 32-bit type the callback's result becomes")
    return (leaves, in_tree, out_tree, tuple(tuple(int(d) for d in r.shape) for r in results),
            tuple(canonical_dtype(r.dtype) for r in results))
