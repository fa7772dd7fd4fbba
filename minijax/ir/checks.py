"""Opt-in self-checks: verify and round-trip every jaxpr minijax traces.

With checks on, each jaxpr the staging trace finishes (`make_jaxpr`, `jit`, and every
pass that re-traces a program -- jvp, vmap, transpose, ...) is verified and printed,
parsed and printed again; a difference is an error at the pass that produced it,
not three passes later. minijax's own test suite runs with checks on (tests/conftest.py
sets `MINIJAX_ENABLE_CHECKS=1`); they are off by default because they multiply the
cost of tracing.

    minijax.ir.checks.enable_checks(True)     # or MINIJAX_ENABLE_CHECKS=1

The same program is traced many times over (each pass re-traces a loop body, a jit
cache misses on a new weak type, every test re-traces its function), and parsing is
most of a check's cost. Printing and parsing are functions of the text alone, so a
text that read back as itself once is remembered (by digest) and not parsed again;
the verifier still runs on every jaxpr. `minijax.clear_caches()` forgets the texts.
"""
from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager

from .trace import MinijaxError, Tracer
from .types import RefType

_enabled = os.environ.get("MINIJAX_ENABLE_CHECKS", "") not in ("", "0")


class RoundTripError(MinijaxError, AssertionError):
    """The text form of a traced program does not read back as the same program."""


def enable_checks(on: bool = True):
    global _enabled
    _enabled = bool(on)


def checks_enabled() -> bool:
    return _enabled


@contextmanager
def checks_disabled():
    """For code that builds an ill-formed program on purpose (tests of the verifier)."""
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous


# Digests of the texts that round-tripped (see the module docstring).
_round_tripped: set[bytes] = set()


def forget_round_trips():
    """Check every text again, as on a fresh start (called by `clear_caches`)."""
    _round_tripped.clear()


def check_traced(closed_jaxpr):
    """Verify a (closed) jaxpr and check print -> parse -> print is the identity; for a
    closed jaxpr with concrete consts, also check the exact form `dumps -> loads ->
    dumps`."""
    # Imported here, not at the top: staging imports this module, and the parser
    # is only needed when checks are on.
    from .verify import verify_jaxpr
    from .printer import pp_jaxpr, dumps, NotSerializableError
    from .parser import parse_jaxpr, loads, ParseError
    verify_jaxpr(closed_jaxpr)
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    text = pp_jaxpr(jaxpr)
    try:
        _round_trips(text, lambda: pp_jaxpr(parse_jaxpr(text)), "print -> parse -> print")
    except ParseError:
        if _has_user_primitive(jaxpr):
            return   # the parser knows the catalogue only (minijax.extend.core.Primitive)
        raise
    if not hasattr(closed_jaxpr, "consts"):
        return
    if any(isinstance(c, Tracer) for c in closed_jaxpr.consts):
        return  # closed over values of an enclosing trace: no values to write down
    if any(isinstance(v.aval, RefType) for v in closed_jaxpr.jaxpr.constvars):
        return  # closed over a live ref: its contents are state, not a constant
    try:
        exact = dumps(closed_jaxpr)
    except NotSerializableError:
        return  # holds Python objects (custom rules) the exact form cannot carry
    _round_trips(exact, lambda: dumps(loads(exact)), "dumps -> loads -> dumps")


def _has_user_primitive(jaxpr) -> bool:
    from .core import eqns_nested
    from .registry import primitives_by_name
    return any(primitives_by_name.get(eqn.primitive.name) is not eqn.primitive
               for eqn in eqns_nested(jaxpr))


def _round_trips(text: str, read_back_and_print, what: str):
    # The digest names the direction too: a human-view text and an exact-form text
    # never stand for each other.
    digest = hashlib.blake2b(f"{what}\n{text}".encode(), digest_size=16).digest()
    if digest in _round_tripped:
        return
    _same_text(read_back_and_print(), text, what)
    _round_tripped.add(digest)


def _same_text(after: str, before: str, what: str):
    if after == before:
        return
    for n, (a, b) in enumerate(zip(after.splitlines(), before.splitlines()), 1):
        if a != b:
            raise RoundTripError(f"{what} changed line {n}:\n  before: {b}\n  after:  {a}"
                                 f"\nin\n{before}")
    raise RoundTripError(f"{what} changed the number of lines in\n{before}")
