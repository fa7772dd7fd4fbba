"""Remat around and inside loops: residual lists against JAX, and `remat_report`'s
recomputation counts against counts made by hand (docs/remat.md, section 6).

Each program is one Python function run with either library's numpy and lax, so its
operations come from the same lines in both and the printed residual lists can be
compared word for word."""
import contextlib
import io

import jax
import numpy as np
import pytest

import minijax
from minijax.remat_report import remat_report
from minijax.testing import JAX_VERSION
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX

W = np.full((3,), 0.7, np.float32)
W_MATRIX = (np.eye(3) * 0.5).astype(np.float32)
XS = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)


def programs(api):
    jnp, lax = api.numpy, api.lax

    def scan_loss(w, xs):
        def body(c, x):
            c = jnp.tanh(c * w + x)
            return c, jnp.sin(c)
        c, ys = lax.scan(body, jnp.ones(3), xs)
        return jnp.sum(c) + jnp.sum(ys)

    def scan_dot(w, xs):
        def body(c, x):
            c = jnp.tanh(c @ w + x)
            return c, c
        c, ys = lax.scan(body, jnp.ones(3), xs)
        return jnp.sum(ys)

    def scan_checkpointed_body(w, xs):
        def body(c, x):
            c = jnp.tanh(c * w + x)
            return c, jnp.sin(c)
        c, ys = lax.scan(api.checkpoint(body), jnp.ones(3), xs)
        return jnp.sum(c) + jnp.sum(ys)

    def cond_loss(w, xs):
        y = lax.cond(jnp.sum(xs) > 0, lambda a: jnp.sin(a * w), lambda a: jnp.cos(a) * w,
                     xs[0])
        return jnp.sum(y * y)

    def while_loss(w, xs):
        n = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5),
                           (0, xs[0]))[1]
        return jnp.sum(jnp.sin(n * w))

    def fori_loss(w, xs):
        v = lax.fori_loop(0, 3, lambda i, a: jnp.sin(a) * 0.5, xs[0])
        return jnp.sum(jnp.tanh(v * w))

    return dict(scan_loss=scan_loss, scan_dot=scan_dot,
                scan_checkpointed_body=scan_checkpointed_body, cond_loss=cond_loss,
                while_loss=while_loss, fori_loss=fori_loss)


JAX_PROGRAMS, MINI_PROGRAMS = programs(jax), programs(minijax)
POLICIES = ("plain", "nothing_saveable", "everything_saveable", "dots_saveable")


def _weights(name):
    return W_MATRIX if name == "scan_dot" else W


def _both(name, policy):
    fj, fm = JAX_PROGRAMS[name], MINI_PROGRAMS[name]
    if policy == "plain":
        return fj, fm
    return (jax.checkpoint(fj, policy=getattr(jax.checkpoint_policies, policy)),
            minijax.checkpoint(fm, policy=getattr(minijax.checkpoint_policies, policy)))


def _printed(api, f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        api.ad_checkpoint.print_saved_residuals(f, *args)
    return out.getvalue().splitlines()


def _summary(lines):
    """Type and origin of each residual, without the source position: what is pinned
    where the two libraries save different things."""
    return sorted(line.split(" from ")[0] if "argument" not in line else line
                  for line in lines)


# A scan body's tanh leaves one stacked residual per step under JAX 0.11 and later
# (one_minus_square(tanh c)), as under minijax; JAX 0.10 left two (tanh c, 1 - tanh c).
TANH_RESIDUALS = 1 if JAX_VERSION >= (0, 11) else 2

# The combinations where minijax saves other values than JAX, pinned on both sides
# (docs/remat.md, "Residuals of loops"). Each: (jax's, minijax's) summaries.
DIFFERENT = {
    # A plain scan: both save the per-step values the body's tangent needs; minijax
    # also saves the zero initial tangent carry.
    ("scan_loss", "plain"): (
        ["f32[3] from the argument w"] + ["f32[4,3] output of scan"] * (2 + TANH_RESIDUALS),
        ["f32[3] from the argument w", "f32[3] output of broadcast_in_dim"]
        + ["f32[4,3] output of scan"] * 3),
    ("scan_dot", "plain"): (
        ["f32[3,3] from the argument w"] + ["f32[4,3] output of scan"] * (1 + TANH_RESIDUALS),
        ["f32[3,3] from the argument w", "f32[3] output of broadcast_in_dim"]
        + ["f32[4,3] output of scan"] * 2),
    ("scan_checkpointed_body", "plain"): (
        ["f32[3] from the argument w", "f32[4,3] from the argument xs",
         "f32[4,3] output of scan"],
        ["f32[3] from the argument w", "f32[4,3] from the argument xs",
         "f32[3] output of broadcast_in_dim", "f32[4,3] output of scan"]),
    # dots_saveable on a scan whose carry is not a dot: both recompute the carry in
    # the backward scan and save each step's dot, stacked (F27); they differ only in
    # the name of the equation that emits it (JAX wraps its loop in a call, named
    # closed_call before JAX 0.11 and eval_jaxpr since).
    ("scan_dot", "dots_saveable"): (
        ["f32[3,3] from the argument w", "f32[4,3] from the argument xs",
         "f32[4,3] output of " + ("eval_jaxpr" if JAX_VERSION >= (0, 11) else "closed_call")],
        ["f32[3,3] from the argument w", "f32[4,3] from the argument xs",
         "f32[4,3] output of scan"]),
}
if JAX_VERSION < (0, 12):
    # Before 0.12 JAX also lists xs[0] (the loop's initial carry), which its pullback
    # never reads (jax.vjp's backward jaxpr has two consts: cos and the loop's output);
    # minijax's linearize drops dead tangent equations and their residuals (fuzz
    # finding F4), as JAX 0.12's does.
    DIFFERENT["while_loss", "plain"] = (
        ["f32[3] from the argument w", "f32[3] output of squeeze", "f32[3] output of while",
         "f32[3] output of cos"],
        ["f32[3] from the argument w", "f32[3] output of while", "f32[3] output of cos"])
if JAX_VERSION < (0, 12):
    # A branch residual that is a cond operand (w, xs[0]): JAX before 0.12 returns it
    # from the plain vjp's cond, in a slot the other branch's residuals share; minijax,
    # as JAX 0.12 and JAX's cond under a checkpoint, passes the operand itself.
    DIFFERENT["cond_loss", "plain"] = (
        ["i32[] output of convert_element_type"] + ["f32[3] output of cond"] * 4,
        ["f32[3] from the argument w", "f32[3] output of squeeze",
         "i32[] output of convert_element_type"] + ["f32[3] output of cond"] * 3)
if JAX_VERSION < (0, 11):
    # JAX 0.10's tanh keeps tanh(v * w) and 1 - tanh(v * w); minijax's, as JAX 0.11's,
    # keeps one_minus_square(tanh(v * w)) alone.
    DIFFERENT["fori_loss", "plain"] = (
        ["f32[3,3] output of scan", "f32[3] from the argument w", "f32[3] output of scan",
         "f32[3] output of sub", "f32[3] output of tanh"],
        ["f32[3,3] output of scan", "f32[3] from the argument w",
         "f32[3] output of one_minus_square", "f32[3] output of scan"])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(MINI_PROGRAMS))
def test_residuals_against_jax(name, policy):
    fj, fm = _both(name, policy)
    args = (_weights(name), XS)
    jaxs, mine = _printed(jax, fj, *args), _printed(minijax, fm, *args)
    np.testing.assert_allclose(minijax.grad(fm)(*args), jax.grad(fj)(*args),
                               rtol=1e-5, atol=1e-6)
    if policy == "everything_saveable":
        # minijax: everything_saveable is no remat, residual for residual. JAX's
        # checkpoint traces the body as a call and saves a few values more.
        assert mine == _printed(minijax, MINI_PROGRAMS[name], *args)
        return
    if (name, policy) in DIFFERENT:
        theirs, ours = DIFFERENT[name, policy]
        assert _summary(jaxs) == sorted(theirs)
        assert _summary(mine) == sorted(ours)
        return
    assert mine == jaxs


def test_checkpoint_around_a_scan_saves_only_its_inputs():
    # The default policy saves nothing computed inside, loop bodies included: JAX
    # saves the inputs only (`xs` and the weights; the initial carry is a constant).
    fj, fm = _both("scan_loss", "nothing_saveable")
    mine = _printed(minijax, fm, W, XS)
    assert mine == _printed(jax, fj, W, XS)
    assert all("from the argument" in line for line in mine)


def test_everything_saveable_of_tanh_saves_what_the_newest_jax_saves():
    # tanh's jvp is JAX 0.11's t * one_minus_square(tanh x): one residual, with or
    # without checkpoint, and the same bits as that JAX's gradient. JAX 0.10's
    # (t + t*tanh x) * (1 - tanh x) kept two (fuzz finding F7, where minijax followed it).
    x = np.arange(3, dtype=np.float32)
    jax_saves = (["f32[3] output of one_minus_square"] if JAX_VERSION >= (0, 11)
                 else ["f32[3] output of sub", "f32[3] output of tanh"])
    for api, expected in ((jax, jax_saves), (minijax, ["f32[3] output of one_minus_square"])):
        f = lambda x: api.numpy.sum(api.numpy.tanh(x))
        ck = api.checkpoint(f, policy=api.checkpoint_policies.everything_saveable)
        assert _summary(_printed(api, ck, x)) == expected
        assert _summary(_printed(api, f, x)) == expected
    np.testing.assert_allclose(
        minijax.grad(lambda x: minijax.numpy.sum(minijax.numpy.tanh(x)))(x),
        jax.grad(lambda x: jax.numpy.sum(jax.numpy.tanh(x)))(x),
        rtol=0 if JAX_VERSION >= (0, 11) else 1e-6)


# -- remat_report on loops: counts made by hand ----------------------------------------

def test_report_counts_the_recomputation_of_a_checkpointed_scan_body():
    report = remat_report(MINI_PROGRAMS["scan_checkpointed_body"], W, XS)
    # The backward scan recomputes, each step: c * w, + x, tanh, one_minus_square (tanh's
    # derivative reads one_minus_square(tanh)), cos (sin's derivative): 5 equations, 4 steps.
    [line] = report.recomputed_lines()
    assert line.startswith("in scan of length 4 (equation ")
    assert "5 per iteration x 4 = 20" in line
    assert report.recomputed_total == 20
    assert {r.trips for r in report.recomputed} == {4}
    assert "recomputed in the backward pass: 20 equation runs" in str(report)


def test_report_counts_the_recomputation_of_a_checkpoint_around_a_scan():
    report = remat_report(minijax.checkpoint(MINI_PROGRAMS["scan_loss"]), W, XS)
    # Backward: the initial carry and the zero tangent carry (2 broadcasts), then one
    # primal loop that recomputes the carry from its initial value and, per step, the
    # primal values the transposed step needs (c * w, + x, tanh, one_minus_square,
    # cos), as JAX's rule does (F27). (Before F27 the primal loop ran twice: once for the
    # carries, once more inside the transposed scan.)
    assert report.recomputed_total == 2 + 5 * 4
    lines = report.recomputed_lines()
    assert lines[0] == "top level: 2 equations (2 broadcast_in_dim)"
    assert "5 per iteration x 4 = 20 (1 add, 1 cos, 1 mul, 1 one_minus_square, 1 tanh)" in lines[1]
    assert len(lines) == 2
    assert [s.source for s in report.saved] == ["from the argument w", "from the argument xs"]


def test_report_counts_nothing_for_a_plain_scan():
    report = remat_report(MINI_PROGRAMS["scan_loss"], W, XS)
    assert report.recomputed == [] and report.recomputed_total == 0
    assert report.recomputed_lines() == ["nothing"]


def test_report_counts_a_while_loop_per_iteration():
    # A while loop on values that are not differentiated, inside a checkpoint: its
    # body (add, mul) is recomputed once per iteration, a count known at run time.
    def f(w):
        n = minijax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5),
                                   (0, 1.0))[1]
        return minijax.numpy.sum(minijax.numpy.sin(n * w))
    report = remat_report(minijax.checkpoint(f), W)
    assert report.recomputed_in_while == 2
    assert any("2 per iteration, times a trip count known only at run time" in line
               for line in report.recomputed_lines())
    assert "+ 2 per iteration of a while loop" in str(report)


def test_report_counts_only_the_largest_branch_of_a_cond():
    report = remat_report(minijax.checkpoint(MINI_PROGRAMS["cond_loss"]), W, XS)
    per_branch = {}
    for r in report.recomputed:
        branch = next((w for w in r.where if w.startswith("branch")), None)
        per_branch[branch] = per_branch.get(branch, 0) + 1
    top = per_branch.pop(None)
    conds = {}
    for branch, n in per_branch.items():
        conds.setdefault(branch.split(" of ")[1], []).append(n)
    assert report.recomputed_total == top + sum(max(ns) for ns in conds.values())


# -- where a residual comes from ------------------------------------------------------------

def test_entry_read_of_an_outside_ref_is_reported_at_the_read():
    r = minijax.new_ref(2.0)

    def f(x):
        y = x * r[...]                                            # the read
        return minijax.numpy.sin(y)
    lines = _printed(minijax, minijax.checkpoint(f), 1.0)
    [read] = [line for line in lines if "output of get" in line]
    source = open(__file__).read().splitlines()
    line = next(i for i, text in enumerate(source) if "# the read" in text) + 1
    assert f"test_remat_loops.py:{line}:" in read and read.endswith(".f)")


def test_a_recomputed_loop_does_not_print_again(capsys):
    # The known scan re-run in the backward pass is the body without its prints:
    # they ran in the forward pass, once per step (docs/remat.md, section 5).
    def loss(w, xs):
        def body(c, x):
            minijax.debug.print("step {}", x)
            return minijax.numpy.tanh(c * w + x), None
        c, _ = minijax.lax.scan(body, 0.5, xs)
        return c
    g = minijax.grad(minijax.checkpoint(loss))(1.0, np.arange(2, dtype=np.float32))
    assert capsys.readouterr().out.splitlines() == ["step 0.0", "step 1.0"]
    assert [s for _, s in minijax.ad_checkpoint.saved_residuals(
        minijax.checkpoint(loss), 1.0, np.arange(2, dtype=np.float32))] == \
        ["from the argument w", "from the argument xs"]
    np.testing.assert_allclose(g, minijax.grad(loss)(1.0, np.arange(2, dtype=np.float32)),
                               rtol=1e-6)
