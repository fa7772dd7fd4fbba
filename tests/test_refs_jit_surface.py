"""jit's surface with refs (issue 17): `lower(...)` / `.compile()` with ref arguments
and closed-over refs, `donate_argnums` naming a ref, and `disable_jit` running ref
programs op by op -- each against real JAX (or a pinned divergence)."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match
from tests.test_divergences import pins

X = np.full(3, 2.0, np.float32)


def bump(r, x):
    r[...] += x
    return r[...] * 2.0


def _calls(m, run, n=2):
    r = m.new_ref(np.ones(3, np.float32))
    f = run(m, bump)
    outs = [f(r, X) for _ in range(n)]
    return outs, r[...]


def _lowered_and_compiled(m, f):
    def once(r, x):
        return m.jit(f).lower(r, x).compile()(r, x)
    return once


@pytest.mark.parametrize("run", [_lowered_and_compiled,
                                 lambda m, f: m.jit(f).lower(m.new_ref(np.ones(3, np.float32)),
                                                             X).compile()])
def test_lower_and_compile_with_a_ref_argument_match_jax(run):
    assert_trees_match(_calls(minijax, run), _calls(jax, run))


def test_lowered_text_and_a_closed_over_ref_read_at_each_call():
    log = minijax.new_ref(np.zeros(3, np.float32))

    def f(x):
        log[...] += x
        return log[...].sum()
    lowered = minijax.jit(f).lower(X)
    assert "stablehlo" in lowered.as_text() or "func.func" in lowered.as_text()
    compiled = lowered.compile()
    assert float(compiled(X)) == 6.0
    log[...] = np.ones(3, np.float32)            # written between calls: seen by the next
    assert float(compiled(X)) == 9.0
    np.testing.assert_array_equal(np.asarray(log[...]), np.full(3, 3.0))


def test_compiled_refuses_other_argument_types_and_writes_nothing():
    r = minijax.new_ref(np.ones(3, np.float32))
    compiled = minijax.jit(bump).lower(r, X).compile()
    other = minijax.new_ref(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="compiled for arguments of other types"):
        compiled(other, np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(other[...]), np.ones(4))


@pins("jax_donating_a_ref_argument_fails")
def test_jax_donating_a_ref_argument_fails():
    with pytest.raises(Exception, match="buffer donor"):     # JaxRuntimeError
        _calls(jax, lambda m, f: m.jit(f, donate_argnums=0))
    outs, contents = _calls(minijax, lambda m, f: m.jit(f, donate_argnums=0))
    assert_trees_match((outs, contents), _calls(jax, lambda m, f: m.jit(f)))
    r = minijax.new_ref(np.ones(3, np.float32))
    old = r._value                       # the array the box holds: donated, so deleted
    minijax.jit(bump, donate_argnums=0)(r, X)
    assert old.is_deleted()
    # A ref JAX's function only reads: the call runs, donating nothing.
    read = jax.new_ref(np.ones(3, np.float32))
    with pytest.warns(UserWarning, match="donated buffers were not usable"):
        jax.jit(lambda r: r[...].sum(), donate_argnums=0)(read)


def test_donating_an_array_beside_a_ref():
    r, x = minijax.new_ref(np.ones(3, np.float32)), jax.numpy.asarray(X)
    out = minijax.jit(bump, donate_argnums=(0, 1))(r, x)
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 6.0))
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 3.0))
    assert x.is_deleted()                # more in test_refs_donation.py


def test_disable_jit_runs_ref_programs_op_by_op_with_the_same_results():
    def program(m, r, x):
        def body(i, c):
            r[i] += c
            return c * 2.0
        c = m.lax.fori_loop(0, 3, body, x[0])
        return m.jit(bump)(r, x), c
    results = []
    for m, disabled in ((minijax, True), (minijax, False), (jax, True)):
        r = m.new_ref(np.ones(3, np.float32))
        with m.disable_jit(disabled):
            out = m.jit(lambda r, x: program(m, r, x))(r, X)
        results.append((out, r[...]))
    assert_trees_match(results[0], results[1])
    assert_trees_match(results[0], results[2])
