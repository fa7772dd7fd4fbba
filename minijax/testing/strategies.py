"""Hypothesis strategies for minijax programs and their inputs.

The fuzzer's generator (fuzz.py) draws every choice from a `random.Random`;
Hypothesis's `st.randoms()` is such an object whose draws Hypothesis records and can
shrink, so these strategies are the fuzzer's programs with Hypothesis's search,
shrinking and example database:

    from hypothesis import given
    from minijax.testing import strategies as mst

    @given(mst.programs(features=["elementwise", "reductions"]))
    def test_jit_changes_nothing(case):
        eager = mst.evaluate(case)
        jitted = minijax.jit(mst.as_function(case))(*case.leaves)
        assert_trees_match(jitted, eager)

* `programs(features=None, size=8)` -- a `FuzzCase`: `.program` (a minijax
  `ClosedJaxpr`), `.leaves` (its arguments, edge values included), `.safe_leaves`
  (moderate values), `.features`, `.primitives`.
* `inputs(case, edge_values=True)` -- new arguments of the program's types.
* `transforms()` -- a row name of the fuzzer's battery; `check(case, transform)`
  runs it and returns the `Row`.
* `as_function(case)` / `evaluate(case, leaves=None)` -- the program as a flat
  Python function on minijax, and its outputs.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import minijax
from .fuzz import FEATURES, FuzzCase, all_transforms, check_case, generate
from .fuzz_builder import random_value

__all__ = ["programs", "inputs", "transforms", "check", "as_function", "evaluate",
           "FEATURES"]


@st.composite
def programs(draw, features=None, size=8) -> FuzzCase:
    """A random well-typed minijax program with arguments (fuzz.py's generator,
    driven by Hypothesis)."""
    rng = draw(st.randoms(use_true_random=False))
    label = draw(st.integers(0, 2 ** 31 - 1))      # names the program's safe inputs
    return generate(f"hypothesis:{label}", features=features, size=size, rng=rng)


@st.composite
def inputs(draw, case: FuzzCase, edge_values=True) -> list:
    """Fresh arguments for `case.program`: the same types, new values."""
    rng = draw(st.randoms(use_true_random=False))
    out = []
    for x in case.leaves:
        if isinstance(x, minijax.Ref):
            value = np.asarray(x[...])
            out.append(minijax.new_ref(random_value(rng, value.shape, value.dtype, edge_values)))
        elif isinstance(x, (bool, int, float)):
            out.append(type(x)(draw(st.sampled_from([0, 1, -1, 2, 3]))))
        else:
            x = np.asarray(x)
            out.append(random_value(rng, x.shape, x.dtype, edge_values))
    return out


def transforms():
    """One row name of the fuzzer's battery (transforms and invariants)."""
    return st.sampled_from(all_transforms())


def check(case: FuzzCase, transform: str):
    """The battery's `Row` for one transform of `case` (minijax against JAX, or an
    invariant); `row.ok` is whether nothing is unexplained."""
    return check_case(case, [transform])[0]


def as_function(case: FuzzCase):
    """The program as a Python function of its flat arguments, run by minijax."""
    from ..transforms.ad_util import eval_jaxpr
    program = case.program

    def fn(*leaves):
        return tuple(eval_jaxpr(program.jaxpr, program.consts, leaves))
    return fn


def evaluate(case: FuzzCase, leaves=None):
    """The program's outputs at `leaves` (default: its own arguments)."""
    return as_function(case)(*(case.leaves if leaves is None else leaves))
