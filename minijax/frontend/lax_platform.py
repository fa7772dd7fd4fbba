"""`lax.platform_dependent` and `lax.dtype`.

`platform_dependent(*args, cpu=..., cuda=..., default=...)` runs the branch of the
platform the computation runs on. JAX stages every branch into a `cond` on a
`platform_index` that lowering resolves, so one serialized program can run anywhere;
minijax lowers for the default backend only, so it picks the branch when it traces
(the same branch, and so the same values, that JAX's program runs there). JAX's errors
are kept: a branch that is not callable, the name 'gpu', and no branch for the
platform (JAX's `NotImplementedError`, eagerly and under jit).
"""
from __future__ import annotations

import jax
import numpy as np

from ..ir.trace import Tracer

__all__ = ["platform_dependent", "dtype"]


def _platform() -> str:
    """The lowering platform's name as `platform_dependent` spells it."""
    backend = jax.default_backend()
    if backend != "gpu":
        return backend
    version = getattr(jax.devices()[0].client, "platform_version", "").lower()
    return "rocm" if "rocm" in version else "cuda"


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
    platform = _platform()
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
