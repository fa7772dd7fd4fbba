"""`lax.platform_dependent`, `lax.composite` and `lax.dtype`.

`platform_dependent(*args, cpu=..., cuda=..., default=...)` runs the branch of the
platform the computation runs on. JAX stages every branch into a `cond` on a
`platform_index` that lowering resolves, so one serialized program can run anywhere;
minijax lowers for the default backend only, so it picks the branch when it traces
(the same branch, and so the same values, that JAX's program runs there). JAX's errors
are kept: a branch that is not callable, the name 'gpu', and no branch for the
platform (JAX's `NotImplementedError`, eagerly and under jit).

`composite(decomposition, name, version)` wraps a function whose meaning is its
decomposition, which a compiler that knows `name` may replace with its own kernel. JAX
binds a `composite` equation lowered to `stablehlo.composite`; minijax has no such
primitive and runs the decomposition inline, which is what XLA compiles on CPU and GPU
when it does not know the name: the same values. So the program text has no
`composite`, and `grad` and `vmap` go through it, where JAX 0.10-0.12 have neither
rule ("JVP rule for composite not implemented", "Batching rule ... not implemented").
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from ..ir.errors import UnexpectedTracerError
from ..ir.trace import Tracer

__all__ = ["platform_dependent", "composite", "dtype"]


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform[platform](*args)`, or `default(*args)` for another platform."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a "
                            f"callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda', 'rocm', or 'oneapi' for "
                             "lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a "
                        "callable.")
    platform = jax.export.default_export_platform()
    if platform in per_platform:
        return per_platform[platform](*args)
    if default is not None:
        return default(*args)
    groups = tuple((name,) for name in per_platform)
    raise NotImplementedError(f"MLIR translation rule for primitive 'platform_index("
                              f"platforms={groups})' not found for platform {platform}")


def dtype(x):
    """The dtype of a value or type: Python scalars and types canonicalized, arrays'
    own dtype kept (`jax.lax.dtype`)."""
    if isinstance(x, Tracer):
        return np.dtype(x.dtype)
    return jax.lax.dtype(x)


def composite(decomposition, name: str, version: int = 0):
    """`decomposition` as a named composite op: positional arguments are its inputs,
    keyword arguments its (static) attributes."""
    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        if any(isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(kwargs)):
            raise UnexpectedTracerError(
                f"Found a JAX Tracer as an attribute in the decomposition for the "
                f"composite op '{name}'. Attributes must be known when tracing: pass "
                f"traced values as positional arguments of the composite.")
        return decomposition(*args, **kwargs)
    return call
