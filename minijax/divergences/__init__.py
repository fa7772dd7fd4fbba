"""The known-divergence registry: where real JAX does otherwise than it intends.

minijax is differential-tested against JAX. Where the two disagree and JAX is the
one that is wrong -- by its own stated intent, its documentation, or NumPy's rules
it means to follow -- minijax follows the intent and the case is recorded here.
Each record names the JAX version it was seen on, what JAX does, what minijax does,
and why. `tests/test_divergences.py` pins *both* behaviours for every record, so a
JAX release that fixes one (or a minijax change that drifts) fails a test and the
record can be retired.

The records live in one module per area (`remat.py`, `refs.py`, ...), each calling
`registry.register`; this module gathers them. Look a record up with
`DIVERGENCES_BY_NAME[name]`; `python -c "import minijax.divergences as d; d.show()"`
prints them all.
"""
from .registry import Divergence, DIVERGENCES, known_divergences, register  # noqa: F401

# The areas register their records on import, in this order: a new area adds its
# module here (and calls `registry.register`).
from . import (remat, control_flow, refs, refs_transforms, refs_jit,  # noqa: F401
               refs_surface, refs_vmap, refs_control_flow, refs_found, windows, random,
               fuzz, collectives, lax_extras, numpy, jit, autodiff, linalg, scipy,
               custom_batching, experimental, jet)

DIVERGENCES_BY_NAME = {d.name: d for d in DIVERGENCES}


def show():
    for d in DIVERGENCES:
        intended = f"; as intended on {d.intended_on}" if d.intended_on else ""
        print(f"{d.name} (jax {d.jax_version}{intended})\n  jax:     {d.jax_behaviour}\n"
              f"  minijax: {d.minijax_behaviour}\n  why:     {d.reason}\n")

