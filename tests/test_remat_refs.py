"""Refs under remat (DESIGN.md section 5): internal refs are recomputed like values;
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


def test_read_only_ref_argument():
    f = minijax.remat(lambda y, r: mnp.sin(y * r[...]))
    fj = jax.remat(lambda y, r: jnp.sin(y * r[...]))
    r, jr = minijax.new_ref(2.0), jax.new_ref(2.0)
    assert_close(minijax.grad(f)(0.3, r), jax.grad(fj)(0.3, jr))
    assert float(r[...]) == 2.0


def test_write_only_ref_with_stop_gradient():
    w = minijax.new_ref(0.0)

    @minijax.remat
    def f(y):
        w[...] = minijax.lax.stop_gradient(y) * 3
        return y * y
    assert float(minijax.grad(f)(2.0)) == 4.0
    assert float(w[...]) == 6.0


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


def test_debug_print_once_per_forward(capfd):
    @minijax.remat
    def p(y):
        minijax.debug.print("hello {}", y)
        return mnp.sin(y)
    minijax.grad(p)(1.0)
    minijax.jit(minijax.grad(p))(1.0)
    out = capfd.readouterr().out
    assert out.count("hello") == 2


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
    assert "output of get" in report.saved[0].source
    assert dict(report.effects["forward"][1]) == {"read": 1, "write": 1}
    assert not report.effects["backward"][1] and not report.effects["recomputation"][1]
    x = np.ones((3, 3), np.float32)
    f = lambda x, w: mnp.sum(mnp.cos(mnp.sin(x @ w)) * x)
    dots = remat_report(minijax.checkpoint(f, policy=MP.dots_saveable), x, x)
    assert [s.source for s in dots.saved][-1] == "output of dot_general"
    assert sorted(e.primitive.name for e in dots.recomputed).count("sin") >= 1
    assert "dot_general" not in [e.primitive.name for e in dots.recomputed]
    text = str(dots)
    assert "== saved: 3 values, 108 bytes ==" in text


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
