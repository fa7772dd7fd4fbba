"""`call_exported`: a call of a program saved with `minijax.export` (or `jax.export`).

    call_exported[exported]  *args -> *results

`exported` is a `SavedProgram`: the `jax.export.Exported` that holds the program as
serialized StableHLO, of which minijax sees only the types. The arguments are the leaves of the call's
pytree, in `exported.in_tree`'s order, and must have `exported.in_avals`' shapes and
dtypes (a weak type is taken as the strong one, as in JAX); the results have
`exported.out_avals`' types, weak types included. The call has no effects: a program
with effects cannot be exported (JAX refuses to serialize host callbacks).
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from .types import ShapedArray, RefType, dtype_of_jax
from .registry import Primitive, type_rules

call_exported_p = Primitive("call_exported", multiple_results=True)


class SavedProgram:
    """The `exported` param: JAX's `Exported`, printed in a jaxpr as JAX prints it
    (its `repr` would spell out the whole serialized module)."""
    __slots__ = ("exported",)

    def __init__(self, exported):
        self.exported = exported

    def __eq__(self, other):
        return isinstance(other, SavedProgram) and self.exported == other.exported

    def __hash__(self):
        return hash(self.exported)

    def __repr__(self):
        return str(self.exported)


def _argument_mismatch(exported, avals) -> str | None:
    """What is wrong with calling `exported` on values of types `avals` (the leaves of
    a pytree of its `in_tree`), in JAX's words, or None."""
    paths = [tree_util.keystr(path, simple=False) for path, _ in
             tree_util.tree_flatten_with_path(
                 exported.in_tree.unflatten(range(len(avals))))[0]]
    for (want, got, path) in zip(exported.in_avals, avals, paths):
        where = "args" + path[3:] if path.startswith("[0]") else "kwargs" + path[3:]
        if isinstance(got, RefType):
            return f"{where} is a ref; an exported function takes arrays only"
        if len(want.shape) != len(got.shape):
            return (f"Rank mismatch for {where}: expected {want.shape} and called with "
                    f"{got.shape}")
        if dtype_of_jax(want.dtype) != got.dtype:     # a key's is JAX's key<fry>
            return (f"Dtype mismatch for {where}: expected {want.dtype} and called "
                    f"with {got.dtype}")
        if tuple(want.shape) != tuple(got.shape):
            return (f"Shape mismatch for {where}: expected {tuple(want.shape)} and "
                    f"called with {got.shape}")
    return None


def _call_exported_rule(*avals, exported):
    exported = exported.exported
    if not all(isinstance(d, (int, np.integer))
               for a in (*exported.in_avals, *exported.out_avals) for d in a.shape):
        raise NotImplementedError(
            f"'{exported.fun_name}' was exported with symbolic dimensions "
            f"{[a.str_short() for a in exported.in_avals]}; minijax's types have "
            f"concrete dimensions only, so it calls programs of concrete shapes")
    if len(avals) != len(exported.in_avals):
        raise ValueError(f"call_exported of '{exported.fun_name}' takes "
                         f"{len(exported.in_avals)} arguments, got {len(avals)}")
    problem = _argument_mismatch(exported, avals)
    if problem is not None:
        raise ValueError(problem)
    return [ShapedArray(tuple(a.shape), dtype_of_jax(a.dtype), a.weak_type)
            for a in exported.out_avals]


type_rules[call_exported_p] = _call_exported_rule
