"""Shared pytest set-up: JAX on CPU unless told otherwise (on a GPU, full-precision
float32 matrix products), XLA's CPU compiler set for compile speed (the suite's
programs are tiny, so compiling them is most of its time), every traced jaxpr
verified and round-tripped through the text form, hypothesis without deadlines (a
first XLA compile can take a second), derandomized under CI, and a fresh root trace
for every test."""
import atexit
import os
import shutil
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before anything imports jax

# On a GPU (`JAX_PLATFORMS=cuda,cpu`, tests/devices.py), float32 matrix products default
# to TensorFloat-32, 10 bits of mantissa: two programs that group the same products
# differently then differ at 1e-3, above the tolerances of the tests that compare
# minijax's program with JAX's. At full float32 precision they compare the programs,
# not TensorFloat-32's rounding. (A CPU computes float32 products in float32 anyway.)
if os.environ["JAX_PLATFORMS"] != "cpu":
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")

# LLVM's optimization of the generated code is about a seventh of the suite's CPU time and
# buys nothing for programs of a few ops; HLO passes (fusion, buffer assignment), and so
# every value, FLOP count and memory figure the tests compare, are unchanged by it.
_XLA_FLAGS = "--xla_backend_optimization_level=0"
# (XLA's older LLVM IR emitters, `--xla_cpu_use_fusion_emitters=false` on jaxlib 0.10,
# compile a third faster but round some fused elementwise kernels differently from the
# one-op programs JAX runs eagerly, which breaks the bit-for-bit comparisons of
# `minijax.random` with JAX; so they are not used.)

# Set once, by the first process to load this file; pytest-xdist workers and the
# subprocesses tests start inherit it. An XLA_FLAGS of your own wins.
os.environ.setdefault("XLA_FLAGS", _XLA_FLAGS)

# One JAX persistent compilation cache for this run, made empty and removed at the end,
# so nothing carries over between runs: it shares compiled programs between tests (each
# file's neighbours compile many of the same small programs: a third fewer compiles
# when test_grad follows test_jvp), between the pytest-xdist workers and with the
# subprocesses tests start. Made by the first process to load this file, which also
# removes it; the others inherit it. A JAX_COMPILATION_CACHE_DIR of your own wins.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _run_cache = tempfile.mkdtemp(prefix="minijax-tests-xla-cache-")
    atexit.register(shutil.rmtree, _run_cache, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _run_cache
    # Every program is worth keeping: the suite's programs compile in milliseconds each.
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
# JAX writes an entry without a lock, so a worker may, rarely, read one the other is
# still writing: JAX then warns "Error reading persistent compilation cache entry" and
# compiles the program itself, so no result changes (a truncated entry, tried on 0.10.2).

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
