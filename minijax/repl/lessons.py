"""`:lesson N`, `:hint`, `:answer`: the lesson sequence of docs/lessons/, in the REPL.

Read `session.py` and `commands.py` first. A lesson is two files in docs/lessons/:

* `NN-name.txt`, a REPL script (the same lines `python -m minijax repl --echo FILE`
  runs), which `:lesson N` runs in the session, echoing each line as a transcript;
* `NN-name.md`, the lesson's page: the prose, that transcript (checked against what
  the REPL prints today by tests/test_lessons.py), and its exercises.

An exercise on the page is a `### Exercise` heading, the question, and three HTML
comments a reader of the rendered page does not see:

    <!-- hint: what to look at -->
    <!-- answer: EXPR -->        the expected answer, computed by the tools
    <!-- solution: TEXT -->      what a learner would type (the tests type it)

After `:lesson N` the session holds the lesson's names, so `EXPR` is evaluated there,
as is what the learner types after `:answer`: `:answer 3`, `:answer (2, 3)`. Numbers
and arrays are compared with NumPy's tolerance, anything else with `==`. `:answer`
alone shows the expected answer and moves on.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

LESSONS_DIR = Path(__file__).resolve().parents[2] / "docs" / "lessons"

_EXERCISE = re.compile(
    r"^### Exercise[^\n]*\n(?P<question>.*?)"
    r"<!-- hint: (?P<hint>.*?) -->\s*"
    r"<!-- answer: (?P<answer>.*?) -->\s*"
    r"<!-- solution: (?P<solution>.*?) -->", re.S | re.M)
TRANSCRIPT = re.compile(r"<!-- lesson: (?P<path>\S+) -->\n```text\n(?P<body>.*?)```", re.S)


class LessonError(ValueError):
    """A lesson command used in a way that cannot work (no such lesson, no exercise)."""


class Exercise(NamedTuple):
    question: str
    hint: str
    answer: str          # an expression giving the expected answer
    solution: str        # what a learner types after `:answer`


class Lesson(NamedTuple):
    number: int
    title: str
    page: Path
    script: Path
    exercises: list


def all_lessons() -> list:
    """Every lesson of docs/lessons/, in order."""
    lessons = []
    for page in sorted(LESSONS_DIR.glob("[0-9][0-9]-*.md")):
        text = page.read_text(encoding="utf-8")
        title = text.splitlines()[0].lstrip("# ").strip()
        exercises = [Exercise(" ".join(m.group("question").split()), m.group("hint").strip(),
                              m.group("answer").strip(), m.group("solution").strip())
                     for m in _EXERCISE.finditer(text)]
        lessons.append(Lesson(int(page.name[:2]), title, page, page.with_suffix(".txt"),
                              exercises))
    return lessons


def lesson(number: int) -> Lesson:
    for candidate in all_lessons():
        if candidate.number == number:
            return candidate
    numbers = ", ".join(str(x.number) for x in all_lessons())
    raise LessonError(f"no lesson {number}; the lessons are {numbers} (:lesson lists them)")


class Progress:
    """Where a session is in a lesson's exercises."""

    def __init__(self, current: Lesson):
        self.lesson, self.index = current, 0

    @property
    def exercise(self) -> Exercise:
        if self.index >= len(self.lesson.exercises):
            raise LessonError(f"lesson {self.lesson.number} has no exercise left; "
                              f":lesson {self.lesson.number + 1} starts the next one")
        return self.lesson.exercises[self.index]


def start(session, number_text: str):
    """`:lesson` lists the lessons; `:lesson N` runs lesson N and asks its first exercise."""
    if not number_text.strip():
        for x in all_lessons():
            session.say(f"  {x.number}. {x.title}  ({len(x.exercises)} exercises)")
        session.say(":lesson N runs lesson N")
        return
    try:
        number = int(number_text)
    except ValueError:
        raise LessonError(f":lesson N needs a lesson number, got {number_text!r}") from None
    chosen = lesson(number)
    saved = session.echo, session.stderr
    session.echo, session.stderr = True, session.stdout   # a transcript, errors in order
    try:
        session.run_lines(chosen.script.read_text(encoding="utf-8").splitlines())
    finally:
        session.echo, session.stderr = saved
    session.lesson = Progress(chosen)
    session.say(f"-- {chosen.title}: done. The page: docs/lessons/{chosen.page.name}")
    ask(session)


def ask(session):
    progress = session.lesson
    if progress.index >= len(progress.lesson.exercises):
        following = progress.lesson.number + 1
        session.say(f"-- all exercises of lesson {progress.lesson.number} done"
                    + (f"; :lesson {following} is next" if following <= len(all_lessons())
                       else "; that was the last lesson"))
        return
    session.say(f"Exercise {progress.index + 1} of {len(progress.lesson.exercises)}: "
                f"{progress.exercise.question}")
    session.say("  (:answer YOUR_ANSWER to answer, :hint for a hint, :answer alone to "
                "see the answer)")


def _current(session) -> Progress:
    progress = getattr(session, "lesson", None)
    if progress is None:
        raise LessonError("no lesson started: :lesson lists them, :lesson 1 starts the first")
    return progress


def hint(session):
    session.say(f"hint: {_current(session).exercise.hint}")


def expected_answer(exercise: Exercise, namespace: dict):
    return eval(compile(exercise.answer, "<answer>", "eval"), namespace)


def same_answer(given, expected) -> bool:
    if isinstance(expected, (str, bool)) or expected is None:
        return given == expected
    try:
        a, b = np.asarray(given), np.asarray(expected)
        if a.dtype.kind in "fciub" and b.dtype.kind in "fciub":
            return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-5, atol=1e-6))
    except (TypeError, ValueError):
        pass
    return bool(given == expected)


def answer(session, text: str):
    progress = _current(session)
    exercise = progress.exercise
    expected = expected_answer(exercise, session.namespace)
    if not text.strip():
        session.say(f"answer: {session.format(expected)}  (computed as {exercise.answer})")
        progress.index += 1
        ask(session)
        return
    given = eval(compile(text.strip(), "<your answer>", "eval"), session.namespace)
    if same_answer(given, expected):
        session.say(session.style("right", "ok") + f"  (the tools say {session.format(expected)}, "
                    f"computed as {exercise.answer})")
        progress.index += 1
        ask(session)
    else:
        session.say(session.style("not yet", "error") + f": {session.format(given)} is not "
                    f"it. :hint for a hint, :answer alone to see the answer")
