"""The facts about a staged call that `jax.stages`' objects share: its arguments'
structure and types, which of them are donated, its output's structure and types;
and `Wrapped`, the base of what can be traced and lowered (`jit`'s result).

`Traced`, `Lowered` and `Compiled` (`frontend/aot.py`) all answer `in_tree`,
`out_tree`, `in_avals`, `args_info` and `donate_argnums` from minijax's trace, so they
agree with each other whether or not the program has refs (whose XLA program takes
the refs' contents as extra inputs and outputs).
"""
from __future__ import annotations

import abc
import dataclasses

import jax
from jax import tree_util

from .tracing import shape_dtype_struct

# JAX's alias: the options `Lowered.compile(compiler_options=...)` passes to XLA.
CompilerOptions = dict[str, "str | bool"]


class Wrapped(abc.ABC):
    """A function that can be traced and lowered ahead of time (`jit`'s result), as
    `jax.stages.Wrapped`."""

    @abc.abstractmethod
    def trace(self, *args, **kwargs) -> "Traced":
        ...

    @abc.abstractmethod
    def lower(self, *args, **kwargs):
        ...


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """One dynamic argument leaf of a staged call: its type and whether it is donated."""
    _aval: object
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype


class CallInfo:
    """The facts of one staged call of a jitted function, shared by its stages."""

    def __init__(self, jitted, staged, args, kwargs):
        dyn_args, dyn_kwargs = jitted.dynamic_arguments(args, kwargs)
        self.jitted, self.staged = jitted, staged
        self.in_tree = tree_util.tree_structure((dyn_args, dyn_kwargs))
        self.donated = tuple(jitted.donated_leaves(args, kwargs))

    @property
    def out_tree(self):
        return self.staged.out_tree

    @property
    def in_avals(self):
        return tree_util.tree_unflatten(self.in_tree, list(self.staged.closed.in_avals))

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self.out_tree, list(self.staged.closed.out_avals))

    @property
    def args_info(self):
        donated = set(self.donated)
        return tree_util.tree_unflatten(
            self.in_tree, [ArgInfo(aval, i in donated)
                           for i, aval in enumerate(self.staged.closed.in_avals)])

    def out_info(self, weak_types: bool = True):
        """The outputs as `ShapeDtypeStruct`s; a lowered program's have no weak
        types (`weak_types=False`), as JAX's `Lowered.out_info`."""
        def info(aval):
            struct = shape_dtype_struct(aval)       # a key's dtype is JAX's key<fry>
            return struct if weak_types else jax.ShapeDtypeStruct(struct.shape,
                                                                  struct.dtype)
        return tree_util.tree_unflatten(self.out_tree,
                                        [info(a) for a in self.staged.closed.out_avals])


class StagedFacts:
    """The attributes every stage answers from its `CallInfo` (`self._info`)."""
    in_tree = property(lambda self: self._info.in_tree)
    out_tree = property(lambda self: self._info.out_tree)
    in_avals = property(lambda self: self._info.in_avals)
    args_info = property(lambda self: self._info.args_info)
    donate_argnums = property(lambda self: self._info.donated)
