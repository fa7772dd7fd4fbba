"""Remat policies inside a scan body (fuzz finding F27), against JAX.

Under `checkpoint(f, policy=p)`, a `scan` in `f` is split by the policy equation by
equation: what the policy saves inside the body (its dots under `dots_saveable`, its
named values under `save_only_these_names`) is saved stacked over the iterations,
and the staged scan recomputes the rest -- the known carries included, from their
initial values -- as JAX's rule does. Each program is compared with JAX for its
gradient (eager and under jit) and for the multiset of residual types that
`print_saved_residuals` lists."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match
from minijax.testing.recipes import Side
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX


def carry_dot(api):
    # finding 028 of campaign s4last, minimized: the carry's new value is a dot
    lax = api.lax

    def body(c, _):
        w = lax.broadcast_in_dim(lax.reduce_sum(c, (0, 1)), (2, 2), ()) \
            + lax.broadcasted_iota(np.float32, (2, 2), 1)
        return lax.dot_general(c, w, (((1,), (0,)), ((), ()))), None
    return lambda x, xs: api.numpy.sum(lax.scan(body, x, None, length=2)[0])


def named_with_xs_reversed(api):
    jnp = api.numpy

    def body(c, x):
        h = api.ad_checkpoint.checkpoint_name(jnp.sin(c) @ x, "h")
        return jnp.tanh(h), h * 2.0
    return lambda c, xs: jnp.sum(api.lax.scan(body, c, xs, reverse=True)[1])


def nested(api):
    jnp, lax = api.numpy, api.lax

    def inner(c, _):
        return jnp.sin(c @ c), None

    def outer(c, x):
        return lax.scan(inner, c * x, None, length=2)[0] * 2.0, None
    return lambda c, xs: jnp.sum(lax.scan(outer, c, xs)[0])


def fori(api):
    jnp = api.numpy
    return lambda c, xs: jnp.sum(api.lax.fori_loop(
        0, 3, lambda i, a: jnp.cos(a @ xs[i]) * 0.5, c))


PROGRAMS = dict(carry_dot=carry_dot, named_with_xs_reversed=named_with_xs_reversed,
                nested=nested, fori=fori)
POLICIES = {
    "dots_saveable": lambda p: p.dots_saveable,
    "dots_with_no_batch_dims_saveable": lambda p: p.dots_with_no_batch_dims_saveable,
    "nothing_saveable": lambda p: p.nothing_saveable,
    "save_only_these_names": lambda p: p.save_only_these_names("h"),
    "save_any_names_but_these": lambda p: p.save_any_names_but_these("h"),
}
C = np.arange(4, dtype=np.float32).reshape(2, 2) * 0.1
XS = np.tanh(np.arange(12, dtype=np.float32).reshape(3, 2, 2) * 0.3 - 1.0)


def _checkpointed(api, name, policy):
    return api.checkpoint(PROGRAMS[name](api), policy=POLICIES[policy](api.checkpoint_policies))


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_saved_residuals_and_gradients_match_jax(name, policy):
    mine, theirs = _checkpointed(minijax, name, policy), _checkpointed(jax, name, policy)
    expected = jax.grad(theirs, argnums=(0, 1))(C, XS)
    assert_trees_match(minijax.grad(mine, argnums=(0, 1))(C, XS), expected, rtol=1e-5)
    assert_trees_match(minijax.jit(minijax.grad(mine, argnums=(0, 1)))(C, XS), expected,
                       rtol=1e-5)
    assert Side("minijax", minijax, None).saved_residuals(mine, C, XS) == \
        Side("jax", jax, None).saved_residuals(theirs, C, XS)


def test_dots_saveable_saves_the_dots_stacked():
    # What F27 was about, spelled out: one stacked f32[2,2,2] for the body's dots
    # plus the loop's initial carry, from which the backward scan recomputes.
    mine = _checkpointed(minijax, "carry_dot", "dots_saveable")
    assert sorted(Side("minijax", minijax, None).saved_residuals(mine, C, XS)) == \
        ["f32[2,2,2]", "f32[2,2]"]


def test_vmap_of_grad_matches_jax():
    mine = _checkpointed(minijax, "named_with_xs_reversed", "save_only_these_names")
    theirs = _checkpointed(jax, "named_with_xs_reversed", "save_only_these_names")
    cs = np.stack([C, C * 2.0])
    assert_trees_match(minijax.vmap(minijax.grad(mine), (0, None))(cs, XS),
                       jax.vmap(jax.grad(theirs), (0, None))(cs, XS), rtol=1e-5)


def test_linearize_twice_gives_the_same_tangents():
    # The staged scan carries primal values beside tangents; its linear part alone is
    # transposed (scan's transpose rule splits the primal carries off first).
    mine = _checkpointed(minijax, "carry_dot", "dots_saveable")
    theirs = _checkpointed(jax, "carry_dot", "dots_saveable")
    _, f_jvp = minijax.linearize(lambda c: mine(c, XS), C)
    _, j_jvp = jax.linearize(lambda c: theirs(c, XS), C)
    assert_trees_match(f_jvp(C), j_jvp(C), rtol=1e-5)
    assert_trees_match(f_jvp(C * 3.0), j_jvp(C * 3.0), rtol=1e-5)
