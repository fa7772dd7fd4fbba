"""Derivatives of a `cond`/`switch` taken per member, with collectives in its branches.

Under `vmap(..., axis_name='i')` a branch's collective combines the value every member
computes in that branch; each member keeps its own branch's result
(docs/named_axes.md, "A cond taken per member, differentiated"). The oracle of each
case is written by hand, unrolled over the members with the collective summed (or
gathered, or permuted) explicitly, and differentiated by JAX *as an ordinary program*
(no vmap, no collective). minijax's `vmap` must give its values, and its derivatives
inside the vmap (`grad`, `jvp`, `vjp`, `linearize`, `jit(grad)`, `value_and_grad`)
and outside it (`grad`, `jvp` of the vmapped function). Central differences in float64
check the oracle itself. JAX's own derivatives differ (registry entry
"vmap_cond_per_member_collective_derivatives", pinned by
`test_jax_derivatives_differ_from_its_values`). Last, the same on 4 host devices: grad
of a `shard_map` whose devices take different branches.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax import numpy as mnp
from tests.ad_helpers import assert_close

N = 4                                            # members of axis 'i'
TOL = 2e-4


# -- the cases: (program written against lax/numpy, its hand-unrolled oracle, input) -----

def _log_psum(lax, np_):
    # branch 0 divides by the psum's value when differentiated (d log s = ds / s)
    return lambda x: lax.cond(x > 0, lambda v: np_.log(lax.psum(v * v, "i")) * v,
                              lambda v: v * v, x)


def _log_psum_oracle(x, np_=jnp):
    s = (x * x).sum()                            # every member's branch-0 value
    return np_.where(x > 0, np_.log(s) * x, x * x)


def _sqrt_domain(lax, np_):
    # the members that take branch 1 have x < 0: their (thrown away) branch-0 value
    # sqrt(x) is NaN, but only their own result reads it
    return lambda x: lax.cond(x > 0, lambda v: np_.sqrt(v) * lax.psum(v, "i"),
                              lambda v: 2 * v, x)


def _sqrt_domain_oracle(x, np_=jnp):
    s = x.sum()                                  # only the takers compute a sqrt
    return np_.where(x > 0, np_.sqrt(np_.where(x > 0, x, 1.0)) * s, 2 * x)


def _chained(lax, np_):
    # a member's value after one collective feeds a second one
    return lambda x: lax.cond(x > 0, lambda v: lax.psum(v * lax.psum(v * v, "i"), "i") * v,
                              lambda v: v + 1.0, x)


def _chained_oracle(x, np_=jnp):
    s2 = (x * (x * x).sum()).sum()
    return np_.where(x > 0, s2 * x, x + 1.0)


CYCLE = [(k, (k + 1) % N) for k in range(N)]


def _switch(lax, np_):
    # f32[2] per member; members 0 and 3 take branch 0, member 1 branch 1, member 2
    # branch 2; branch 2 has no collective
    def f(v):
        index = lax.axis_index("i") % 3
        return lax.switch(index, [
            lambda v: v * lax.pmean(v, "i") + lax.all_gather(v, "i")[1]
            + np_.sin(lax.ppermute(v, "i", CYCLE)) * v,
            lambda v: np_.tanh(lax.psum(v * v, "i")) / v,
            lambda v: v * v * v], v)
    return f


def _switch_oracle(x, np_=jnp):
    mean, gathered = x.mean(0), x                # over every member, as the branch does
    previous = np_.roll(x, 1, axis=0)            # ppermute along CYCLE
    total = (x * x).sum(0)
    rows = []
    for k in range(N):
        v = x[k]
        rows.append([v * mean + gathered[1] + np_.sin(previous[k]) * v,
                     np_.tanh(total) / v, v * v * v][k % 3])
    return np_.stack(rows)


rng = np.random.default_rng(19)
CASES = {
    "log_psum": (_log_psum, _log_psum_oracle, np.array([0.5, -1.0, 2.0, -0.3], np.float32)),
    "sqrt_domain": (_sqrt_domain, _sqrt_domain_oracle,
                    np.array([0.5, -1.0, 2.0, -0.3], np.float32)),
    "chained": (_chained, _chained_oracle, np.array([0.5, -0.7, 0.9, 0.2], np.float32)),
    "switch": (_switch, _switch_oracle,
               (0.5 + rng.random((N, 2))).astype(np.float32)),
}


def _ours(case):
    return CASES[case][0](mlax, mnp)


def _loss_of(f):
    return lambda x: (f(x) ** 2).sum()


def _oracle_loss(oracle):
    # the loss inside the vmap is per member; grad inside the vmap is the gradient of
    # the members' losses summed (psum transposes to psum)
    return lambda x: (oracle(x) ** 2).sum()


# The oracle's values and derivatives: one jax.jit program each, computed once per case
# and shared by the tests below (eagerly, JAX compiles a program per distinct operation
# of the unrolled oracle).
@functools.lru_cache(maxsize=None)
def _oracle_values(case):
    _, oracle, x = CASES[case]
    return jax.jit(oracle)(x)


@functools.lru_cache(maxsize=None)
def _oracle_grad(case):
    _, oracle, x = CASES[case]
    return jax.jit(jax.grad(_oracle_loss(oracle)))(x)


def _tangent(x):
    return np.cos(3 * x).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _oracle_jvp(case):
    _, oracle, x = CASES[case]
    return jax.jit(lambda x, t: jax.jvp(oracle, (x,), (t,)))(x, _tangent(x))


# -- the oracle is right: central differences in float64 ---------------------------------

def _numeric_grad(fun, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        grad[k] = (fun(x + step) - fun(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_oracle_matches_finite_differences(case):
    _, oracle, x = CASES[case]
    numeric = _numeric_grad(lambda v: float((oracle(v, np) ** 2).sum()), x)
    analytic = _oracle_grad(case)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-4)


# -- values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_values(case):
    make, oracle, x = CASES[case]
    want = _oracle_values(case)
    assert_close(minijax.vmap(_ours(case), axis_name="i")(x), want, tol=TOL)
    assert_close(minijax.jit(minijax.vmap(_ours(case), axis_name="i"))(x), want, tol=TOL)
    # JAX agrees on the values
    assert_close(jax.jit(jax.vmap(make(jax.lax, jnp), axis_name="i"))(x), want, tol=TOL)


# -- derivatives inside the vmap ----------------------------------------------------------------

def _inside(transform, case):
    return minijax.vmap(transform(_ours(case)), axis_name="i")


@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_inside(case):
    x = CASES[case][2]
    want = _oracle_grad(case)
    got = _inside(lambda f: minijax.grad(_loss_of(f)), case)(x)
    assert np.isfinite(np.asarray(got)).all()
    assert_close(got, want, tol=TOL)


@pytest.mark.parametrize("case", ["log_psum", "switch"])
def test_jit_grad_and_value_and_grad_inside(case):
    x = CASES[case][2]
    want = _oracle_grad(case)
    got = _inside(lambda f: minijax.jit(minijax.grad(_loss_of(f))), case)(x)
    assert_close(got, want, tol=TOL)
    got = minijax.jit(_inside(lambda f: minijax.grad(_loss_of(f)), case))(x)
    assert_close(got, want, tol=TOL)
    values, grads = _inside(lambda f: minijax.value_and_grad(_loss_of(f)), case)(x)
    assert_close(values, (_oracle_values(case) ** 2).reshape(N, -1).sum(1), tol=TOL)
    assert_close(grads, want, tol=TOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_jvp_and_linearize_inside(case):
    x = CASES[case][2]
    t = _tangent(x)
    want_out, want_tangent = _oracle_jvp(case)
    out, tangent = minijax.vmap(lambda x, t: minijax.jvp(_ours(case), (x,), (t,)),
                                axis_name="i")(x, t)
    assert_close(out, want_out, tol=TOL)
    assert_close(tangent, want_tangent, tol=TOL)
    got = minijax.vmap(lambda x, t: minijax.linearize(_ours(case), x)[1](t),
                       axis_name="i")(x, t)
    assert_close(got, want_tangent, tol=TOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_vjp_inside(case):
    _, oracle, x = CASES[case]
    ct = np.sin(2 * x + 1).astype(np.float32)
    want = jax.jit(lambda x, ct: jax.vjp(oracle, x)[1](ct)[0])(x, ct)
    got = minijax.vmap(lambda x, c: minijax.vjp(_ours(case), x)[1](c)[0], axis_name="i")(x, ct)
    assert_close(got, want, tol=TOL)


# -- derivatives outside the vmap, and on top of it ---------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_and_jvp_outside(case):
    x = CASES[case][2]
    mapped = minijax.vmap(_ours(case), axis_name="i")
    got = minijax.grad(lambda x: (mapped(x) ** 2).sum())(x)
    assert np.isfinite(np.asarray(got)).all()
    assert_close(got, _oracle_grad(case), tol=TOL)
    t = _tangent(x)
    assert_close(minijax.jvp(mapped, (x,), (t,)), _oracle_jvp(case), tol=TOL)


def test_vmap_of_grad_inside_a_named_vmap():
    # an unnamed vmap on top: two independent groups of members
    _, oracle, x = CASES["log_psum"]
    xs = np.stack([x, x[::-1] * 0.5])
    grad_inside = minijax.vmap(minijax.grad(_loss_of(_ours("log_psum"))), axis_name="i")
    oracle_grad = jax.jit(jax.grad(_oracle_loss(oracle)))
    want = np.stack([oracle_grad(row) for row in xs])
    assert_close(minijax.vmap(grad_inside)(xs), want, tol=TOL)


def test_branch_nobody_takes_spoils_nothing():
    # every member takes branch 1, so branch 0 (sqrt of negative operands feeding a
    # collective) must not turn the derivative into NaN, inside or outside the vmap
    f = lambda x: mlax.cond(x > 0, lambda v: mlax.psum(mnp.sqrt(v), "i") * v,
                            lambda v: v * mlax.psum(v, "i"), x)
    x = -np.array([0.5, 1.0, 2.0, 0.3], np.float32)
    want = np.full(N, 2 * x.sum(), np.float32)   # d/dx_k of sum_j x_j * sum_i x_i
    inside = minijax.vmap(minijax.grad(f), axis_name="i")(x)
    assert_close(inside, want, tol=TOL)
    outside = minijax.grad(lambda x: minijax.vmap(f, axis_name="i")(x).sum())(x)
    assert_close(outside, want, tol=TOL)


def test_same_branch_for_every_member_keeps_a_plain_cond():
    # a predicate the members share: the jvp's gate of the branch nobody takes is a
    # cond whose index is the same for every member, so it stays one cond
    f = lambda x: mlax.cond(mlax.psum(x, "i") > 0, lambda v: mlax.pmean(v, "i") * v,
                            lambda v: -v, x)
    x = np.array([0.5, 1.0, 2.0, -0.3], np.float32)
    got = minijax.vmap(minijax.grad(f), axis_name="i")(x)
    want = jax.jit(jax.vmap(jax.grad(lambda v: jax.lax.cond(jax.lax.psum(v, "i") > 0,
                                                            lambda v: jax.lax.pmean(v, "i") * v,
                                                            lambda v: -v, v)), axis_name="i"))(x)
    assert_close(got, want, tol=TOL)
    text = str(minijax.make_jaxpr(minijax.vmap(minijax.grad(f), axis_name="i"))(x))
    assert "pmax" not in text                   # the vmap rewrote every collective
    assert "cond[" in text


# -- where JAX differs (registry entry "vmap_cond_per_member_collective_derivatives") ------------

def test_jax_derivatives_differ_from_its_values():
    make, oracle, x = CASES["log_psum"]
    theirs = make(jax.lax, jnp)
    want = np.asarray(_oracle_grad("log_psum"))
    outside = np.asarray(jax.grad(lambda x: (jax.vmap(theirs, axis_name="i")(x) ** 2).sum())(x))
    inside = np.asarray(jax.vmap(jax.grad(lambda v: theirs(v) ** 2), axis_name="i")(x))
    jax_differs = (not np.allclose(outside, want, atol=1e-3)
                   and not np.allclose(inside, want, atol=1e-3, equal_nan=False))
    if not jax_differs:
        from tests.test_divergences import seen_on_this_jax
        if seen_on_this_jax("vmap_cond_per_member_collective_derivatives"):
            pytest.fail("JAX now differentiates this: retire the registry entry "
                        "vmap_cond_per_member_collective_derivatives")
    # JAX's jvp inside the vmap is the derivative of the values, as minijax's is
    t = np.ones_like(x)
    jvp_inside = jax.vmap(lambda x, t: jax.jvp(theirs, (x,), (t,))[1], axis_name="i")(x, t)
    assert_close(jvp_inside, jax.jit(lambda x, t: jax.jvp(oracle, (x,), (t,))[1])(x, t),
                 tol=TOL)
    # minijax: the oracle's gradient either way
    ours = _ours("log_psum")
    assert_close(minijax.grad(lambda x: (minijax.vmap(ours, axis_name="i")(x) ** 2).sum())(x),
                 want, tol=TOL)
    assert_close(minijax.vmap(minijax.grad(lambda v: ours(v) ** 2), axis_name="i")(x),
                 want, tol=TOL)


def test_second_derivative_inside():
    # grad of grad inside the vmap: the row sums of the Hessian of the members' summed
    # results (each grad transposes psum to psum)
    _, oracle, x = CASES["log_psum"]
    f = _ours("log_psum")
    got = minijax.vmap(minijax.grad(minijax.grad(f)), axis_name="i")(x)
    want = jax.jit(jax.hessian(lambda x: oracle(x).sum()))(x).sum(0)
    assert_close(got, want, tol=1e-3)


# -- on devices: a shard_map whose devices take different branches -------------------------

_ON_DEVICES = '''
import os
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=4")
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
import minijax
from minijax import lax as mlax, numpy as mnp
mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
x = np.array([0.5, -1.0, 2.0, -0.3], np.float32)
def body(v):
    return mlax.cond(v[0] > 0, lambda v: mnp.log(mlax.psum(v * v, "i")) * v,
                     lambda v: v * v, v)
f = minijax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
oracle = lambda x: jnp.where(x > 0, jnp.log((x * x).sum()) * x, x * x)
want = jax.grad(lambda x: (oracle(x) ** 2).sum())(x)
loss = lambda x: (f(x) ** 2).sum()
np.testing.assert_allclose(minijax.grad(loss)(x), want, rtol=2e-4, atol=2e-4)
np.testing.assert_allclose(minijax.jit(minijax.grad(loss))(x), want, rtol=2e-4, atol=2e-4)
inside = minijax.shard_map(minijax.grad(lambda v: (body(v) ** 2).sum()), mesh=mesh,
                           in_specs=P("i"), out_specs=P("i"))
np.testing.assert_allclose(minijax.jit(inside)(x), want, rtol=2e-4, atol=2e-4)
print("ok cond per device")
'''


def test_grad_of_shard_map_whose_devices_take_different_branches():
    # The derivative runs every branch some device takes on every device (a cond on a
    # pmax), so each device's collectives meet all the others', without the forward
    # cond's branches diverging. Four host devices, in a subprocess (the device count
    # is fixed when JAX starts).
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, JAX_PLATFORMS="cpu", MINIJAX_ENABLE_CHECKS="1",
               PYTHONPATH=str(Path(__file__).parent.parent))
    result = subprocess.run([sys.executable, "-c", _ON_DEVICES], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "ok cond per device" in result.stdout
