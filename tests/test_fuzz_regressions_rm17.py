"""Regression tests for the checkpoint rows that the fuzz runs `rm17b:0-374` (JAX 0.10.2)
and `rm16:0-199` (JAX 0.12.0.1) left unexplained (docs/fuzzing_findings.md): each is
the seed's program shrunk by hand, run through both APIs, or the explained finding's
matcher on the row the seed produced. At the end, F86 (seed `7:50` with the features
refs and control_flow): linearize of a while loop handing a ref to a jit call; and F87
(seed `2211`): a 'fill' scatter's bounds saved as a residual under remat."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match, fuzz
from minijax.testing.fuzz_explained import explaining_finding
from minijax.testing.recipes import Side
from minijax.testing.report import Row
from tests.devices import on_cpu
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX

TRANSFORM = "checkpoint[everything_saveable]"


def _saved(api, f, policy, *args):
    remat = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    return Side(api.__name__, api, None).saved_residuals(remat, *args)


def _grads_match(f, *args, rtol=1e-6):
    argnums = tuple(range(len(args)))
    assert_trees_match(minijax.grad(f(minijax), argnums=argnums)(*args),
                       jax.grad(f(jax), argnums=argnums)(*args), rtol=rtol)


def _row(mini_saved, jax_saved, transform=TRANSFORM):
    return Row(transform, "differ",
               detail=f"saved residuals differ: minijax saves {list(mini_saved)}, "
                      f"jax saves {list(jax_saved)}")


X3 = np.array([0.3, -1.2, 2.0], np.float32)


def _custom_vjp_of_a_constant_operand(api):
    jnp = api.numpy

    def body(a, b):
        return jnp.cbrt(jnp.abs(a) + 0.5) * jnp.sin(b)
    g = api.custom_vjp(body)
    g.defvjp(lambda a, b: (g(a, b), (a, b)),
             lambda res, ct: api.vjp(body, *res)[1](ct))
    # ceil's derivative is zero: the first operand's tangent is a symbolic zero
    return lambda x: jnp.sum(g(jnp.ceil(x), x))


@pytest.mark.parametrize("policy, expected", [
    ("everything_saveable", ("f32[3]", "f32[3]")), ("nothing_saveable", ("f32[3]",))])
def test_custom_vjp_saves_no_zero_tangent(policy, expected):
    # rm17b:25: a custom_vjp call with an operand of zero tangent saved an f32[3] zero
    # array more than JAX: the instantiated zero was an operand of custom_lin, a
    # residual made from known values. JAX passes custom_lin the nonzero tangents only.
    f = _custom_vjp_of_a_constant_operand
    assert _saved(minijax, f(minijax), policy, X3) == expected
    assert _saved(jax, f(jax), policy, X3) == expected
    _grads_match(f, X3)
    # the linear map, run backwards, gives the zero operand no cotangent
    _, pullback = minijax.vjp(f(minijax), X3)
    assert_trees_match(pullback(np.float32(1.0)), jax.vjp(f(jax), X3)[1](np.float32(1.0)))
    assert_trees_match(minijax.vmap(minijax.grad(f(minijax)))(np.stack([X3, -X3])),
                       jax.vmap(jax.grad(f(jax)))(np.stack([X3, -X3])), rtol=1e-6)


def _exp2_in_an_inner_checkpoint(api):
    jnp = api.numpy
    inner = api.checkpoint(lambda a: jnp.exp2(jnp.sin(a) * 4.0),
                           policy=api.checkpoint_policies.nothing_saveable)
    return lambda x: jnp.sum(inner(x))


def test_nested_checkpoint_log2_scalar_of_exp2_is_explained():
    # rm17b:206 (F37): under an outer everything_saveable JAX saves the inner body's
    # intermediates, exp2's `log 2` scalar among them (its jvp computes it, F30)
    f = _exp2_in_an_inner_checkpoint
    saved = [_saved(api, f(api), "everything_saveable", X3) for api in (minijax, jax)]
    assert saved[0] == ("f32[3]",) and "f32[]" in saved[1]
    _grads_match(f, X3)
    program = minijax.make_jaxpr(f(minijax))(X3)
    assert fuzz.known_divergence(TRANSFORM, program, _row(*saved)) == "explained:F37"
    # one scalar per exp2: a second is not the inner body's
    assert explaining_finding(TRANSFORM, program,
                              _row(saved[0], list(saved[1]) + ["f32[]"])) == ""


def _switch_passing_an_operand_through(api):
    jnp, lax = api.numpy, api.lax

    def f(x, y):
        c = jnp.cbrt(jnp.abs(y) + 0.5)
        i = jnp.clip(jnp.sum(y).astype(np.int32), 0, 2)
        v = lax.switch(i, [lambda a, c: (1 - a * a) ** 3, lambda a, c: c,
                           lambda a, c: jnp.minimum(c, c)], x, c)
        return jnp.sum(v * v)
    return f


X31 = np.array([[0.3], [1.2], [2.0]], np.float32)


def test_switch_output_one_branch_passes_through_is_explained():
    # rm16:93 (F78, every JAX version): one branch returns its operand `c` unchanged;
    # JAX saves `c` besides the switch's output, which `v * v` reads, minijax the
    # output only
    f = _switch_passing_an_operand_through
    saved = [_saved(api, f(api), "everything_saveable", X31, X31) for api in (minijax, jax)]
    assert list(saved[1]) == sorted(list(saved[0]) + ["f32[3,1]"])
    _grads_match(f, X31, X31)
    program = minijax.make_jaxpr(f(minijax))(X31, X31)
    assert fuzz.known_divergence(TRANSFORM, program, _row(*saved)) == "explained:F78"
    # one array per passed-through output
    two = _row(saved[0], list(saved[1]) + ["f32[3,1]"])
    assert explaining_finding(TRANSFORM, program, two) == ""


def _cond_with_a_dead_logistic(api):
    jnp, lax = api.numpy, api.lax

    def two(a):
        lax.logistic(a)                 # dead: no output needs it
        return jnp.exp(a)
    return lambda x: jnp.sum(lax.cond(jnp.sum(x) > 0, jnp.sin, two, x))


def test_dead_branch_equation_slot_before_jax_0_12_is_explained():
    # rm17b:128 (F77): JAX before 0.12 keeps the residual slot of a branch's dead
    # `logistic`; 0.12 prunes the branch first, as minijax does
    f = _cond_with_a_dead_logistic
    saved = [_saved(api, f(api), "everything_saveable", X3) for api in (minijax, jax)]
    extra = ["f32[3]"] if JAX_VERSION < (0, 12) else []
    assert list(saved[1]) == sorted(list(saved[0]) + extra)
    _grads_match(f, X3)
    program = minijax.make_jaxpr(f(minijax))(X3)
    row = _row(saved[0], sorted(list(saved[0]) + ["f32[3]"]))
    expected = "explained:F77" if JAX_VERSION < (0, 12) else ""
    assert explaining_finding(TRANSFORM, program, row) == expected
    # one slot per dead equation
    row = _row(saved[0], sorted(list(saved[0]) + ["f32[3]"] * 2))
    assert explaining_finding(TRANSFORM, program, row) == ""


def _barrier_of_a_rounded_value(api):
    jnp, lax = api.numpy, api.lax

    def f(x):
        _, r = lax.optimization_barrier((jnp.sin(x), jnp.round(x)))
        return jnp.sum(jnp.tanh(r) * jnp.cos(r))
    return f


def test_barrier_zero_float_tangent_on_jax_0_10_is_explained():
    # rm17b:122 (F64): JAX 0.10's barrier jvp instantiates round's zero tangent, so
    # what follows saves residuals; JAX 0.11 keeps it symbolic, as minijax does
    f = _barrier_of_a_rounded_value
    saved = [_saved(api, f(api), "everything_saveable", X3) for api in (minijax, jax)]
    assert saved[0] == ()
    assert (saved[1] != ()) == (JAX_VERSION < (0, 11))
    _grads_match(f, X3)
    program = minijax.make_jaxpr(f(minijax))(X3)
    row = _row((), ["f32[3]", "f32[3]"])
    expected = "explained:F64" if JAX_VERSION < (0, 11) else ""
    assert explaining_finding(TRANSFORM, program, row) == expected
    # a type nothing after the barrier has is not explained
    assert explaining_finding(TRANSFORM, program, _row((), ["f32[2]"])) == ""
    # nor the same row when the barrier's operand has a real tangent
    live = minijax.make_jaxpr(lambda x: minijax.numpy.sum(minijax.numpy.tanh(
        minijax.lax.optimization_barrier((x, minijax.numpy.sin(x)))[1])))(X3)
    assert explaining_finding(TRANSFORM, live, row) == ""


def _custom_jvp_over_a_custom_vjp():
    # the generator's custom functions: each rule is its body's own derivative
    jnp = minijax.numpy

    def inner_body(h):
        return jnp.cos(h) * h
    inner = minijax.custom_vjp(inner_body)
    inner.defvjp(lambda h: (inner(h), (h,)),
                 lambda res, ct: minijax.vjp(inner_body, *res)[1](ct))

    def outer_body(f):
        return inner(f) + f
    outer = minijax.custom_jvp(outer_body)
    outer.defjvp(lambda primals, tangents: minijax.jvp(outer_body, primals, tangents))
    return lambda a: jnp.sum(outer(jnp.abs(a)))


def test_exported_rule_with_a_custom_vjp_tangent_map_runs_backwards():
    # rm17b:255, rm17b:356: the oracle (to_jax) of a custom_jvp whose rule
    # differentiates a custom_vjp call raised "can't apply forward-mode autodiff" in
    # JAX's grad: the exported rule evaluated custom_lin forwards. It is JAX's
    # linear_call now, transposed by the call's bwd, as JAX's own custom_lin is
    from minijax.interop import to_jax
    f = _custom_jvp_over_a_custom_vjp()
    program = minijax.make_jaxpr(f)(X3)
    exported = lambda a: to_jax(program)(a)[0]
    expected = minijax.grad(f)(X3)
    assert_trees_match(jax.grad(exported)(X3), expected, rtol=1e-6)
    remat = jax.checkpoint(exported, policy=jax.checkpoint_policies.nothing_saveable)
    assert_trees_match(jax.grad(remat)(X3), expected, rtol=1e-6)
    # forward mode still refuses on both sides (JAX's error comes from the callback)
    with pytest.raises(Exception, match="forward-mode autodiff"):
        minijax.jvp(f, (X3,), (X3,))
    with on_cpu(), pytest.raises(Exception, match="forward-mode autodiff"):
        # on the CPU device: in an H200 run (jax 0.11.2) the later tests of this
        # test's worker raised this callback's error again (tests/devices.py)
        jax.block_until_ready(jax.jvp(exported, (X3,), (X3,)))


# -- F86: linearize of a while loop whose body hands a ref to a jit call --------------------

def _while_with_a_jitted_ref_step(api, start_from_carry):
    def f(a, b):
        def body(carry):
            i, g = carry
            h = api.new_ref(g if start_from_carry else b)

            def step(n, o):
                n[0] += o.sum()
                return o * n[1] + n[...]
            return i + 1, api.jit(step)(h, g)
        return api.lax.while_loop(lambda c: c[0] < 2, body, (0, a))[1]
    return f


@pytest.mark.parametrize("start_from_carry", [False, True])
def test_linearize_of_a_while_loop_handing_a_ref_to_jit(start_from_carry):
    a = np.array([0.5, -1.0, 2.0], np.float32)
    b = np.array([1.5, 0.25, -0.5], np.float32)
    results = []
    for api in (minijax, jax):
        out, lin = api.linearize(_while_with_a_jitted_ref_step(api, start_from_carry), a, b)
        assert not isinstance(out, minijax.core.Tracer)
        results.append((out, lin(b, a)))
    assert_trees_match(*results, rtol=1e-6)


def test_a_leaked_tracer_is_a_minijax_error_row():
    """The harness crashed on F86's leaked tracer (NumPy cannot read one); now the row
    says minijax raised."""
    from minijax.testing.cross_check import compare

    def leak():
        seen = []
        minijax.make_jaxpr(lambda x: seen.append(x) or x)(1.0)
        return seen[0]
    row = compare("jit", leak, lambda: np.float32(1.0))
    assert row.status == "error" and row.minijax_error.startswith("leaked tracer")


@pytest.mark.parametrize("index_axes", [1, 2])
def test_a_fill_scatter_saves_no_bounds_constant_under_remat(index_axes):
    """F87: the derivative of a 'fill' scatter masks the windows outside the operand,
    and the mask's upper bounds were an array constant, which the rematerialized
    backward program then counted as a saved residual (`i32[1] from a constant`);
    JAX masks when lowering and saves nothing for it. Bounds of one and of two index
    axes, with an index computed from a closed-over integer array."""
    ints = np.array([1, 2], np.uint32)
    x = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(2, 3, 2)

    def f(api):
        lax = api.lax
        dims = lax.ScatterDimensionNumbers(update_window_dims=(0,) if index_axes == 2 else
                                           (0, 1),
                                           inserted_window_dims=tuple(range(index_axes)),
                                           scatter_dims_to_operand_dims=tuple(
                                               range(index_axes)))
        def g(a):
            i = lax.rem(lax.convert_element_type(lax.reduce_sum(ints, (0,)), np.int32), 2)
            idx = lax.broadcast_in_dim(i, (index_axes,), ())
            updates = api.numpy.ones(x.shape[index_axes:], np.float32)
            return lax.scatter(api.numpy.sin(a), idx, updates, dims, mode="fill").sum()
        return g

    for policy in ("nothing_saveable", "everything_saveable"):
        assert _saved(minijax, f(minijax), policy, x) == _saved(jax, f(jax), policy, x)
    _grads_match(f, x)
