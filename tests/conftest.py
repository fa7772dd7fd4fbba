"""Shared pytest set-up: JAX on CPU unless told otherwise, XLA's backend optimizations
off (the suite's programs are tiny, so compiling them is most of its time), every
traced jaxpr verified and round-tripped through the text form, hypothesis without
deadlines (a first XLA compile can take a second), derandomized under CI, and a
fresh root trace for every test."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before anything imports jax
# LLVM's optimization of the generated code is about a seventh of the suite's CPU time and
# buys nothing for programs of a few ops; HLO passes (fusion, buffer assignment), and so
# every value, FLOP count and memory figure the tests compare, are unchanged by it.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
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
