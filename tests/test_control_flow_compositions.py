"""Control flow under compositions of transformations, the support table from the
study notes, residual growth of grad-of-scan, and the passes as IR -> IR functions."""
import jax
import numpy as np
import pytest

import minijax
from minijax import lax
from minijax.testing import check_jaxpr
from minijax.transforms import (jvp_jaxpr, partial_eval_jaxpr, transpose_jaxpr, dce_jaxpr,
                                vmap_jaxpr)
from tests.control_flow_helpers import MJ, JX, randn, assert_close


def scan_loss(ns):
    def f(w, xs):
        def body(h, x):
            h = ns.jnp.tanh(w * h + x)
            return h, h * h
        h, ys = ns.lax.scan(body, ns.jnp.ones_like(w), xs)
        return ns.jnp.sum(h) + ns.jnp.sum(ys)
    return f


def cond_loss(ns):
    def f(x, p):
        return ns.lax.cond(p > 0, lambda v: ns.jnp.sum(ns.jnp.sin(v) * v),
                           lambda v: ns.jnp.sum(v ** 3), x)
    return f


COMPOSITIONS = {
    "grad_of_vmap_of_scan": lambda ns: lambda w, xs: ns.jnp.sum(
        ns.jax.vmap(scan_loss(ns), in_axes=(0, None))(w, xs)),
    "vmap_of_grad_of_cond": lambda ns: lambda x, p: ns.jnp.sum(
        ns.jax.vmap(ns.jax.grad(cond_loss(ns)))(x, p)),
    "grad_of_grad_of_cond": lambda ns: lambda x, p: ns.jax.grad(
        lambda y: ns.jax.grad(cond_loss(ns))(y * x, p).sum())(x[0]),
    "jvp_of_grad_of_scan": lambda ns: lambda w, xs: ns.jax.jvp(
        lambda v: ns.jax.grad(scan_loss(ns))(v, xs), (w,), (ns.jnp.ones_like(w),))[1].sum(),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_compositions_match_jax(name):
    make = COMPOSITIONS[name]
    if "scan" in name:
        args = (randn(2, 3) * 0.5, randn(4, 3))
    else:
        args = (randn(2, 3), np.array([1.0, -1.0], np.float32))
    if name == "grad_of_grad_of_cond":
        args = (randn(3), np.float32(1.0))
    # the outer grad (w.r.t. the first input) of each composition, under jit
    ours = minijax.jit(minijax.grad(make(MJ)))(*args)
    theirs = jax.jit(jax.grad(make(JX)))(*args)
    assert_close(ours, theirs, tol=1e-4)
    check_jaxpr(minijax.make_jaxpr(minijax.grad(make(MJ)))(*args))


def test_eager_grad_of_scan_and_closure_over_a_traced_value():
    def make(ns):
        def f(w, xs):
            scale = ns.jnp.sum(w)          # closed over by the body: a traced value
            return ns.lax.scan(lambda c, x: (c * scale + x, None), w, xs)[0].sum()
        return f
    args = (randn(3) * 0.3, randn(5, 3))
    assert_close(minijax.grad(make(MJ))(*args), jax.grad(make(JX))(*args), tol=1e-5)
    ws = randn(2, 3) * 0.3
    assert_close(minijax.vmap(minijax.grad(make(MJ)), in_axes=(0, None))(ws, args[1]),
                 jax.vmap(jax.grad(make(JX)), in_axes=(0, None))(ws, args[1]), tol=1e-5)


# -- the study notes' support table ----------------------------------------------------------

def _python_if(ns, x):
    return x * 2.0 if x > 0 else -x


def _python_for(ns, x):
    for _ in range(3):
        x = x * ns.jnp.cos(x)
    return x


def _python_while(ns, x):
    i = 0
    while i < 3:                       # argument-independent condition: unrolls
        x, i = x * ns.jnp.cos(x), i + 1
    return x


SUPPORT_TABLE = {      # construct: (works under jit, under grad (reverse), under jvp)
    "if": (_python_if, (False, True, True)),
    "for": (_python_for, (True, True, True)),
    "while": (_python_while, (True, True, True)),
    "lax.cond": (lambda ns, x: ns.lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x),
                 (True, True, True)),
    "lax.while_loop": (lambda ns, x: ns.lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x),
                       (True, False, True)),
    # bounds traced by jit: a while_loop
    "lax.fori_loop": (lambda ns, x: ns.jax.jit(lambda v, n: ns.lax.fori_loop(
        0, n, lambda i, u: u * 2.0, v))(x, 3), (True, False, True)),
    "lax.fori_loop (static bounds)": (lambda ns, x: ns.lax.fori_loop(0, 3, lambda i, v: v * 2.0, x),
                                      (True, True, True)),
    "lax.scan": (lambda ns, x: ns.lax.scan(lambda c, _: (c * 2.0, None), x, None, length=3)[0],
                 (True, True, True)),
}


def _works(call) -> bool:
    try:
        call()
        return True
    except (TypeError, jax.errors.JAXTypeError, jax.errors.ConcretizationTypeError,
            minijax.MinijaxError, ValueError):
        return False


@pytest.mark.parametrize("construct", sorted(SUPPORT_TABLE))
def test_support_table(construct):
    fun, expected = SUPPORT_TABLE[construct]
    x = np.float32(1.5)
    for ns in (MJ, JX):
        f = lambda v, ns=ns: fun(ns, v)   # noqa: E731
        got = (_works(lambda: ns.jax.jit(f)(x)),
               _works(lambda: ns.jax.grad(f)(x)),
               _works(lambda: ns.jax.jvp(f, (x,), (np.float32(1.0),))))
        assert got == expected, (ns.name, construct, got)


# -- residuals: grad of a scan of length n keeps O(n) of them --------------------------------

def test_grad_of_scan_saves_residuals_linear_in_length():
    from minijax.transforms.linearize import linearize_flat

    def residual_elements(n):
        f = scan_loss(MJ)
        lin = linearize_flat(lambda w: [f(w, np.ones((n, 4), np.float32))],
                             [np.ones(4, np.float32) * 0.1])
        return sum(int(np.prod(np.shape(c))) for c in lin.linear_jaxpr.consts)
    sizes = [residual_elements(n) for n in (10, 20, 30)]
    assert sizes[1] - sizes[0] == sizes[2] - sizes[1] > 0      # exactly linear growth
    # per iteration: a few f32[4] values (tanh's derivative, the carry), no more
    assert (sizes[1] - sizes[0]) // 10 <= 3 * 4


# -- the passes as IR -> IR functions -----------------------------------------------------------

def test_passes_on_a_jaxpr_with_a_scan_verify_and_round_trip():
    closed = minijax.make_jaxpr(scan_loss(MJ))(randn(3), randn(5, 3))
    check_jaxpr(closed)
    jvp = check_jaxpr(jvp_jaxpr(closed))
    split = partial_eval_jaxpr(jvp, [False, False, True, False])
    check_jaxpr(split.known_jaxpr)
    check_jaxpr(split.staged_jaxpr)
    assert "scan[" in str(split.known_jaxpr) and "scan[" in str(split.staged_jaxpr)
    n_res = split.num_residuals
    staged = split.staged_jaxpr
    backward = transpose_jaxpr(staged, [False] * n_res + [True] * (len(staged.jaxpr.invars) - n_res))
    check_jaxpr(backward)
    assert "reverse=True" in str(backward)
    batched = vmap_jaxpr(closed, [0, None], 2)
    check_jaxpr(batched.jaxpr)


def test_dce_prunes_inside_scan_and_cond():
    def f(x, xs):
        def body(c, x):
            a, b = c
            return (a + x, b * jnp_sin(b)), a * 2.0
        (a, b), ys = lax.scan(body, (x, x), xs)
        out = lax.cond(x.sum() > 0, lambda v: (v[0], v[1] * 3.0), lambda v: (v[0], v[1]), (a, b))
        return out[0], ys
    jnp_sin = minijax.numpy.sin
    closed = minijax.make_jaxpr(f)(randn(3), randn(4, 3))
    pruned = dce_jaxpr(closed, [True, False]).jaxpr
    check_jaxpr(pruned)
    text = str(pruned)
    assert "sin" not in text and "mul" not in text.split("cond[")[-1]
    # the unused carry `b` is gone from the scan
    scan_eqn = next(e for e in pruned.jaxpr.eqns if e.primitive.name == "scan")
    assert scan_eqn.params["num_carry"] == 1


def test_nested_control_flow_prints_nested_and_round_trips():
    xs = randn(3, 2)

    def f(x):
        def outer(c, xi):
            inner = lax.fori_loop(0, 2, lambda i, v: lax.cond(v.sum() > 0, lambda u: u * 0.5,
                                                             lambda u: u + 1.0, v), c + xi)
            return inner, lax.switch(1, [lambda: 0.0, lambda: inner.sum()])
        return lax.scan(outer, x, xs)
    closed = minijax.make_jaxpr(f)(randn(2))
    check_jaxpr(closed)
    text = str(closed)
    assert text.count("{ lambda") >= 5 and "branches=" in text
    check_jaxpr(minijax.make_jaxpr(minijax.grad(lambda x: f(x)[0].sum()))(randn(2)))
    check_jaxpr(minijax.make_jaxpr(minijax.vmap(f))(randn(3, 2)))
    assert_close(minijax.jit(f)(np.ones(2, np.float32)), f(np.ones(2, np.float32)))


def test_eager_cond_with_a_concrete_predicate_still_traces_both_branches():
    seen = []
    lax.cond(True, lambda x: seen.append("t") or x, lambda x: seen.append("f") or x,
             np.float32(1))
    assert sorted(seen) == ["f", "t"]


def test_dce_prunes_unused_while_carries():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0, jnp_sin(c[2])),
                              (0, x, x))
    jnp_sin = minijax.numpy.sin
    closed = minijax.make_jaxpr(f)(np.float32(1))
    pruned = dce_jaxpr(closed, [False, True, False]).jaxpr
    check_jaxpr(pruned)
    loop = pruned.jaxpr.eqns[0]
    assert len(loop.outputs) == 2 and "sin" not in str(pruned)   # the counter stays
    assert_close(minijax.jit(lambda x: f(x)[1])(np.float32(1)), np.float32(32.0))
