"""The differential fuzzer (minijax.testing.fuzz*, strategies, `python -m minijax fuzz`).

The CI smoke run is a fixed-seed campaign small enough for well under a minute; a
planted bug (a wrong jvp rule for sin) must be found, shrunk, deduplicated and
written as a reproducer."""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings

import minijax
from minijax.ir import dumps
from minijax.testing import assert_trees_match, fuzz
from minijax.testing import strategies as mst
from minijax.testing.fuzz_run import run_campaign, Campaign, check_one
from tests.test_cross_check import wrong_sin_jvp  # noqa: F401 -- the planted-bug fixture

SMOKE_TRANSFORMS = ["eager", "jit", "grad", "jvp", "vmap[axes]", "invariant:reference",
                    "invariant:dot"]


def test_the_same_seed_gives_the_same_program():
    for seed in ("a:0", "a:1", 7):
        first, second = fuzz.generate(seed), fuzz.generate(seed)
        assert dumps(first.program) == dumps(second.program)
        assert_trees_match([np.asarray(x[...]) if isinstance(x, minijax.Ref) else x
                            for x in first.leaves],
                           [np.asarray(x[...]) if isinstance(x, minijax.Ref) else x
                            for x in second.leaves])
    assert dumps(fuzz.generate("a:0").program) != dumps(fuzz.generate("a:1").program)


def test_generated_programs_use_the_requested_features_only():
    for i in range(6):
        case = fuzz.generate(f"features:{i}", features=["elementwise", "reductions"])
        assert case.features <= {"elementwise", "reductions"}
        assert not case.primitives & {"cond", "while", "scan", "remat", "new_ref"}


def test_unknown_features_and_transforms_are_named():
    with pytest.raises(ValueError, match="unknown fuzz features.*'loops'"):
        fuzz.generate(0, features=["loops"])
    with pytest.raises(ValueError, match="unknown transforms.*'gradd'"):
        run_campaign(0, n=1, transforms=["gradd"], stream=None)
    with pytest.raises(ValueError, match="number of programs"):
        run_campaign(0, stream=None)


def test_primitive_coverage_is_listed():
    listing = fuzz.list_primitives()
    for line in ("dot_general", "gather", "scatter_add", "cond", "while", "scan", "remat",
                 "custom_vjp_call", "debug_print", "addupdate", "freeze", "sort"):
        assert line + " " in listing and f"{line:24s} -- not generated" not in listing


def test_smoke_run_finds_nothing_unexplained(tmp_path):
    campaign = run_campaign("ci", n=3, transforms=SMOKE_TRANSFORMS, out=str(tmp_path),
                            stream=None)
    assert campaign.pairs == 3 * len(SMOKE_TRANSFORMS)
    assert campaign.tally["agree"] > 0
    assert campaign.unexplained == 0, str(campaign)
    assert "transform" in str(campaign) and "no unexplained differences" in str(campaign)


def _seed_with(primitive, features):
    for k in range(200):
        if primitive in fuzz.generate(f"{k}:0", features=features).primitives:
            return str(k)
    raise AssertionError(f"no program with {primitive}")


def test_planted_bug_is_one_finding_with_a_reproducer(wrong_sin_jvp, tmp_path):
    features = ["elementwise"]
    seed = _seed_with("sin", features)
    campaign = run_campaign(seed, n=1, features=features, transforms=["jvp"],
                            out=str(tmp_path), stream=None)
    assert campaign.unexplained == 1, str(campaign)
    finding = next(iter(campaign.findings.values()))
    assert finding.signature[0] == "jvp" and "sin" in finding.signature[1]
    assert finding.signature[2] == "values"
    source = open(finding.reproducer).read()
    assert "lax.sin" in source and "TRANSFORMS['jvp']" in source
    # the same bug met again is counted, not filed twice
    again = check_one(f"{seed}:0", features, ["jvp"])
    campaign.add(again)
    assert campaign.unexplained == 1 and finding.count == 2


def test_campaign_tally_and_tables():
    campaign = Campaign()
    campaign.add(check_one("tally:0", ["elementwise", "shapes"], ["eager", "jit"]))
    assert campaign.programs == 1 and campaign.pairs == 2
    assert sum(campaign.tally.values()) == 2
    text = str(campaign)
    assert "eager" in text and "feature" in text and "pairs/s" in text


@settings(max_examples=4)
@given(mst.programs(features=["elementwise", "shapes", "reductions"], size=4))
def test_strategies_drive_user_property_tests(case):
    # a user's property: jit changes no result
    eager = mst.evaluate(case)
    assert_trees_match(minijax.jit(mst.as_function(case))(*case.leaves), eager)
    assert mst.check(case, "eager").ok


@settings(max_examples=3)
@given(mst.programs(features=["elementwise"], size=3).flatmap(
    lambda case: mst.inputs(case).map(lambda leaves: (case, leaves))))
def test_strategies_draw_new_inputs_of_a_program(case_and_leaves):
    case, leaves = case_and_leaves
    assert [np.shape(x) for x in leaves] == [np.shape(x) for x in case.leaves]
    mst.evaluate(case, leaves)


def test_cli_fuzz():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    listing = subprocess.run([sys.executable, "-m", "minijax", "fuzz", "--list-primitives"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert listing.returncode == 0 and "primitives generated" in listing.stdout
    missing = subprocess.run([sys.executable, "-m", "minijax", "fuzz"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert missing.returncode == 2 and "--n" in missing.stderr
    run = subprocess.run([sys.executable, "-m", "minijax", "fuzz", "--seed", "cli", "--n", "1",
                          "--transforms", "eager,jit", "--features", "elementwise,shapes"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 programs, 2 program x transform pairs" in run.stdout
    assert "programs, 2 pairs" in run.stderr        # the live tally


def test_printed_output_is_compared_in_order():
    case = fuzz.generate("print:0", features=["elementwise"])
    same = fuzz.compare_row("eager", case.program, case.leaves,
                            lambda side, leaves: side.fn(*leaves))
    assert same.status == "agree"

    def names_its_side(side, leaves):
        print(side.name)          # differs between the sides, like a wrong debug.print
        return side.fn(*leaves)
    row = fuzz.compare_row("eager", case.program, case.leaves, names_its_side)
    assert row.status == "differ" and "printed output" in row.detail
    assert fuzz.difference_kind(row) == "printed output"
