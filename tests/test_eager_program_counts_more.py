"""Eager calls that made more programs than JAX's (issue 18, second list).

Each case counts the programs an eager call lowers (`tests/program_counting.py`),
first call and repeat call, against JAX's own call on the same inputs, and compares
values, dtypes and weak types:

* `test_util.check_grads`: an eager jit call's body compiles once per text, not once
  per body object (the derivation paths of `check_grads` reach equal bodies as
  distinct objects), and an inline call's body that repeats an output shares the
  program of the body without the repeats (`backends/eager_dispatch.py`, `_eager_call_program`);
* `jnp.roll` with a concrete NumPy/JAX shift: read as Python ints first, as JAX does,
  so the call is one cached program with the shift static, not op by op;
* `random.choice` without replacement and with `p`: Gumbel top-k with `lax.top_k`, as
  JAX's, not a sort and a slice (7 programs -> 4, JAX 6); plain `random.choice` and
  `lax.add` with a rank-0 NumPy operand: no more programs than JAX's (pinned).

Each case has shapes of its own, so that no other test's program serves it on either
side.
"""

import jax
import jax.numpy as jnp
import jax.test_util
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.test_util
from minijax.backends import eager_dispatch
from minijax.ir.core import Jaxpr
from minijax.ir.primitives import jit_p
from minijax.testing import assert_trees_match
from tests.program_counting import counted, first_and_repeat, programs


# -- check_grads ------------------------------------------------------------------------

def test_equal_bodies_compile_once_and_repeated_outputs_share_a_program():
    body = minijax.make_jaxpr(lambda x, y: (mnp.exp(x) * y, mnp.sin(y)))(
        np.ones(9, np.float32), np.ones(9, np.float32)).jaxpr
    # An equal body as another object (as a second derivation path makes it).
    twin = Jaxpr(body.constvars, body.invars, body.eqns, body.outvars)
    program = eager_dispatch._eager_call_program
    assert program(twin, False) is program(body, False)
    # The same body returning its first output three times: one program, each
    # position answered.
    a, b = body.outvars
    repeated = Jaxpr(body.constvars, body.invars, body.eqns, (a, b, a, a))
    x, y = np.linspace(0, 1, 9, dtype=np.float32), np.full(9, 2, np.float32)
    with programs("lowered") as made:
        run = eager_dispatch.apply_primitive
        outs = run(jit_p, x, y, jaxpr=repeated, name="f", inline=True)
        plain = run(jit_p, x, y, jaxpr=body, name="f", inline=True)
    assert len(made) <= 1
    expected = [np.exp(x) * y, np.sin(y)]
    assert_trees_match(list(outs), [expected[0], expected[1], expected[0], expected[0]],
                       rtol=1e-6)
    assert_trees_match(list(plain), expected, rtol=1e-6)


def test_check_grads_of_exp_makes_no_program_twice():
    x = (np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32),)
    check = lambda cg, f: lambda: cg(f, x, order=3, atol=1e-2, rtol=1e-2, eps=1e-3)
    _, (first, repeat) = first_and_repeat(check(minijax.test_util.check_grads, mnp.exp))
    # Before: 37 (four bodies compiled twice, nine differing only in repeated
    # outputs). JAX 0.10.2/0.11.2: 17, as they transpose a jnp function op by op,
    # sharing each primitive's program; 0.12.0.1, which runs the transpose as one jit
    # call as minijax does (each transposed body its own program): 41.
    assert first <= 24 and repeat == 0


def test_check_grads_of_a_product_makes_no_more_programs_than_jax():
    args = (np.float32(0.7), np.ones(4, np.float32))
    _, (first, repeat) = first_and_repeat(lambda: minijax.test_util.check_grads(
        lambda x, y: mnp.sin(x) * y, args, order=2))
    # JAX's check_grads of the same function makes 22 programs in a fresh process
    # (fewer here, where earlier tests compiled some of its scalar programs); this
    # made 26 before.
    assert first <= 22 and repeat == 0


def test_nested_eager_jvp_values_as_jax():
    x, t = np.array([0.3, -1.0, 2.0], np.float32), np.array([1.0, 0.5, -2.0], np.float32)

    def nested(jvp, exp):
        return jvp(lambda p, q: jvp(exp, (p,), (q,)), (x, t), (t, x))
    assert_trees_match(nested(minijax.jvp, mnp.exp), nested(jax.jvp, jnp.exp), rtol=1e-6)


# -- roll with an array shift -------------------------------------------------------------

_R = np.arange(33, dtype=np.float32).reshape(3, 11)
_R8 = np.arange(11, dtype=np.int8)


@pytest.mark.parametrize("shift, axis", [
    (np.array(2), None), (np.int32(-4), 1), (np.array([1, -2]), (0, 1)), ([1, 3], (1, 1)),
])
def test_roll_with_a_concrete_array_shift_is_one_program(shift, axis):
    got, (first, repeat) = first_and_repeat(lambda: mnp.roll(_R, shift, axis))
    expected, (jax_first, _) = first_and_repeat(lambda: jnp.roll(_R, shift, axis))
    assert_trees_match(got, expected)
    assert first <= 1 and repeat == 0 and first <= jax_first


def test_roll_shift_as_a_jax_array_and_small_int_dtype():
    shift = jnp.asarray(3, jnp.int16)
    got, (first, repeat) = first_and_repeat(lambda: mnp.roll(_R8, shift))
    assert_trees_match(got, jnp.roll(_R8, shift))
    assert first <= 1 and repeat == 0


def test_roll_traced_shift_and_bad_shifts_unchanged():
    s = np.int32(5)
    assert_trees_match(minijax.jit(lambda a, s: mnp.roll(a, s, axis=1))(_R, s),
                       jax.jit(lambda a, s: jnp.roll(a, s, axis=1))(_R, s))
    assert_trees_match(minijax.grad(lambda a: mnp.roll(a, np.array([2]), 1).sum())(_R),
                       jax.grad(lambda a: jnp.roll(a, np.array([2]), 1).sum())(_R))
    for bad in (np.array([[1]]), np.array([1, 2, 3])):
        with pytest.raises(ValueError):
            jnp.roll(_R, bad, axis=(1, 0))
        with pytest.raises(ValueError):
            mnp.roll(_R, bad, axis=(1, 0))


# -- random.choice, lax.add with a rank-0 NumPy operand -------------------------------------

def test_random_choice_makes_no_more_programs_than_jax():
    mk, jk = minijax.random.key(13), jax.random.key(13)
    got, (first, repeat) = first_and_repeat(lambda: minijax.random.choice(mk, 13, (6,)))
    expected, (jax_first, _) = first_and_repeat(lambda: jax.random.choice(jk, 13, (6,)))
    assert_trees_match(got, expected)
    assert first <= jax_first and repeat == 0


def test_random_choice_without_replacement_with_p_is_gumbel_top_k_as_jax():
    # Its top k was a sort of the negated noise and a slice (7 programs, JAX 6).
    mk, jk = minijax.random.key(14), jax.random.key(14)
    p = np.linspace(0.02, 0.2, 14).astype(np.float32)
    draw = lambda random, k, p: random.choice(k, 14, (5,), replace=False, p=p)
    got, (first, repeat) = first_and_repeat(lambda: draw(minijax.random, mk, p))
    expected, (jax_first, _) = first_and_repeat(lambda: draw(jax.random, jk, p))
    assert_trees_match(got, expected)
    assert first <= jax_first and repeat == 0
    keys_m, keys_j = minijax.random.split(mk, 3), jax.random.split(jk, 3)
    assert_trees_match(minijax.vmap(lambda k: draw(minijax.random, k, p))(keys_m),
                       jax.vmap(lambda k: draw(jax.random, k, p))(keys_j))
    assert_trees_match(minijax.jit(lambda k, p: draw(minijax.random, k, p))(mk, p), expected)


def test_lax_add_with_a_rank0_numpy_operand_is_one_program():
    x = jnp.arange(13, dtype=jnp.float32)
    for other in (np.float32(2), np.array(2, np.float32)):
        got, (first, repeat) = first_and_repeat(lambda: minijax.lax.add(x, other))
        expected, (jax_first, _) = first_and_repeat(lambda: jax.lax.add(x, other))
        assert_trees_match(got, expected)     # values, dtype, weak type
        assert first <= max(jax_first, 1) and repeat == 0
