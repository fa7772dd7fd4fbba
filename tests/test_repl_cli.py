"""`python -m minijax repl` as a user runs it: a script on stdin, a lesson FILE, the
lessons of docs/repl.md (which must match what the REPL prints today), and a real
pseudo-terminal showing the prompt and surviving an error.

To refresh the transcripts in docs/repl.md after an intended change in output:
    MINIJAX_UPDATE_LESSONS=1 .venv/bin/python -m pytest tests/test_repl_cli.py -k lesson
"""
import functools
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "repl.md"


def env(**extra):
    return dict(os.environ, PYTHONIOENCODING="utf-8", NO_COLOR="1",
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                **extra)


def repl(*args, stdin="", **extra_env):
    return subprocess.run([sys.executable, "-m", "minijax", "repl", *args], input=stdin,
                          capture_output=True, text=True, encoding="utf-8", cwd=ROOT,
                          env=env(**extra_env), timeout=300)


SCRIPT = """\
def f(x):
    return jnp.sin(x) * 2.0
:ir f(1.0)
:nope
def broken(:
print("after the errors")
:parse j
{ lambda ; a:f32[]. let
    b:f32[] = cos a
  in (b,) }
:eval j(0.0)
"""


def test_a_script_on_stdin_runs_without_prompts_and_survives_errors():
    result = repl(stdin=SCRIPT)
    assert result.returncode == 0
    out = result.stdout.splitlines()
    assert out[0] == "{ lambda ; a:f32[]. let" and "sin a" in out[1]
    assert out[-3:] == ["after the errors",
                        "j = jaxpr from :parse: 1 inputs, 1 equations, 1 outputs",
                        "out[0] = 1.0"]
    assert ">>>" not in result.stdout and "\033[" not in result.stdout
    assert result.stderr.splitlines()[0] == "unknown command :nope; :help lists the commands"
    assert "SyntaxError" in result.stderr


def test_a_lesson_file_runs_then_stdin(tmp_path):
    lesson = tmp_path / "lesson.txt"
    lesson.write_text("y = 41\n:ir (lambda x: x * 2.0)(1.0)\n")
    result = repl(str(lesson), stdin="print(y + 1)\n:quit\nprint('not reached')\n")
    assert result.stdout.splitlines()[-1] == "42", result.stderr
    assert "mul a 2.0:f32[]" in result.stdout and "not reached" not in result.stdout


# -- the lessons in docs/repl.md ---------------------------------------------------------

LESSON_BLOCK = re.compile(r"<!-- lesson: (?P<path>\S+) -->\n```text\n(?P<body>.*?)```",
                          re.S)


def lessons():
    return [m.group("path") for m in LESSON_BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_guide_has_the_refs_and_remat_lessons():
    assert lessons() == ["examples/lesson_refs.txt", "examples/lesson_remat.txt"]


@pytest.mark.parametrize("path", ["examples/lesson_refs.txt", "examples/lesson_remat.txt"])
def test_lesson_transcript_in_the_guide_is_what_the_repl_prints(path):
    import minijax
    if path.endswith("remat.txt") and not hasattr(minijax, "checkpoint"):
        pytest.skip("remat has not landed in this build")
    result = repl("--echo", path, JAX_PLATFORMS="cpu")   # the guide shows CPU output
    assert result.returncode == 0 and result.stderr == "", result.stderr
    text = DOC.read_text(encoding="utf-8")
    match = next(m for m in LESSON_BLOCK.finditer(text) if m.group("path") == path)
    if os.environ.get("MINIJAX_UPDATE_LESSONS"):
        DOC.write_text(text[:match.start("body")] + result.stdout + text[match.end("body"):],
                       encoding="utf-8")
        return
    # `:check` names the JAX it ran ("jax 0.10.2: ..."); the guide was made on one.
    same_jax = functools.partial(re.sub, r"(?m)^jax [0-9][^:\s]*:", "jax VERSION:")
    assert same_jax(match.group("body")) == same_jax(result.stdout), (
        f"docs/repl.md's transcript of {path} is stale; see this file's docstring to "
        f"refresh it")


# -- a real terminal -------------------------------------------------------------------

def test_on_a_terminal_the_repl_prompts_and_an_error_does_not_end_it(tmp_path):
    import pty
    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "minijax", "repl"], cwd=ROOT,
                               stdin=secondary, stdout=secondary, stderr=secondary,
                               env=env(HOME=str(tmp_path), TERM="dumb"), close_fds=True)
    os.close(secondary)
    seen = b""

    def read_until(marker: bytes, timeout=120.0):
        nonlocal seen
        deadline = time.monotonic() + timeout
        while marker not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(main, 4096)
                except OSError:   # the child closed the terminal
                    break
        return marker in seen

    try:
        assert read_until(b">>> "), seen
        os.write(main, b"1/0\n")
        assert read_until(b"ZeroDivisionError: division by zero"), seen
        os.write(main, b"def g(x):\n")
        assert read_until(b"... "), seen
        os.write(main, b"    return x + 1\n\n")
        os.write(main, b"print('still', g(41))\n")
        assert read_until(b"still 42"), seen
        os.write(main, b":quit\n")
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    assert b"minijax" in seen and b":help" in seen      # the banner
    assert (tmp_path / ".minijax_history").exists()     # history kept between runs
