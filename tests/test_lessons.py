"""The lesson sequence of docs/lessons/: each page's transcript is what the REPL
prints today, and each exercise's answer is checked by the REPL (`:lesson N`,
`:hint`, `:answer`).

To refresh the transcripts after an intended change in output:
    MINIJAX_UPDATE_LESSONS=1 .venv/bin/python -m pytest tests/test_lessons.py -k transcript
"""
import functools
import io
import os
import re
from contextlib import redirect_stdout

import pytest

import minijax
from minijax.repl import Session
from minijax.repl.lessons import TRANSCRIPT, all_lessons, expected_answer, same_answer
from tests.devices import on_cpu

LESSONS = all_lessons()


def run(lines, echo=False):
    out = io.StringIO()
    session = Session(stdout=out, stderr=out, colour=False, echo=echo)
    with redirect_stdout(out):
        session.run_lines(lines)
    return out.getvalue(), session


def test_there_are_eight_lessons_in_order_each_with_exercises():
    assert [x.number for x in LESSONS] == list(range(1, 9))
    for lesson in LESSONS:
        assert lesson.script.exists() and len(lesson.exercises) >= 2, lesson.title


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.page.stem for x in LESSONS])
def test_transcript_on_the_page_is_what_the_repl_prints(lesson):
    # the pages show CPU output with the default config (tests/devices.py)
    with on_cpu(), minijax.default_matmul_precision(None):
        printed, _ = run(lesson.script.read_text(encoding="utf-8").splitlines(), echo=True)
    assert "Traceback" not in printed
    text = lesson.page.read_text(encoding="utf-8")
    [match] = [m for m in TRANSCRIPT.finditer(text)
               if m.group("path") == f"docs/lessons/{lesson.script.name}"]
    if os.environ.get("MINIJAX_UPDATE_LESSONS"):
        lesson.page.write_text(text[:match.start("body")] + printed + text[match.end("body"):],
                               encoding="utf-8")
        return
    same_jax = functools.partial(re.sub, r"(?m)^jax [0-9][^:\s]*:", "jax VERSION:")
    assert same_jax(match.group("body")) == same_jax(printed), (
        f"{lesson.page.name}'s transcript is stale; see this file's docstring")


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.page.stem for x in LESSONS])
def test_each_exercise_is_checked_by_the_repl(lesson):
    lines = [f":lesson {lesson.number}"]
    for exercise in lesson.exercises:
        lines += [":hint", ":answer 'surely not this'", f":answer {exercise.solution}"]
    out, session = run(lines)
    tail = out.split(f"-- {lesson.title}: done.", 1)[1]
    for k, exercise in enumerate(lesson.exercises, 1):
        assert f"Exercise {k} of {len(lesson.exercises)}: {exercise.question}" in tail
        assert f"hint: {exercise.hint}" in tail
    assert tail.count("not yet: surely not this is not it") == len(lesson.exercises)
    assert tail.count("right  (the tools say") == len(lesson.exercises), tail
    assert f"all exercises of lesson {lesson.number} done" in tail
    # The answer the tools compute is the one a learner types.
    for exercise in lesson.exercises:
        assert same_answer(eval(exercise.solution, session.namespace),
                           expected_answer(exercise, session.namespace))


def test_answer_alone_shows_the_answer_and_moves_on():
    out, _ = run([":lesson 2", ":answer", ":answer"])
    assert "answer: 3  (computed as len(jax.ad_checkpoint.saved_residuals(" in out
    assert "Exercise 2 of 2:" in out and "all exercises of lesson 2 done; :lesson 3 is next" in out


def test_lesson_commands_used_wrongly_say_what_to_do():
    out, _ = run([":hint", ":answer 1", ":lesson 99", ":lesson one", ":lesson"])
    assert out.count("no lesson started: :lesson lists them, :lesson 1 starts the first") == 2
    assert "no lesson 99; the lessons are 1, 2, 3, 4, 5, 6, 7, 8" in out
    assert ":lesson N needs a lesson number, got 'one'" in out
    assert "  1. Lesson 1: tracing and the IR  (2 exercises)" in out
