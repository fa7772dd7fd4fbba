"""Reverse mode against JAX: the vjp (transpose rules) of every primitive, each pass's
output verified, and grad / value_and_grad / jacobians composed to any order."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.transforms import (jvp_jaxpr, partial_eval_jaxpr, transpose_jaxpr, dce_jaxpr,
                                eval_jaxpr)
from tests.ad_helpers import OP_CASES, assert_close, case_id, randn, verify


def _random_like(tree):
    return jax.tree_util.tree_map(lambda x: randn(*np.shape(x)), tree)


@pytest.mark.parametrize("case", OP_CASES, ids=case_id)
def test_vjp_matches_jax(case):
    args = case.args()
    out, vjp_fun = minijax.vjp(lambda *a: case.fun(mlax, *a), *args)
    ct = _random_like(jax.eval_shape(lambda *a: case.fun(jax.lax, *a), *args))
    out_j, cts_j = _jax_vjp(case.fun, args, ct)
    assert_close(out, out_j, case.tol)
    assert_close(vjp_fun(ct), cts_j, case.tol)


def _jax_vjp(fun, args, ct):
    """JAX's output and cotangents as ONE jitted program (compared to a tolerance):
    eagerly JAX compiled a program per operation of the primitive's vjp."""
    def both(args, ct):
        out, pullback = jax.vjp(lambda *a: fun(jax.lax, *a), *args)
        return out, pullback(ct)
    return jax.jit(both)(args, ct)


def _all_stages(fun, args):
    """traced -> jvp -> (known, staged) -> transposed, each verified."""
    closed = verify(minijax.make_jaxpr(fun)(*args))
    jvp = verify(jvp_jaxpr(closed))
    n = len(closed.jaxpr.invars)
    split = partial_eval_jaxpr(jvp, [False] * n + [True] * n)
    verify(split.known_jaxpr)
    verify(split.staged_jaxpr)
    linear = [False] * split.num_residuals + [True] * n
    transposed = verify(transpose_jaxpr(split.staged_jaxpr, linear))
    verify(dce_jaxpr(split.staged_jaxpr).jaxpr)
    return closed, split, transposed


@pytest.mark.parametrize("case", OP_CASES[::4], ids=case_id)
def test_pass_pipeline_verifies_and_computes_the_vjp(case):
    args = case.args()
    closed, split, transposed = _all_stages(lambda *a: case.fun(mlax, *a), args)
    known_outs = eval_jaxpr(split.known_jaxpr.jaxpr, split.known_jaxpr.consts, list(args))
    n_primal_out = len(closed.jaxpr.outvars)
    residuals = known_outs[len(known_outs) - split.num_residuals:]
    out_j = jax.eval_shape(lambda *a: case.fun(jax.lax, *a), *args)
    ct = _random_like(out_j)
    cts = eval_jaxpr(transposed.jaxpr, transposed.consts,
                     residuals + jax.tree_util.tree_leaves(ct))
    assert_close(tuple(cts), _jax_vjp(case.fun, args, ct)[1], case.tol)
    assert n_primal_out == len(jax.tree_util.tree_leaves(out_j))


# -- compositions ------------------------------------------------------------------------------

def _mlp_loss(lax):
    def loss(params, batch):
        x, y = batch
        for layer in params:
            h = lax.dot_general(x, layer["w"], (((1,), (0,)), ((), ())))
            x = lax.tanh(lax.add(h, lax.broadcast_in_dim(layer["b"], h.shape, (1,))))
        d = lax.sub(x, y)
        return lax.div(lax.reduce_sum(lax.mul(d, d), (0, 1)), np.float32(d.shape[0]))
    return loss


PARAMS = [{"w": randn(4, 8), "b": randn(8)}, {"w": randn(8, 2), "b": randn(2)}]
BATCH = (randn(5, 4), randn(5, 2))


def test_grad_of_mlp_loss_with_pytree_params():
    assert_close(minijax.grad(_mlp_loss(mlax))(PARAMS, BATCH),
                 jax.jit(jax.grad(_mlp_loss(jax.lax)))(PARAMS, BATCH))


def test_grad_of_mlp_with_minijax_numpy():
    jnp = pytest.importorskip("minijax.numpy")
    if not all(hasattr(jnp, n) for n in ("tanh", "sum", "mean")):
        pytest.skip("minijax.numpy is not complete yet")
    import jax.numpy as jjnp

    def loss(np_, params, x, y):
        for layer in params:
            x = np_.tanh(x @ layer["w"] + layer["b"])
        return np_.mean((x - y) ** 2)
    assert_close(minijax.grad(lambda p, x, y: loss(jnp, p, x, y))(PARAMS, *BATCH),
                 jax.jit(jax.grad(lambda p, x, y: loss(jjnp, p, x, y)))(PARAMS, *BATCH), 1e-5)


def test_value_and_grad_argnums_tuple_and_has_aux():
    def f(lax, x, y, z):
        out = lax.mul(lax.sin(x), lax.reduce_sum(lax.mul(y, z), (0,)))
        return out, {"aux": lax.cos(x)}
    args = (np.float32(0.4), randn(3), randn(3))
    for argnums in (0, (0, 2), (2, 1), -1):
        ours = minijax.value_and_grad(lambda *a: f(mlax, *a), argnums, has_aux=True)(*args)
        theirs = jax.value_and_grad(lambda *a: f(jax.lax, *a), argnums, has_aux=True)(*args)
        assert_close(ours, theirs)
    ours = minijax.grad(lambda *a: f(mlax, *a), (1,), has_aux=True)(*args)
    theirs = jax.grad(lambda *a: f(jax.lax, *a), (1,), has_aux=True)(*args)
    assert_close(ours, theirs)


def test_third_order_derivatives():
    f = lambda lax, x: lax.mul(lax.sin(x), lax.exp(lax.mul(x, x)))
    x = np.float32(0.3)
    ours = minijax.grad(minijax.grad(minijax.grad(lambda x: f(mlax, x))))(x)
    theirs = jax.grad(jax.grad(jax.grad(lambda x: f(jax.lax, x))))(x)
    assert_close(ours, theirs, 1e-4)
    closed = verify(minijax.make_jaxpr(minijax.grad(minijax.grad(minijax.grad(
        lambda x: f(mlax, x)))))(x))
    assert closed.jaxpr.eqns


def test_jvp_of_grad_and_grad_of_jvp():
    f = lambda lax, x: lax.reduce_sum(lax.mul(lax.tanh(x), x), (0,))
    x, t = randn(3), randn(3)

    def both(api, lax):
        return (api.jvp(api.grad(lambda x: f(lax, x)), (x,), (t,)),
                api.grad(lambda x: api.jvp(lambda x: f(lax, x), (x,), (t,))[1])(x))
    assert_close(both(minijax, mlax), both(jax, jax.lax), 1e-5)


def test_jacobians_and_hessian():
    def f(lax, x, y):
        return {"a": lax.mul(lax.sin(x), y[0]), "b": lax.reduce_sum(lax.mul(x, x), (0,))}
    args = (randn(3), randn(2))
    g = lambda lax, x: lax.reduce_sum(lax.mul(lax.sin(x), lax.mul(x, x)), (0,))
    kinds = [(name, argnums) for name in ("jacfwd", "jacrev") for argnums in (0, (0, 1))]

    def jax_side(*args):   # one jitted program for all of JAX's (compared to a tolerance)
        return ([getattr(jax, name)(lambda *a: f(jax.lax, *a), argnums)(*args)
                 for name, argnums in kinds],
                jax.hessian(lambda x: g(jax.lax, x))(args[0]))
    jacobians, hessian = jax.jit(jax_side)(*args)
    for (name, argnums), theirs in zip(kinds, jacobians):
        ours = getattr(minijax, name)(lambda *a: f(mlax, *a), argnums)(*args)
        assert_close(ours, theirs)
    assert_close(minijax.hessian(lambda x: g(mlax, x))(args[0]), hessian, 1e-5)


def test_grad_of_jit_and_jit_of_grad():
    f = lambda lax, x: lax.reduce_sum(lax.mul(lax.sin(x), x), (0,))
    x = randn(4)
    expected = jax.jit(jax.grad(lambda x: f(jax.lax, x)))(x)   # JAX's side jitted throughout
    jitted = minijax.jit(lambda x: f(mlax, x))
    assert_close(minijax.grad(jitted)(x), expected)
    assert_close(minijax.jit(minijax.grad(lambda x: f(mlax, x)))(x), expected)
    jitted_j = jax.jit(lambda x: f(jax.lax, x))
    s = np.float32(0.7)
    assert_close(minijax.grad(minijax.grad(lambda s: mlax.sin(jitted(mlax.mul(x, s)))))(s),
                 jax.jit(jax.grad(jax.grad(lambda s: jax.lax.sin(jitted_j(x * s)))))(s), 1e-5)
    closed = verify(minijax.make_jaxpr(minijax.grad(jitted))(x))
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("jit") == 2   # fwd, bwd
    assert all(e.primitive.name == "jit" for e in closed.jaxpr.eqns
               if e.primitive.name not in ("broadcast_in_dim",))


def test_python_control_flow_under_grad():
    def f(lax, x):
        y = lax.mul(x, x)
        if y > 1.0:
            return lax.sin(y)
        return lax.cos(y)
    for x in (np.float32(0.5), np.float32(2.0)):
        assert_close(minijax.grad(lambda x: f(mlax, x))(x), jax.grad(lambda x: f(jax.lax, x))(x))


def test_stop_gradient():
    f = lambda lax, x: lax.mul(x, lax.stop_gradient(lax.mul(x, x)))
    x = np.float32(1.5)
    assert_close(minijax.grad(lambda x: f(mlax, x))(x), jax.grad(lambda x: f(jax.lax, x))(x))


def test_linearize_matches_jvp():
    f = lambda lax, x: lax.mul(lax.sin(x), x)
    x, t = randn(3), randn(3)
    out, f_jvp = minijax.linearize(lambda x: f(mlax, x), x)
    out_j, f_jvp_j = jax.linearize(lambda x: f(jax.lax, x), x)
    assert_close((out, f_jvp(t)), (out_j, f_jvp_j(t)))


def test_vjp_with_integer_inputs_gives_float0():
    f = lambda lax, x, n: lax.mul(x, lax.convert_element_type(n, np.float32))
    args = (np.float32(2), np.int32(3))
    _, vjp_fun = minijax.vjp(lambda *a: f(mlax, *a), *args)
    _, vjp_fun_j = jax.vjp(lambda *a: f(jax.lax, *a), *args)
    assert_close(vjp_fun(np.float32(1)), vjp_fun_j(np.float32(1)))


# -- errors --------------------------------------------------------------------------------------

def test_grad_errors():
    with pytest.raises(TypeError, match="scalar"):
        minijax.grad(lambda x: mlax.mul(x, 2.0))(randn(3))
    with pytest.raises(TypeError, match="int32"):
        minijax.grad(lambda x: mlax.mul(x, 2))(np.int32(1))
    with pytest.raises(TypeError, match="argnums"):
        minijax.grad(lambda x: x, argnums=3)(np.float32(1))
    with pytest.raises(TypeError, match="argnums"):
        minijax.grad(lambda x: x, argnums=1.5)(np.float32(1))
    with pytest.raises(TypeError, match="pair"):
        minijax.grad(lambda x: x, has_aux=True)(np.float32(1))
    with pytest.raises(ValueError, match="cotangent"):
        minijax.vjp(lambda x: x, np.float32(1))[1](randn(3))
    from minijax.ir.trace import MinijaxError
    with pytest.raises(MinijaxError):
        minijax.grad(lambda x: mlax.mul(x, 2.0))(randn(3))
    # jvp's tangents in another structure: JAX's TypeError; of another shape, its ValueError
    for lib in (minijax, jax):
        with pytest.raises(TypeError, match="tree structure"):
            lib.jvp(lambda x: x, (np.float32(1),), ((np.float32(1), np.float32(2)),))
        with pytest.raises(ValueError, match="shape"):
            lib.jvp(lambda x: x, (randn(2),), (randn(3),))
    # grad of allow_int gives float0 for the integer argument, as JAX
    ours = minijax.grad(lambda x, n: x, (0, 1), allow_int=True)(np.float32(1), np.int32(2))
    theirs = jax.grad(lambda x, n: x, (0, 1), allow_int=True)(np.float32(1), np.int32(2))
    assert_close(ours, theirs)


def test_dce_jaxpr():
    closed = minijax.make_jaxpr(lambda x: (mlax.sin(x), mlax.cos(mlax.exp(x))))(np.float32(1))
    result = dce_jaxpr(closed, [True, False])
    verify(result.jaxpr)
    assert [e.primitive.name for e in result.jaxpr.eqns] == ["sin"]
    assert result.used_inputs == (True,)


def test_golden_autodiff_stages():
    """The printed stages in docs/autodiff.md are what the passes produce."""
    import pathlib
    import re
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "autodiff.md").read_text()
    golden = dict(re.findall(r"<!-- stage: (\w+) -->\n```text\n(.*?)\n```", doc, re.S))

    def f(x):
        return mlax.mul(mlax.sin(x), x)
    x = np.float32(2.0)
    traced = verify(minijax.make_jaxpr(f)(x))
    jvp = verify(jvp_jaxpr(traced))
    split = partial_eval_jaxpr(jvp, [False, True])
    transposed = verify(transpose_jaxpr(split.staged_jaxpr,
                                        [False] * split.num_residuals + [True]))
    stages = dict(traced=traced, jvp=jvp, known=verify(split.known_jaxpr),
                  staged=verify(split.staged_jaxpr), transposed=transposed,
                  grad=verify(minijax.make_jaxpr(minijax.grad(f))(x)))
    assert set(golden) == set(stages)
    for name, jaxpr in stages.items():
        assert str(jaxpr) == golden[name], name


def test_holomorphic_grad_of_a_python_complex_is_weak_as_in_jax():
    # the seed of a weak complex output is a Python complex (it was a strong array)
    import jax.numpy as jnp
    import minijax.numpy as mnp
    for lib, np_ in ((jax, jnp), (minijax, mnp)):
        g = lib.grad(np_.sin, holomorphic=True)(1.0 + 1.0j)
        h = lib.grad(lambda z: z * z, holomorphic=True)(1.0 + 1.0j)
        assert (g.dtype, g.weak_type, h.weak_type) == (np.complex64, True, True)
        np.testing.assert_allclose(np.asarray(g), np.cos(1 + 1j), rtol=1e-6)


def test_aux_leaves_that_are_not_values_come_back_unchanged_as_in_jax():
    # kept aside from the trace (FlatFun.aux_kept); jacfwd batches the aux and refuses
    tag = object()
    for lib in (jax, minijax):
        f = lambda x: (x * x, {"tag": tag, "name": "sq", "x": x})
        g, aux = lib.grad(f, has_aux=True)(3.0)
        assert aux["tag"] is tag and aux["name"] == "sq" and float(aux["x"]) == 3.0
        assert float(g) == 6.0
        with pytest.raises(TypeError, match="not a valid JAX type"):
            lib.jacfwd(f, has_aux=True)(3.0)
