"""Devices and placement: the runtime names a JAX program reaches for.

minijax computes with JAX's own arrays on JAX's own devices, so these names are
thin: where an array lives, how many devices there are and waiting for a result
are questions about the runtime, answered by JAX's runtime. What minijax adds is
the part a transformation sees: under `jit`, `grad` or `vmap` a value is a tracer,
and placing it (`device_put`) or waiting for it (`block_until_ready`) means
nothing yet, so both hand tracers back unchanged, as JAX's do.

`named_call` and `named_scope` only name parts of a program in JAX's profiles and
HLO metadata; minijax's programs carry no such names, so they change nothing but
are accepted wherever JAX accepts them.
"""
from __future__ import annotations

import functools
from typing import Callable

import jax
import numpy as np
from jax import tree_util
from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

from ..ir import root_modes
from ..ir.ref_box import Ref
from ..ir.trace import Tracer
from ..ir.source_info import name_scope
from .sharding import constrain

__all__ = ["device_put", "devices", "local_devices", "device_count", "local_device_count",
           "process_index", "process_count", "default_backend", "block_until_ready",
           "named_call", "named_scope"]


def devices(backend: str | None = None):
    """The devices of `backend` (the default backend when None), as `jax.devices`."""
    return jax.devices(backend)


def local_devices(process_index: int | None = None, backend: str | None = None):
    """The devices attached to this process, as `jax.local_devices`."""
    return jax.local_devices(process_index, backend)


def device_count(backend: str | None = None) -> int:
    return jax.device_count(backend)


def local_device_count(backend: str | None = None) -> int:
    return jax.local_device_count(backend)


def process_index(backend: str | None = None) -> int:
    """This process's index among those of a multi-process run (0 when alone), as
    `jax.process_index`: programs use it to log or save from one process only."""
    return jax.process_index(backend)


def process_count(backend: str | None = None) -> int:
    """How many processes the run has (1 when alone), as `jax.process_count`."""
    return jax.process_count(backend)


def default_backend() -> str:
    """'cpu', 'gpu' or 'tpu': the platform computations run on by default."""
    return jax.default_backend()


def device_put(x, device=None, *, src=None, donate: bool = False, may_alias=None):
    """`x` (a pytree) as arrays on `device` (the default device when None), as
    `jax.device_put`: NumPy values and Python scalars become `jax.Array`s (a scalar
    weakly typed). `device` may be a `Sharding` (the array is split across its
    devices; a bare `PartitionSpec` splits it over the context mesh, `jax.set_mesh`).
    Traced values with a `NamedSharding`, `SingleDeviceSharding` or `PartitionSpec`
    get a sharding constraint; other traced values and refs are returned as they are."""
    if any(isinstance(leaf, (Tracer, Ref)) for leaf in tree_util.tree_leaves(x)):
        def put(leaf):
            if isinstance(leaf, Tracer) and isinstance(device, (
                    NamedSharding, SingleDeviceSharding, PartitionSpec)):
                # traced: a layout request in the program (frontend/sharding.py)
                return constrain(leaf, device, "device_put of a PartitionSpec", ValueError,
                                 moves=True)
            if isinstance(leaf, (Tracer, Ref)):
                return leaf
            return jax.device_put(leaf, device, src=src, donate=donate,
                                  may_alias=may_alias)
        return tree_util.tree_map(put, x)
    if root_modes.modes.jax_applied:      # a transfer guard set by config.update
        with root_modes.applied_to_jax():
            return jax.device_put(x, device, src=src, donate=donate, may_alias=may_alias)
    return jax.device_put(x, device, src=src, donate=donate, may_alias=may_alias)


def block_until_ready(x):
    """Wait until every array in the pytree `x` has been computed; returns `x`.
    Tracers and other leaves are left alone, as in `jax.block_until_ready`."""
    for leaf in tree_util.tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None and not isinstance(leaf, Tracer):
            wait()
    return x


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` with its operations in the scope `name` (default: its own name), as
    `named_scope` puts them; it computes what `fun` computes."""
    scope = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with name_scope(scope):
            return fun(*args, **kwargs)
    return named


def named_scope(name: str):
    """A context whose traced operations record the scope `name` (joined to the
    enclosing ones with '/'); lowering names their XLA ops with it, as JAX does
    (`jit(f)/name/sin` in the compiled program's metadata, in profiles). It changes
    nothing computed. A name that is no string is refused at the call, as JAX's is."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return name_scope(name)


def device_get(x):
    """`x` (a pytree) copied to the host, as `jax.device_get`: arrays become NumPy
    arrays; tracers (under a transformation, as JAX's) and other leaves are returned
    as they are. A ref is refused (RefError): read its value, `r[...]`, first."""
    def get(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        if isinstance(leaf, Ref):
            return np.asarray(leaf)         # raises RefError, naming the ref
        return jax.device_get(leaf)
    return tree_util.tree_map(get, x)
