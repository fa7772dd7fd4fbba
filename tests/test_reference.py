"""The reference evaluator against real JAX.

Every primitive's reference rule (minijax/backends/reference_rules.py) is run on
random inputs of a few shapes and dtypes and compared with `jax.lax` on the same
inputs, then with the XLA backend's lowering rule. Both comparisons are
parametrized over `primitives_by_name`, so a new primitive without a reference rule
or without test inputs here fails a test. Ref primitives and `jit` are checked by
evaluating whole programs against JAX's own refs.

Results must match exactly (dtype, shape, and values bit for bit, NaN == NaN)
except where rounding legitimately differs: transcendental functions (XLA uses
polynomial approximations good to a few ulps) and sums whose order differs. The
reference reproduces XLA's CPU numerics, so JAX's side runs on the CPU device even when
the suite runs on a GPU (`tests/devices.py`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from minijax.backends.reference import (RefBox, eval_closed_jaxpr, eval_jaxpr,
                                        reference_rules)
from minijax.backends.eager_dispatch import JAX_PRIMITIVE_NAMES
from minijax.backends.xla import lowering_rules
from minijax.ir import (MinijaxError, ShapedArray, bind, primitives as P,
                        primitives_by_name, trace_to_jaxpr)
from minijax.ir.primitives import out_avals_of
from minijax.ir.types import aval_of_value, keys_as_numpy
from minijax.testing import JAX_VERSION

from tests.devices import on_cpu
from tests.reference_cases import (CASES, EXACT, NAMED_AXIS_PRIMITIVES, TRANSCENDENTAL, Case,
                                   bf16, f32, floats)


# Ref primitives have no meaning on their own; `test_refs_match_jax` runs them.
REF_PRIMITIVES = {"new_ref", "empty_ref", "get", "swap", "addupdate", "freeze", "free_ref"}


# -- the tests ------------------------------------------------------------------------------

def _as_list(prim_name, value):
    return list(value) if primitives_by_name[prim_name].multiple_results else [value]


def flush_subnormals(x):
    """XLA on CPU (and GPU) flushes subnormal floats to zero; the reference keeps
    IEEE gradual underflow. Both are right, so the comparison ignores the difference."""
    if x.dtype.kind != "f":
        return x
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.zeros_like(x), x)


def assert_matches(got, expected, tol, what=""):
    expected = keys_as_numpy(expected) if _is_key_array(expected) else np.asarray(expected)
    assert isinstance(got, np.ndarray), f"{what}: expected an ndarray, got {type(got)}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    if got.dtype == bf16:
        got, expected = got.astype(f32), expected.astype(f32)
    got, expected = flush_subnormals(got), flush_subnormals(expected)
    if tol is EXACT:
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        np.testing.assert_allclose(got, expected, rtol=tol[0], atol=tol[1], err_msg=what)


def _is_key_array(x) -> bool:
    return str(getattr(x, "dtype", "")).startswith("key<")


def check_rule_against(case: Case, oracle, oracle_gives_list=False):
    prim = primitives_by_name[case.prim_name]
    got = reference_rules[prim](*case.args, **case.params)
    with on_cpu():      # the reference reproduces XLA's CPU numerics (tests/devices.py)
        expected = oracle(*case.args)
    expected = list(expected) if oracle_gives_list else _as_list(case.prim_name, expected)
    if case.newer_edges and JAX_VERSION < case.newer_edges[0]:
        expected = [case.newer_edges[1](case.args, np.asarray(e)) for e in expected]
    assert len(got) == len(expected)
    declared = out_avals_of(prim, [aval_of_value(a) for a in case.args], case.params)
    for k, (g, e, aval) in enumerate(zip(got, expected, declared)):
        assert (g.shape, g.dtype) == (aval.shape, aval.dtype), \
            f"output {k} is {g.dtype}{list(g.shape)}, but the type rule says {aval}"
        assert_matches(g, e, case.tol, f"{case.id} output {k}")


def test_every_primitive_has_a_reference_rule():
    missing = sorted(name for name, prim in primitives_by_name.items()
                     if prim not in reference_rules)
    assert not missing, f"no reference rule for {missing}"


def test_every_primitive_has_test_inputs():
    from tests.test_reference_programs import PROGRAM_PRIMITIVES
    from tests.test_linalg_primitives import LINALG_PRIMITIVES
    from tests.test_linalg_kernels import KERNEL_PRIMITIVES
    tested = ({c.prim_name for c in CASES} | REF_PRIMITIVES | PROGRAM_PRIMITIVES
              | LINALG_PRIMITIVES | KERNEL_PRIMITIVES | NAMED_AXIS_PRIMITIVES)
    missing = sorted(set(primitives_by_name) - tested)
    assert not missing, f"add test cases to tests/reference_cases.py for {missing}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_rule_matches_jax_lax(case):
    check_rule_against(case, case.oracle)




@pytest.mark.parametrize("prim_name", sorted(primitives_by_name))
def test_reference_rule_matches_xla_lowering(prim_name):
    prim = primitives_by_name[prim_name]
    if prim_name in REF_PRIMITIVES:
        pytest.skip("refs are discharged before lowering")
    assert prim in lowering_rules, f"the XLA backend has no lowering for {prim_name}"
    from tests.test_reference_programs import PROGRAM_PRIMITIVES
    if prim_name in PROGRAM_PRIMITIVES:
        pytest.skip("compared on whole programs in test_reference_programs.py")
    from tests.test_linalg_primitives import LINALG_PRIMITIVES
    if prim_name in LINALG_PRIMITIVES:
        pytest.skip("compared up to sign conventions in test_linalg_primitives.py")
    from tests.test_linalg_kernels import KERNEL_PRIMITIVES
    if prim_name in KERNEL_PRIMITIVES:
        pytest.skip("compared with SciPy's LAPACK in test_linalg_kernels.py")
    if prim_name in NAMED_AXIS_PRIMITIVES:
        pytest.skip("needs a bound axis name or a mesh: the reference evaluator runs it "
                    "under shard_map in tests/shard_map_cases.py, against JAX")
    cases = [c for c in CASES if c.prim_name == prim_name]
    assert cases, f"no test inputs for {prim_name}"
    for case in cases:
        # Lowering rules always run inside jax.jit (on traced values), so test them
        # there: in a program named and shaped as JAX's eager program for the
        # primitive (one result returned bare), whose module text equals the oracle's
        # eager one where the oracle is the lax function, so the run's compilation
        # cache compiles the two once.
        def lowered(*args, params=case.params):
            outs = lowering_rules[prim](*args, **params)
            return outs if prim.multiple_results else outs[0]
        lowered.__name__ = lowered.__qualname__ = JAX_PRIMITIVE_NAMES.get(prim_name, prim_name)
        check_rule_against(case, jax.jit(lowered), oracle_gives_list=prim.multiple_results)


# -- refs and whole programs ------------------------------------------------------------------

def _ref_program(x, v):
    ref = bind(P.new_ref_p, x)
    old = bind(P.swap_p, ref, v)
    bind(P.addupdate_p, ref, bind(P.sin_p, v))
    read = bind(P.get_p, ref)
    scratch = bind(P.empty_ref_p, shape=(3,), dtype=np.dtype(f32))
    bind(P.swap_p, scratch, bind(P.mul_p, read, 2.0))
    doubled = bind(P.freeze_p, scratch)
    bind(P.free_ref_p, ref)
    return [old, read, doubled]


def _jax_ref_program(x, v):
    ref = jax.new_ref(x)
    old = jax.ref.swap(ref, (), v)
    jax.ref.addupdate(ref, (), lax.sin(v))
    read = jax.ref.get(ref, ())
    scratch = jax.empty_ref(jax.ShapeDtypeStruct((3,), f32))
    jax.ref.set(scratch, (), read * 2.0)
    return [old, read, jax.freeze(scratch)]


def test_refs_match_jax():
    closed = trace_to_jaxpr(_ref_program, [ShapedArray((3,), f32)] * 2)
    assert {e.primitive.name for e in closed.eqns} >= REF_PRIMITIVES
    x, v = floats(3), floats(3)
    got = eval_closed_jaxpr(closed, x, v)
    expected = jax.jit(_jax_ref_program)(x, v)
    for g, e in zip(got, expected):
        assert_matches(g, e, TRANSCENDENTAL)


def test_ref_arguments_are_updated_in_place_through_jit():
    def body(ref, x):
        bind(P.addupdate_p, ref, x)
        return [bind(P.get_p, ref)]
    inner = trace_to_jaxpr(body, [P.RefType(ShapedArray((2,), f32)), ShapedArray((2,), f32)])

    def outer(ref, x):
        return bind(P.jit_p, ref, x, jaxpr=inner.jaxpr, name="body")
    closed = trace_to_jaxpr(outer, inner.jaxpr.in_avals)
    box = RefBox(np.ones(2, f32))
    (result,) = eval_closed_jaxpr(closed, box, np.array([1, 2], f32))
    np.testing.assert_array_equal(box.value, [2, 3])
    np.testing.assert_array_equal(result, [2, 3])


def test_ref_use_after_freeze_is_an_error():
    def program(x):
        ref = bind(P.new_ref_p, x)
        bind(P.freeze_p, ref)
        return [bind(P.get_p, ref)]
    from minijax.ir.checks import checks_disabled
    with checks_disabled():  # the verifier would (rightly) reject the program first
        closed = trace_to_jaxpr(program, [ShapedArray((), f32)])
    with pytest.raises(MinijaxError, match="get of a ref that was already frozen"):
        eval_closed_jaxpr(closed, 1.0)


def test_refbox_repr_and_copying():
    x = np.array([1.0, 2.0], f32)
    box = RefBox(x)
    x[0] = 7.0                       # the box holds its own copy
    assert repr(box) == "RefBox(f32[2]: [1., 2.])"
    box.state = "frozen"
    assert repr(box) == "RefBox(f32[2], frozen: [1., 2.])"


def test_on_equation_sees_every_equation_in_order():
    closed = trace_to_jaxpr(lambda x: [bind(P.exp_p, bind(P.neg_p, x))],
                            [ShapedArray((2,), f32)])
    seen = []
    out = eval_closed_jaxpr(closed, np.array([0.0, 1.0], f32),
                            on_equation=lambda eqn, ins, outs: seen.append(
                                (eqn.primitive.name, ins, outs)))
    assert [name for name, _, _ in seen] == ["neg", "exp"]
    np.testing.assert_array_equal(seen[1][1][0], [-0.0, -1.0])
    assert seen[1][2][0] is out[0]


def test_inputs_are_converted_to_the_avals_dtypes():
    closed = trace_to_jaxpr(lambda x, y: [bind(P.add_p, x, y)],
                            [ShapedArray((), f32, weak_type=True), ShapedArray((), f32)])
    (out,) = eval_closed_jaxpr(closed, 1.5, jnp.float32(2.0))
    assert out.dtype == f32 and out == 3.5


def test_bad_arguments_are_reported():
    closed = trace_to_jaxpr(lambda x: [bind(P.neg_p, x)], [ShapedArray((3,), f32)])
    with pytest.raises(MinijaxError, match="takes 0 consts and 1 arguments"):
        eval_jaxpr(closed.jaxpr, [], 1.0, 2.0)
    with pytest.raises(MinijaxError, match=r"argument 0 should have type float32\[3\]"):
        eval_closed_jaxpr(closed, np.zeros(4, f32))
