"""Collectives on a vmap's named axis inside control flow, against JAX.

Each control-flow form (cond, switch, scan, fori_loop, while_loop, checkpoint, jit)
runs one body that uses *every* collective at once (`_every_collective`), so each
form costs one compile per transformation. The body is written against a `lax`
module and a library (`minijax`/`jax`), so the same code runs through both libraries'
`vmap(axis_name=...)`: eagerly, under `jit`, with another `vmap` on top (named or not),
with `jvp`, `linearize` and `grad` inside and outside the vmap. Nested names (a vmap of a
named vmap, collectives over both names), custom_jvp/custom_vjp functions using
collectives, and the one refusal left (a branch or loop that must run the examples
one at a time) are at the end.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.transforms.batching import BatchingError
from tests.ad_helpers import assert_close

N = 4                                           # members of axis 'i'
rng = np.random.default_rng(1)
X = (0.3 * rng.standard_normal((N, 4))).astype(np.float32)   # f32[4] per member
CYCLE = [(k, (k + 1) % N) for k in range(N)]


def _every_collective(lax, x, smooth=True):
    """f32[4] -> f32[4] through each collective over 'i' (pmax/pmin only if not
    `smooth`: JAX defines no derivative for them)."""
    y = lax.psum(x, "i") * x + lax.pmean(x * x, "i")
    y = y + lax.all_gather(x, "i")[1] * lax.axis_index("i")
    y = y + lax.psum_scatter(x, "i") + lax.ppermute(x, "i", CYCLE) * x
    y = y + lax.all_to_all(x, "i", 0, 0, tiled=True) / lax.axis_size("i")
    if not smooth:
        y = y + lax.pmax(x, "i") - lax.pmin(x, "i")
    return 0.3 * y


def _cond(lax, lib, smooth):
    # the predicate is the same for every member: one cond of batched branches
    return lambda x: lax.cond(True, lambda v: _every_collective(lax, v, smooth),
                              lambda v: 2 * v, x)


def _switch_per_member(lax, lib, smooth):
    # members take different branches: every branch runs on the whole batch
    def f(x):
        index = lax.axis_index("i") % 3
        return lax.switch(index, [lambda v: _every_collective(lax, v, smooth),
                                  lambda v: lax.psum(v, "i") * v, lambda v: v + 1.0], x)
    return f


def _scan(lax, lib, smooth):
    # the carry starts the same for every member and is batched by the body
    def f(x):
        def step(carry, row):
            new = _every_collective(lax, carry + row, smooth)
            return new, lax.psum(new.sum(), "i")
        last, sums = lax.scan(step, lib.numpy.zeros(4, np.float32), lib.numpy.stack([x, 2 * x]))
        return last + sums.sum()
    return f


def _fori(lax, lib, smooth):
    return lambda x: lax.fori_loop(0, 2, lambda k, c: _every_collective(lax, c, smooth), x)


def _while_shared_predicate(lax, lib, smooth):
    # pmax makes the predicate the same for every member: one loop, batched carries
    def f(x):
        def cond(c):
            return lax.pmax(c[1], "i") < 3
        return lax.while_loop(cond, lambda c: (_every_collective(lax, c[0], smooth),
                                               c[1] + 1 + lax.axis_index("i")), (x, 0))[0]
    return f


def _while_per_member(lax, lib, smooth):
    # members stop at different steps: the loop runs while any member still runs
    def f(x):
        def cond(c):
            return c[1] < 1 + lax.axis_index("i") % 2
        return lax.while_loop(cond, lambda c: (_every_collective(lax, c[0], smooth),
                                               c[1] + 1), (x, 0))[0]
    return f


def _checkpoint(lax, lib, smooth):
    return lambda x: lib.checkpoint(lambda v: _every_collective(lax, v, smooth))(x)


def _jit(lax, lib, smooth):
    return lambda x: lib.jit(lambda v: _every_collective(lax, v, smooth))(x)


FORMS = {f.__name__[1:]: f for f in (_cond, _switch_per_member, _scan, _fori,
                                     _while_shared_predicate, _while_per_member,
                                     _checkpoint, _jit)}
NO_REVERSE_MODE = {"while_shared_predicate", "while_per_member"}   # as in JAX
# Branches that members take differently: JAX's derivatives of these, but for its jvp
# inside the vmap, are not those of its values (registry entry
# "vmap_cond_per_member_collective_derivatives"; tests/test_collectives_cond_ad.py), so
# minijax's are compared with the derivative JAX's jvp inside the vmap gives.
PER_MEMBER_BRANCHES = {"switch_per_member"}


def _both(form, smooth=True):
    make = FORMS[form]
    return make(mlax, minijax, smooth), make(jax.lax, jax, smooth)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_values_eager_jit_and_vmap_on_top(form):
    ours, theirs = _both(form, smooth=False)
    # JAX's side under jax.jit (the comparisons have a tolerance): eagerly each of its
    # operations around the loop or branch is a compile of its own
    want = jax.jit(jax.vmap(theirs, axis_name="i"))(X)
    assert_close(minijax.vmap(ours, axis_name="i")(X), want)
    assert_close(minijax.jit(minijax.vmap(ours, axis_name="i"))(X), want)
    stacked = np.stack([X, -X])
    assert_close(minijax.vmap(minijax.vmap(ours, axis_name="i"))(stacked),
                 jax.jit(jax.vmap(jax.vmap(theirs, axis_name="i")))(stacked))
    # the inner vmap names no axis, so the bodies' collectives are the outer one's
    assert_close(minijax.vmap(minijax.vmap(ours), axis_name="i", in_axes=1)(stacked),
                 jax.jit(jax.vmap(jax.vmap(theirs), axis_name="i", in_axes=1))(stacked))


def _loss(f):
    return lambda x: (f(x) ** 2).sum()


def _jvp_inside(f, x, t):
    return jax.jit(jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,))[1], axis_name="i"))(x, t)


def _grad_from_jvps(f, x):
    """grad of `_loss(vmap(f))` assembled from JAX's jvp inside the vmap, one basis
    tangent at a time (for forms where JAX's own grad differs)."""
    basis = np.eye(x.size, dtype=x.dtype).reshape(x.size, *x.shape)

    def grad(x):
        columns = jax.vmap(lambda t: _jvp_inside(f, x, t))(basis)
        out = jax.vmap(f, axis_name="i")(x)
        return (2 * out * columns).reshape(x.size, -1).sum(1).reshape(x.shape)
    return jax.jit(grad)(x)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_derivatives(form):
    ours, theirs = _both(form)
    t = np.cos(X)
    per_member = form in PER_MEMBER_BRANCHES
    # JAX's side under jax.jit, as in test_values_eager_jit_and_vmap_on_top
    want = (jax.jit(jax.vmap(theirs, axis_name="i"))(X), _jvp_inside(theirs, X, t)) \
        if per_member else jax.jit(lambda x, t: jax.jvp(
            jax.vmap(theirs, axis_name="i"), (x,), (t,)))(X, t)
    assert_close(minijax.jvp(minijax.vmap(ours, axis_name="i"), (X,), (t,)), want, tol=1e-4)
    # jvp inside: the jvp of the loop or branch is batched, tangents in its collectives
    assert_close(
        minijax.vmap(lambda x, t: minijax.jvp(ours, (x,), (t,))[1], axis_name="i")(X, t),
        _jvp_inside(theirs, X, t), tol=1e-4)
    # the linear loop or branch that linearize stages holds the collectives
    got = minijax.vmap(lambda x: minijax.linearize(ours, x)[1](2 * x), axis_name="i")(X)
    want = _jvp_inside(theirs, X, 2 * X) if per_member else \
        jax.jit(jax.vmap(lambda x: jax.linearize(theirs, x)[1](2 * x), axis_name="i"))(X)
    assert_close(got, want, tol=1e-4)
    if form in NO_REVERSE_MODE:
        return
    outside = minijax.grad(_loss(minijax.vmap(ours, axis_name="i")))
    want = _grad_from_jvps(theirs, X) if per_member else \
        jax.jit(jax.grad(_loss(jax.vmap(theirs, axis_name="i"))))(X)
    assert_close(outside(X), want, tol=1e-4)
    # psum's transpose (a psum) etc. now sit inside the transposed loop or branch
    inside = minijax.vmap(minijax.grad(_loss(ours)), axis_name="i")
    if not per_member:
        want = jax.jit(jax.vmap(jax.grad(_loss(theirs)), axis_name="i"))(X)
    assert_close(inside(X), want, tol=1e-4)


def test_loop_batched_by_its_predicate_alone():
    # nothing is batched going in: axis_index in cond_fun makes the predicate, and so
    # the loop and every carry, differ per member (weak types kept, as in JAX)
    def make(lax):
        return lambda: lax.while_loop(lambda c: c[0] < lax.axis_index("i"),
                                      lambda c: (c[0] + 1, c[1] * 2), (0, 1.0))
    got = minijax.vmap(make(mlax), axis_name="i", axis_size=N)()
    want = jax.vmap(make(jax.lax), axis_name="i", axis_size=N)()
    assert_close(got, want)
    assert [g.weak_type for g in got] == [w.weak_type for w in want]


def test_no_collective_is_left_after_vmap():
    ours, _ = _both("scan")
    text = str(minijax.make_jaxpr(minijax.vmap(ours, axis_name="i"))(X))
    assert "scan[" in text and "psum" not in text and "all_gather" not in text


def _nested(lax, lib):
    """Two names: 'i' (outer vmap) and 'j' (inner); collectives over each and both."""
    def f(x):
        def step(carry, _):
            both = lax.psum(carry, ("i", "j"))
            branch = lax.cond(True, lambda v: lax.pmean(v, "i") * lax.axis_index("j"),
                              lambda v: v, carry)
            return 0.2 * (both + branch + lax.all_gather(carry, "j")[0] * carry), None
        return lax.scan(step, x, None, length=2)[0]
    return f


def test_nested_names():
    x = (0.5 * rng.standard_normal((2, 3, 4))).astype(np.float32)
    ours, theirs = _nested(mlax, minijax), _nested(jax.lax, jax)
    # JAX's side under jax.jit, as above
    want = jax.jit(jax.vmap(jax.vmap(theirs, axis_name="j"), axis_name="i"))(x)
    assert_close(minijax.vmap(minijax.vmap(ours, axis_name="j"), axis_name="i")(x), want)
    inside = minijax.vmap(minijax.vmap(minijax.grad(_loss(ours)), axis_name="j"), axis_name="i")
    assert_close(inside(x), jax.jit(jax.vmap(jax.vmap(jax.grad(_loss(theirs)), axis_name="j"),
                                             axis_name="i"))(x), tol=1e-4)
    outside = minijax.grad(_loss(minijax.vmap(minijax.vmap(ours, axis_name="j"),
                                              axis_name="i")))
    assert_close(outside(x), jax.jit(jax.grad(_loss(jax.vmap(jax.vmap(theirs, axis_name="j"),
                                                             axis_name="i"))))(x), tol=1e-4)


def _custom(lib):
    """A custom_jvp and a custom_vjp function whose bodies and rules use collectives."""
    lax = lib.lax

    @lib.custom_jvp
    def scaled(x):
        return lax.psum(x, "i") * x

    scaled.defjvp(lambda p, t: (scaled(p[0]), 2 * lax.psum(t[0], "i") * p[0]
                                + lax.psum(p[0], "i") * t[0]))

    @lib.custom_vjp
    def centred(x):
        return lax.pmean(x, "i") * x

    centred.defvjp(lambda x: (centred(x), x),
                   lambda r, ct: (3 * lax.psum(ct * r, "i") + ct * lax.pmean(r, "i"),))
    return lambda x: centred(scaled(x)) + lax.axis_index("i")


def test_custom_derivative_functions():
    ours, theirs = _custom(minijax), _custom(jax)
    assert_close(minijax.vmap(ours, axis_name="i")(X),
                 jax.jit(jax.vmap(theirs, axis_name="i"))(X))
    want = jax.jit(jax.vmap(jax.grad(_loss(theirs)), axis_name="i"))(X)
    assert_close(minijax.vmap(minijax.grad(_loss(ours)), axis_name="i")(X), want, tol=1e-4)
    # JAX itself cannot run this one (its bwd runs outside the axis: "unbound axis
    # name"); psum's transpose makes it the same as the grad inside, which it checks.
    outside = minijax.grad(_loss(minijax.vmap(ours, axis_name="i")))
    assert_close(outside(X), want, tol=1e-4)


def test_examples_one_at_a_time_cannot_serve_a_collective():
    # A branch that prints runs only for the members that take it (a scan over the
    # members), where a psum cannot see the other members.
    def f(x):
        def printing(v):
            minijax.debug.print("x={}", v)
            return mlax.psum(v, "i")
        return mlax.cond(x[0] > 0, printing, lambda v: v, x)
    with pytest.raises(BatchingError, match="one at a time.*collective over the vmap axis 'i'"):
        minijax.vmap(f, axis_name="i")(X)
