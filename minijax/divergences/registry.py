"""The divergence record and `register`, which every area module calls (see
`__init__.py`)."""
from __future__ import annotations

from typing import NamedTuple


class Divergence(NamedTuple):
    name: str
    jax_version: str          # the version the JAX behaviour was observed on
    jax_behaviour: str
    minijax_behaviour: str
    reason: str
    # Public names a program must use to meet it (the REPL's :check uses these to
    # point at an entry when minijax and JAX disagree).
    transforms: tuple = ()
    # JAX versions seen doing as intended (a release that fixed it, or one before the
    # regression), comma-separated as jax_version: the pins assert JAX's intended
    # behaviour there, strictly, so the record keeps saying where it holds.
    intended_on: str = ""


DIVERGENCES: list[Divergence] = []
known_divergences = DIVERGENCES       # the name the REPL looks up


def register(name, jax_version, jax_behaviour, minijax_behaviour, reason,
             transforms=(), intended_on="") -> Divergence:
    record = Divergence(name, jax_version, jax_behaviour, minijax_behaviour, reason,
                        tuple(transforms), intended_on)
    if any(d.name == name for d in DIVERGENCES):
        raise ValueError(f"divergence {name!r} registered twice")
    DIVERGENCES.append(record)
    return record
