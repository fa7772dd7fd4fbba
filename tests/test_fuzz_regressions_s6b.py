"""Regression tests made from campaign s5final's weak-type and residual findings and
the leftovers of session 5's helper runs (F60-F64, docs/fuzzing_findings.md).

Each test is the finding's shrunk reproducer, compared with JAX; the harness fixes
(F61) are checked through `fuzz.compare_row`, the fuzzer's own row."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match, fuzz
from minijax.testing import recipes
from minijax.testing.report import Row


def _row(program_fn, args, transform, recipe=None):
    """The fuzzer's row `transform` for the program `program_fn` (minijax source)."""
    program = minijax.make_jaxpr(lambda *a: tuple(program_fn(*a)))(*args)
    recipe = recipe or recipes.TRANSFORMS[transform]
    row = fuzz.compare_row(transform, program, list(args), recipe,
                           *fuzz._program_tolerance(program, None, None, transform))
    if not row.ok:
        row.divergence = fuzz.known_divergence(transform, program, row)
    return row


def _saved(api, f, policy, *args):
    remat = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    return recipes.Side(api.__name__, api, None).saved_residuals(remat, *args)


# -- F60: vjp's primal outputs are canonical arrays ----------------------------------------

@pytest.mark.parametrize("arg", [1.5, np.float64(1.5), np.array([1.5, -2.0]),
                                 np.array([0.5], np.float32)])
def test_vjp_of_a_passed_through_input_hands_back_a_canonical_array(arg):
    # fuzz finding F60 (seed s5final:25, finding 004): vjp of `lambda a: a` returned
    # the NumPy float64 argument itself (JAX: float32), a Python float for a weak one
    for transform in (lambda m: m.vjp(lambda a: a, arg)[0],
                      lambda m: m.value_and_grad(lambda a: m.numpy.sum(a))(arg)[0],
                      lambda m: m.value_and_grad(lambda a: a)(arg)[0] if np.ndim(arg) == 0
                      else m.vjp(lambda a: (a, a * 2), arg)[0]):
        actual, expected = transform(minijax), transform(jax)
        assert isinstance(jax.tree_util.tree_leaves(actual)[0], minijax.Array)
        assert_trees_match(actual, expected)
    out = minijax.vjp(lambda a: a, arg)[0]
    assert out.dtype == np.float32 and out.weak_type == (type(arg) is float)


def test_vjp_row_of_a_weak_argument_passed_through():
    # session 5 leftover (finding_000_vjp): JAX's vjp hands a weak scalar output back
    # as a float subclass typed float32, which np.asarray made float64 in the harness
    # (its cotangent too); minijax's was a Python float
    assert _row(lambda a: (a,), [-0.25], "vjp").status == "agree"
    assert _row(lambda a: (a,), [np.array(1.5, np.float64)], "vjp").status == "agree"


# -- F61: the compiled oracle's weak types -----------------------------------------------

def _pow_convert(L):
    # shrunk from seed s5final:25 (findings 002, 003, 005, 006, 007)
    return lambda a: (L.convert_element_type(L.pow(L.add(L.abs(a), 0.5), a), np.float32),)


def test_a_weak_type_that_only_jitted_jax_gives_is_decided_by_eager_jax():
    # fuzz finding F61: JAX's gradient is strong eagerly and weak under jit (J34:
    # the pow rule's strong and weak contributions meet in add_any, whose staged type
    # is its first operand's); minijax's is strong. The fuzzer's compiled oracle made
    # every gradient row of the program a weak-type difference.
    def loss(api):
        return lambda a: api.numpy.sum(_pow_convert(api.lax)(a)[0])
    assert not jax.grad(loss(jax))(1.5).weak_type
    assert jax.jit(jax.grad(loss(jax)))(1.5).weak_type
    assert not minijax.grad(loss(minijax))(1.5).weak_type
    program = _pow_convert(minijax.lax)
    for transform in ("grad", "value_and_grad", "grad(grad)"):
        assert _row(program, [1.5], transform).status == "agree", transform
    for policy in ("nothing_saveable", "dots_saveable"):
        recipe = recipes.checkpoint_recipe(policy)
        assert _row(program, [1.5], f"checkpoint[{policy}]", recipe).status == "agree"
    row = _row(program, [1.5], "jit(grad)")
    assert row.divergence == "jax_jit_of_grad_changes_its_weak_type"


def test_an_eager_weak_type_difference_is_still_a_difference():
    # the re-check with eager JAX must not hide a weak-type difference of minijax's
    def recipe(side, leaves):
        x = side.api.lax.add(leaves[0], 0.0)        # weak on both sides
        return x if side.name == "minijax" else side.api.lax.convert_element_type(x, np.float32)
    row = _row(lambda a: (a,), [1.5], "grad", recipe)
    assert row.status == "differ" and "weak_type True != jax's False" in row.detail


def test_a_value_difference_of_the_compiled_oracle_is_decided_by_eager_jax():
    # F61 too (seed s6fz6b-w:1): float32 gradients through tan, pow and cosh in a
    # switch differed by 5.7e-5 from JAX's compiled oracle and not at all from eager
    # JAX. Here the JAX side's first run (the compiled one) is off by 1.
    runs = []

    def recipe(side, leaves):
        x = side.api.lax.mul(leaves[0], np.float32(2))
        if side.name == "minijax":
            return x
        runs.append(1)
        return x + 1 if len(runs) == 1 else x
    assert _row(lambda a: (a,), [np.ones(2, np.float32)], "grad", recipe).status == "agree"
    assert len(runs) == 2


def test_an_input_passed_through_vmap_is_compared_with_eager_jax():
    # F61 too (seed s6fz6b-w:10): vmap of a program returning its weak int argument;
    # its batch is an int64 NumPy array, which eager JAX's vmap (and minijax's) hands
    # back as it is, and JAX under jit as int32
    def program(a1, a2):
        return (minijax.lax.abs(a1), a2)
    batch = [np.stack([np.ones(3, np.float32)] * 2), np.array([3, 3])]
    assert jax.jit(lambda x, i: jax.vmap(lambda a, b: (jax.lax.abs(a), b))(x, i))(
        *batch)[1].dtype == np.int32
    assert jax.vmap(lambda a, b: (jax.lax.abs(a), b))(*batch)[1].dtype == np.int64
    assert _row(program, [np.ones(3, np.float32), 3], "vmap").status == "agree"


# -- F62: transposing a jit or remat body --------------------------------------------------

_C = np.arange(6, dtype=np.float32) * 0.37


def _broadcast_add(api):
    return lambda a: api.numpy.sum(api.lax.add(api.lax.broadcast_in_dim(a, (6,), ()), _C))


@pytest.mark.parametrize("wrap", ["jit", "checkpoint", "checkpoint_everything"])
def test_cotangent_of_a_weak_input_through_a_call_is_strong(wrap):
    # fuzz finding F62 (a session 5 leftover, {select_n, reshape, concatenate, add}
    # under checkpoint[everything_saveable]): the transposed body was traced for
    # cotangents typed as the body's tangent outputs (weak, the tangent of a weak
    # input), not as the strong seed it is given, so grad(jit(f)) and
    # grad(checkpoint(f)) were weak where grad(f) and JAX's grad(jit(f)) are strong
    def wrapped(api):
        f = _broadcast_add(api)
        if wrap == "jit":
            return api.jit(f)
        if wrap == "checkpoint":
            return api.checkpoint(f)
        return api.checkpoint(f, policy=api.checkpoint_policies.everything_saveable)
    for transform in (lambda m: m.grad(wrapped(m)), lambda m: m.grad(_broadcast_add(m))):
        actual, expected = transform(minijax)(-0.25), transform(jax)(-0.25)
        assert_trees_match(actual, expected)
        assert not actual.weak_type
    if wrap == "jit":
        assert_trees_match(minijax.jit(minijax.grad(wrapped(minijax)))(-0.25),
                           jax.jit(jax.grad(wrapped(jax)))(-0.25))


def test_checkpointed_concatenation_of_a_weak_select_agrees_with_eager_jax():
    # the leftover reproducer itself, as the fuzzer's row
    const = np.array([0.0, 0.37, 0.74, 1.11, 1.48, 1.85], np.float32)

    def program(a2, a3):
        v5 = minijax.lax.reshape(minijax.lax.select_n(a3, 0.0, a2), (1,))
        return (minijax.lax.add(minijax.lax.concatenate([v5] * 6, 0), const),)
    recipe = recipes.checkpoint_recipe("everything_saveable")
    row = _row(program, [-0.25, np.array(True)], "checkpoint[everything_saveable]", recipe)
    assert row.status == "agree", row.summary()


# -- F63: top_k's checkpointed index ------------------------------------------------------

@pytest.mark.parametrize("shape, k, axis", [((1, 1), 1, 1), ((2, 3), 2, 1), ((2, 3), 1, 0),
                                           ((2, 3, 4), 2, 1)])
def test_checkpointed_top_k_saves_what_jax_saves(shape, k, axis):
    # fuzz finding F63 (seed s5final:27, finding 012, cholesky -> top_k(k=1, axis=1)):
    # the tangent gather's index had one i32 coordinate per dimension (i32[1,1,2]);
    # JAX's is one per element (i32[1,1,1]), as minijax's now is
    x = np.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def f(api):
        return lambda x: api.numpy.sum(api.numpy.tanh(api.lax.top_k(x, k, axis=axis)[0]))
    saved = [_saved(api, f(api), "everything_saveable", x) for api in (minijax, jax)]
    out = ",".join(map(str, shape[:axis] + (k,) + shape[axis + 1:]))
    # the tanh after top_k: one residual (one_minus_square) in minijax and JAX 0.11 on,
    # two in JAX 0.10 (tanh and 1 - tanh)
    tanh_saves = 1 if JAX_VERSION >= (0, 11) else 2
    assert saved == [(f"f32[{out}]", f"i32[{out},1]"),
                     (f"f32[{out}]",) * tanh_saves + (f"i32[{out},1]",)]
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))
    assert_trees_match(minijax.vmap(minijax.grad(f(minijax)))(x[None]),
                       jax.vmap(jax.grad(f(jax)))(x[None]))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_extremum_derivatives_through_the_flat_gather(op, axis):
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)

    def f(api):
        return lambda x: api.numpy.sum(getattr(api.lax, op)(x, axis, reverse=axis == 1) * x)
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x), rtol=1e-6)
    assert_trees_match(minijax.jvp(f(minijax), (x,), (x + 1,)), jax.jvp(f(jax), (x,), (x + 1,)))


def test_sort_of_size_zero_through_the_shared_flat_gather():
    x = np.zeros((2, 0), np.float32)
    assert_trees_match(minijax.grad(lambda x: minijax.numpy.sum(minijax.lax.sort(x, 1)))(x),
                       jax.grad(lambda x: jax.numpy.sum(jax.lax.sort(x, 1)))(x))


# -- F64: optimization_barrier's float0 residual -----------------------------------------

def _residual_row(mini_saved, jax_saved):
    return Row("checkpoint[everything_saveable]", "differ",
               detail=f"saved residuals differ: minijax saves {list(mini_saved)}, "
                      f"jax saves {list(jax_saved)}")


def test_barrier_float0_residual_is_explained_exactly():
    # fuzz finding F64 (seed s5final:53, finding 017): JAX before 0.11 instantiates the
    # float0 tangent of an integer barrier operand and saves it; minijax saves nothing,
    # and so does JAX from 0.11 on
    a1, a2 = np.array([-0.217], np.float16), np.array([-4], np.int32)

    def f(api):
        return lambda a1: api.numpy.sum(api.lax.optimization_barrier((a2, a1))[1])
    saved = [_saved(api, f(api), "everything_saveable", a1) for api in (minijax, jax)]
    assert saved == [(), () if JAX_VERSION >= (0, 11) else ("float0[1]",)]
    assert_trees_match(minijax.grad(f(minijax))(a1), jax.grad(f(jax))(a1))
    program = minijax.make_jaxpr(lambda a1, a2: minijax.lax.optimization_barrier((a2, a1))[1])(
        a1, a2)
    transform = "checkpoint[everything_saveable]"
    saved = [(), ("float0[1]",)]           # the row JAX 0.10 gives, on every version
    assert fuzz.known_divergence(transform, program, _residual_row(*saved)) == "explained:F64"
    # not a float0 array of another shape, nor a row where minijax saves more
    for mini_saved, jax_saved in (([], ["float0[2]"]), (["f16[1]"], ["float0[1]"]),
                                  ([], ["float0[1]", "f16[1]"])):
        row = _residual_row(mini_saved, jax_saved)
        assert fuzz.known_divergence(transform, program, row) == ""
    # nor the same row in a program whose barrier has no integer operand
    floats = minijax.make_jaxpr(lambda a1: minijax.lax.optimization_barrier((a1, a1))[1])(a1)
    assert fuzz.known_divergence(transform, floats, _residual_row(*saved)) == ""


# -- F65: the zeroth power's materialized zero tangent -------------------------------------

@pytest.mark.parametrize("dtype, shape", [(np.float32, (3,)), (np.float16, (2, 0))])
def test_zeroth_power_residuals_are_explained_exactly(dtype, shape):
    # fuzz finding F65 (seed s6fz6b:2, integer_pow(f16[2,0], 0) under
    # everything_saveable): JAX's jvp of x ** 0 is a zero array, whose consumers keep
    # their operands; minijax's is a symbolic zero
    x = np.ones(shape, dtype)
    transform = "checkpoint[everything_saveable]"
    for f in (lambda api: lambda x: api.numpy.sum(api.lax.integer_pow(x, 0) * x),
              lambda api: lambda x: api.numpy.sum(x) + api.numpy.sum(api.lax.integer_pow(x, 0))):
        saved = [_saved(api, f(api), "everything_saveable", x) for api in (minijax, jax)]
        assert saved[0] != saved[1] and set(saved[0]) <= set(saved[1])
        assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))
        program = minijax.make_jaxpr(f(minijax))(x)
        assert fuzz.known_divergence(transform, program, _residual_row(*saved)) == "explained:F65"
    short = {np.float32: "f32", np.float16: "f16"}[dtype]
    program = minijax.make_jaxpr(lambda x: minijax.lax.integer_pow(x, 0))(x)
    # not another type, nor a row where minijax saves something JAX does not
    for mini_saved, jax_saved in (([], ["f32[7]"]), ([], [f"{short}[]", "i32[]"]),
                                  ([f"{short}[9]"], [f"{short}[]"])):
        row = _residual_row(mini_saved, jax_saved)
        assert fuzz.known_divergence(transform, program, row) == ""
    # a second power is differentiated as JAX does: nothing to explain
    square = minijax.make_jaxpr(lambda x: minijax.lax.integer_pow(x, 2))(x)
    assert fuzz.known_divergence(transform, square, _residual_row([], [f"{short}[]"])) == ""
