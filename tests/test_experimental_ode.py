"""`minijax.experimental.ode.odeint` against `jax.experimental.ode.odeint` on a damped,
time-dependent 2-state oscillator at three output times: values (a batched pytree state,
closed-over parameters, `hmax`, under jit and vmap), gradients through `y0`, `t`, `args`
and a closed-over value, and JAX's errors.

The solver is one large program (a scan over a while loop over a fori loop), and its
adjoint another, so each test compiles few programs. Both sides do the same arithmetic
in the same order; the comparisons use `assert_trees_match`'s float32 tolerance (rtol
2e-5), which covers the rounding differences between compiled programs."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.ode import odeint as jax_odeint

import minijax
import minijax.numpy as mnp
from minijax.experimental.ode import odeint
from minijax.testing import assert_trees_match

Y0 = np.array([1., 0.], np.float32)
T = np.array([0., 0.5, 1.2], np.float32)
A, B = np.float32(1.5), np.float32(2.)
SIDES = {"minijax": (minijax, mnp, odeint), "jax": (jax, jnp, jax_odeint)}


def oscillator(np_lib):
    def f(y, t, a, b):
        return np_lib.stack([a * y[1], -b * y[0] - 0.1 * y[1] * t])
    return f


def both(program):
    """`program(lib, np_lib, odeint)` on minijax and on JAX."""
    return [program(*SIDES[side]) for side in ("minijax", "jax")]


def test_vmapped_pytree_state_with_closure_under_jit_matches_jax():
    # A dict state batched over three initial values, a parameter in `args` and one
    # closed over, under an outer jit; `hmax` caps the steps.
    xs = np.array([1., 0., -.5], np.float32)
    vs = np.array([0., 1., .3], np.float32)

    def program(lib, np_lib, solve):
        @lib.jit
        def run(y0, t, a, damping):
            def f(y, t, a):
                return {"x": a * y["v"], "v": -2. * y["x"] - damping * y["v"] * t}
            one = lambda y0: solve(f, y0, t, a, rtol=1e-6, atol=1e-6, hmax=0.3)
            return lib.vmap(one)(y0)
        return run({"x": xs, "v": vs}, T, A, np.float32(0.1))
    actual, expected = both(program)
    assert_trees_match(actual, expected)
    assert actual["x"].shape == (3, 3)


def test_gradients_through_y0_t_args_and_closure_match_jax():
    def program(lib, np_lib, solve):
        def loss(y0, t, a, b, damping):
            def f(y, t, a, b):
                return np_lib.stack([a * y[1], -b * y[0] - damping * y[1] * t])
            ys = solve(f, y0, t, a, b)
            return np_lib.sum(ys[1:] ** 2 * np_lib.array([1., 2.]))
        return lib.value_and_grad(loss, argnums=(0, 1, 2, 3, 4))(
            Y0, T, A, B, np.float32(0.1))
    actual, expected = both(program)
    assert_trees_match(actual, expected, rtol=1e-4, atol=1e-5)
    # The derivative reaches every input (none is silently zero).
    assert all(np.all(np.asarray(g) != 0) for g in jax.tree_util.tree_leaves(actual[1][2:]))


@pytest.mark.parametrize("bad", [
    pytest.param(lambda: (oscillator(mnp), Y0, T, "a", B), id="string-arg"),
    pytest.param(lambda: (oscillator(mnp), Y0, T, A, object()), id="object-arg"),
    pytest.param(lambda: (oscillator(mnp), Y0, np.array([0, 1, 2]), A, B), id="int-t"),
])
def test_bad_input_raises_as_jax(bad):
    args = bad()
    with pytest.raises(TypeError) as mine:
        odeint(*args)
    jax_args = (oscillator(jnp),) + args[1:]
    with pytest.raises(TypeError) as theirs:
        jax_odeint(*jax_args)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("y0", [1, np.array([1, 2]), {"a": 1, "b": np.int32(2)}],
                         ids=["int", "int-array", "int-leaves"])
def test_integer_initial_state_is_a_type_error_as_in_jax(y0):
    # JAX's loop refuses the integer state (a TypeError from inside); minijax's
    # solution came out as NaNs, so it checks y0 up front
    decay = lambda lib: (lambda y, t: lib.tree_util.tree_map(lambda v: -v, y))
    ts = np.array([0.0, 1.0], np.float32)
    with pytest.raises(TypeError):
        jax_odeint(decay(jax), y0, jnp.asarray(ts))
    with pytest.raises(TypeError, match="y0 must be floating-point"):
        odeint(decay(minijax), y0, mnp.asarray(ts))


def test_an_integer_leaf_beside_a_float_one_is_promoted_as_in_jax():
    # the state is raveled into one vector, of the leaves' common (float) dtype
    def solve(lib, ode):
        y = ode(lambda y, t: lib.tree_util.tree_map(lambda v: -v, y),
                {"a": 1.0, "b": np.int32(2)}, lib.numpy.asarray([0.0, 1.0]))
        return y
    assert_trees_match(solve(minijax, odeint), solve(jax, jax_odeint), rtol=1e-5)
