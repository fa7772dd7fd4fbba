"""Regression tests for the fuzz findings F50-F53 of campaign s5final
(docs/fuzzing_findings.md): `reduce_prod`'s jvp at infinite factors, the generator's
`custom_vjp` bodies run on NumPy values, and the compiled oracle's constant folding.
Each test is the finding's reproducer (or the smallest program showing the cause),
run through minijax and JAX."""
import random

import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_cross_check, assert_trees_match
from minijax.testing.recipes import Side
from tests.devices import assert_same_bits

INF = np.inf


def _reduce_prod(api, axes):
    return lambda x: api.lax.reduce_prod(x, axes)


# -- F50, F51: reduce_prod differentiates through JAX's pairwise tree ----------------------

def test_reduce_prod_jvp_and_linearize_at_an_infinite_factor_are_jax_nan():
    # findings 15 and 16 (seed s5final:48): over three factors the tree pads the second
    # half with a factor 1 whose tangent is 0, and -inf * 0 makes JAX's tangent NaN;
    # the prefix/suffix products minijax used gave inf
    x = np.array([[-0.47], [-INF], [1.158]], np.float32)
    t = np.array([[-0.75], [0.25], [1.25]], np.float32)
    # JAX's side runs as one jax.jit program each (x and t its arguments, so nothing
    # is constant-folded): the NaN comes from the jvp rule's tree, as it does eagerly
    actual = minijax.jvp(_reduce_prod(minijax, (0,)), (x,), (t,))
    expected = jax.jit(lambda x, t: jax.jvp(_reduce_prod(jax, (0,)), (x,), (t,)))(x, t)
    assert np.isnan(np.asarray(expected[1])).all()
    assert_trees_match(actual, expected)
    out, lin = minijax.linearize(_reduce_prod(minijax, (0,)), x)

    def jax_linearized(x, t):
        jax_out, jax_lin = jax.linearize(_reduce_prod(jax, (0,)), x)
        return jax_out, jax_lin(t)
    assert_trees_match((out, lin(t)), jax.jit(jax_linearized)(x, t))


def test_reduce_prod_second_derivatives_at_an_infinite_factor_match_jax():
    # findings 0 and 1 (seed s5final:23): the hessian and grad(grad) of the product of
    # a row holding inf
    x = np.array([[-0.658, 0.048, 1.003], [INF, 0.79, -0.312]], np.float32)

    def loss(api):
        return lambda x: api.numpy.sum(api.lax.reduce_prod(x, (1,)))

    def grad_grad(api):
        return api.grad(lambda x: api.numpy.sum(api.grad(loss(api))(x)))
    # JAX's side under one jax.jit each, x its argument (no constant folding)
    assert_trees_match(minijax.hessian(loss(minijax))(x), jax.jit(jax.hessian(loss(jax)))(x))
    assert_trees_match(grad_grad(minijax)(x), jax.jit(grad_grad(jax))(x))


@pytest.mark.parametrize("shape, axes", [((4, 2), (0,)), ((2, 5, 3), (0, 2)), ((7,), (0,))])
def test_reduce_prod_matches_jax_in_every_transform(shape, axes):
    # zeros (one and two in a product), signs, an even and odd number of factors at
    # the tree's levels; the checkpoint row compares the saved residuals (F35's
    # explained difference: minijax now saves JAX's halves)
    x = np.linspace(-1.5, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x.flat[1] = 0.0
    x.flat[-1] = 0.0
    assert_cross_check(lambda x: jax.lax.reduce_prod(x, axes), x, shrink=False,
                       transforms=["jvp", "vjp", "jit(grad)", "vmap(grad)", "grad(grad)"],
                       policies=["everything_saveable"], jit_oracle=True)


@pytest.mark.parametrize("policy", ["everything_saveable", "nothing_saveable"])
def test_checkpointed_reduce_prod_saves_what_jax_saves(policy):
    x = np.linspace(0.5, 2.0, 30, dtype=np.float32).reshape(2, 5, 3)
    saved = []
    for api in (minijax, jax):
        loss = (lambda api: lambda x: api.numpy.sum(api.lax.reduce_prod(x, (0, 2))))(api)
        remat = api.checkpoint(loss, policy=getattr(api.checkpoint_policies, policy))
        saved.append(Side(api.__name__, api, None).saved_residuals(remat, x))
    assert saved[0] == saved[1]


def test_reduce_prod_under_jvp_has_no_reduce_prod_equation():
    # as JAX's: the primal comes from the tree too, so a second derivative sees the
    # tree's multiplications
    x = np.ones((3, 2), np.float32)
    jaxpr = minijax.make_jaxpr(lambda x: minijax.jvp(_reduce_prod(minijax, (0,)), (x,), (x,)))(x)
    assert "reduce_prod" not in str(jaxpr)


# -- F52: a custom_vjp body of the generator, run on NumPy values --------------------------

def test_generated_custom_vjp_with_a_scatter_differentiates_numpy_arguments():
    # seed s5final:27: custom_vjp hands fwd the primal as it is (a NumPy array for a
    # NumPy argument, in JAX too), and the generator re-ran its body there, whose
    # scatter wrote `x.at[...]` on it. The builder now takes its operands as arrays.
    from minijax.testing import fuzz_structured
    from minijax.testing.fuzz import FuzzCase, check_case
    from minijax.testing.fuzz_builder import Builder, Shared
    x = np.array([0.5, -1.25, 2.0], np.float32)
    shared = Shared(frozenset({"indexing"}), (np.dtype(np.float32),))

    def program(x):
        return fuzz_structured._custom_vjp(Builder(random.Random(10), shared, [x]))[0]
    closed = minijax.make_jaxpr(program)(x)
    assert "scatter" in shared.used_ops and "custom_vjp_call" in str(closed)
    case = FuzzCase("s5final:27 by hand", closed, [x], [x], frozenset(), frozenset(), True)
    rows = check_case(case, ["grad", "value_and_grad", "vjp", "jacrev"])
    assert [row.status for row in rows] == ["agree"] * 4, [row.summary() for row in rows]


# -- F53: the compiled oracle folded constants ---------------------------------------------

def _cancelling_gradient(api):
    # seed s5final:82 shrunk by hand: with JAX 0.10's tanh transpose d/dx0 is
    # 46 + u - u with u = 1.4e30 (at tanh(x0) = -1), so it was 0 at run time
    lax = api.lax

    def f(a):
        d = lax.exp2(lax.tanh(a) * 4.0)
        bs = api.numpy.broadcast_to(api.numpy.sum(d), (3, 2)) \
            + lax.broadcasted_iota(np.float32, (3, 2), 1)
        return lax.dot_general(a, bs, (((0,), (0,)), ((), ())))
    return f


def test_oracle_computes_at_run_time_as_jax_does():
    # the fuzz oracle compiles a recipe with the arguments as constants; XLA's constant
    # folding gave d/dx0 = 46 where JAX 0.10 at run time (eager or jit) gave 0, as
    # minijax did with JAX 0.10's tanh rule; both now give 46 (JAX from 0.11)
    from minijax.testing.fuzz import FuzzCase, check_case
    x = np.array([-1e30, 1.107, 1.649], np.float32)

    def loss(api):
        return lambda a: api.numpy.sum(_cancelling_gradient(api)(a))
    mini = np.asarray(minijax.grad(loss(minijax))(x))
    if JAX_VERSION < (0, 11):
        # JAX 0.10's tanh transpose, (t + t*ans) * (1 - ans), cancels d/dx0 = 46 to 0
        # against this input's 1e30-sized terms, eagerly and under jit; minijax's and
        # JAX 0.11's, t * one_minus_square(ans), keep the 46. The oracle's rows are
        # compared where JAX's rule is minijax's.
        for jax_grad in (jax.grad(loss(jax)), jax.jit(jax.grad(loss(jax)))):
            assert np.asarray(jax_grad(x))[0] == 0 and mini[0] == np.float32(45.91922)
        return
    for jax_grad in (jax.grad(loss(jax)), jax.jit(jax.grad(loss(jax)))):
        assert_same_bits(mini[0], np.asarray(jax_grad(x))[0])    # 2 ulps apart on a GPU
    closed = minijax.make_jaxpr(_cancelling_gradient(minijax))(x)
    case = FuzzCase("s5final:82 by hand", closed, [x], [x], frozenset(), frozenset(), True)
    transforms = ["grad", "value_and_grad", "jit(grad)", "grad(vmap)", "grad(grad)"]
    rows = check_case(case, transforms)
    assert [row.status for row in rows] == ["agree"] * len(transforms), \
        [row.summary() for row in rows]
