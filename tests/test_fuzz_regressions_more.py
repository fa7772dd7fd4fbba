"""Regression tests made from the fuzzer's findings F40-F43 and pins of J30-J33
(docs/fuzzing_findings.md): the first half of campaign `s4last`'s findings that are not
residual-set differences (the rest: test_fuzz_regressions_tolerances.py). Each test is
the finding's shrunk reproducer, compared with JAX (or, for a JAX divergence, pinned
from both sides)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.backends.reference import eval_closed_jaxpr
from minijax.testing import assert_trees_match
from minijax.transforms.custom_derivatives import CustomDerivativeError
from tests.test_divergences import pins


# -- F40: lax.abs of an unsigned integer --------------------------------------------------

def test_abs_refuses_unsigned_integers_as_jax_does():
    # fuzz finding F40 (seed s4last:90): minijax's abs type rule accepted uint32, so a
    # program traced and then failed inside JAX's lowering. JAX's lax.abs refuses
    # unsigned (and bool) operands; jnp.abs returns them unchanged.
    x = np.array([1, 2], np.uint32)
    for api in (minijax, jax):
        for run in (lambda: api.lax.abs(x), lambda: api.jit(api.lax.abs)(x),
                    lambda: api.make_jaxpr(api.lax.abs)(x)):
            with pytest.raises(TypeError, match="does not accept dtype uint32"):
                run()
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            api.lax.abs(np.array([True]))
    assert_trees_match(minijax.numpy.abs(x), jax.numpy.abs(x))
    signed = np.array([-3, 2], np.int8)
    assert_trees_match(minijax.lax.abs(signed), jax.lax.abs(signed))


def test_the_generators_unsigned_divisor_takes_no_abs():
    # The generator's safe divisor was max(|x|, 1) for every integer: for uint32 it
    # is max(x, 1) (the program of seed s4last:90 divided a uint32 by it). Checked on
    # the divisor itself, since a seed's program changes as the op tables grow.
    from minijax.ir.core import eqns_nested
    from minijax.testing.fuzz_ops import safe_nonzero
    for dtype in (np.uint32, np.int32):
        x = np.array([0, 3, 7], dtype)
        program = minijax.make_jaxpr(safe_nonzero)(x)
        uses_abs = any(eqn.primitive.name == "abs" for eqn in eqns_nested(program))
        assert uses_abs == (dtype == np.int32)
        np.testing.assert_array_equal(safe_nonzero(x), [1, 3, 7])


# -- F41: forward mode through an unused custom_vjp result ------------------------------------

def _custom_vjp_calls(api):
    @api.custom_vjp
    def g(x):
        return api.numpy.sin(x)
    g.defvjp(lambda x: (g(x), x), lambda x, ct: (ct * api.numpy.cos(x),))

    def unused(x):
        g(x)
        return api.numpy.cos(x)

    def unused_in_scan(x):
        def step(c, _):
            g(c)
            return c * 2.0, ()
        return api.lax.scan(step, x, (), length=2)[0]

    def used(x):
        return g(x) + x
    return unused, unused_in_scan, used


def test_unused_custom_vjp_result_has_forward_mode_where_jax_stages_it():
    # fuzz finding F41 (seeds s4last:53, s4last:213, shrunk): jvp of a program whose
    # custom_vjp result is unused raised "can't apply forward-mode autodiff" in
    # minijax under jit and inside a loop body, where JAX stages the tangent map and
    # drops it as dead code before lowering. minijax now drops dead code before
    # lowering too (backends/xla.py, lower_jaxpr).
    x = np.array([0.5, 1.0], np.float32)
    (m_unused, m_scan, m_used), (j_unused, j_scan, j_used) = \
        _custom_vjp_calls(minijax), _custom_vjp_calls(jax)
    ways = [lambda api, f: api.jvp(api.jit(f), (x,), (x,)),
            lambda api, f: api.jit(lambda x: api.jvp(f, (x,), (x,)))(x),
            lambda api, f: api.linearize(f, x)[1](x)]
    for way in ways:
        assert_trees_match(way(minijax, m_unused), way(jax, j_unused))
        assert_trees_match(way(minijax, m_scan), way(jax, j_scan))
    # eagerly, inside a loop body: staged in both
    assert_trees_match(minijax.jvp(m_scan, (x,), (x,)), jax.jvp(j_scan, (x,), (x,)))
    # eagerly at top level the tangent map is evaluated: both raise
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(j_unused, (x,), (x,))
    with pytest.raises(CustomDerivativeError, match="can't apply forward-mode"):
        minijax.jvp(m_unused, (x,), (x,))
    # a used result raises everywhere, on both sides
    for way in ways:
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            way(jax, j_used)
        with pytest.raises(CustomDerivativeError, match="can't apply forward-mode"):
            way(minijax, m_used)


def test_forward_mode_rows_of_custom_vjp_programs_keep_an_eager_oracle():
    # F41, the harness: under the compiled oracle (one jax.jit) JAX dropped an unused
    # custom_vjp tangent map that eager JAX evaluates (and raises on); minijax's side
    # is eager, so such rows compare with eager JAX.
    from minijax.testing.fuzz import ProgramSides
    unused = _custom_vjp_calls(minijax)[0]
    x = np.array([0.5, 1.0], np.float32)
    program = minijax.make_jaxpr(unused)(x)
    sides = ProgramSides(program, [x])
    assert sides.compile_oracle

    def recipe(side, leaves):
        return ()
    assert sides.oracle_recipe("jvp", recipe) is recipe
    assert sides.oracle_recipe("jacfwd", recipe) is recipe
    assert sides.oracle_recipe("grad", recipe) is not recipe


@pins("jax_jacfwd_of_an_unused_custom_vjp_result_fails")
def test_jax_jacfwd_of_an_unused_custom_vjp_result_fails():
    # fuzz finding J30 (seeds s4last:34, 53, 213)
    x = np.array([0.5, 1.0], np.float32)
    j_unused, m_unused = _custom_vjp_calls(jax)[0], _custom_vjp_calls(minijax)[0]
    for wrap in (lambda api, f: f, lambda api, f: api.jit(f)):
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            jax.jacfwd(wrap(jax, j_unused))(x)
        expected = np.diag(-np.sin(x))
        np.testing.assert_allclose(minijax.jacfwd(wrap(minijax, m_unused))(x), expected,
                                   rtol=1e-6)
    # the same function's jvp under jit is fine in JAX
    jax.jit(lambda x: jax.jvp(j_unused, (x,), (x,)))(x)


def _outer_custom_vjp_over_an_unused_inner_one(api):
    # seed s6fz6b-w:12, shrunk: the outer rule's bwd differentiates a body that calls an
    # inner custom_vjp function and drops its result
    def with_rules(body):
        f = api.custom_vjp(body)
        f.defvjp(lambda x: (body(x), x), lambda x, ct: api.vjp(body, x)[1](ct))
        return f

    inner = with_rules(lambda a: api.lax.logistic(a))

    def outer_body(a):
        inner(a)
        return a * a
    return with_rules(outer_body)


@pins("jax_jacfwd_of_an_unused_custom_vjp_result_fails")
def test_jax_hessian_through_a_rule_over_an_unused_custom_vjp_result_fails():
    x = np.array([0.5], np.float32)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.hessian(_outer_custom_vjp_over_an_unused_inner_one(jax))(x)
    # d^2/dx^2 of x * x is 2; grad(grad) of the scalar function agrees in JAX
    np.testing.assert_allclose(
        minijax.hessian(_outer_custom_vjp_over_an_unused_inner_one(minijax))(x), [[[2.0]]])
    scalar = lambda api: lambda v: _outer_custom_vjp_over_an_unused_inner_one(api)(v)
    assert float(jax.grad(jax.grad(scalar(jax)))(0.5)) == 2.0


# -- J31: scatter_mul's derivative with indices that may repeat ----------------------------

def _scatter_mul_loss(api, indices):
    numbers = api.lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))

    def loss(x, u):
        out = api.lax.scatter_mul(x, indices, u, numbers, mode="fill")
        return api.numpy.sum(out * api.numpy.arange(1.0, 4.0))
    return loss


def _scatter_mul_loss_float64(x, u, indices):
    out = x.copy()
    for k, i in enumerate(indices[:, 0]):
        out[i] *= u[k]
    return float(np.sum(out * np.arange(1.0, 4.0)))


@pins("jax_scatter_mul_grad_requires_unique_indices")
def test_jax_scatter_mul_grad_requires_unique_indices():
    # fuzz finding J31 (seed s4last:230: one scatter_mul, every derivative row). JAX
    # refuses; minijax's derivatives agree with float64 central differences, with
    # repeated indices and a zero update.
    indices = np.array([[0], [0], [2], [0]], np.int32)
    x = np.array([0.5, -1.5, 2.0], np.float32)
    u = np.array([1.5, 0.0, 0.3, 2.0], np.float32)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices"):
        jax.grad(_scatter_mul_loss(jax, indices), argnums=(0, 1))(x, u)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices"):
        jax.jvp(_scatter_mul_loss(jax, indices), (x, u), (x, u))
    d_x, d_u = minijax.grad(_scatter_mul_loss(minijax, indices), argnums=(0, 1))(x, u)

    def central(which, h=1e-6):
        x64, u64 = x.astype(np.float64), u.astype(np.float64)
        base = (x64, u64)[which]
        out = np.zeros_like(base)
        for i in range(base.size):
            step = np.zeros_like(base)
            step[i] = h
            args = [lambda s: (x64 + s, u64), lambda s: (x64, u64 + s)][which]
            out[i] = (_scatter_mul_loss_float64(*args(step), indices)
                      - _scatter_mul_loss_float64(*args(-step), indices)) / (2 * h)
        return out
    np.testing.assert_allclose(d_x, central(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_u, central(1), rtol=1e-5, atol=1e-6)
    _, tangent = minijax.jvp(_scatter_mul_loss(minijax, indices), (x, u), (x, u))
    np.testing.assert_allclose(tangent, central(0) @ x + central(1) @ u, rtol=1e-5)


# -- J32: a second derivative through an unused igamma ---------------------------------------

def _unused_igamma(api):
    def f(a):
        def body(carry):
            i, x = carry
            api.lax.igamma(x + 1.0, x + 2.0)      # its result is never used
            return i + 1, x * 0.5
        api.lax.while_loop(lambda c: c[0] < 2, body, (0, a))
        return api.numpy.sum(api.numpy.sin(a) * a)
    return f


@pins("jax_second_derivative_of_unused_igamma_fails")
def test_jax_second_derivative_of_unused_igamma_fails():
    # fuzz finding J32 (seed s4last:61, shrunk): the loop's outputs are dropped
    a = np.array([1.5, 2.0], np.float32)
    for name in ("hessian", "grad(grad)"):
        def second(api):
            if name == "hessian":
                return api.hessian(_unused_igamma(api))
            return api.grad(lambda a: api.numpy.sum(api.grad(_unused_igamma(api))(a)))
        with pytest.raises(NotImplementedError, match="igamma_grad_a"):
            second(jax)(a)
        expected = 2 * np.cos(a) - a * np.sin(a)
        if name == "hessian":
            expected = np.diag(expected)
        np.testing.assert_allclose(second(minijax)(a), expected, rtol=1e-5)
    # a used igamma: no second derivative in `a` on either side
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        minijax.hessian(lambda a: minijax.numpy.sum(minijax.lax.igamma(a, a + 1.0)))(a)


# -- F42: what an exported custom rule returns reaches JAX as a JAX array ---------------------

def _stop_gradient_custom_vjp(api):
    def body(x):
        return api.lax.stop_gradient(x)
    g = api.custom_vjp(body)
    g.defvjp(lambda x: (body(x), (x,)), lambda xs, ct: api.vjp(body, *xs)[1](ct))
    return lambda x: g(x) * 0.5


def test_exported_custom_vjp_rules_return_typed_jax_arrays():
    # fuzz finding F42 (seed s4last:123): `to_jax`'s bwd of a custom_vjp function
    # returned the Python float 0.0 its program ends in (the zero cotangent of
    # stop_gradient), and jax.grad handed it to the user: the oracle's gradient was
    # a float (compared as float64). Now each cotangent is a JAX array of its
    # argument's dtype and weak type, as the argument is at the call.
    from minijax.interop import to_jax
    program = minijax.make_jaxpr(_stop_gradient_custom_vjp(minijax))(-0.25)
    exported = to_jax(program)
    expected = minijax.grad(_stop_gradient_custom_vjp(minijax))(-0.25)
    actual = jax.grad(lambda x: exported(x)[0])(-0.25)
    assert isinstance(actual, jax.Array)
    assert_trees_match(expected, actual)
    # a strong batch of the weak program's argument: strong cotangents, as minijax's
    batch = np.array([-0.25, 0.125], np.float32)
    expected = minijax.vmap(minijax.grad(_stop_gradient_custom_vjp(minijax)))(batch)
    actual = jax.vmap(jax.grad(lambda x: exported(x)[0]))(batch)
    assert not actual.weak_type
    assert_trees_match(expected, actual)


# -- J33: vmap of a custom function over a NumPy constant under jit --------------------------

@pins("jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails")
@pytest.mark.parametrize("kind", ["custom_vjp", "custom_jvp"])
@pytest.mark.parametrize("trace", ["jit", "make_jaxpr"])
@pytest.mark.parametrize("x", [np.array([-0.25, 0.125], np.float32),
                               np.arange(6, dtype=np.float64).reshape(2, 3)],
                         ids=["float32", "float64_2x3"])
def test_jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails(kind, trace, x):
    # fuzz finding J33 (seeds s4last:35, 123, 217, 257: the compiled oracle of a vmap
    # row closes over its batched arguments); the same failure on 0.10.2 to 0.12.0.1
    def custom_function(api):
        if kind == "custom_vjp":
            g = api.custom_vjp(lambda x: x * 2.0)
            g.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct * 2.0,))
        else:
            g = api.custom_jvp(lambda x: x * 2.0)
            g.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 2.0))
        return g

    def traced(api, g):
        batched = lambda: api.vmap(g)(x)
        if trace == "jit":
            return api.jit(batched)()
        closed = api.make_jaxpr(batched)()          # JAX fails here, tracing
        return eval_closed_jaxpr(closed)[0]
    j_fn, m_fn = custom_function(jax), custom_function(minijax)
    with pytest.raises(AssertionError, match="non-canonical constant of type ndarray"):
        traced(jax, j_fn)
    expected = jax.vmap(j_fn)(x)
    # a jit argument or a jax array instead of the NumPy constant: JAX traces it
    assert_trees_match(jax.jit(jax.vmap(j_fn))(x), expected)
    assert_trees_match(jax.jit(lambda: jax.vmap(j_fn)(jnp.asarray(x)))(), expected)
    assert_trees_match(traced(minijax, m_fn), expected)


@pytest.mark.parametrize("transform, jax_error, record", [
    ("jacfwd", "TypeError: can't apply forward-mode autodiff (jvp) to a custom_vjp function.",
     "jax_jacfwd_of_an_unused_custom_vjp_result_fails"),
    ("grad", "NotImplementedError: scatter_mul gradients are only implemented if "
     "`unique_indices=True`", "jax_scatter_mul_grad_requires_unique_indices"),
    ("grad(grad)", "NotImplementedError: Differentiation rule for 'igamma_grad_a' not "
     "implemented", "jax_second_derivative_of_unused_igamma_fails"),
    ("vmap(grad)", "AssertionError: non-canonical constant of type ndarray: array([1.])",
     "jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails"),
])
def test_the_fuzzer_files_the_new_jax_records_by_their_rows_only(transform, jax_error, record):
    from minijax.testing import fuzz
    from minijax.testing.report import Row
    case = fuzz.generate("identity", features=["elementwise"])
    row = Row(transform, "error", jax_error=jax_error)
    assert fuzz.known_divergence(transform, case.program, row) == record
    # the same error on minijax's side too is no divergence of JAX's
    both = Row(transform, "error", minijax_error="TypeError: x", jax_error=jax_error)
    assert fuzz.known_divergence(transform, case.program, both) != record
    other = Row("eager" if transform != "eager" else "jit", "error", jax_error=jax_error)
    if record != "jax_scatter_mul_grad_requires_unique_indices":
        assert fuzz.known_divergence(other.transform, case.program, other) != record


# -- F43: an exported custom rule that folds a constant, under jax.jit -----------------------

def test_exported_custom_jvp_rule_folding_an_index_runs_under_jax_jit():
    # fuzz finding F43 (seed s4last:245, shrunk): to_jax traced a custom_jvp rule
    # while JAX's jit traced the program, so the index array the rule's body makes
    # eagerly (x.at[idx] with idx = jnp.asarray of a NumPy array, as the generator
    # writes it) became a JAX tracer, and minijax's indexing raised
    # TracerArrayConversionError reading it.
    from minijax.interop import to_jax
    mnp = minijax.numpy

    def body(x):
        idx = mnp.asarray(np.array([1, 2], np.int32))     # made eagerly
        return x.at[idx].add(1.0) * x

    g = minijax.custom_jvp(body)
    g.defjvp(lambda p, t: minijax.jvp(body, p, t))
    x = np.array([0.5, -1.0, 2.0], np.float32)
    program = minijax.make_jaxpr(g)(x)
    exported = to_jax(program)
    expected = minijax.jvp(g, (x,), (x,))
    assert_trees_match(jax.jit(lambda x: exported(x)[0])(x), expected[0])
    assert_trees_match(jax.jit(lambda x: jax.jvp(lambda x: exported(x)[0], (x,), (x,)))(x),
                       expected)


# -- the reproducer shows types ----------------------------------------------------------------

def test_reproducer_prints_dtype_and_weak_type_and_keeps_a_weak_argument_weak(tmp_path):
    # A dtype or weak-type finding (F42's float cotangent, the weak_type rows) was
    # invisible when its reproducer ran: it printed values only, and a weak scalar
    # argument, a NumPy float64 after shrinking, was written as one.
    import subprocess
    import sys
    from minijax.testing.recipes import TRANSFORMS
    from minijax.testing.shrink import reproducer_source
    program = minijax.make_jaxpr(lambda x, y: (x * 2.0, y + 1))(1.5, np.ones(2, np.int32))
    text = reproducer_source(program, [np.float64(1.5), np.ones(2, np.int32)], "grad",
                             TRANSFORMS["grad"])
    assert "ARGS = [1.5, np.array([1, 1], dtype=np.int32)]" in text
    path = tmp_path / "repro.py"
    path.write_text(text.replace("{file}", "repro.py"))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["leaf 0: 2.0  # ArrayImpl float32 weak_type=True"]
    assert eval(out.split(":", 1)[1]) == 2.0      # the values still read back
