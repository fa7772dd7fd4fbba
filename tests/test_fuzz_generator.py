"""The fuzzer's generator coverage, its compiled JAX oracle, bfloat16 in the recipes,
and the campaign's bookkeeping across worker processes (minijax/testing/fuzz*.py)."""
import numpy as np
import pytest

import jax
import minijax
import minijax.lax as lax
from minijax.ir.primitives import primitives_by_name
from minijax.testing import assert_trees_match, fuzz
from minijax.testing import recipes as recipes_module
from minijax.testing.cross_check import compare
from minijax.testing.fuzz_ops import OPS, load_entries
from minijax.testing.fuzz_run import Campaign, CaseResult

# Primitives the generator does not make, each with why. Everything else in the
# registry must have a generator entry.
NOT_GENERATED = {
    "custom_lin": "internal to minijax's linearize; no traced user program contains it",
    "call_exported": "calls a program saved by jax.export, opaque to both libraries: "
                     "tests/test_export.py compares saving and calling with JAX's",
    "debug_callback": "runs an arbitrary host Python function: nothing for JAX to compare "
                      "beyond what debug_print (generated) already covers",
    "pure_callback": "runs an arbitrary host Python function (through jax.pure_callback "
                     "under jit): tests/test_api_more_callback.py compares it with JAX's",
    "io_callback": "runs an arbitrary host Python function for its effects: "
                   "tests/test_experimental_io_callback.py compares calls and results with JAX's",
    "custom_vmap_call": "its vmap rule is the user's Python function: "
                        "tests/test_custom_batching.py compares custom_vmap with JAX's",
    "eig": "JAX lowers it on the CPU only, and a fuzz program may run on any backend: "
           "tests/test_linalg_eig.py compares it with JAX's (sorted eigenvalues)",
    "tridiagonal": "its outputs are LAPACK's packed Householder reflectors, inputs for "
                   "householder_product/ormqr, not values a fuzz program computes with: "
                   "tests/test_linalg_kernels.py compares all six kernels with JAX's",
    "householder_product": "reads LAPACK's packed reflectors (see tridiagonal)",
    "ormqr": "reads LAPACK's packed reflectors (see tridiagonal)",
    "hessenberg": "JAX lowers it on the CPU only, as eig (tests/test_linalg_kernels.py)",
    "schur": "JAX lowers it on the CPU only, as eig (tests/test_linalg_kernels.py)",
    "tridiagonal_solve": "tests/test_linalg_kernels.py compares it, its jvp, transpose and "
                         "vmap with JAX's",
    "random_clone": "a mark of the key-reuse checker, bound only under "
                    "jax_debug_key_reuse (the key as it is): tests/test_key_reuse.py "
                    "compares the checker's verdicts with JAX's",
    "random_consume": "a mark of the key-reuse checker, as random_clone",
    "empty_ref": "minijax's explicit-lifetime refs have no JAX counterpart to compare with",
    "free_ref": "minijax's explicit-lifetime refs have no JAX counterpart to compare with",
    "shard_map": "needs several devices; the fuzz process has one (tests/test_shard_map.py "
                 "runs its cases in a process with eight host devices)",
    "sharding_constraint": "needs several devices, as shard_map",
    "rng_uniform": "XLA's stateful generator: no two runs agree, so nothing compares "
                   "exactly with JAX's (tests/test_rng.py checks its types and range)",
}
# Collectives are made under vmap with an axis name, whose tracing applies their
# batching rules: the program holds the batched forms, never the collectives.
BATCHED_AWAY = {"psum", "pmax", "pmin", "axis_index", "ppermute", "all_gather",
                "psum_scatter", "all_to_all"}
NEW_FEATURES = ["special", "bits", "complex", "random", "linalg", "windows", "collectives"]


def _generated_primitives():
    load_entries()
    return {p for o in OPS.values() for p in o.primitives}


def test_generator_covers_every_primitive_but_the_justified_exclusions():
    registry = set(primitives_by_name)
    generated = _generated_primitives()
    assert registry - generated == set(NOT_GENERATED), fuzz.list_primitives()
    assert not generated - registry, "fuzz ops name primitives the registry lacks"


def test_new_entries_make_their_primitives():
    wanted = {p for o in OPS.values() if o.feature in NEW_FEATURES for p in o.primitives}
    wanted |= {"scatter_mul", "scatter_min", "scatter_max", "jit"}
    wanted -= BATCHED_AWAY
    seen = set()
    features = NEW_FEATURES + ["indexing", "control_flow"]
    for i in range(80):
        seen |= fuzz.generate(f"coverage:{i}", features=features).primitives
        if wanted <= seen:
            break
    assert wanted <= seen, f"never generated: {sorted(wanted - seen)}"


def _case_with(features, primitive, tries=60):
    for i in range(tries):
        case = fuzz.generate(f"{primitive}:{i}", features=features)
        if primitive in case.primitives and fuzz.ProgramSides(case.program,
                                                              case.leaves).compile_oracle:
            return case
    raise AssertionError(f"no program with {primitive}")


def _smallest_case_with(features, primitive, seeds=20):
    """The program with the fewest equations among the first `seeds` seeds' programs
    that use `primitive`: the eager rows compile each distinct operation on both
    sides, and a linalg program is a few dozen to two hundred of them."""
    cases = [fuzz.generate(f"{primitive}:{i}", features=features) for i in range(seeds)]
    cases = [case for case in cases if primitive in case.primitives and fuzz.ProgramSides(
        case.program, case.leaves).compile_oracle]
    assert cases, f"no program with {primitive}"
    return min(cases, key=lambda case: len(case.program.jaxpr.eqns))


@pytest.mark.parametrize("features,primitive", [
    (["linalg"], "eigh"), (["special", "complex"], "lgamma"), (["windows"], "reduce_window_sum"),
])
def test_new_entries_agree_with_jax(features, primitive):
    case = _smallest_case_with(features, primitive)
    rows = fuzz.check_case(case, ["eager", "jit", "grad", "vmap", "invariant:reference"])
    assert all(row.ok for row in rows), [row.summary() for row in rows]


@pytest.mark.parametrize("primitive", ["log2", "one_minus_square"])
def test_log2_and_one_minus_square_programs_agree_with_jax(primitive):
    # JAX 0.10 has neither lax function: its oracle runs what the lowering computes
    # (log(x) * (1 / log 2), (1 + x) * (1 - x)) and differentiates that, so these rows
    # compare on every JAX version rather than skip
    case = _smallest_case_with(["elementwise"], primitive)
    rows = fuzz.check_case(case, ["eager", "jit", "grad", "jvp", "vmap"])
    assert all(row.status == "agree" for row in rows), [row.summary() for row in rows]


def test_compiled_oracle_gives_the_eager_oracles_results():
    """The JAX side's rows run under one jax.jit; JAX's results are the same as its
    eager ones (within the comparison's tolerance)."""
    case = _case_with(["elementwise", "reductions", "contractions"], "reduce_sum")
    transforms = ["jit", "grad", "jvp", "jacrev", "vmap(grad)", "checkpoint[nothing_saveable]"]
    recipes = fuzz.recipes_for(case, transforms)
    sides = fuzz.ProgramSides(case.program, case.leaves)
    for name in transforms:
        compiled = sides.oracle_recipe(name, recipes[name])
        assert compiled is not recipes[name]
        row = compare(name,
                      lambda: recipes_module.run_recipe(sides.jax, compiled, case.leaves),
                      lambda: recipes_module.run_recipe(sides.jax, recipes[name], case.leaves))
        assert row.status in ("agree", "skipped"), row.summary()


def test_oracle_stays_eager_for_eager_rows_effects_and_16_bit_floats():
    case = _case_with(["elementwise"], "sin")
    sides = fuzz.ProgramSides(case.program, case.leaves)
    recipe = recipes_module.TRANSFORMS["eager"]
    assert sides.oracle_recipe("eager", recipe) is recipe

    def printing(x):
        minijax.debug.print("x={}", x)
        return x * 2
    x = np.ones(2, np.float32)
    assert not fuzz.ProgramSides(minijax.make_jaxpr(printing)(x), [x]).compile_oracle
    half = np.ones(2, np.float16)
    assert not fuzz.ProgramSides(minijax.make_jaxpr(lambda h: h * 2)(half), [half]).compile_oracle
    assert not fuzz.ProgramSides(case.program, [minijax.new_ref(x)]).compile_oracle


def test_bfloat16_arguments_and_outputs_are_differentiated():
    bf16 = jax.numpy.bfloat16

    def f(x, y):
        return (lax.sin(x) * 2, lax.tanh(y))
    x = np.array([0.5, -1.25, 2.0], bf16)
    y = np.array([0.25, 1.5, -0.75], np.float32)
    program = minijax.make_jaxpr(f)(x, y)
    sides = fuzz.ProgramSides(program, [x, y])
    result = recipes_module.run_recipe(sides.minijax, recipes_module.TRANSFORMS["grad"], [x, y])
    grads = result["result"]
    assert len(grads) == 2 and grads[0].dtype == bf16
    assert_trees_match(np.asarray(grads[0], np.float32), 2 * np.cos(x.astype(np.float32)),
                       rtol=2e-2, atol=2e-2)
    # (campaign finding G4: jvp/linearize's tangents of bfloat16 arguments were float32)
    for name in ("grad", "jvp", "linearize", "hessian", "grad(grad)"):
        row = fuzz.compare_row(name, program, [x, y], recipes_module.TRANSFORMS[name])
        assert row.ok, row.summary()


def test_lax_map_of_empty_xs_with_batch_size_matches_jax():
    xs = np.zeros((0, 3), np.float32)
    ours = minijax.lax.map(lambda v: v * 2, xs, batch_size=2)
    theirs = jax.lax.map(lambda v: v * 2, xs, batch_size=2)
    assert_trees_match(ours, theirs)
    assert_trees_match(minijax.jit(lambda a: minijax.lax.map(lambda v: v + 1, a,
                                                            batch_size=3))(xs),
                       jax.jit(lambda a: jax.lax.map(lambda v: v + 1, a, batch_size=3))(xs))


def test_a_finding_skipped_by_one_worker_and_shrunk_by_another_is_one_finding():
    rough = ("grad", ("sin", "cos"), "values")
    final = ("grad", ("sin",), "values")
    campaign = Campaign()
    # the skipping worker's program comes first in seed order
    campaign.add(CaseResult("s:0", (), [("grad", "differ", "")],
                            [(rough, None, "grad", "x", "", "grad")]))
    campaign.add(CaseResult("s:1", (), [("grad", "differ", "")],
                            [(rough, final, "grad", "x", "", "grad")]))
    campaign.add(CaseResult("s:2", (), [("grad", "differ", "")],
                            [(rough, None, "grad", "x", "", "grad")]))
    assert list(campaign.findings) == [final]
    assert campaign.findings[final].count == 3


@pytest.mark.parametrize("fn,x", [
    (lambda x: minijax.lax.bitcast_convert_type(x, np.int32), np.float32(1.5)),
    (lambda x: minijax.lax.bitcast_convert_type(x, np.float32), np.int32(5)),
    (minijax.lax.population_count, np.uint32(7)),
    (minijax.lax.population_count, np.array([[7, 255]], np.int32)),
])
def test_reference_bit_rules_keep_scalar_shapes(fn, x):
    # campaign finding G1: np.ascontiguousarray made a 0-d operand 1-d, so the reference
    # evaluator's bitcast_convert_type and population_count of a scalar were [1]
    from minijax.backends.reference import eval_closed_jaxpr
    program = minijax.make_jaxpr(fn)(x)
    (ours,) = eval_closed_jaxpr(program, np.asarray(x))
    theirs = {np.float32: lambda v: jax.lax.bitcast_convert_type(v, np.int32),
              np.int32: lambda v: jax.lax.bitcast_convert_type(v, np.float32)}
    expected = (jax.lax.population_count(x) if fn is minijax.lax.population_count
                else theirs[type(x)](x))
    assert_trees_match(ours, np.asarray(expected), check_weak_types=False)


def test_jobs_give_the_same_tables():
    from minijax.testing.fuzz_run import run_campaign
    settings = dict(n=2, features=["elementwise", "bits"], transforms=["eager", "grad"],
                    stream=None)
    alone = run_campaign("jobs", jobs=1, **settings)
    shared = run_campaign("jobs", jobs=2, **settings)
    assert alone.pairs == shared.pairs == 4
    assert alone.by_transform == shared.by_transform


def test_a_time_budget_stops_parallel_jobs():
    # `--time 600 --jobs 2` ran on past its budget: pool.imap drained the seed
    # generator into its queue until the deadline (tens of thousands of seeds) and then
    # checked them all. Now a seed is drawn only when a worker is free. The bound is
    # generous: what it catches is a run that does not stop, not a slow one.
    from minijax.testing.fuzz_run import run_campaign
    campaign = run_campaign("budget", seconds=2, jobs=2, features=["elementwise"],
                            transforms=["eager"], stream=None)
    assert campaign.seconds < 120 and campaign.programs < 200


def test_batched_map_bodies_write_no_closed_over_ref():
    # campaign finding G2: seed s4gen:14 made a lax.map body with batch_size (vmapped)
    # that added a per-example amount to a ref from outside: vmap rejects it
    case = fuzz.generate("s4gen:14")
    assert "new_ref" in case.primitives or any(isinstance(x, minijax.Ref)
                                               for x in case.leaves)


def test_dot_invariant_skips_a_while_loop_whose_pullback_raises():
    # campaign finding G3 (seed s4gen:35): minijax's vjp of a jitted while_loop
    # succeeds and its pullback raises, as JAX's does; the invariant skips either way
    from minijax.testing.fuzz_invariants import INVARIANT_CHECKS

    def f(x):
        def body(carry):
            i, v = carry
            return i + 1, minijax.numpy.sin(v)
        return minijax.jit(lambda x: lax.while_loop(lambda c: c[0] < 2, body, (0, x))[1])(x)
    x = np.array([0.5, 1.0], np.float32)
    program = minijax.make_jaxpr(f)(x)
    case = fuzz.FuzzCase("while", program, [x], [x], frozenset(), frozenset(), True)
    row = INVARIANT_CHECKS["invariant:dot"](case)
    assert row.status == "skipped" and "ReverseMode" in row.detail, row.summary()
