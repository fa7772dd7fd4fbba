"""Round trips on programs the rest of the suite traces.

* `tests/test_reference_programs.py`'s minijax programs (control flow, remat, names,
  custom derivatives, debug printing): minijax -> `to_jax` -> `jax.make_jaxpr` ->
  `import_jaxpr` computes what the minijax program computes.
* `tests/refs_control_flow_cases.py`'s ref programs, written once for both libraries:
  the JAX twin imported into minijax computes JAX's results, and exported back
  still does; the minijax twin survives the minijax -> JAX -> minijax round trip.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax.interop import import_jaxpr, to_jax
from minijax.ir import dumps
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from tests import refs_control_flow_cases as C
from tests.test_reference_programs import PROGRAMS

V = np.array([0.5, -1.0, 2.0], np.float32)
CASES = [(name, i) for name, programs in PROGRAMS.items() for i in range(len(programs))]
# Programs no transform touched, whose structure JAX's public API spells as minijax
# does: they come back equation for equation. (`lax.switch` clamps its index, which a
# minijax `cond` has already done; custom calls come back with new rule objects.)
SAME_EQUATIONS = {("scan", 0), ("scan", 1), ("scan", 2), ("while", 0), ("remat", 0),
                  ("name", 0), ("debug_print", 0)}


def _match(actual, expected):
    assert_trees_match([np.asarray(a) for a in jax.tree_util.tree_leaves(actual)],
                       [np.asarray(e) for e in jax.tree_util.tree_leaves(expected)],
                       check_weak_types=False, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("prim_name,index", CASES)
def test_minijax_program_round_trips(prim_name, index, capsys):
    fun, args = PROGRAMS[prim_name][index]
    closed = minijax.make_jaxpr(fun)(*args)
    back = import_jaxpr(jax.make_jaxpr(to_jax(closed))(*args))
    expected = fun(*args)
    _match(eval_jaxpr(back.jaxpr, back.consts, list(args)), expected)
    if (prim_name, index) in SAME_EQUATIONS:
        assert dumps(back) == dumps(closed)


@pytest.mark.parametrize("case", C.ALL, ids=lambda c: c.__name__)
def test_jax_ref_program_imports_and_exports(case):
    program = jax.make_jaxpr(lambda x: case(C.JX, x, views=False))(V)
    expected = case(C.JX, V, views=False)
    closed = import_jaxpr(program)
    _match(eval_jaxpr(closed.jaxpr, closed.consts, [V]), expected)
    _match(to_jax(closed)(V), expected)


@pytest.mark.parametrize("case", C.ALL, ids=lambda c: c.__name__)
def test_minijax_ref_program_round_trips(case):
    closed = minijax.make_jaxpr(lambda x: case(C.MJ, x, views=False))(V)
    back = import_jaxpr(jax.make_jaxpr(to_jax(closed))(V))
    _match(eval_jaxpr(back.jaxpr, back.consts, [V]), case(C.MJ, V, views=False))
