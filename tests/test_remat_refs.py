"""Refs under remat (docs/remat.md, section 5): internal refs are recomputed like values;
external refs' effects run once, in the forward pass, and the recomputation reads
their value saved at entry. Plus the known divergence from jax 0.10."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.divergences import DIVERGENCES_BY_NAME
from minijax.ir import verify_jaxpr
from tests.ad_helpers import assert_close

MP = minijax.checkpoint_policies
ALL_POLICIES = [MP.everything_saveable, MP.nothing_saveable, MP.dots_saveable,
                MP.dots_with_no_batch_dims_saveable, MP.save_only_these_names("a"),
                MP.save_any_names_but_these("a"), MP.save_anything_except_these_names("a"),
                MP.save_from_both_policies(MP.dots_saveable, MP.save_only_these_names("a"))]


def _seed(remat):
    @remat
    def f(y, x_ref):
        out = y * x_ref[...]
        x_ref[...] += 1
        return out
    return f


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_seed_example_effect_once(policy, use_jit):
    f = _seed(lambda g: minijax.remat(g, policy=policy))
    g = minijax.grad(f)
    g = minijax.jit(g) if use_jit else g
    r = minijax.new_ref(1.0)
    assert float(g(1.0, r)) == 1.0
    assert float(r[...]) == 2.0


def test_seed_example_divergence_from_jax():
    """Known divergence: jax 0.10 runs the increment twice (2.0, ref 3.0)."""
    entry = DIVERGENCES_BY_NAME["remat_grad_external_ref_effect_runs_twice"]
    assert entry.jax_version.startswith("0.10")
    r = minijax.new_ref(1.0)
    ours = minijax.grad(_seed(minijax.remat))(1.0, r)
    assert (float(ours), float(r[...])) == (1.0, 2.0)            # the intent (PR #33050)
    jr = jax.new_ref(1.0)
    theirs = jax.grad(_seed(jax.remat))(1.0, jr)
    assert (float(theirs), float(jr[...])) == (2.0, 3.0)          # jax 0.10's behaviour


def test_no_retracing_of_the_python_function():
    calls = []

    @minijax.remat
    def f(y, r):
        calls.append(1)
        out = y * r[...]
        r[...] += 1
        return out
    r = minijax.new_ref(1.0)
    minijax.grad(f)(1.0, r)
    assert len(calls) == 1


def test_forward_program_has_one_read_and_one_write():
    r = minijax.new_ref(1.0)
    closed = minijax.make_jaxpr(minijax.grad(_seed(minijax.remat)))(1.0, r)
    verify_jaxpr(closed)
    ref_ops = [e.primitive.name for e in closed.jaxpr.eqns
               if e.primitive.name in ("get", "swap", "addupdate")]
    assert ref_ops == ["get", "swap"]
    staged = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat"]
    assert len(staged) == 1 and staged[0].params["differentiated"]
    assert not any(isinstance(v.aval, minijax.ir.RefType) for v in staged[0].inputs)


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_closed_over_ref_read_modify_write(policy):
    r = minijax.new_ref(np.float32(0.5))

    @minijax.remat
    def f(y):
        v = r[...]
        r[...] = v * 3.0 + 1.0
        return mnp.sin(y * v) * mnp.sin(y)

    f = minijax.remat(f.__wrapped__, policy=policy)
    g = minijax.grad(f)(2.0)
    assert float(r[...]) == pytest.approx(2.5)
    v = 0.5
    assert float(g) == pytest.approx(np.cos(2 * v) * v * np.sin(2.0) + np.sin(2 * v) * np.cos(2.0),
                                     rel=1e-5)


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_internal_ref_is_pure(policy):
    def f(np_, new_ref):
        def g(y):
            q = new_ref(y)
            q[...] = np_.sin(q[...]) * y
            q[...] += y * y
            return q[...]
        return g
    ours = minijax.grad(minijax.remat(f(mnp, minijax.new_ref), policy=policy))(1.3)
    theirs = jax.grad(jax.remat(f(jnp, jax.new_ref)))(1.3)
    assert_close(ours, theirs)


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_read_only_ref_argument(policy):
    f = minijax.remat(lambda y, r: mnp.sin(y * r[...]) * y, policy=policy)
    fj = jax.remat(lambda y, r: jnp.sin(y * r[...]) * y)
    r, jr = minijax.new_ref(2.0), jax.new_ref(2.0)
    assert_close(minijax.grad(f)(0.3, r), jax.grad(fj)(0.3, jr))
    assert float(r[...]) == 2.0


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_read_only_closed_over_ref(policy):
    r, jr = minijax.new_ref(2.0), jax.new_ref(2.0)
    f = minijax.remat(lambda y: mnp.sin(y * r[...]) * mnp.cos(y), policy=policy)
    fj = jax.remat(lambda y: jnp.sin(y * jr[...]) * jnp.cos(y))
    assert_close(minijax.grad(f)(0.3), jax.grad(fj)(0.3))
    assert float(r[...]) == 2.0


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_write_only_ref_with_stop_gradient(policy):
    w = minijax.new_ref(0.0)

    def f(y):
        w[...] = minijax.lax.stop_gradient(y) * 3
        return y * mnp.sin(y)
    # sin(2) + 2 cos(2) cancels to 0.077: the tolerance is the terms' float32 rounding
    # (a GPU's sin and cos are a few ulps off where the CPU's are correctly rounded).
    assert float(minijax.grad(minijax.remat(f, policy=policy))(2.0)) == \
        pytest.approx(np.sin(2.0) + 2.0 * np.cos(2.0), abs=1e-6)
    assert float(w[...]) == 6.0


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_write_only_ref_argument(policy):
    def f(y, out):
        out[...] = minijax.lax.stop_gradient(y) + 1.0
        return mnp.sin(y) * y
    w = minijax.new_ref(0.0)
    g = minijax.grad(minijax.remat(f, policy=policy))(0.5, w)
    assert float(g) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5), rel=1e-6)
    assert float(w[...]) == 1.5


def test_vjp_pullback_and_linearize_never_touch_refs():
    r = minijax.new_ref(1.0)
    out, pullback = minijax.vjp(lambda y: _seed(minijax.remat)(y, r), 2.0)
    assert float(r[...]) == 2.0
    first, second = pullback(1.0), pullback(1.0)
    assert float(first[0]) == float(second[0]) == 1.0
    assert float(r[...]) == 2.0
    r2 = minijax.new_ref(1.0)
    _, lin = minijax.linearize(lambda y: _seed(minijax.remat)(y, r2), 2.0)
    assert float(lin(1.0)) == float(lin(1.0)) == 1.0
    assert float(r2[...]) == 2.0


def test_nested_remats_write_once():
    r = minijax.new_ref(0.0)

    @minijax.remat
    def inner(y):
        r[...] += 1.0
        return mnp.sin(y) * r[...]
    outer = minijax.remat(lambda y: inner(y) * 2, policy=MP.dots_saveable)
    twice = minijax.remat(lambda y: outer(y))
    g = minijax.grad(twice)(1.0)
    assert float(r[...]) == 1.0
    assert float(g) == pytest.approx(2 * np.cos(1.0), rel=1e-6)


def test_everything_saveable_equals_no_remat_with_refs():
    def run(wrap):
        r = minijax.new_ref(1.5)
        f = wrap(lambda y: _seed(lambda g: g)(y, r) * mnp.sin(y))
        return minijax.grad(f)(0.7), r[...]
    plain = run(lambda f: f)
    remat = run(lambda f: minijax.remat(f, policy=MP.everything_saveable))
    assert_close(plain, remat)


def _printing(np_, debug):
    def p(y):
        debug.print("hello {}", y)
        return np_.sin(np_.sin(y) * y)
    return p


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_debug_print_once_per_forward(capfd, policy):
    p = minijax.remat(_printing(mnp, minijax.debug), policy=policy)
    minijax.grad(p)(1.0)
    assert capfd.readouterr().out.count("hello") == 1
    minijax.jit(minijax.grad(p))(1.0)
    assert capfd.readouterr().out.count("hello") == 1
    # A pullback is the backward pass only: calling it prints nothing.
    _, pullback = minijax.vjp(p, 1.0)
    assert capfd.readouterr().out.count("hello") == 1
    pullback(1.0), pullback(1.0)
    assert capfd.readouterr().out.count("hello") == 0
    # Inside a scan body: once per iteration.
    scanned = lambda x: minijax.lax.scan(lambda c, _: (p(c), None), x, None, length=3)[0]
    minijax.grad(scanned)(0.5)
    assert capfd.readouterr().out.count("hello") == 3


def test_debug_print_divergence_from_jax(capfd):
    """Known divergence: jax 0.10 prints again in the recomputation (and per pullback
    call); minijax prints once per forward evaluation."""
    assert "remat_grad_debug_print_runs_again_in_recomputation" in DIVERGENCES_BY_NAME
    for policy in (jax.checkpoint_policies.nothing_saveable,
                   jax.checkpoint_policies.everything_saveable):
        jax.grad(jax.checkpoint(_printing(jnp, jax.debug), policy=policy))(1.0)
        assert capfd.readouterr().out.count("hello") == 2
    _, pullback = jax.vjp(jax.checkpoint(_printing(jnp, jax.debug)), 1.0)
    pullback(1.0)
    assert capfd.readouterr().out.count("hello") == 2
    minijax.grad(minijax.checkpoint(_printing(mnp, minijax.debug)))(1.0)
    assert capfd.readouterr().out.count("hello") == 1
    assert_close(minijax.grad(minijax.checkpoint(_printing(mnp, minijax.debug)))(1.0),
                 jax.grad(jax.checkpoint(_printing(jnp, jax.debug)))(1.0))
    capfd.readouterr()


def test_remat_scan_body_bumps_counter_once_per_iteration():
    c = minijax.new_ref(0.0)

    def body(carry, xi):
        c[...] += 1.0
        return carry * c[...] + xi, None
    g = minijax.jit(minijax.grad(
        lambda x: minijax.lax.scan(minijax.remat(body), x, mnp.arange(3.0))[0]))(1.0)
    assert float(c[...]) == 3.0
    assert float(g) == 6.0            # 1 * 2 * 3: each iteration's own counter value


def test_teaching_report():
    from minijax.remat_report import remat_report
    r = minijax.new_ref(1.0)
    report = remat_report(_seed(minijax.remat), 1.0, r)
    assert float(r[...]) == 1.0          # the report only traces: it changes no ref
    assert [s.nbytes for s in report.saved] == [4]
    # The entry value read by the remat's ref rewrite is reported at the read in the function.
    assert report.saved[0].source.startswith(f"output of get from {__file__}:")
    assert dict(report.effects["forward"]["x_ref"]) == {"read": 1, "write": 1}
    assert not report.effects["backward"]["x_ref"]
    assert not report.effects["recomputation"]["x_ref"]
    x = np.ones((3, 3), np.float32)
    f = lambda x, w: mnp.sum(mnp.cos(mnp.sin(x @ w)) * x)
    dots = remat_report(minijax.checkpoint(f, policy=MP.dots_saveable), x, x)
    line = next(i for i, t in enumerate(open(__file__).read().splitlines(), 1)
                if "f = lambda x, w: mnp.sum(mnp.cos(mnp.sin(x @ w)) * x)" in t)
    assert [s.source for s in dots.saved][-1] == \
        f"output of dot_general from {__file__}:{line}:45 (test_teaching_report.<locals>.<lambda>)"
    assert sorted(r.eqn.primitive.name for r in dots.recomputed).count("sin") >= 1
    assert "dot_general" not in [r.eqn.primitive.name for r in dots.recomputed]
    text = str(dots)
    assert "== saved: 3 values, 108 bytes ==" in text
    assert ("== recomputed in the backward pass: 4 equation runs ==\n"
            "  top level: 4 equations (2 cos, 2 sin)") in text
    assert "  forward:       none\n  recomputation: none\n  backward:      none" in text


calls = minijax.new_ref(0.0)      # a module-level ref, closed over by name


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=str)
def test_report_counts_effects_on_closed_over_refs(policy):
    from minijax.remat_report import remat_report
    scale = minijax.new_ref(2.0)
    state = {"hidden": minijax.new_ref(5.0)}

    def f(y, acc):
        calls[...] += 1.0                               # read-modify-write, global
        acc[...] = minijax.lax.stop_gradient(y)         # write only, an argument
        h = state["hidden"]
        h[...] = h[...] * 2.0                           # reached through a dict
        q = minijax.new_ref(y)                          # internal: not reported
        q[...] = mnp.sin(q[...]) * scale[...]           # read only, closed over
        return q[...] * y
    acc = minijax.new_ref(0.0)
    report = remat_report(minijax.remat(f, policy=policy), 0.7, acc)
    assert (float(calls[...]), float(acc[...]), float(state["hidden"][...])) == (0.0, 0.0, 5.0)
    counts = {phase: {name: dict(c) for name, c in per_ref.items()}
              for phase, per_ref in report.effects.items()}
    # `acc` is overwritten whole and never read: its entry value is not needed.
    assert counts["forward"] == {
        "acc": {"write": 1}, "calls (closed over)": {"read": 1, "write": 1},
        "ref 0 (closed over)": {"read": 1, "write": 1}, "scale (closed over)": {"read": 1}}
    assert all(not c for phase in ("recomputation", "backward")
               for c in counts[phase].values())
    text = str(report)
    assert "forward:       acc: 1 write; calls (closed over): 1 read, 1 write;" in text
    assert "  recomputation: none\n  backward:      none" in text


def test_report_counts_effects_in_a_scan_body():
    from minijax.remat_report import remat_report
    c = minijax.new_ref(0.0)

    def body(carry, xi):
        c[...] += 1.0
        return carry * c[...] + xi, None
    loss = lambda x: minijax.lax.scan(minijax.remat(body), x, mnp.arange(3.0))[0]
    report = remat_report(loss, 1.0)
    # Static counts: the scan equation reads and writes c once per iteration.
    assert {k: dict(v) for k, v in report.effects["forward"].items()} == \
        {"c (closed over)": {"read": 1, "write": 1}}
    assert not report.effects["backward"]["c (closed over)"]


def test_remat_scan_body_divergence_from_jax():
    """The same known divergence inside scan: jax 0.10 bumps the counter twice per
    iteration (6 after 3 steps) and differentiates against the bumped values."""
    assert "remat_grad_external_ref_effect_runs_twice" in DIVERGENCES_BY_NAME
    c = jax.new_ref(0.0)

    def body(carry, xi):
        c[...] += 1.0
        return carry * c[...] + xi, None
    g = jax.jit(jax.grad(lambda x: jax.lax.scan(jax.remat(body), x, jnp.arange(3.0))[0]))(1.0)
    assert (float(g), float(c[...])) == (120.0, 6.0)


@pytest.mark.parametrize("wrap", [minijax.jit, minijax.checkpoint], ids=["jit", "checkpoint"])
def test_cached_trace_rechecks_a_closed_over_ref_passed_in(wrap):
    # jit and checkpoint share one staging cache (`stage_cached`, frontend/jit.py): a
    # trace cached for another ref is checked again when the call passes in the very
    # ref the function closes over.
    closed_over = minijax.new_ref(np.zeros(3, np.float32))
    other = minijax.new_ref(np.ones(3, np.float32))

    def f(x, s):
        return x * closed_over[...] + s[...]
    staged = wrap(f)
    np.testing.assert_allclose(np.asarray(staged(1.0, other)), np.ones(3))
    with pytest.raises(minijax.RefError, match="both closed over by the function and passed"):
        staged(1.0, closed_over)
