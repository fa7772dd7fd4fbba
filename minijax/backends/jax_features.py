"""What the installed JAX offers, where minijax depends on its release.

minijax runs on several JAX releases (the CI's 0.10, and what pip gives each newer
Python). Where JAX's public API gained or changed something between them, the code
that depends on it reads one constant from this module instead of probing JAX at its
own site, so every such difference is listed here once, with the release that made
it. Each constant is computed once, at import, by asking the public API itself (is
the function there, does it take the argument): that stays true for a build whose
version string says nothing, and never needs `jax._src`.

`JAX_VERSION` is for what the API cannot be asked about: the tests whose expected
values depend on the release read it through `minijax.testing`, and compare tuples
(`JAX_VERSION >= (0, 11)`), never version strings.
"""
from __future__ import annotations

import inspect
import re

import jax
from jax import lax

__all__ = ["JAX_VERSION", "parse_version", "LAX_HAS_LOG2", "LAX_HAS_ONE_MINUS_SQUARE",
           "LINSPACE_SCALES_STOP_FIRST",
           "TOP_K_TAKES_IS_STABLE"]


def parse_version(text: str) -> tuple[int, ...]:
    """`"0.12.0.1"` -> `(0, 12, 0, 1)`; a suffix such as `.dev20260101` or `rc1` is dropped."""
    parts = []
    for piece in text.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.end() != len(piece):
            break
    return tuple(parts)


JAX_VERSION = parse_version(jax.__version__)

# JAX 0.11 added `lax.log2` (its own primitive; 0.10 has none).
LAX_HAS_LOG2 = hasattr(lax, "log2")

# JAX 0.11 added `lax.one_minus_square`, with a derivative rule of its own (-2x).
LAX_HAS_ONE_MINUS_SQUARE = hasattr(lax, "one_minus_square")

# JAX 0.12's `jnp.linspace` interpolates as `start * (1 - t) + (stop / div) * i` (with
# `t = i / div`), which gives integer points exactly; before, `start * (1 - t) + stop * t`.
# The two round some points 1 ulp apart. (A function's body, not its API: no
# attribute tells them apart.)
LINSPACE_SCALES_STOP_FIRST = JAX_VERSION >= (0, 12)

# JAX 0.11 added `lax.top_k`'s `is_stable`; before, top_k was always stable.
TOP_K_TAKES_IS_STABLE = "is_stable" in inspect.signature(lax.top_k).parameters
