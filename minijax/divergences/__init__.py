"""The known-divergence registry: where real JAX does otherwise than it intends.

minijax is differential-tested against JAX. Where the two disagree and JAX is the
one that is wrong -- by its own stated intent, its documentation, or NumPy's rules
it means to follow -- minijax follows the intent and the case is recorded here.
Each record names the JAX version it was seen on, what JAX does, what minijax does,
and why. `tests/test_divergences.py` pins *both* behaviours for every record, so a
JAX release that fixes one (or a minijax change that drifts) fails a test and the
record can be retired.

The records live in one module per area (`remat.py`, `refs.py`, ...), each calling
`register`; this module gathers them. Look a record up with
`DIVERGENCES_BY_NAME[name]`; `python -c "import minijax.divergences as d; d.show()"`
prints them all.
"""
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


DIVERGENCES: list[Divergence] = []
known_divergences = DIVERGENCES       # the name the REPL looks up


def register(name, jax_version, jax_behaviour, minijax_behaviour, reason,
             transforms=()) -> Divergence:
    record = Divergence(name, jax_version, jax_behaviour, minijax_behaviour, reason,
                        tuple(transforms))
    if any(d.name == name for d in DIVERGENCES):
        raise ValueError(f"divergence {name!r} registered twice")
    DIVERGENCES.append(record)
    return record


# The areas register their records on import, in this order.
from minijax.divergences import remat, control_flow, refs, refs_transforms, refs_jit, refs_surface  # noqa: E402,F401
from minijax.divergences import refs_vmap  # noqa: E402,F401
from minijax.divergences import refs_control_flow  # noqa: E402,F401
from minijax.divergences import fuzz  # noqa: E402,F401

DIVERGENCES_BY_NAME = {d.name: d for d in DIVERGENCES}


def show():
    for d in DIVERGENCES:
        print(f"{d.name} (jax {d.jax_version})\n  jax:     {d.jax_behaviour}\n"
              f"  minijax: {d.minijax_behaviour}\n  why:     {d.reason}\n")

