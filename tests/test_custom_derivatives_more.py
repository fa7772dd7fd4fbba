"""`custom_derivatives` beyond custom_jvp/custom_vjp themselves, against JAX: rules
defined with `symbolic_zeros=True` (what they see -- `CustomVJPPrimal` records and
`SymbolicZero`s -- and what they may return), `zero_from_primal`,
`custom_vjp_primal_tree_values`, and `linear_call` with its transpose."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import assert_trees_match

X, Y = np.float32(0.5), np.float32(2.0)
XS = np.array([0.5, -1.0, 2.0], np.float32)


def _symbolic_vjp(api, np_, log):
    cd = api.custom_derivatives

    @api.custom_vjp
    def f(x, y):
        return np_.sin(x) * y

    def fwd(x, y):
        log.append(("fwd", type(x).__name__, x.perturbed, y.perturbed))
        x, y = cd.custom_vjp_primal_tree_values((x, y))
        return np_.sin(x) * y, (x, y)

    def bwd(res, ct):
        x, y = res
        log.append(("bwd", type(ct).__name__ == "SymbolicZero"))
        # y's cotangent as a SymbolicZero: bwd may return one for a zero.
        return np_.cos(x) * y * ct, cd.SymbolicZero.from_primal_value(y)
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


def _symbolic_jvp(api, log):
    cd = api.custom_derivatives

    @api.custom_jvp
    def g(x, y):
        return x * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        zero = [type(t) is cd.SymbolicZero for t in tangents]
        log.append(tuple(zero))
        parts = [t * o for t, o, z in ((tx, y, zero[0]), (ty, x, zero[1])) if not z]
        out = x * y
        return out, sum(parts) if parts else cd.SymbolicZero.from_primal_value(out)
    g.defjvp(rule, symbolic_zeros=True)
    return g


def _each(fn):
    """fn(api, np_, log) for minijax and for JAX, and both logs."""
    logs = []
    results = []
    for api, np_ in ((minijax, mnp), (jax, jnp)):
        log = []
        results.append(fn(api, np_, log))
        logs.append(log)
    return results, logs


def test_custom_vjp_symbolic_zeros_sees_records_and_returns_symbolic_zeros():
    def run(api, np_, log):
        f = _symbolic_vjp(api, np_, log)
        return (api.grad(f)(X, Y), api.grad(f, 1)(X, Y),
                api.jit(api.grad(f, (0, 1)))(X, Y),
                api.vmap(api.grad(f))(XS, XS),
                api.grad(lambda x: api.vmap(f, (0, None))(x, Y).sum())(XS))
    (ours, theirs), (our_log, their_log) = _each(run)
    assert_trees_match(ours, theirs)
    # Who is perturbed, per call: x only, y only, both (jit), x under vmap, x again.
    assert our_log == their_log
    assert ("fwd", "CustomVJPPrimal", True, False) in our_log
    assert ("fwd", "CustomVJPPrimal", False, True) in our_log


def test_custom_jvp_symbolic_zeros_sees_symbolic_zero_tangents():
    def run(api, np_, log):
        g = _symbolic_jvp(api, log)
        return (api.jvp(lambda x: g(x, Y), (X,), (np.float32(1.0),)),
                api.grad(g, 1)(X, Y), api.jit(api.grad(g, (0, 1)))(X, Y),
                api.jvp(lambda y: g(X, y), (Y,), (np.float32(3.0),)),
                api.vmap(api.grad(g))(XS, XS))
    (ours, theirs), (our_log, their_log) = _each(run)
    assert_trees_match(ours, theirs)
    assert (False, True) in our_log and (True, False) in our_log
    assert sorted(set(our_log)) == sorted(set(their_log))


def test_zero_from_primal_and_records():
    cd, jcd = minijax.custom_derivatives, jax.custom_derivatives
    tree = {"a": X, "n": np.int32(3), "v": XS}
    assert_trees_match(cd.zero_from_primal(tree), jcd.zero_from_primal(tree))
    ours, theirs = cd.zero_from_primal(tree, symbolic_zeros=True), jcd.zero_from_primal(
        tree, symbolic_zeros=True)
    for key in tree:
        assert type(ours[key]).__name__ == type(theirs[key]).__name__ == "SymbolicZero"
        assert ours[key].shape == theirs[key].shape
        assert np.dtype(ours[key].dtype) == np.dtype(theirs[key].dtype)
    assert repr(ours["a"]) == repr(theirs["a"]) == "SymbolicZero"
    record = cd.CustomVJPPrimal(value=X, perturbed=True)
    assert (record.value, record.perturbed) == (X, True)
    assert cd.custom_vjp_primal_tree_values([record, {"b": record}]) == [X, {"b": X}]
    for mod in (cd, jcd):
        with pytest.raises(TypeError, match="unexpected leaf type"):
            mod.custom_vjp_primal_tree_values([X])


def test_custom_vjp_symbolic_zero_of_the_wrong_type_is_an_error():
    def make(api):
        @api.custom_vjp
        def f(x):
            return x * 2

        f.defvjp(lambda x: (x.value * 2, None),
                 lambda _, ct: (api.custom_derivatives.SymbolicZero.from_primal_value(XS),),
                 symbolic_zeros=True)
        return f
    for api in (minijax, jax):
        with pytest.raises(ValueError, match="SymbolicZero"):
            api.grad(make(api))(X)


def test_custom_vjp_bwd_cotangent_of_the_wrong_shape_is_jax_s_value_error():
    # A wrong structure is JAX's TypeError; right structure, wrong leaf shape a ValueError.
    def make(api, ct):
        @api.custom_vjp
        def f(x):
            return x
        f.defvjp(lambda x: (x, None), lambda _, g: ct)
        return f
    for api in (minijax, jax):
        with pytest.raises(ValueError):
            api.grad(make(api, (np.ones(2, np.float32),)))(X)
        with pytest.raises(ValueError):
            api.jit(api.grad(make(api, (np.ones(2, np.float32),))))(X)
        with pytest.raises(TypeError):
            api.grad(make(api, (X, X)))(X)
    with pytest.raises(minijax.MinijaxError, match="cotangent of shape"):
        minijax.grad(make(minijax, (np.ones(2, np.float32),)))(X)


def test_a_custom_function_without_its_rule_is_jax_s_attribute_error():
    for api in (minijax, jax):
        with pytest.raises(AttributeError, match="(?i)no jvp"):
            api.custom_jvp(lambda x: x)(X)
        with pytest.raises(AttributeError, match="(?i)no vjp"):
            api.custom_vjp(lambda x: x)(X)
    with pytest.raises(minijax.MinijaxError, match="defvjp"):
        minijax.custom_vjp(lambda x: x)(X)


def _scaled(api):
    """A linear map of `l` with a transpose that is deliberately not its true one
    (3x), so the test sees which function each transformation called."""
    def fun(r, l):
        return {"out": r["s"] * l}

    def fun_t(r, ct):
        return 3.0 * r["s"] * ct["out"]

    def call(s, l):
        return api.custom_derivatives.linear_call(fun, fun_t, {"s": s}, l)["out"]
    return call


def test_linear_call_values_jvp_transpose_and_jit():
    def run(api, np_, log):
        f = _scaled(api)
        return (f(X, XS), api.jvp(lambda l: f(X, l), (XS,), (np.ones(3, np.float32),)),
                api.grad(lambda l: f(X, l).sum())(XS),
                api.jit(api.grad(lambda s, l: f(s, l).sum(), 1))(X, XS),
                api.jit(f)(X, XS))
    ours, theirs = _each(run)[0]
    assert_trees_match(ours, theirs)
    np.testing.assert_array_equal(ours[2], np.full(3, 3 * X))    # fun_t's, not fun's


def test_linear_call_under_vmap():
    # JAX has no batching rule for linear_call ("not implemented"); minijax batches
    # fun and fun_transpose, so the answer is the loop's.
    f = _scaled(minijax)
    with pytest.raises(NotImplementedError):
        jax.vmap(_scaled(jax), (None, 0))(X, XS)
    assert_trees_match(minijax.vmap(f, (None, 0))(X, XS), X * XS)
    grads = minijax.vmap(minijax.grad(f, 1), (0, 0))(XS, XS)
    np.testing.assert_array_equal(grads, 3 * XS)


def test_linear_call_residuals_are_not_differentiable():
    # fun need not be linear in the residuals. JAX 0.10-0.12 fail an internal
    # assertion; minijax names the mistake.
    for transform in (lambda f: minijax.grad(f), lambda f: lambda s: minijax.jvp(f, (s,),
                                                                                 (Y,))):
        with pytest.raises(TypeError, match="residual_args cannot be differentiated"):
            transform(lambda s: _scaled(minijax)(s, X))(Y)
    with pytest.raises(AssertionError):
        jax.grad(lambda s: _scaled(jax)(s, X))(Y)
    # Differentiating the linear arguments of a call that also reads a perturbed value
    # elsewhere is fine.
    f = _scaled(minijax)
    assert minijax.grad(lambda s: f(X, s) * s)(Y) == jax.grad(
        lambda s: _scaled(jax)(X, s) * s)(Y)
