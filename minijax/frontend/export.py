"""The code behind `minijax.export` (JAX's `jax.export`): save a `jit` function as
StableHLO, and call the saved program later, here or in JAX (docs/export.md).

`export(f)(*specs)` traces `f` to minijax's jaxpr and hands minijax's lowering of it
to `jax.export.export` (`backends/xla_export.py`); the `Exported` returned holds
JAX's `Exported` of that program, so serialization, the StableHLO text and the
checks made when a saved program is loaded are JAX's, and what they carry is
minijax's program. Its VJP program (`Exported.vjp()`, and what `serialize(vjp_order=n)`
saves) is minijax's reverse mode of `f`, exported the same way.

`Exported.call` binds `call_exported` (ir/export_primitive.py) inside a `custom_vjp`
whose backward pass calls the VJP program, as JAX's `Exported.call` does, so it runs
eagerly, under `jit` and under `grad`; forward mode and `vmap` are refused with JAX's
errors.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.export
import numpy as np
from jax import tree_util

from .autodiff import vjp as _vjp
from .jit import JitFunction, jit
from .pytrees import fun_name as _fun_name
from ..backends import xla
from ..backends.xla_export import export_closed_jaxpr
from ..ir import primitives as P
from ..ir.export_primitive import call_exported_p, SavedProgram
from ..ir.trace import bind
from ..ir.types import RefType, float0
from ..transforms.custom_derivatives import custom_vjp
from ..transforms.discharge import mentions_refs, discharge_jaxpr

# What minijax passes through from JAX unchanged: the safety checks a loaded program
# may skip, and the platform a program is saved for by default.
DisabledSafetyCheck = jax.export.DisabledSafetyCheck
default_export_platform = jax.export.default_export_platform

_JAX_FIELDS = ("fun_name", "in_tree", "in_avals", "out_tree", "out_avals",
               "in_shardings_hlo", "out_shardings_hlo", "nr_devices", "platforms",
               "ordered_effects", "unordered_effects", "disabled_safety_checks",
               "mlir_module_serialized", "calling_convention_version",
               "module_kept_var_idx", "uses_global_constants")


class Exported:
    """A saved program, as JAX's `jax.export.Exported`: its types and pytrees
    (`in_avals`, `out_avals`, `in_tree`, `out_tree`, as JAX reports them), where it
    runs (`platforms`, `nr_devices`, the shardings), its StableHLO (`mlir_module()`),
    `serialize(vjp_order=0)`, `call(*args, **kwargs)`, and `vjp()` where it has one."""

    def __init__(self, jax_exported: jax.export.Exported):
        self._jax = jax_exported
        self._flat_call = self._vjp_program = None

    def __getattr__(self, name):
        if name in _JAX_FIELDS:
            return getattr(self._jax, name)
        raise AttributeError(f"'Exported' object has no attribute '{name}'")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_JAX_FIELDS))

    @property
    def jax_exported(self) -> jax.export.Exported:
        """JAX's `Exported` of the same program (what `jax.export.deserialize` of
        `serialize()` gives)."""
        return self._jax

    def mlir_module(self, serialized: bool = True):
        """The saved StableHLO as text (`serialized=False`: JAX's MLIR module object,
        which needs an MLIR context, as JAX's does)."""
        return self._jax.mlir_module(serialized=serialized)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        return self._jax.serialize(vjp_order=vjp_order)

    def has_vjp(self) -> bool:
        return self._jax.has_vjp()

    def vjp(self) -> "Exported":
        # Made once: each `grad` of a call reads it, and making it exports a program.
        if self._vjp_program is None:
            self._vjp_program = Exported(self._jax.vjp())
        return self._vjp_program

    def in_shardings_jax(self, mesh=None):
        # JAX 0.12 made `mesh` optional; 0.10 and 0.11 require it (and say so)
        return self._jax.in_shardings_jax(*(() if mesh is None else (mesh,)))

    def out_shardings_jax(self, mesh):
        return self._jax.out_shardings_jax(mesh)

    def call(self, *args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != self._jax.in_tree:
            raise ValueError(
                f"The invocation args and kwargs must have the same pytree structure as "
                f"when the function '{self.fun_name}' was exported: it was exported "
                f"for {self._jax.in_tree} and is called with {in_tree}")
        return self._jax.out_tree.unflatten(self._flat()(*leaves))

    def _flat(self):
        """The call on the flat arguments, made once per `Exported`."""
        if self._flat_call is None:
            self._flat_call = _differentiable_call(self)
        return self._flat_call

    def __eq__(self, other):
        return isinstance(other, Exported) and self._jax == other._jax

    def __hash__(self):
        return hash(self._jax)

    def __str__(self):
        return str(self._jax)

    def __repr__(self):
        return repr(self._jax)


def _differentiable_call(exported: Exported):
    """The call of `exported` on its flat arguments, whose VJP is its VJP program.
    As in JAX, the residuals are the arguments, and a program without a VJP fails
    only when differentiated."""
    saved = SavedProgram(exported._jax)

    def f_flat(*leaves):
        return bind(call_exported_p, *leaves, exported=saved)
    # JAX's names, which its jaxpr of the call shows
    f_flat = custom_vjp(f_flat)

    def f_flat_vjp_fwd(*leaves):
        return f_flat(*leaves), leaves

    def f_flat_vjp_bwd(leaves, out_cts):
        backward = exported.vjp()
        # The VJP program takes float0 cotangents for integer outputs.
        cts = [np.zeros(np.shape(ct), float0) if aval.dtype == float0 else ct
               for ct, aval in zip(out_cts, backward.in_avals[len(leaves):])]
        return tuple(backward._flat()(*leaves, *cts))

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)
    return f_flat


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """`export(f)(*args_specs, **kwargs_specs)`: `f` (a `minijax.jit` function) saved
    for arguments of these types (arrays, or `ShapeDtypeStruct`s), as an `Exported`.
    `platforms` (default: this machine's) and `disabled_checks` are JAX's."""
    if not isinstance(fun_jit, JitFunction):
        hint = " (JAX's jit: minijax exports a minijax.jit function)" if hasattr(
            fun_jit, "lower") else ""
        raise ValueError(f"Function to be exported must be the result of `jit` but "
                         f"is: {fun_jit}{hint}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        return Exported(_export_jax(fun_jit, args_specs, kwargs_specs, platforms,
                                    tuple(disabled_checks)))
    return do_export


def _export_jax(fun_jit, args, kwargs, platforms, disabled_checks) -> jax.export.Exported:
    staged, _ = fun_jit._stage(args, kwargs)
    closed, name = staged.closed, _fun_name(fun_jit._fun)
    if any(isinstance(aval, RefType) for aval in closed.in_avals):
        # JAX raises a bare NotImplementedError here.
        raise NotImplementedError(f"export of {name}: an exported function takes arrays, "
                                  f"not refs; pass the ref's value (r[...]) instead")
    if mentions_refs(closed.jaxpr):
        if any(isinstance(v.aval, RefType) for v in closed.jaxpr.constvars):
            raise ValueError(f"export of {name}: the function closes over a ref, whose "
                             f"contents a saved program cannot read; pass them as an "
                             f"argument")
        closed = discharge_jaxpr(closed).jaxpr     # only refs it makes and ends itself
    dyn_args, dyn_kwargs = fun_jit.dynamic_arguments(args, kwargs)
    jax_exported = export_closed_jaxpr(
        closed, staged.out_tree, name, dyn_args, dyn_kwargs,
        placement=xla.placement_key(fun_jit.placement), platforms=platforms,
        disabled_checks=disabled_checks)
    primal = _flat_primal(staged, name)
    # JAX's VJP program would be JAX's reverse mode: minijax saves its own.
    return _with_vjp_getter(jax_exported, primal)


def _flat_primal(staged, name):
    consts = list(staged.closed.consts)

    def primal(*leaves):
        return bind(P.jit_p, *consts, *leaves, jaxpr=staged.call_jaxpr, name=name)
    return primal


def _with_vjp_getter(jax_exported, primal):
    def get_vjp(exported: jax.export.Exported) -> jax.export.Exported:
        n_in = len(exported.in_avals)

        def fun_vjp_jax(*primals_and_cts):
            primals, cts = primals_and_cts[:n_in], primals_and_cts[n_in:]
            _, pullback = _vjp(primal, *primals)
            return tuple(pullback(list(cts)))
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                 for a in (*exported.in_avals,
                           *(a.to_tangent_aval() for a in exported.out_avals))]
        return _export_jax(jit(fun_vjp_jax), specs, {}, exported.platforms,
                           exported.disabled_safety_checks)
    return _replace_vjp(jax_exported, get_vjp)


def _replace_vjp(jax_exported, get_vjp):
    return dataclasses.replace(jax_exported, _get_vjp=get_vjp)


def deserialize(blob: bytearray) -> Exported:
    """The `Exported` saved by `serialize()` (here or by JAX's `Exported.serialize`)."""
    return Exported(jax.export.deserialize(blob))
