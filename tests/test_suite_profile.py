"""benchmarks/suite_profile.py: the pytest plugin that counts what each test asks of
JAX, and its report."""
import importlib.util
import pathlib
import re

import jax
import numpy as np

pytest_plugins = ["pytester"]

PLUGIN = pathlib.Path(__file__).parent.parent / "benchmarks" / "suite_profile.py"


def _load_plugin():
    spec = importlib.util.spec_from_file_location("suite_profile", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_test_gets_a_row_counting_its_compiles_and_the_report_sums_them(
        pytester, tmp_path, monkeypatch, capsys):
    suite_profile = _load_plugin()
    profile = tmp_path / "profile.tsv"
    monkeypatch.setenv("MINIJAX_SUITE_PROFILE", str(profile))
    pytester.makepyfile(test_two="""
        import jax, jax.numpy as jnp
        import numpy as np

        def test_compiles_one_new_program():
            # a function of its own, so no earlier test's cache serves it
            assert jax.jit(lambda x: x * 3.0 + 0.25)(np.float32(1.0)) == 3.25

        def test_compiles_nothing():
            assert 1 + 1 == 2
    """)
    listening = []

    class Counters(suite_profile._TestCounters):
        def __init__(self):
            super().__init__()
            listening.append(self)
    monkeypatch.setattr(suite_profile, "_TestCounters", Counters)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q",
                                          plugins=[suite_profile])
    result.assert_outcomes(passed=2)

    rows = {r["test"].split("::")[1]: r for r in suite_profile.read_profile(profile)}
    assert set(rows) == {"test_compiles_one_new_program", "test_compiles_nothing"}
    compiled, idle = rows["test_compiles_one_new_program"], rows["test_compiles_nothing"]
    assert compiled["compiles"] >= 1 and compiled["lowerings"] >= 1
    assert compiled["compile_s"] > 0 and compiled["wall_s"] >= compiled["compile_s"]
    assert idle["compiles"] == idle["lowerings"] == idle["traces"] == 0

    # The session's end unregistered the listeners: JAX's compiles now count nowhere.
    (counters,) = listening
    counted = dict(counters.counts)
    jax.jit(lambda x: x - 7.5)(np.float32(2.0))
    assert dict(counters.counts) == counted
    assert len(suite_profile.read_profile(profile)) == 2

    capsys.readouterr()
    suite_profile.report(suite_profile.read_profile(profile), top=5)
    printed = capsys.readouterr().out
    assert printed.startswith("2 tests,")
    requests = re.search(r"compile requests to XLA +(\d+) ", printed)
    assert requests and int(requests.group(1)) == compiled["compiles"]
    assert "test_two.py::test_compiles_one_new_program" in printed
