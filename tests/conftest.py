"""Shared pytest set-up: JAX on CPU unless told otherwise, every traced jaxpr verified
and round-tripped through the text form, hypothesis without
deadlines (a first XLA compile can take a second), derandomized under CI, and a
fresh root trace for every test."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before anything imports jax
# Verify and round-trip every jaxpr minijax traces (minijax/ir/checks.py).
os.environ.setdefault("MINIJAX_ENABLE_CHECKS", "1")

import pytest
from hypothesis import settings

settings.register_profile("minijax", deadline=None)
settings.register_profile("minijax-ci", parent=settings.get_profile("minijax"),
                          derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                     "minijax-ci" if os.environ.get("CI") else "minijax"))


@pytest.fixture(autouse=True)
def fresh_trace_state():
    """Each test starts at the root (eager) trace, whatever an earlier test left."""
    from minijax.ir.trace import reset_trace_state
    reset_trace_state()
    yield
