"""Regression tests for the fuzzer's findings F70-F79 (docs/fuzzing_findings.md), met
by the default campaign (`python -m minijax fuzz`, seed 0) in session 6. Each test is
the finding's shrunk reproducer (or the smallest program showing the cause), run
through both APIs. Session 16 added F73's three `fz14` rows (and F7 on JAX 0.10) and
one row of its remat run (`rm16`)."""
import jax
import jax.ad_checkpoint
import jax.extend.core
import numpy as np
import pytest

import minijax
import minijax.ad_checkpoint
from minijax.testing import JAX_VERSION, assert_trees_match


# -- F70: eager checkpoint_name of a float64 NumPy array -----------------------------------

@pytest.mark.parametrize("value", [np.array([1.5, 0.875]), np.float64(1.5),
                                   np.array([1, 2], np.int64), np.float32(2.0), 1.5])
def test_eager_checkpoint_name_gives_the_canonical_dtype(value):
    # seed 0:34: vmap of `checkpoint_name(x)` over a float64 batch returned the float64
    # NumPy array; JAX's eager primitives put NumPy operands in the x64-off dtype
    # (compared by declared dtype: JAX 0.10 hands a Python float back as a float32
    # TypedFloat, which np.asarray would read as float64)
    got = minijax.ad_checkpoint.checkpoint_name(value, "b")
    want = jax.ad_checkpoint.checkpoint_name(value, "b")
    assert_trees_match(got, want, rtol=0, atol=0)


def test_eager_checkpoint_name_of_a_python_scalar_is_jax_weak_scalar():
    # seed 0:34's eager row (the fresh-clone run of the issue's command): minijax
    # handed the Python float back, which compares as float64; JAX gives a weak float32
    # scalar. Checked as the fuzzer checks it, and directly.
    from minijax.testing.fuzz import FuzzCase, check_case
    closed = minijax.make_jaxpr(lambda a: minijax.ad_checkpoint.checkpoint_name(a, "b"))(1.5)
    case = FuzzCase("0:34 shrunk", closed, [1.5], [1.5], frozenset(), frozenset(), True)
    rows = check_case(case, ["eager", "jit", "vmap"])
    assert [row.status for row in rows] == ["agree"] * 3, [row.summary() for row in rows]
    for value in (1.5, 2, 1j):
        assert_trees_match(minijax.ad_checkpoint.checkpoint_name(value, "b"),
                           jax.ad_checkpoint.checkpoint_name(value, "b"))
    assert minijax.ad_checkpoint.checkpoint_name(True, "b") is True


def test_vmap_of_checkpoint_name_over_a_float64_batch():
    batch = np.array([1.5, 0.875])
    got = minijax.vmap(lambda x: minijax.ad_checkpoint.checkpoint_name(x, "b"))(batch)
    want = jax.vmap(lambda x: jax.ad_checkpoint.checkpoint_name(x, "b"))(batch)
    assert_trees_match(got, want)
    assert_trees_match(minijax.jit(minijax.vmap(
        lambda x: minijax.ad_checkpoint.checkpoint_name(x, "b")))(batch), want)


# -- F71: a weak scalar argument mapped by vmap, read inside a loop body ----------------------

def _scan_of_weak_scalar(api):
    def program(a, c):
        def step(carry, x):
            return carry, c * 2.0
        return (a + 1.0, api.lax.scan(step, (), None, length=3)[1])
    return program


def test_evaluating_a_jaxpr_with_a_weak_body_input_keeps_the_weak_type_on_both_sides():
    # seed 0:43: the program's scan body takes the weak argument `c`; evaluated under
    # vmap with a strong batch, both APIs' jaxpr evaluators keep the body's weak result
    # (JAX traced anew from Python gives a strong one: that is the fuzzer's oracle)
    batch = np.array([-0.25, 0.125])
    a = np.float32(1.5)
    closed_jax = jax.make_jaxpr(_scan_of_weak_scalar(jax))(a, -0.25)
    closed_mini = minijax.make_jaxpr(_scan_of_weak_scalar(minijax))(a, -0.25)
    want = jax.vmap(lambda x: jax.extend.core.jaxpr_as_fun(closed_jax)(a, x))(batch)
    from minijax.transforms.ad_util import eval_jaxpr
    got = minijax.vmap(lambda x: eval_jaxpr(closed_mini.jaxpr, closed_mini.consts, [a, x]))(batch)
    assert want[1].weak_type and got[1].weak_type
    assert_trees_match(got, want)
    retraced = jax.vmap(lambda x: _scan_of_weak_scalar(jax)(a, x))(batch)
    assert not retraced[1].weak_type


def test_weak_through_a_body_matcher_accepts_exactly_that_leaf():
    from minijax.testing.fuzz_explained import explaining_finding
    from minijax.testing.report import Row
    program = minijax.make_jaxpr(_scan_of_weak_scalar(minijax))(np.float32(1.5), -0.25)

    def row(leaf, detail="weak_type True != jax's False"):
        return Row("vmap", "differ", detail=f"max error 0; vmap leaf {leaf}: {detail}")
    assert explaining_finding("vmap", program, row(1)) == "explained:F71"
    assert explaining_finding("vmap[axes]", program, row(1)) == "explained:F71"
    # leaf 0 (a + 1.0, no body) and the other direction are not F71
    assert explaining_finding("vmap", program, row(0)) == ""
    assert explaining_finding("vmap", program, row(1, "weak_type False != jax's True")) == ""
    assert explaining_finding("grad", program, row(1)) == ""


def test_fuzz_seed_0_43_vmap_rows_are_explained():
    # seed 0:43's program no longer comes out of the seed (the op tables grew: log2,
    # one_minus_square), so its part that made the rows: a weak scalar argument read
    # in a scan body, with the fuzzer's leaves for it
    from minijax.ir.checks import enable_checks
    from minijax.testing import fuzz
    enable_checks(True)
    leaves = [np.array([[1.609], [-0.353], [-0.88]], np.float32), -0.25]
    program = minijax.make_jaxpr(lambda a, c: _scan_of_weak_scalar(minijax)(a, c)[1])(*leaves)
    case = fuzz.FuzzCase("0:43", program, leaves, leaves,
                         frozenset({"control_flow", "weak_types"}), frozenset(), True)
    rows = fuzz.check_case(case, ["vmap", "vmap[axes]"])
    assert [r.status for r in rows] == ["divergence", "divergence"]
    assert {r.divergence for r in rows} == {"explained:F71"}


# -- F72: a cond output that every branch returns unchanged -----------------------------------

def _switch_of_identities(api):
    def f(x, i):
        return api.numpy.sum(api.lax.switch(i, [lambda a: a, lambda a: a], x))
    return f


@pytest.mark.parametrize("policy", ["nothing_saveable", "everything_saveable"])
def test_checkpointed_switch_of_passthrough_branches_saves_nothing(policy):
    # seed 0:43 (finding 004): minijax saved the branch index (or the operand) for the
    # tangent of a value no branch changes; JAX's cond takes such an output from outside
    from minijax.testing.recipes import Side
    x = np.array([-0.5, -0.5, -0.5], np.float32)
    saved = [Side(api.__name__, api, None).saved_residuals(
        api.checkpoint(_switch_of_identities(api),
                       policy=getattr(api.checkpoint_policies, policy)), x, 0)
        for api in (minijax, jax)]
    assert saved[0] == saved[1] == ()
    assert_trees_match(minijax.grad(_switch_of_identities(minijax))(x, 1),
                       jax.grad(_switch_of_identities(jax))(x, 1))


def test_cond_forwards_only_outputs_every_branch_passes_through():
    def f(api):
        def g(p, x, y):
            return api.lax.cond(p, lambda a, b: (a, b, a), lambda a, b: (a, a, b), x, y)
        return g
    x, y = np.float32(1.5), np.float32(-2.0)
    closed = minijax.make_jaxpr(f(minijax))(True, x, y)
    cond_eqn = next(e for e in closed.jaxpr.eqns if e.primitive.name == "cond")
    assert len(cond_eqn.outputs) == 2          # output 0 is x, taken from outside
    assert closed.jaxpr.outvars[0] is closed.jaxpr.invars[1]
    for p in (True, False):
        assert_trees_match(minijax.jit(f(minijax))(p, x, y), jax.jit(f(jax))(p, x, y))
        assert_trees_match(f(minijax)(p, x, y), f(jax)(p, x, y))
    # eagerly, with concrete operands, the results are arrays the cond made
    out = minijax.lax.cond(True, lambda a: a, lambda a: a, np.float64(2.0))
    assert isinstance(out, jax.Array) and out.dtype == np.float32
    assert_trees_match(minijax.vmap(f(minijax))(np.array([True, False]), np.ones(2, np.float32), np.zeros(2, np.float32)),
                       jax.vmap(f(jax))(np.array([True, False]), np.ones(2, np.float32), np.zeros(2, np.float32)))


# -- F73: the final carry of a scan, saved (minijax) or recomputed (JAX) -------------------

def _scan_then(api, consumer):
    lax = api.lax

    def f(b):
        def body(carry, _):
            r = lax.asin(lax.tanh(carry))
            return r, r
        final, ys = lax.scan(body, b, None, length=2)
        return api.numpy.sum(consumer(lax, final)) + api.numpy.sum(ys)
    return f


_SQUARE = lambda lax, c: c * c                                              # noqa: E731
_WINDOW_MAX = lambda lax, c: lax.reduce_window(c, -np.inf, lax.max, (1,), (2,),  # noqa: E731
                                               ((0, 0),))


@pytest.mark.parametrize("consumer", [_SQUARE, _WINDOW_MAX], ids=["square", "window_max"])
def test_scan_final_carry_residuals_are_explained(consumer):
    # seed 0:35 (finding 002): a window max of a scan's final carry; JAX saves the
    # initial carry and the stacked new carries, minijax the final carry
    from minijax.testing.fuzz_explained import explaining_finding
    from minijax.testing.recipes import Side
    from minijax.testing.report import Row
    b = np.array([-0.3], np.float32)
    saved = [Side(api.__name__, api, None).saved_residuals(
        api.checkpoint(_scan_then(api, consumer),
                       policy=api.checkpoint_policies.everything_saveable), b)
        for api in (minijax, jax)]
    # JAX: one stacked array more (the new carries); both hold one f32[1] (minijax's
    # final carry, JAX's initial one). JAX 0.10 saves one more again: its jvp of the
    # body's tanh kept tanh and 1 - tanh per step, minijax's and JAX 0.11's keep one.
    extra = 1 if JAX_VERSION >= (0, 11) else 2
    assert saved[1].count("f32[2,1]") == saved[0].count("f32[2,1]") + extra
    assert saved[0].count("f32[1]") == saved[1].count("f32[1]") == 1
    assert_trees_match(minijax.grad(_scan_then(minijax, consumer))(b),
                       jax.grad(_scan_then(jax, consumer))(b), rtol=1e-5)
    program = minijax.make_jaxpr(_scan_then(minijax, consumer))(b)
    row = Row("checkpoint[everything_saveable]", "differ",
              detail=f"saved residuals differ: minijax saves {list(saved[0])}, "
                     f"jax saves {list(saved[1])}")
    assert explaining_finding(row.transform, program, row) == "explained:F73"
    # minijax saving an extra array of the carry's type is not F73
    more = Row(row.transform, "differ",
               detail=f"saved residuals differ: minijax saves {list(saved[0]) + ['f32[1]']}, "
                      f"jax saves {list(saved[1])}")
    if consumer is _SQUARE:
        assert explaining_finding(row.transform, program, more) == ""


def _scan_solving_its_carry(api):
    lax = api.lax

    def f(b):
        def body(c, _):
            d = 1.0 + c * c
            return lax.custom_linear_solve(lambda v: d * v, c, lambda mv, r: r / d,
                                           symmetric=True), None
        return lax.scan(body, b, None, length=3)[0]
    return f


def test_scan_body_reading_its_carry_residuals_are_explained():
    # the fuzzer's custom_linear_solve entry: the body reads its carry (1 + c*c), so
    # JAX's backward scan carries it again from the initial value (saved, f32[]), while
    # minijax saves the stacked carry inputs; the solve's result, stacked, is saved by both
    from minijax.testing.fuzz_explained import explaining_finding
    from minijax.testing.recipes import Side
    from minijax.testing.report import Row
    b = np.float32(0.7)
    saved = [sorted(Side(api.__name__, api, None).saved_residuals(
        api.checkpoint(_scan_solving_its_carry(api),
                       policy=api.checkpoint_policies.everything_saveable), b))
        for api in (minijax, jax)]
    assert saved == [["f32[3]"] * 3, ["f32[3]", "f32[3]", "f32[]"]], saved
    assert_trees_match(minijax.grad(_scan_solving_its_carry(minijax))(b),
                       jax.grad(_scan_solving_its_carry(jax))(b), rtol=1e-5)
    program = minijax.make_jaxpr(_scan_solving_its_carry(minijax))(b)

    def row(mini, theirs):
        return Row("checkpoint[everything_saveable]", "differ",
                   detail=f"saved residuals differ: minijax saves {mini}, jax saves {theirs}")
    assert explaining_finding("checkpoint[everything_saveable]", program,
                              row(saved[0], saved[1])) == "explained:F73"
    # more stacked arrays on minijax's side than initial carries on JAX's is not F73,
    # nor is a JAX-only scalar of another type than the carry's
    for mini, theirs in ((saved[0] + ["f32[3]"], saved[1]),
                         (saved[0], saved[1][:2] + ["i32[]"])):
        assert explaining_finding("checkpoint[everything_saveable]", program,
                                  row(mini, theirs)) == "", (mini, theirs)


def _scan_setting_its_carry_from_consts(api, length, init_scale=None):
    lax = api.lax

    def f(a):
        def body(c, _):
            k = 1.0 + a * a
            l = lax.custom_linear_solve(lambda u: k * u, a, lambda mv, r: r / k,
                                        symmetric=True)
            return l, l
        init = a if init_scale is None else a * init_scale
        final, ys = lax.scan(body, init, None, length=length)
        return final * final + api.numpy.sum(ys)
    return f


def _residuals_row(program_of, arg):
    from minijax.testing.recipes import Side
    saved = [sorted(Side(api.__name__, api, None).saved_residuals(
        api.checkpoint(program_of(api), policy=api.checkpoint_policies.everything_saveable),
        arg)) for api in (minijax, jax)]
    assert_trees_match(minijax.grad(program_of(minijax))(arg), jax.grad(program_of(jax))(arg),
                       rtol=1e-5)
    return saved, minijax.make_jaxpr(program_of(minijax))(arg)


def _residuals_differ(mini, theirs):
    from minijax.testing.report import Row
    return Row("checkpoint[everything_saveable]", "differ", detail=f"saved residuals "
               f"differ: minijax saves {mini}, jax saves {theirs}")


@pytest.mark.parametrize("length", [0, 2])
def test_a_final_carry_set_from_consts_is_the_hoisted_residual(length):
    # seed fz14:754: the body sets its carry from consts alone, so the whole body is
    # hoisted; minijax saved the loop's final carry besides the hoisted solve result
    # (the same value), JAX recomputes it in its backward scan. The final carry is now
    # that const (or, when the loop does not run, the initial carry): one residual each
    # of `a`, `1 + a*a` and the solve's result, on both sides.
    saved, _ = _residuals_row(lambda api: _scan_setting_its_carry_from_consts(
        api, length), np.float32(0.7))
    assert saved == [["f32[]"] * 3] * 2, saved


def test_the_initial_carry_jax_rereads_is_explained():
    # the same loop from another initial carry: JAX's backward scan takes it again
    from minijax.testing.fuzz_explained import explaining_finding
    saved, program = _residuals_row(lambda api: _scan_setting_its_carry_from_consts(
        api, 2, 3.0), np.float32(0.7))
    assert saved == [["f32[]"] * 3, ["f32[]"] * 4], saved
    row = _residuals_differ(*saved)
    assert explaining_finding(row.transform, program, row) == "explained:F73"
    # a JAX-only residual of a type the loop does not take is not F73
    more = _residuals_differ(saved[0], saved[1] + ["i32[]"])
    assert explaining_finding(row.transform, program, more) == ""


def _tanh_of_a_scan_solving_its_carry(api):
    return lambda b: api.numpy.tanh(_scan_solving_its_carry(api)(b))


def test_jax_0_10_two_factor_tanh_residual_is_explained_with_another_finding():
    # seeds fz14:344 and fz14:695: JAX 0.10's tanh rule saved tanh x and 1 - tanh x
    # (its oracle for one_minus_square likewise 1 + x and 1 - x), where minijax and JAX
    # 0.11 save one_minus_square(tanh x); here next to F73's difference in one row
    from minijax.testing.fuzz_explained import explaining_finding
    saved, program = _residuals_row(_tanh_of_a_scan_solving_its_carry, np.float32(0.7))
    older = JAX_VERSION < (0, 11)
    assert saved == [["f32[3]"] * 3 + ["f32[]"],
                     ["f32[3]"] * 2 + ["f32[]"] * (3 if older else 2)], saved
    row = _residuals_differ(*saved)
    assert explaining_finding(row.transform, program, row) == \
        ("explained:F7+F73" if older else "explained:F73")
    # one residual more per tanh, no more: two scalars more than F73's is neither
    more = _residuals_differ(saved[0], saved[1] + ["f32[]"] * (1 if older else 2))
    assert explaining_finding(row.transform, program, more) == ""


def _custom_jvp_of_a_rounding(api):
    def body(x, y):
        return api.lax.round(y + y)
    f = api.custom_jvp(body)
    f.defjvp(lambda xs, ts: api.jvp(body, xs, ts))
    return lambda x, y: api.numpy.sum(f(x, y))


def test_a_tangent_no_input_reaches_is_no_residual():
    # session 16's remat run (seed rm16): the custom rule's jvp instantiates round's
    # zero tangent, so the summed output tangent is known; minijax's linearize kept it
    # as a residual (`f32[]` under nothing_saveable), JAX returns a zero literal
    x = np.array([-0.5, 0.4, 0.1], np.float32)
    from minijax.testing.recipes import Side
    for api in (minijax, jax):
        remat = api.checkpoint(_custom_jvp_of_a_rounding(api),
                               policy=api.checkpoint_policies.nothing_saveable)
        assert Side(api.__name__, api, None).saved_residuals(remat, x, x) == (), api
    got = minijax.linearize(_custom_jvp_of_a_rounding(minijax), x, x)[1](x, x)
    want = jax.linearize(_custom_jvp_of_a_rounding(jax), x, x)[1](x, x)
    assert_trees_match(got, want)


# -- F74: to_jax of a custom_vjp whose bwd cannot be traced ----------------------------------

def _custom_vjp_over_a_while_loop():
    def loop(x):
        return minijax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, minijax.numpy.sin(c[1])),
                                      (0, x))[1]

    @minijax.custom_vjp
    def f(x):
        return loop(x)

    def fwd(x):
        return loop(x), x

    def bwd(x, ct):
        # reverse mode through a while_loop: raises when traced
        return minijax.vjp(loop, x)[1](ct)
    f.defvjp(fwd, bwd)
    return f


def test_to_jax_traces_a_custom_vjp_bwd_only_when_jax_differentiates():
    # seed 0:91 (finding 006): the eager row raised on JAX's side because exporting
    # the program traced the bwd rule, which differentiates a while_loop
    from minijax.interop import to_jax
    from minijax.transforms.loops import WhileLoopReverseModeError
    x = np.array([0.5, -1.0], np.float32)
    program = minijax.make_jaxpr(_custom_vjp_over_a_while_loop())(x)
    exported = to_jax(program)
    assert_trees_match(exported(x), [np.sin(np.sin(np.sin(x)))], rtol=1e-6)
    assert_trees_match(jax.jit(exported)(x), [np.sin(np.sin(np.sin(x)))], rtol=1e-6)
    with pytest.raises(WhileLoopReverseModeError):
        jax.grad(lambda x: exported(x)[0].sum())(x)
    with pytest.raises(WhileLoopReverseModeError):
        minijax.grad(lambda x: _custom_vjp_over_a_while_loop()(x).sum())(x)


# -- F75: the second derivative of pow in its exponent at a zero exponent ------------------

@pytest.mark.parametrize("dtype", [np.float32, jax.numpy.bfloat16])
def test_hessian_of_pow_at_a_zero_exponent(dtype):
    # seed s6fz6c:3: d/dy of d/dx x**y at y = 0 is x**-1 (2 at x = 0.5); minijax's jvp
    # masked y * x**(y-1) to 0 where y == 0, so that derivative was 0
    x = np.array([[[5.46875, 0.5, 3.84375]]], dtype)
    y = np.array([[[-4.96875, 0.0, -3.34375]]], dtype)

    def f(api):
        return lambda x, y: api.lax.pow(x, y)
    tolerance = 2e-2 if dtype != np.float32 else 1e-5
    assert_trees_match(minijax.hessian(f(minijax), argnums=(0, 1))(x, y),
                       jax.hessian(f(jax), argnums=(0, 1))(x, y), rtol=tolerance, atol=tolerance)
    assert_trees_match(minijax.jacfwd(minijax.grad(lambda x, y: f(minijax)(x, y).sum()),
                                      argnums=1)(x, y),
                       jax.jacfwd(jax.grad(lambda x, y: f(jax)(x, y).sum()), argnums=1)(x, y),
                       rtol=tolerance, atol=tolerance)
    for point in [(0.5, 0.0), (0.0, 0.0), (0.0, 2.0), (2.0, -1.5)]:
        assert_trees_match(minijax.grad(f(minijax), argnums=(0, 1))(*point),
                           jax.grad(f(jax), argnums=(0, 1))(*point))


# -- F76: vmap returns an argument's batch as it was given ----------------------------------

def test_vmap_passing_a_float64_batch_through_matches_eager_jax_and_is_explained():
    # seed s6fz6c:18: the output `c` is the program's argument; JAX's eager vmap and
    # minijax's return the float64 batch as given, the fuzzer's jitted oracle float32
    from minijax.testing.fuzz_explained import explaining_finding
    from minijax.testing.report import Row
    batch = np.array([-0.25, 0.125])
    got = minijax.vmap(lambda a, c: (a * 2.0, c))(np.ones(2, np.float32), batch)
    want = jax.vmap(lambda a, c: (a * 2.0, c))(np.ones(2, np.float32), batch)
    assert np.asarray(got[1]).dtype == np.asarray(want[1]).dtype == np.float64
    assert np.asarray(jax.jit(jax.vmap(lambda a, c: (a * 2.0, c)))(
        np.ones(2, np.float32), batch)[1]).dtype == np.float32
    program = minijax.make_jaxpr(lambda a, c: (a * 2.0, c))(np.float32(1.0), -0.25)

    def row(leaf):
        return Row("vmap", "differ",
                   detail=f"max error 0; vmap leaf {leaf}: dtype float64 != jax's float32")
    assert explaining_finding("vmap", program, row(1)) == "explained:F76"
    assert explaining_finding("vmap", program, row(0)) == ""      # computed, not passed
    assert explaining_finding("jit", program, row(1)) == ""
