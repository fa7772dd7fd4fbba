"""The running JAX's version, for the tests whose expected value depends on it.

minijax follows the newest JAX where JAX changed between releases; a test that compares
with an older JAX branches on `JAX_VERSION` and says in one line which release does what.
Compare tuples (`JAX_VERSION >= (0, 11)`), never version strings.
"""
from __future__ import annotations

import re

import jax


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
