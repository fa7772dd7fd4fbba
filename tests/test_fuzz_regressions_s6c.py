"""Regression tests for the fuzzer's findings F70-F79 (docs/fuzzing_findings.md), met
by the default campaign (`python -m minijax fuzz`, seed 0) in session 6. Each test is
the finding's shrunk reproducer (or the smallest program showing the cause), run
through both APIs."""
import jax
import jax.ad_checkpoint
import numpy as np
import pytest

import minijax
import minijax.ad_checkpoint
from minijax.testing import assert_trees_match


# -- F70: eager checkpoint_name of a float64 NumPy array -----------------------------------

@pytest.mark.parametrize("value", [np.array([1.5, 0.875]), np.float64(1.5),
                                   np.array([1, 2], np.int64), np.float32(2.0), 1.5])
def test_eager_checkpoint_name_gives_the_canonical_dtype(value):
    # seed 0:34: vmap of `checkpoint_name(x)` over a float64 batch returned the float64
    # NumPy array; JAX's eager primitives put NumPy operands in the x64-off dtype
    got = minijax.ad_checkpoint.checkpoint_name(value, "b")
    want = jax.ad_checkpoint.checkpoint_name(value, "b")
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_vmap_of_checkpoint_name_over_a_float64_batch():
    batch = np.array([1.5, 0.875])
    got = minijax.vmap(lambda x: minijax.ad_checkpoint.checkpoint_name(x, "b"))(batch)
    want = jax.vmap(lambda x: jax.ad_checkpoint.checkpoint_name(x, "b"))(batch)
    assert_trees_match(got, want)
    assert_trees_match(minijax.jit(minijax.vmap(
        lambda x: minijax.ad_checkpoint.checkpoint_name(x, "b")))(batch), want)
