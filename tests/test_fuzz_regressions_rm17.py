"""Regression tests for the checkpoint rows that the fuzz runs `rm17b:0-374` (JAX 0.10.2)
and `rm16:0-199` (JAX 0.12.0.1) left unexplained (docs/fuzzing_findings.md): each is
the seed's program shrunk by hand, run through both APIs, or the explained finding's
matcher on the row the seed produced."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match, fuzz
from minijax.testing.recipes import Side
from minijax.testing.report import Row
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
    assert fuzz.known_divergence(TRANSFORM, program,
                                 _row(saved[0], list(saved[1]) + ["f32[]"])) == ""
