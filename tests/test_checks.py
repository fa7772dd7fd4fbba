"""The self-checks (minijax/ir/checks.py) that the suite runs on every traced jaxpr:
a text that round-tripped once is not parsed again, a text that does not round-trip
is an error every time it is traced, and `clear_caches` makes every text count anew."""
from __future__ import annotations

import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.ir import checks, parser
from minijax.ir.core import Jaxpr


@pytest.fixture
def parses(monkeypatch):
    """Counts the human-view parses the checks do, from a fresh memo and no traces
    (make_jaxpr shares jit's trace cache, which would keep `_program`'s traces from
    one test to the next)."""
    minijax.clear_caches()      # (which also forgets the round trips)
    count = {"n": 0}
    real_parse = parser.parse_jaxpr

    def counting_parse(text):
        count["n"] += 1
        return real_parse(text)
    monkeypatch.setattr(parser, "parse_jaxpr", counting_parse)
    yield count
    checks.forget_round_trips()


def _program(x):
    return mlax.reduce_sum(mlax.mul(mlax.sin(x), x), (0,))


def test_checks_are_on_in_the_suite():
    assert checks.checks_enabled()


def test_a_text_that_round_tripped_is_not_parsed_again(parses):
    x = np.ones(3, np.float32)
    first = minijax.make_jaxpr(_program)(x)
    assert parses["n"] == 1
    second = minijax.make_jaxpr(_program)(x)
    assert str(second) == str(first) and parses["n"] == 1
    minijax.make_jaxpr(_program)(np.ones(4, np.float32))   # another text: parsed
    assert parses["n"] == 2


def test_clear_caches_forgets_the_round_tripped_texts(parses):
    x = np.ones(3, np.float32)
    minijax.make_jaxpr(_program)(x)
    minijax.clear_caches()
    minijax.make_jaxpr(_program)(x)
    assert parses["n"] == 2


def test_a_text_that_does_not_round_trip_fails_every_time(parses, monkeypatch):
    # A parser that loses the program's last equation: the check must say so each
    # time the program is traced, never remember a failure as a success.
    counting_parse = parser.parse_jaxpr

    def lossy_parse(text):
        jaxpr = counting_parse(text)
        kept = jaxpr.eqns[:-1]
        return Jaxpr(jaxpr.constvars, jaxpr.invars, kept, kept[-1].outputs)
    monkeypatch.setattr(parser, "parse_jaxpr", lossy_parse)
    x = np.ones(5, np.float32)
    for attempt in (1, 2):
        with pytest.raises(checks.RoundTripError, match="print -> parse -> print"):
            minijax.make_jaxpr(_program)(x)
        assert parses["n"] == attempt
