"""The command line: `python -m minijax --help`, `rules` and `repl`, each run as a
user runs it, in a subprocess."""
import os
import subprocess
import sys
from pathlib import Path

from minijax.cli import coverage_table
from tests.devices import on_cpu

ROOT = Path(__file__).resolve().parents[1]


def run_minijax(*args, stdin="", cwd=ROOT):
    # the checkout goes first on the path: an interpreter without minijax installed
    # (or with another copy of it) must still run this one
    env = dict(os.environ, PYTHONIOENCODING="utf-8",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "minijax", *args], input=stdin,
                          capture_output=True, text=True, encoding="utf-8",
                          cwd=cwd, env=env, timeout=300)


def test_help_lists_the_subcommands():
    result = run_minijax("--help")
    assert result.returncode == 0, result.stderr
    assert "rules" in result.stdout and "repl" in result.stdout


def test_no_subcommand_is_a_usage_error():
    result = run_minijax()
    assert result.returncode == 2
    assert "rules" in result.stderr


def test_coverage_table_marks_each_cell_and_counts_holes():
    from minijax.ir.primitives import GenericPath
    prims = {"add": "ADD", "mul": "MUL", "get": "GET"}  # any hashables stand in for Primitives
    tables = {"type": {"ADD": 0, "MUL": 0, "GET": 0}, "xla": {"ADD": 0},
              "dce": {}}
    generic = {"dce": GenericPath(lambda prim: prim != "GET", "kept if used")}
    lines = coverage_table(prims, tables, generic).splitlines()
    assert lines[0].split() == ["primitive", "type", "xla", "dce"]
    assert [line.split() for line in lines[1:4]] == [
        ["add", "✓", "✓", "-"], ["get", "✓", "·", "·"], ["mul", "✓", "·", "-"]]
    assert "  - in dce: kept if used" in lines
    assert lines[-1] == "3 primitives; holes per column: type 0, xla 2, dce 1"


def test_rules_lists_every_primitive_and_every_table():
    import minijax  # noqa: F401  -- what `python -m minijax` imports first
    from minijax.ir.primitives import primitives_by_name
    result = run_minijax("rules")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = lines[0].split()
    assert header[0] == "primitive" and {"type", "xla"} <= set(header[1:])
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:lines.index("")]}
    assert set(rows) == set(primitives_by_name)
    assert all(len(cells) == len(header) - 1 and set(cells) <= {"✓", "-", "·"}
               for cells in rows.values())
    assert all(rows[name][0] == "✓" for name in rows)  # every primitive has a type rule
    holes = [sum(cells[i] == "·" for cells in rows.values()) for i in range(len(header) - 1)]
    assert lines[-1] == (f"{len(primitives_by_name)} primitives; holes per column: "
                         + ", ".join(f"{c} {n}" for c, n in zip(header[1:], holes)))


LESSON = """\
x = np.arange(3.0)
print("sum", float(np.sum(x)))
1/0
print("still here")
for i in range(2):
    print("loop", i)
print("after the loop")
jaxpr = make_jaxpr(lambda x: lax.sin(x))(1.0)
print(type(jaxpr).__name__)
float(jit(lambda x: lax.sin(x))(0.0))
undefined_name
6 * 7
"""


def test_repl_reads_a_script_from_stdin_and_survives_errors():
    result = run_minijax("repl", stdin=LESSON)
    assert result.returncode == 0, result.stderr
    out, err = result.stdout, result.stderr
    assert out.splitlines() == ["sum 3.0", "still here", "loop 0", "loop 1",
                                "after the loop", "ClosedJaxpr", "0.0", "42"]
    assert ">>>" not in out and "..." not in out  # no prompts when stdin is not a terminal
    assert err.splitlines() == ["ZeroDivisionError: division by zero",
                                "NameError: name 'undefined_name' is not defined"]


def test_repl_preloads_jax_names():
    result = run_minijax("repl", stdin="print(jax.__name__, lax.__name__, np.__name__,"
                                       " jit is jax.jit, make_jaxpr is jax.make_jaxpr)\n")
    assert result.stdout.split() == ["minijax", "minijax.lax", "numpy", "True", "True"], result.stderr


def test_repl_runs_a_file_then_reads_stdin(tmp_path):
    script = tmp_path / "setup.py"
    script.write_text("y = 41\n\ndef fail():\n    return 1 / 0\n")
    result = run_minijax("repl", str(script), stdin="print(y + 1)\nfail()\nprint('on')\n")
    assert result.stdout.splitlines() == ["42", "on"], result.stderr
    assert result.stderr.strip() == f"{script}, line 4: ZeroDivisionError: division by zero"


def test_readme_tour_runs_as_shown():
    """The README's ```python blocks, run in order as doctests in the REPL's namespace;
    a failure is reported at its README line."""
    import doctest
    import re
    from minijax.repl import repl_namespace
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    namespace = repl_namespace()
    examples = 0
    for block in re.finditer(r"^```python\n(.*?)^```", readme, flags=re.M | re.S):
        lineno = readme.count("\n", 0, block.start(1))
        test = parser.get_doctest(block.group(1), namespace, "README.md",
                                  str(ROOT / "README.md"), lineno)
        with on_cpu():      # the README shows CPU output (tests/devices.py)
            runner.run(test, clear_globs=False)
        namespace = test.globs  # a DocTest runs in a copy; the next block goes on from it
        examples += len(test.examples)
    assert examples and runner.summarize(verbose=False).failed == 0
