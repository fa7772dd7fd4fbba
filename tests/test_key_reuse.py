"""`jax_debug_key_reuse` against JAX's checker: each program of a table runs with the
flag on in both libraries, and both must refuse it (KeyReuseError) or both accept it.
Every verdict is also written down, so the table checks both outcomes and a checker
that refused, or accepted, everything would fail here. The same on jax 0.10.2,
0.11.2 and 0.12.0.1. Then the two flags about raw `uint32` keys,
`jax_legacy_prng_key` and `jax_enable_custom_prng`, against JAX's.
"""
from __future__ import annotations

import threading
import warnings

import jax
import numpy as np
import pytest

import minijax
from minijax.ir.core import eqns_nested
from minijax.ir.random_primitives import random_consume_p, random_clone_p
from minijax.transforms import key_reuse

REFUSED, ACCEPTED = "refused", "accepted"


def _cond_samples(j, p, k):
    return j.lax.cond(p, lambda k: j.random.normal(k), lambda k: j.random.uniform(k), k)


def _split_step(j):
    def step(i, carry):
        key, total = carry
        new, sub = j.random.split(key)
        return new, total + j.random.normal(sub)
    return step


def _traced(j, f):
    """`f` traced by `jit` and not compiled: the check runs on the trace."""
    return lambda *args: j.jit(f).trace(*args)


# name -> (program of a library `j`, verdict on every jax release tested)
CASES = {
    # eager: the root trace remembers consumed keys
    "two samplers, one key": (lambda j: (lambda k: (j.random.normal(k), j.random.uniform(k)))(
        j.random.key(1)), REFUSED),
    "parent used after split": (lambda j: (lambda k: (j.random.split(k), j.random.normal(k)))(
        j.random.key(0)), REFUSED),
    "each child once": (lambda j: [j.random.normal(c) for c in j.random.split(j.random.key(0))],
                        ACCEPTED),
    "clone, then the key": (lambda j: (lambda k: (j.random.normal(j.random.clone(k)),
                                                  j.random.normal(k)))(j.random.key(0)),
                            ACCEPTED),
    "fold_in twice, then the key": (lambda j: (lambda k: (
        j.random.fold_in(k, 1), j.random.fold_in(k, 2), j.random.normal(k)))(j.random.key(0)),
        ACCEPTED),
    "key_data, then the key": (lambda j: (lambda k: (j.random.key_data(k), j.random.normal(k)))(
        j.random.key(0)), ACCEPTED),
    "wrap_key_data of a used key": (lambda j: (lambda k: (j.random.normal(k), j.random.normal(
        j.random.wrap_key_data(j.random.key_data(k)))))(j.random.key(0)), ACCEPTED),
    "raw PRNGKey twice": (lambda j: (lambda k: (j.random.normal(k), j.random.normal(k)))(
        j.random.PRNGKey(0)), ACCEPTED),
    "jitted, donating, called twice": (lambda j: (lambda f, k: (f(k, j.numpy.ones(2)), f(
        k, j.numpy.ones(2))))(j.jit(lambda k, x: x + j.random.normal(k), donate_argnums=1),
                             j.random.key(0)), REFUSED),
    "eager where, then its operand": (lambda j: (lambda a, b: (
        j.numpy.where(True, a, b), j.random.normal(a)))(j.random.key(0), j.random.key(1)),
        REFUSED),
    "grad: one key twice": (lambda j: j.grad(lambda x, k: x * j.random.normal(k)
                                             + j.random.normal(k))(1.0, j.random.key(0)),
                            REFUSED),
    # traced: each jit (and make_jaxpr) trace is checked
    "vmap: one key twice": (lambda j: _traced(j, lambda k: j.vmap(
        lambda k: j.random.normal(k) + j.random.bits(k))(j.random.split(k, 3)))(
        j.random.key(0)), REFUSED),
    "jit: two samplers": (lambda j: _traced(j, lambda k: j.random.normal(k) + j.random.uniform(k))(
        j.random.key(0)), REFUSED),
    "jit: each child once": (lambda j: _traced(j, 
        lambda k: [j.random.normal(c) for c in j.random.split(k)])(j.random.key(0)), ACCEPTED),
    "jit: one slice twice": (lambda j: _traced(j, lambda ks: (j.random.normal(ks[0]), j.random.normal(
        ks[0])))(j.random.split(j.random.key(0), 3)), REFUSED),
    "jit: two slices": (lambda j: _traced(j, lambda ks: (j.random.normal(ks[0]), j.random.normal(
        ks[1])))(j.random.split(j.random.key(0), 3)), ACCEPTED),
    "jit: a reshaped key is the key": (lambda j: _traced(j, lambda k: (
        j.random.normal(k.reshape((1,))[0]), j.random.normal(k)))(j.random.key(0)), REFUSED),
    "jit: where uses both operands": (lambda j: _traced(j, lambda p, a, b: (
        j.random.normal(j.numpy.where(p, a, b)), j.random.normal(a)))(
        True, j.random.key(0), j.random.key(1)), REFUSED),
    "jit: stop_gradient does not use a key": (lambda j: _traced(j, lambda k: (
        j.lax.stop_gradient(k), j.random.normal(k)))(j.random.key(0)), ACCEPTED),
    "jit: clone": (lambda j: _traced(j, lambda k: j.random.normal(j.random.clone(k))
                                   + j.random.normal(k))(j.random.key(0)), ACCEPTED),
    "make_jaxpr: two samplers": (lambda j: j.make_jaxpr(
        lambda k: j.random.normal(k) + j.random.normal(k))(j.random.key(0)), REFUSED),
    "checkpoint: two samplers": (lambda j: _traced(j, j.checkpoint(
        lambda k: j.random.normal(k) + j.random.normal(k)))(j.random.key(0)), REFUSED),
    "cond: one use per branch": (lambda j: _traced(j, lambda p, k: _cond_samples(j, p, k))(
        True, j.random.key(0)), ACCEPTED),
    "cond, then the key": (lambda j: _traced(j, lambda p, k: _cond_samples(j, p, k)
                                           + j.random.normal(k))(True, j.random.key(0)),
                           REFUSED),
    "fori_loop: body uses a closed-over key": (lambda j: _traced(j, lambda k: j.lax.fori_loop(
        0, 3, lambda i, x: x + j.random.normal(k), 0.0))(j.random.key(0)), REFUSED),
    "fori_loop: carried key split each step": (lambda j: _traced(j, lambda k: j.lax.fori_loop(
        0, 3, _split_step(j), (k, 0.0)))(j.random.key(0)), ACCEPTED),
    "scan: carried key used, not renewed": (lambda j: _traced(j, lambda k: j.lax.scan(
        lambda c, x: (c, j.random.normal(c)), k, None, length=3))(j.random.key(0)), REFUSED),
    "while_loop: carried key renewed": (lambda j: _traced(j, lambda k: j.lax.while_loop(
        lambda c: c[1] < 3, lambda c: (j.random.split(c[0])[0], c[1] + 1),
        (k, 0)))(j.random.key(0)), ACCEPTED),
    "while_loop: cond and body use one carried key": (lambda j: _traced(
        j, lambda k: j.lax.while_loop(lambda c: j.random.uniform(c[0]) < 2, lambda c: (
            j.random.split(c[0])[0], c[1] + 1), (k, 0)))(j.random.key(0)), REFUSED),
    "scan over keys": (lambda j: _traced(j, lambda k: j.lax.scan(
        lambda c, k: (c + j.random.normal(k), None), 0.0, j.random.split(k, 3)))(
        j.random.key(0)), ACCEPTED),
    "jit: stack uses its keys": (lambda j: _traced(j, lambda a, b: (
        j.numpy.stack([a, b]), j.random.normal(a)))(j.random.key(0), j.random.key(1)),
        REFUSED),
    "while_loop: body uses a closed-over key": (lambda j: (lambda k: j.lax.while_loop(
        lambda c: c < 3.0, lambda c: c + j.random.uniform(k), 0.0))(j.random.key(0)), REFUSED),
}


def _verdict(lib, program):
    with lib.debug_key_reuse(True):
        try:
            program(lib)
        except lib.errors.KeyReuseError:
            return REFUSED
    return ACCEPTED


@pytest.mark.parametrize("name", list(CASES))
def test_same_verdict_as_jax(name):
    program, expected = CASES[name]
    assert _verdict(jax, program) == expected
    assert _verdict(minijax, program) == expected


def _primitives(closed):
    return {eqn.primitive for eqn in eqns_nested(closed)}


def test_flag_off_checks_nothing_and_adds_nothing():
    key = minijax.random.key(0)
    minijax.random.normal(key)
    minijax.random.normal(key)      # no error: the checker is off
    assert minijax.random.clone(key) is key
    sample = lambda k: minijax.random.normal(minijax.random.clone(k))   # noqa: E731
    off = _primitives(minijax.make_jaxpr(sample)(key))
    assert not off & {random_consume_p, random_clone_p}
    with minijax.debug_key_reuse(True):
        on = _primitives(minijax.make_jaxpr(sample)(key))
    assert {random_consume_p, random_clone_p} <= on
    assert _primitives(minijax.make_jaxpr(sample)(key)) == off   # off again: no marks


def test_clone_keeps_the_key_value():
    key = minijax.random.key(3)
    with minijax.debug_key_reuse(True):
        a = minijax.random.normal(minijax.random.clone(key))
        b = minijax.random.normal(key)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, jax.random.normal(jax.random.key(3)))


def test_config_update_read_and_threads():
    assert minijax.config.jax_debug_key_reuse is False
    seen = []
    try:
        minijax.config.update("jax_debug_key_reuse", True)
        assert minijax.config.read("jax_debug_key_reuse") is True
        key = minijax.random.key(0)
        minijax.random.normal(key)
        with pytest.raises(minijax.errors.KeyReuseError, match="Previously-consumed key"):
            minijax.random.normal(key)
        with minijax.debug_key_reuse(False):
            minijax.random.normal(key)        # off for the block, in this thread
            worker = threading.Thread(
                target=lambda: seen.append(minijax.config.jax_debug_key_reuse))
            worker.start()
            worker.join()
    finally:
        minijax.config.update("jax_debug_key_reuse", False)
    assert seen == [True]                     # a new thread starts from the default
    assert jax.config.jax_debug_key_reuse is False   # JAX's own flag is left alone
    with pytest.raises(ValueError, match="jax_debug_key_reuse"):
        minijax.config.update("jax_debug_key_reuse", "yes")


def test_rule_table_signatures():
    P = minijax.ir.primitives
    assert key_reuse.key_reuse_rules[P.reshape_p] is key_reuse.FORWARD
    assert key_reuse.key_reuse_rules[P.eq_p] is key_reuse.UNCHANGED
    key_aval = minijax.ir.types.ShapedArray((3,), minijax.ir.types.KEY_DTYPE)
    # A primitive without a rule consumes its keys, as JAX's unknown primitives do.
    assert P.select_n_p not in key_reuse.key_reuse_rules
    sig = key_reuse.signature_of(P.select_n_p, [key_aval.update(dtype=np.dtype(bool)),
                                                key_aval, key_aval], {})
    assert set(sig.sinks) == {1, 2} and not sig.sources
    sig = key_reuse.signature_of(P.slice_p, [key_aval], dict(
        start_indices=(1,), limit_indices=(2,), strides=None))
    assert sig.sinks[0].tolist() == [False, True, False] and sig.sources == {0}


def test_experimental_module_has_jax_public_names():
    import jax.experimental.key_reuse as jax_module
    import minijax.experimental.key_reuse as module
    public = lambda m: sorted(n for n in dir(m) if not n.startswith("_"))   # noqa: E731
    assert public(module) == public(jax_module)
    assert "jax_debug_key_reuse" in module.__doc__


# -- raw keys: jax_legacy_prng_key, jax_enable_custom_prng ---------------------------------

RAW_KEY_PROGRAMS = {
    "sampler": lambda j: j.random.normal(j.random.PRNGKey(0)),
    "split": lambda j: j.random.split(j.random.PRNGKey(0)),
    "under jit": lambda j: j.jit(lambda k: j.random.uniform(k))(j.random.PRNGKey(1)),
    "typed key": lambda j: j.random.normal(j.random.key(0)),
}


def _raw_key_outcomes(lib, flag, value):
    """What each program gives with `flag` at `value`: its result's dtype or its error,
    and the warnings (category, message) it gave. (One block for all: a change of
    these flags empties minijax's trace caches.)"""
    outcomes = {}
    with getattr(lib, flag)(value):
        for name, program in RAW_KEY_PROGRAMS.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    result = str(program(lib).dtype)
                except ValueError as error:
                    result = f"ValueError: {error}"
            outcomes[name] = result, sorted({(w.category.__name__, str(w.message))
                                             for w in caught})
    return outcomes


@pytest.mark.parametrize("flag, value", [("legacy_prng_key", "warn"),
                                         ("legacy_prng_key", "error"),
                                         ("enable_custom_prng", True)])
def test_raw_key_flags_as_jax(flag, value):
    outcomes = _raw_key_outcomes(minijax, flag, value)
    assert outcomes == _raw_key_outcomes(jax, flag, value)
    assert outcomes["typed key"] == ("float32", [])      # typed keys are never affected
    if value == "warn":
        [(category, message)] = outcomes["split"][1]
        assert category == "UserWarning" and message.startswith("Legacy uint32 key array")
    elif value == "error":
        assert outcomes["sampler"][0].startswith("ValueError: Legacy uint32 key array")
    else:      # custom PRNG: raw keys in, typed keys out
        assert outcomes["split"] == ("key<fry>", [])
    assert minijax.config.read(f"jax_{flag}") == getattr(jax.config, f"jax_{flag}")


def test_raw_key_flags_refuse_other_values():
    with pytest.raises(ValueError, match="jax_legacy_prng_key"):
        minijax.config.update("jax_legacy_prng_key", "raise")
    with pytest.raises(ValueError, match="jax_enable_custom_prng"):
        with minijax.enable_custom_prng("yes"):
            pass
    assert minijax.config.jax_legacy_prng_key == "allow"
    assert minijax.random.PRNGKey(0).dtype == np.uint32
