"""Regression tests for the fuzzer's findings F80-F89 (docs/fuzzing_findings.md), the
session-6 helpers' leftover findings. Each test is the finding's shrunk reproducer (or
the smallest program showing the cause), run through both APIs."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match


# -- F80: a switch's transpose typed the cotangents by the primal outputs ------------------

def _switch_program(api, index):
    lax = api.lax
    branches = [lambda a, b, c: (c, a * 2.0),
                lambda a, b, c: (lax.erfc(lax.clamp(-4.0, a, 4.0)), b),
                lambda a, b, c: (b, lax.sin(c))]
    return lambda x: lax.switch(np.int32(index), branches, x, x, x)


@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("weak_cotangent", [False, True])
@pytest.mark.parametrize("jit", [False, True])
def test_switch_vjp_cotangent_takes_the_output_cotangents_type(index, weak_cotangent, jit):
    # seed s6fz6a2:7: vjp of a switch of a weak f32[] argument, pulled back with a
    # strong f32 cotangent: JAX transposes the branches at the cotangents' own types,
    # so the argument's cotangent is strong; minijax used the branches' (weak) output
    # types and returned a weak cotangent
    def pulled_back(api):
        fn = _switch_program(api, index)
        out, pullback = api.vjp(api.jit(fn) if jit else fn, -0.25)
        cts = tuple(api.numpy.ones_like(o) if weak_cotangent else np.ones((), np.float32)
                    for o in out)
        return out, pullback(cts)
    assert_trees_match(pulled_back(minijax), pulled_back(jax))
