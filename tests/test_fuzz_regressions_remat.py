"""Regression tests for the fuzzer's checkpoint-residual findings
(docs/fuzzing_findings.md): what a checkpointed backward pass saves, compared with
JAX's `print_saved_residuals` -- the early findings F3-F16, then those of campaign
s4last that have no linear-algebra primitive (F30-F37). Each test is the finding's
shrunk reproducer (or the smallest program showing the cause), run through both APIs."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match
from minijax.testing.recipes import Side
from minijax.testing.report import Row
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX

TRANSFORM = "checkpoint[everything_saveable]"


def _saved(api, f, policy, *args):
    remat = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    return Side(api.__name__, api, None).saved_residuals(remat, *args)


def _both_saved(f, policy, *args):
    return [_saved(api, f(api), policy, *args) for api in (minijax, jax)]


def _grads_match(f, *args, rtol=1e-6):
    argnums = tuple(range(len(args)))
    assert_trees_match(minijax.grad(f(minijax), argnums=argnums)(*args),
                       jax.grad(f(jax), argnums=argnums)(*args), rtol=rtol)


def _residual_row(mini_saved, jax_saved):
    return Row(TRANSFORM, "differ",
               detail=f"saved residuals differ: minijax saves {list(mini_saved)}, "
                      f"jax saves {list(jax_saved)}")


# -- F3-F16: the first campaigns' residuals -------------------------------------------

def test_checkpointed_abs_saves_the_boolean_mask_as_jax_does():
    # fuzz finding F3: abs's jvp was t * (2 * (x >= 0) - 1), so a checkpointed backward
    # pass saved an f32 array where JAX's saves the bool mask of its select.
    x = np.array([-0.9, 0.0, 2.0], np.float32)
    saved = []
    for api in (minijax, jax):
        f = api.checkpoint(lambda x: api.numpy.sum(api.lax.abs(x)),
                           policy=api.checkpoint_policies.everything_saveable)
        saved.append(Side(api.__name__, api, None).saved_residuals(f, x))
        assert_trees_match(minijax.grad(lambda x: minijax.numpy.abs(x).sum())(x),
                           jax.grad(lambda x: jax.numpy.abs(x).sum())(x))
    assert saved[0] == saved[1] == ("bool[3]",)


@pytest.mark.parametrize("policy, f", [
    ("everything_saveable", lambda api: lambda x: api.numpy.sum(api.lax.sign(api.lax.sin(x)))),
    ("everything_saveable",
     lambda api: lambda x: api.numpy.sum(api.lax.ceil(api.lax.sqrt(api.lax.abs(x))))),
    ("nothing_saveable", lambda api: lambda x: api.numpy.sum(
        api.ad_checkpoint.checkpoint_name(api.lax.stop_gradient(x), "a")) + api.numpy.sum(x)),
    ("everything_saveable", lambda api: lambda x: api.numpy.sum(api.lax.sign(api.lax.sin(x)))
     * api.numpy.sum(api.lax.cos(x))),
], ids=["sign", "ceil", "named_stop_gradient", "sign_beside_cos"])
def test_checkpoint_saves_nothing_for_a_tangent_killed_by_a_zero_derivative(policy, f):
    # fuzz finding F4: the tangent equations of sin (or sqrt, or the name) stayed in
    # the linear jaxpr although sign/ceil/stop_gradient make their result a symbolic
    # zero, and so did their residuals; linearize now drops dead tangent equations
    x = np.array([-0.905, 2.0], np.float32)
    saved = [_saved(api, f(api), policy, x) for api in (minijax, jax)]
    assert saved[0] == saved[1]
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))


def test_nothing_saveable_saves_no_scan_output():
    # fuzz finding F5 (docs/fuzzing_findings.md), fixed when the remat policy began to reach the
    # results of loops and calls inside the checkpointed function
    x = np.ones(3, np.float32)
    saved = []
    for api in (minijax, jax):
        def g(x):
            ys = api.lax.scan(lambda c, x: (c, x), (), api.lax.cos(x), reverse=True)[1]
            return api.numpy.sum(api.lax.abs(ys))
        f = api.checkpoint(g, policy=api.checkpoint_policies.nothing_saveable)
        saved.append(Side(api.__name__, api, None).saved_residuals(f, x))
    assert saved[0] == saved[1] == ("f32[3]",)


@pytest.mark.parametrize("shape, dimension", [((1,), 0), ((3,), 0), ((2, 3), 0), ((2, 3), 1),
                                              ((2, 0), 1)])
def test_checkpointed_sort_saves_what_jax_saves(shape, dimension):
    # fuzz finding F6: sort's jvp gathered each tangent with a full i32 index (one
    # column per dimension); JAX's saves one u32[*shape, 1] permutation, as minijax's
    # now does (flat indices into the flattened tangent)
    rng = np.random.RandomState(0)
    a, b = (rng.randn(*shape).astype(np.float32) for _ in range(2))

    def f(api):
        def sorted_product(a, b):
            first, second = api.lax.sort((b, a), dimension=dimension, num_keys=1)
            return api.numpy.sum(first * second ** 2)
        return sorted_product
    for policy in ("everything_saveable", "nothing_saveable"):
        saved = [_saved(api, f(api), policy, a, b) for api in (minijax, jax)]
        assert saved[0] == saved[1]
    # JAX's side in one jitted program (array arguments: no weak type changes)
    grads, jvp = jax.jit(lambda a, b: (jax.grad(f(jax), argnums=(0, 1))(a, b),
                                       jax.jvp(f(jax), (a, b), (b, a))))(a, b)
    assert_trees_match(minijax.grad(f(minijax), argnums=(0, 1))(a, b), grads)
    assert_trees_match(minijax.jvp(f(minijax), (a, b), (b, a)), jvp, rtol=1e-6)


# f32[2] residuals saved under everything_saveable: minijax (as JAX from 0.11, whose
# jvps of tanh and atanh are t * one_minus_square(tanh x) and t / one_minus_square(x))
# and JAX 0.10, whose (t + t*ans) * (1 - ans) and 1/(1 + x) * t/(1 - x) kept two where
# 0.11 keeps one. Under dots_saveable every version saves the one input.
_TANH_ATANH_SAVED = {"tanh": (1, 2), "atanh": (2, 4), "atanh_in_scan": (1, 2)}


@pytest.mark.parametrize("f, name", [
    (lambda api: lambda x: api.numpy.sum(api.lax.tanh(x)), "tanh"),
    (lambda api: lambda x: api.numpy.sum(api.lax.atanh(0.9 * api.lax.tanh(x))), "atanh"),
    (lambda api: lambda x: api.numpy.sum(
        api.lax.scan(lambda c, x: (c, api.lax.atanh(x * 0.5)), (), x)[1]), "atanh_in_scan"),
], ids=["tanh", "atanh", "atanh_in_scan"])
def test_checkpointed_tanh_and_atanh_save_what_jax_saves(f, name):
    # fuzz finding F7 (first seen by cross_check) and the campaign's atanh/tanh in
    # scan bodies: minijax's jvp rules are the newest JAX's formulations
    x = np.array([0.9366, -0.3], np.float32)
    ours, jax_010 = _TANH_ATANH_SAVED[name]
    theirs = ours if JAX_VERSION >= (0, 11) else jax_010
    for policy, expected in (("everything_saveable", (ours, theirs)), ("dots_saveable", (1, 1))):
        saved = [_saved(api, f(api), policy, x) for api in (minijax, jax)]
        assert saved == [("f32[2]",) * n for n in expected]
    # the same operations as JAX 0.11's rules, so the same bits; JAX 0.10's differ in
    # the last place
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x),
                       rtol=0 if JAX_VERSION >= (0, 11) else 1e-6, atol=0)


def test_checkpointed_clamp_saves_the_boolean_mask_as_jax_does():
    # fuzz finding F8: clamp's jvp multiplied by a float mask (an f32 residual); JAX
    # selects (a bool residual).
    x = np.array([-1.0, 0.3, 2.0], np.float32)
    saved = [_saved(api, lambda x: api.numpy.sum(api.lax.clamp(-0.5, x, 0.75)),
                    "everything_saveable", x) for api in (minijax, jax)]
    assert saved[0] == saved[1] and "bool[3]" in saved[0]
    for f in (lambda m: lambda x: m.numpy.sum(m.lax.clamp(-0.5, x, 0.75)),
              lambda m: lambda x: m.numpy.sum(m.numpy.clip(x, -1.0, x * 0.5))):
        assert_trees_match(minijax.grad(f(minijax))(x), jax.jit(jax.grad(f(jax)))(x))
        assert_trees_match(minijax.jacfwd(f(minijax))(x), jax.jit(jax.jacfwd(f(jax)))(x))


@pytest.mark.parametrize("op", ["cummax", "cummin", "cumprod"])
def test_cumulative_residuals_are_explained_residual_for_residual(op):
    # finding F12 (explained, docs/fuzzing_findings.md): JAX saves slices of its associative
    # scan, minijax index arrays / masks; the gradients agree
    from minijax.testing import fuzz
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)

    def f(api):
        return lambda x: api.numpy.sum(getattr(api.lax, op)(x, 1) * x)
    saved = [_saved(api, f(api), "everything_saveable", x) for api in (minijax, jax)]
    assert saved[0] != saved[1]
    assert_trees_match(minijax.grad(f(minijax))(x), jax.jit(jax.grad(f(jax)))(x), rtol=1e-6)
    program = minijax.make_jaxpr(f(minijax))(x)
    assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*saved)) == "explained:F12"
    # a residual no cumulative rule makes (another shape) is not explained
    odd = _residual_row(list(saved[0]) + ["f32[7]"], saved[1])
    assert fuzz.known_divergence(TRANSFORM, program, odd) == ""
    # nor is the same difference in a program without a cumulative reduction
    plain = minijax.make_jaxpr(lambda x: minijax.numpy.sum(minijax.numpy.sin(x)))(x)
    assert fuzz.known_divergence(TRANSFORM, plain, _residual_row(*saved)) == ""


def test_size_one_broadcast_residuals_are_explained():
    # finding F13 (explained): JAX's mul broadcasts a [1, 1] operand implicitly and saves
    # it at that shape; minijax broadcasts first and saves the broadcast value
    from minijax.testing import fuzz
    x = np.ones((2, 3), np.float32)

    def f(api):
        return lambda x: api.numpy.sum(x * np.array([[3.0]], np.float32))
    saved = [_saved(api, f(api), "everything_saveable", x) for api in (minijax, jax)]
    assert saved == [("f32[2,3]",), ("f32[1,1]",)]
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))
    program = minijax.make_jaxpr(f(minijax))(x)
    assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*saved)) == "explained:F13"
    for mini_saved, jax_saved in ((["f32[2,3]"], ["f32[1,2]"]), (["f32[2,3]"], ["i32[1,1]"]),
                                  (["f32[2,3]", "f32[3]"], ["f32[1,1]"])):
        row = _residual_row(mini_saved, jax_saved)
        assert fuzz.known_divergence(TRANSFORM, program, row) == ""


def test_scan_saves_a_loop_invariant_residual_once():
    # fuzz finding F16: minijax's scan partial eval stacked residuals computed from
    # loop constants only (asinh(w)) over the iterations; JAX saves them once, and now
    # so does minijax (tests/test_scan_residuals.py has more)
    w, xs = np.ones(3, np.float32), np.ones((5, 3), np.float32)

    def f(api):
        def loss(w, xs):
            ys = api.lax.scan(lambda c, x: (c, api.lax.asinh(w) * x), (), xs)[1]
            return api.numpy.sum(ys)
        return loss
    saved = [_saved(api, f(api), "everything_saveable", w, xs) for api in (minijax, jax)]
    assert saved[0] == saved[1]


# -- F30: div and exp2 in JAX's formulation ------------------------------------------------

@pytest.mark.parametrize("policy", ["everything_saveable", "nothing_saveable"])
def test_checkpointed_div_and_exp2_save_what_jax_saves(policy):
    # finding 7 (div: minijax saved y and -ans/y, JAX x, y and y**-2) and finding 1
    # (exp2: JAX saves exp2(x) and the f32[] log(2) its jvp computes)
    x = np.array([1.1153, 1.0624, 0.26], np.float32)
    y = np.array([1.532, -2.065, 0.739], np.float32)

    def div(api):
        return lambda x, y: api.numpy.sum(api.lax.div(x, y))

    def exp2(api):
        return lambda x: api.numpy.sum(api.lax.exp2(x))
    saved = _both_saved(div, policy, x, y)
    assert saved[0] == saved[1]
    saved = _both_saved(exp2, policy, x)
    assert saved[0] == saved[1]
    _grads_match(div, x, y)
    _grads_match(exp2, x)
    assert_trees_match(minijax.jvp(div(minijax), (x, y), (y, x)),
                       jax.jvp(div(jax), (x, y), (y, x)), rtol=1e-6)


# -- F31: convert_element_type of a host scalar is a literal ----------------------------

def _convert_count(api, f, *args):
    jaxpr = api.make_jaxpr(f)(*args).jaxpr
    return sum(str(eqn.primitive) == "convert_element_type" for eqn in jaxpr.eqns)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int32])
@pytest.mark.parametrize("constant", [4.0, 3, True, np.float32(0.75), np.array(2.5)],
                         ids=["float", "int", "bool", "np_scalar", "np_0d"])
def test_convert_of_a_host_scalar_folds_to_a_literal(constant, dtype):
    # finding 9: `x * convert_element_type(4.0, f16)`: JAX's jaxpr has the literal
    # 4.0:f16[], minijax's had an equation whose output a checkpoint saved
    def f(api):
        return lambda a: a * api.lax.convert_element_type(constant, new_dtype=dtype)
    a = np.ones((), jax.numpy.dtype(dtype))
    assert _convert_count(minijax, f(minijax), a) == _convert_count(jax, f(jax), a) == 0
    assert_trees_match(minijax.jit(f(minijax))(a), jax.jit(f(jax))(a))


def test_a_jnp_array_of_a_python_scalar_under_jit_folds_as_in_jax():
    # jnp.array(3.0) under jit is a tracer standing for a weak literal; its promotion
    # to f32 beside an array folds into the literal 3.0:f32[], as in JAX's jaxpr.
    def f(api):
        return lambda a: (a + api.numpy.array(3.0), a * api.numpy.asarray(2),
                          a - api.numpy.float32(1.5))
    a = np.ones(2, np.float32)
    assert _convert_count(minijax, f(minijax), a) == _convert_count(jax, f(jax), a) == 0
    assert_trees_match(minijax.jit(f(minijax))(a), jax.jit(f(jax))(a))


def test_convert_of_an_array_or_a_traced_value_stays_an_equation():
    # JAX folds host constants only: a backend array (and a traced value) converts
    # with an equation
    def f(api):
        array = api.numpy.asarray(np.float32(2.0))
        return lambda a: (api.lax.convert_element_type(a, np.float16)
                          * api.lax.convert_element_type(array, np.float16))
    for api in (minijax, jax):
        assert _convert_count(api, f(api), np.float32(1.5)) == 2
    assert_trees_match(minijax.jit(f(minijax))(np.float32(1.5)),
                       jax.jit(f(jax))(np.float32(1.5)))


def test_checkpointed_mul_by_a_converted_constant_saves_nothing():
    # finding 9's reproducer, and a weak-typed convert (its literal stays weak)
    x = np.array(0.2866, np.float16)

    def f(api):
        return lambda a: api.numpy.sum(
            api.lax.mul(a, api.lax.convert_element_type(4.0, new_dtype=np.float16)))
    saved = _both_saved(f, "everything_saveable", x)
    assert saved == [(), ()]
    _grads_match(f, x)

    def weak(api):
        return lambda a: a * api.lax.convert_element_type(2, np.float32) + 1
    assert_trees_match(minijax.jit(weak(minijax))(1.5), jax.jit(weak(jax))(1.5))
    assert_trees_match(minijax.grad(weak(minijax))(1.5), jax.grad(weak(jax))(1.5))


# -- F32: cumulative ops over one element, reduce_prod of one factor -------------------

@pytest.mark.parametrize("op", ["cumprod", "cummax", "cummin"])
def test_cumulative_ops_over_a_length_one_axis_save_nothing(op):
    # finding 44: cumprod over an axis of length 1 is the identity; JAX saves nothing,
    # minijax saved its masks and partial products
    x = np.array([[1.351, 1e30, -0.777]], np.float32)

    def f(api):
        return lambda x: api.numpy.sum(getattr(api.lax, op)(x, axis=0, reverse=True))
    saved = _both_saved(f, "everything_saveable", x)
    assert saved == [(), ()]
    _grads_match(f, x)


@pytest.mark.parametrize("shape, axes", [((1, 3), (0,)), ((3, 1, 2), (1,)), ((2, 0), (0,)),
                                         ((2, 0), (1,)), ((0,), (0,))])
def test_reduce_prod_of_one_or_no_factor(shape, axes):
    # finding 43 (an empty output), the one-factor case (a reshape: nothing saved,
    # as JAX), and an empty reduced axis, whose jvp raised (a slice out of bounds)
    x = np.linspace(-1.0, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def f(api):
        return lambda x: api.numpy.sum(api.lax.reduce_prod(x, axes))
    _grads_match(f, x)
    assert_trees_match(minijax.jit(minijax.grad(f(minijax)))(x), jax.jit(jax.grad(f(jax)))(x))
    assert_trees_match(minijax.jvp(f(minijax), (x,), (x,)), jax.jvp(f(jax), (x,), (x,)))
    mini_saved, jax_saved = _both_saved(f, "everything_saveable", x)
    # an empty output saves JAX's two empty halves of its reduction tree (F50)
    assert mini_saved == jax_saved
    if 0 not in x.shape:
        assert mini_saved == ()


# -- F33: dots_saveable saves convolutions -----------------------------------------------

def test_dots_saveable_saves_a_convolution_as_jax_does():
    # findings 32 and 48: JAX's dots_saveable counts conv_general_dilated as a dot
    lhs = np.linspace(-1, 1, 12, dtype=np.float32).reshape(1, 2, 6)
    rhs = np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(1, 2, 3)

    def f(api):
        return lambda lhs, rhs: api.numpy.sum(api.numpy.sin(
            api.lax.conv_general_dilated(lhs, rhs, (1,), "VALID")))
    saved = _both_saved(f, "dots_saveable", lhs, rhs)
    assert saved[0] == saved[1]
    assert "f32[1,1,4]" in saved[0]
    # ... and dots_with_no_batch_dims_saveable does not (dot_general only, in both)
    saved = _both_saved(f, "dots_with_no_batch_dims_saveable", lhs, rhs)
    assert saved[0] == saved[1] and "f32[1,1,4]" not in saved[0]
    _grads_match(f, lhs, rhs, rtol=1e-5)


# -- F34: a cond's branches share residual slots --------------------------------------------

@pytest.mark.parametrize("index", [0, 1])
def test_checkpointed_cond_shares_residual_slots_between_branches(index):
    # finding 35: minijax gave each branch its own residual slots (zeros in the
    # others'); JAX's slots are shared by type, as only one branch runs
    def f(api):
        lax = api.lax

        def loss(x, y):
            out = lax.switch(index, [lambda x, y: lax.log(lax.abs(y) + 0.5) + lax.sin(x),
                                     lambda x, y: lax.logistic(y) * 2.0 + lax.cos(x)], x, y)
            return api.numpy.sum(out)
        return loss
    x, y = np.array([0.5, -1.5], np.float32), np.array([-0.98, 2.0], np.float32)
    for policy in ("everything_saveable", "nothing_saveable"):
        saved = _both_saved(f, policy, x, y)
        assert saved[0] == saved[1]
    _grads_match(f, x, y)


# -- F36: explained (F35, reduce_prod, is fixed: F50) ---------------------------------------

@pytest.mark.parametrize("op", ["min", "max"])
def test_window_chooser_residuals_are_explained_residual_for_residual(op):
    # F36 (finding 45): JAX's select_and_gather_add saves the operand; minijax's
    # per-window-position selects save masks and the zero tangent
    from minijax.testing import fuzz
    x = np.array([[1.2e-07, -1.5, 0.925]], np.float16)
    init = np.array(np.inf if op == "min" else -np.inf, np.float16)

    def f(api):
        return lambda x: api.numpy.sum(api.lax.reduce_window(
            x, init, getattr(api.lax, op), (1, 2), (1, 2), ((0, 0), (0, 1))))
    saved = _both_saved(f, "everything_saveable", x)
    assert saved[1] == ("f16[1,3]",) and saved[0] != saved[1]
    _grads_match(f, x)
    program = minijax.make_jaxpr(f(minijax))(x)
    assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*saved)) == "explained:F36"
    for odd in ((list(saved[0]) + ["f32[1,2]"], saved[1]), (saved[0], ["f16[1,4]"])):
        assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*odd)) == ""


@pytest.mark.parametrize("inner", ["nothing_saveable", "dots_with_no_batch_dims_saveable"])
def test_nested_checkpoint_residuals_are_explained(inner):
    # F37 (findings 31 and 76): under an outer everything_saveable, JAX saves the
    # inner checkpoint's intermediates (its nested-remat rule uses the outer policy);
    # minijax applies the inner policy and saves the inner checkpoint's input
    from minijax.testing import fuzz
    x = np.array([0.3, -1.2, 2.0], np.float32)

    def f(api):
        body = api.checkpoint(lambda a: api.lax.clamp(-0.5, api.numpy.sin(api.numpy.cos(a)),
                                                       0.75) * a,
                              policy=getattr(api.checkpoint_policies, inner))
        return lambda a: api.numpy.sum(body(api.numpy.exp(a)))
    saved = _both_saved(f, "everything_saveable", x)
    assert saved[0] == ("f32[3]",) and len(saved[1]) > 1
    _grads_match(f, x)
    program = minijax.make_jaxpr(f(minijax))(x)
    assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*saved)) == "explained:F37"
    # the same row for the program without the inner checkpoint is not explained
    flat = minijax.make_jaxpr(lambda a: minijax.numpy.sum(minijax.numpy.exp(a)))(x)
    assert fuzz.known_divergence(TRANSFORM, flat, _residual_row(*saved)) == ""
    # nor a minijax-only residual larger than what JAX saves instead
    big = _residual_row(["f32[3]"] * 9, ["f32[3]", "bool[3]"])
    assert fuzz.known_divergence(TRANSFORM, program, big) == ""


# -- campaign rm16 (JAX 0.12.0.1, features elementwise,control_flow,custom_derivatives,remat)

def _described(api, f, policy, *args):
    """What `print_saved_residuals` prints, without the source lines."""
    import contextlib
    import importlib
    import io
    out = io.StringIO()
    remat = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    with contextlib.redirect_stdout(out):
        importlib.import_module(api.__name__ + ".ad_checkpoint").print_saved_residuals(
            remat, *args)
    return sorted(line.split(" from /")[0].split(" from <")[0]
                  for line in out.getvalue().splitlines() if line)


XY = (np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, 0.25, -0.5], np.float32))


def _cond_keeping_operands(api):
    jnp, lax = api.numpy, api.lax
    g = api.custom_vjp(lambda a, b: jnp.sin(a) * b)
    g.defvjp(lambda a, b: (g(a, b), (a, b)),
             lambda res, ct: (ct * jnp.cos(res[0]) * res[1], ct * jnp.sin(res[0])))
    branches = [lambda a, b: b, lambda a, b: -b,
                lambda a, b: lax.clamp(-0.5, g(a, b), 0.75)]
    return lambda x, y: jnp.sum(lax.switch(jnp.sum(y).astype(np.int32), branches, x, y))


def test_cond_branch_residual_that_is_an_operand_is_the_operand():
    # rm16:137: a branch's fwd keeps the cond's own operands. JAX's staged cond takes
    # the known operands, so they are saved as the arguments they are; minijax's cond
    # returned copies of them, two f32[3] outputs more
    expected = {"everything_saveable": [
        "bool[3] output of cond", "f32[3] from the argument x", "f32[3] from the argument y",
        "f32[3] output of cond", "i32[] output of clamp"],
        "nothing_saveable": ["f32[3] from the argument x", "f32[3] from the argument y"]}
    for policy, saved in expected.items():
        assert _described(jax, _cond_keeping_operands(jax), policy, *XY) == saved
        assert _described(minijax, _cond_keeping_operands(minijax), policy, *XY) == saved
    _grads_match(_cond_keeping_operands, *XY)


def _cond_with_dead_code(api):
    jnp, lax = api.numpy, api.lax

    def one(a, b):
        jnp.log1p(jnp.abs(b))           # dead: its tangent needs a residual no one reads
        return jnp.exp2(jnp.sin(a) * 4.0)
    return lambda x, y: jnp.sum(lax.cond(jnp.sum(y) > 0, one,
                                         lambda a, b: jnp.tan(jnp.sin(b)), x, y))


def test_cond_prunes_each_branch_before_its_residuals_share_slots():
    # rm16:6, rm16:64, rm16:93: a branch's dead equations kept residuals, which took
    # slots of their own. JAX 0.12 prunes each branch first, as minijax now does;
    # before 0.12 JAX's checkpoint keeps the dead residual's slot (one f32[3] more).
    mine = _described(minijax, _cond_with_dead_code(minijax), "everything_saveable", *XY)
    theirs = _described(jax, _cond_with_dead_code(jax), "everything_saveable", *XY)
    expected = ["f32[3] output of cond"] * 2 + ["f32[] output of cond",
                                                "i32[] output of convert_element_type"]
    assert mine == expected
    assert theirs == sorted(expected + (["f32[3] output of cond"]
                                        if JAX_VERSION < (0, 12) else []))
    _grads_match(_cond_with_dead_code, *XY)


def test_nested_checkpoint_mask_of_a_wider_input_is_explained():
    # rm16:180 (F37): JAX saves the inner checkpoint's bool mask, minijax the f32 input
    # it is computed from -- more bytes, as many arrays
    from minijax.testing import fuzz
    x = np.array([[0.3, -1.2, 2.0]], np.float32)

    def f(api):
        jnp = api.numpy
        inner = api.checkpoint(lambda a: jnp.where(a > 0.5, a, -a),
                               policy=api.checkpoint_policies.dots_saveable)
        return lambda x: jnp.sum(inner(jnp.sin(x)))
    saved = _both_saved(f, "everything_saveable", x)
    assert saved == [("f32[1,3]", "f32[1,3]"), ("bool[1,3]", "f32[1,3]")]
    _grads_match(f, x)
    program = minijax.make_jaxpr(f(minijax))(x)
    assert fuzz.known_divergence(TRANSFORM, program, _residual_row(*saved)) == "explained:F37"
    more = _residual_row(["f32[1,3]"] * 3, saved[1])
    assert fuzz.known_divergence(TRANSFORM, program, more) == ""


def test_barrier_with_a_constant_tangent_error_is_the_registered_divergence():
    # rm16:151: JAX (0.11, 0.12) raises in the checkpoint rows; the row is the registry's
    # entry, and only for a checkpoint row where minijax ran
    from minijax.testing import fuzz
    g = minijax.custom_jvp(lambda d: d)
    g.defjvp(lambda p, t: (p[0], minijax.numpy.zeros_like(t[0])))
    program = minijax.make_jaxpr(
        lambda a: minijax.lax.optimization_barrier((a, g(a)))[0])(1.0)
    error = "AttributeError: object has no attribute 'accum'"
    name = "jax_checkpoint_grad_of_a_barrier_with_a_constant_tangent_fails"
    row = Row("checkpoint[nothing_saveable]", "error", jax_error=error)
    assert fuzz.known_divergence(row.transform, program, row) == name
    assert fuzz.known_divergence("grad", program, Row("grad", "error", jax_error=error)) == ""
    both = Row(row.transform, "both raise", minijax_error=error, jax_error=error)
    assert fuzz.known_divergence(row.transform, program, both) == ""
