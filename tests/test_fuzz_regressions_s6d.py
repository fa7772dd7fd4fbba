"""Regression tests for the fuzzer's findings F80-F89 (docs/fuzzing_findings.md), the
session-6 helpers' leftover findings. Each test is the finding's shrunk reproducer (or
the smallest program showing the cause), run through both APIs."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match


# -- F80: a switch's transpose typed the cotangents by the primal outputs ------------------

def _switch_program(api, index):
    lax = api.lax
    branches = [lambda a, b, c: (c, a * 2.0),
                lambda a, b, c: (lax.erfc(lax.clamp(-4.0, a, 4.0)), b),
                lambda a, b, c: (b, lax.sin(c))]
    return lambda x: lax.switch(np.int32(index), branches, x, x, x)


@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("weak_cotangent", [False, True])
@pytest.mark.parametrize("jit", [False, True])
def test_switch_vjp_cotangent_takes_the_output_cotangents_type(index, weak_cotangent, jit):
    # seed s6fz6a2:7: vjp of a switch of a weak f32[] argument, pulled back with a
    # strong f32 cotangent: JAX transposes the branches at the cotangents' own types,
    # so the argument's cotangent is strong; minijax used the branches' (weak) output
    # types and returned a weak cotangent
    def pulled_back(api):
        fn = _switch_program(api, index)
        out, pullback = api.vjp(api.jit(fn) if jit else fn, -0.25)
        cts = tuple(api.numpy.ones_like(o) if weak_cotangent else np.ones((), np.float32)
                    for o in out)
        return out, pullback(cts)
    assert_trees_match(pulled_back(minijax), pulled_back(jax))


# -- F81: pow with an integer exponent -----------------------------------------------------

_BASES = [np.float32(0.0), np.float32(-1.5), np.array([0.0, -2.0, 0.5], np.float32), 0.0]
_EXPONENTS = [np.int32(0), np.int32(3), np.int32(-1), np.array([0, 2, -2], np.int32),
              np.uint8(0), np.int8(2)]


@pytest.mark.parametrize("x", _BASES, ids=lambda x: repr(x))
@pytest.mark.parametrize("y", _EXPONENTS, ids=lambda y: repr(y))
def test_pow_with_an_integer_exponent_differentiates_as_jax(x, y):
    # docs/fuzzing_findings.md F75's note: minijax converted an integer exponent to the
    # base's dtype, so d/dx x**0 at x = 0 was 0 * 0**-1 = NaN; JAX keeps the exponent
    # integer and its jvp selects 0 where y == 0
    def transforms(api):
        f = lambda x: api.lax.pow(x, y)
        loss = lambda x: api.numpy.sum(f(x))
        ones = api.numpy.ones_like(x)
        batch_x = api.numpy.stack([api.numpy.asarray(x)] * 2)
        batch_y = api.numpy.stack([api.numpy.asarray(y)] * 2)
        return {"jit": api.jit(f)(x), "grad": api.grad(loss)(x),
                "jvp": api.jvp(f, (x,), (ones,)), "hessian": api.hessian(loss)(x),
                "vmap": api.vmap(api.lax.pow)(batch_x, batch_y)}
    assert_trees_match(transforms(minijax), transforms(jax))


def test_pow_at_zero_to_an_integer_zero_has_a_zero_gradient():
    got = minijax.grad(lambda x: minijax.lax.pow(x, np.int32(0)))(np.float32(0.0))
    assert np.asarray(got) == 0.0


def test_pow_keeps_an_integer_exponent_in_the_jaxpr():
    jaxpr = minijax.make_jaxpr(minijax.lax.pow)(np.float32(2.0), np.int32(3))
    assert "i32" in str(jaxpr) and "convert" not in str(jaxpr)


def test_pow_rejects_an_exponent_of_another_float_dtype():
    with pytest.raises(TypeError) as minijax_error:
        minijax.lax.pow(np.float32(2.0), np.float16(3.0))
    with pytest.raises(TypeError):
        jax.lax.pow(np.float32(2.0), np.float16(3.0))
    assert "pow" in str(minijax_error.value)


@pytest.mark.parametrize("y", [np.array(0, np.int32), np.array([0, 3, -2], np.int8)],
                         ids=lambda y: repr(y))
def test_numpy_power_with_an_integer_exponent_array_differentiates_as_jax(y):
    # jnp.power hands a float base and an integer exponent array to lax.pow unconverted
    def transforms(api):
        loss = lambda x: api.numpy.sum(api.numpy.power(x, y))
        x = np.array([0.0, -2.0, 0.5], np.float32)
        return {"grad": api.grad(loss)(x), "hessian": api.hessian(loss)(x),
                "jit": api.jit(api.numpy.power)(x, y)}
    assert_trees_match(transforms(minijax), transforms(jax))


# -- F82: the shrinker kept candidates showing another kind of difference -----------------

def _names(program):
    return {eqn.primitive.name for eqn in program.jaxpr.eqns}


def _sin_cos_program():
    from minijax.interop import import_jaxpr
    x = np.array([0.5, -1.0], np.float32)
    fn = lambda x: jax.numpy.sum(jax.numpy.sin(jax.numpy.cos(x) * 3.0))
    return import_jaxpr(jax.make_jaxpr(fn)(x)), [x]




@pytest.mark.parametrize("kinds", ["values vs weak type", "error types"])
def test_shrinking_keeps_only_candidates_with_the_rows_kind_of_difference(kinds):
    # fz6c's note: the shrinker kept any candidate of the same status, so a shrunk
    # reproducer could show another difference than the row's (a weak type where the
    # row was about values); now the kind (`report.difference_kind`) must match
    from minijax.testing.recipes import TRANSFORMS
    from minijax.testing.report import Row, difference_kind
    from minijax.testing.shrink import shrink
    if kinds == "values vs weak type":
        original = Row("grad", "differ", max_error=0.5, detail="result leaf 0: values differ")
        other = Row("grad", "differ", detail="result leaf 0: weak_type True != jax's False")
    else:
        original = Row("grad", "error", jax_error="TypeError: planted")
        other = Row("grad", "error", jax_error="ValueError: planted")
    assert difference_kind(original) != difference_kind(other)
    program, leaves = _sin_cos_program()
    judge = lambda p, l: original if "sin" in _names(p) else (other if p.jaxpr.eqns else None)
    small, _ = shrink(program, leaves, "grad", TRANSFORMS["grad"], judge=judge, row=original)
    assert "sin" in _names(small)
    assert len(small.jaxpr.eqns) < len(program.jaxpr.eqns)
    # a row the program no longer shows (the judge sees the other kind) is not shrunk
    small, _ = shrink(program, leaves, "grad", TRANSFORMS["grad"], judge=judge, row=other)
    assert small is program


def test_the_fuzzers_shrink_judge_decides_as_the_battery_row_does():
    # the fuzzer shrinks a row with `fuzz.shrink_judge`: `compare_row` (the compiled
    # oracle, eager JAX where that decides a difference: F61) with the program's
    # tolerance, so the shrunk program is judged on the JAX side the row was
    from minijax.testing import fuzz
    case = fuzz.generate(3)
    recipes = fuzz.recipes_for(case, ["grad", "jit"])
    for name in ("grad", "jit"):
        judged = fuzz.shrink_judge(name, recipes[name])(case.program, case.leaves)
        row = fuzz.compare_row(name, case.program, case.leaves, recipes[name])
        assert (judged is None) == (row.ok or bool(fuzz.known_divergence(name, case.program,
                                                                          row)))
