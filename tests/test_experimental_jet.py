"""`minijax.experimental.jet` against `jax.experimental.jet` on the same inputs: each
rule at order 4 under jit, a composite eagerly at orders 1-4, `jet2`, Python scalars,
zero series, jit both ways, grad/jvp/vmap of a jet and a jet of them, custom_jvp and
custom_vjp functions, names and signatures, and JAX's errors (inconsistent orders,
non-array arguments, a primitive without a rule)."""
import functools
import inspect

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax
from jax.experimental import jet as jax_jet

import minijax
import minijax.numpy as mjnp
from minijax import lax as mlax
from minijax.experimental import jet as mini_jet
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins

JAX = (jax, jjnp, jlax, jax_jet)
MINI = (minijax, mjnp, mlax, mini_jet)

_rng = np.random.default_rng(0)


def _vec(low, high, n=3):
    return _rng.uniform(low, high, n).astype(np.float32)


X = _vec(0.2, 0.9)                 # inside every domain below but acosh's
Y = _vec(1.2, 2.0)
IDX = np.array([2, 0, 2])
W = _vec(-1, 1, 6).reshape(3, 2)

def _exp2(np_, x):
    # JAX 0.10's jet has no rule for exp2 (KeyError: exp2); 0.11 added one, the jet of
    # exp(x log 2), which minijax follows and which is JAX's side here on 0.10.
    if np_ is jjnp and JAX_VERSION < (0, 11):
        return jjnp.exp(x * np.float32(np.log(2)))
    return np_.exp2(x)


def _one_minus_square(lax, x):
    # jax.lax.one_minus_square (and its jet rule) is new in JAX 0.11; before, the
    # product it stands for.
    if lax is jlax and JAX_VERSION < (0, 11):
        return (1 + x) * (1 - x)
    return lax.one_minus_square(x)


def _bound(value):
    return np.full(3, value, np.float32)


# name: (function of (jnp, lax) -> f, primals). Each case lands on the rules its name
# says; a few rules share a case, as each case compiles a program a side.
CASES = {
    "sin cos sinh cosh": (lambda np_, lax: lambda x: np_.sin(x) * np_.cos(x)
                          + np_.sinh(x) * np_.cosh(x), (X,)),
    "tanh logistic": (lambda np_, lax: lambda x: np_.tanh(x) - lax.logistic(x), (X,)),
    "exp log exp2": (lambda np_, lax: lambda x: np_.exp(x) / np_.log(x) + _exp2(np_, x),
                     (X,)),
    "expm1 log2 log1p": (lambda np_, lax: lambda x: np_.expm1(x) * np_.log2(x)
                         - np_.log1p(x), (X,)),
    "sqrt rsqrt square one_minus_square": (lambda np_, lax: lambda x: np_.sqrt(x)
                                         + lax.rsqrt(x) * np_.square(x)
                                         - _one_minus_square(lax, x), (X,)),
    "pow integer_pow": (lambda np_, lax: lambda x, y: lax.pow(x, y) + x ** 3
                        - lax.integer_pow(x, -2) + lax.integer_pow(x, 0), (X, Y)),
    "erf erfc erf_inv": (lambda np_, lax: lambda x: lax.erf(x) * lax.erfc(x)
                         + lax.erf_inv(x - 0.5), (X,)),
    "asinh atanh acosh": (lambda np_, lax: lambda x, y: np_.arcsinh(x) - np_.arctanh(x)
                          * np_.arccosh(y), (X, Y)),
    "div mul add sub neg": (lambda np_, lax: lambda x, y: -(x / y) * (x + y) - y, (X, Y)),
    "rem atan2": (lambda np_, lax: lambda x, y: lax.rem(y, x) + lax.atan2(x, y), (X, Y)),
    "selections and comparisons": (lambda np_, lax: lambda x, y: lax.max(x, y)
                                   * lax.min(x, y) + lax.clamp(_bound(0.4), x, _bound(0.6))
                                   + lax.abs(x - 0.5) + np_.where(x > 0.5, x * x, -x)
                                   + np_.sign(x) + np_.floor(x) + np_.ceil(y)
                                   + np_.round(x) + lax.stop_gradient(y) * x, (X, Y)),
    "reduce_sum/max/min": (lambda np_, lax: lambda x: np_.sum(x * x) * np_.max(x)
                           - np_.min(np_.sin(x)), (X,)),
    "cumulative": (lambda np_, lax: lambda x: np_.cumsum(x) * lax.cumprod(x)
                   + lax.cummax(np_.sin(3 * x)) + lax.cummin(x * x, reverse=True), (X,)),
    "dot_general conv": (lambda np_, lax: lambda x, w: np_.sin(x @ w) @ w.T + lax.conv(
        x[None, None], w[None, None, :, 0], (1,), "SAME")[0, 0], (X, W)),
    "shapes": (lambda np_, lax: lambda x: np_.concatenate(
        [np_.broadcast_to(x, (2, 3)).T.reshape(6), np_.pad(x[::-1], 1)[1:4],
         lax.expand_dims(x, (0,))[0],
         lax.convert_element_type(x, np.float16).astype(np.float32) * x,
         lax.squeeze(lax.rev(x, (0,))[None], (0,)), np_.fft.fft(x).real,
         lax.reduce_window(x, 0., lax.add, (2,), (1,), "VALID")]), (X,)),
    "indexing": (lambda np_, lax: lambda x, y: x[IDX] * lax.dynamic_slice(y, (1,), (2,))[0]
                 + lax.dynamic_update_slice(x, y[:1], (1,)) + x.at[IDX].add(y), (X, Y)),
}


def _series(primals, order, seed=1):
    rng = np.random.default_rng(seed)
    return tuple(tuple(rng.uniform(-1, 1, np.shape(p)).astype(np.float32)
                       for _ in range(order)) for p in primals)


def _both(case, order, jit=True):
    # Under jit each side compiles one program per case; eagerly, one per operation.
    make, primals = CASES[case]
    series = _series(primals, order)
    results = []
    for lib in (MINI, JAX):
        run = functools.partial(lib[3].jet, make(lib[1], lib[2]))
        results.append((lib[0].jit(run) if jit else run)(primals, series))
    return results


@pytest.mark.parametrize("case", CASES)
def test_each_rule_matches_jax(case):
    # Order 4 holds orders 1-3 as its prefix: each term depends only on lower ones.
    actual, expected = _both(case, 4)
    assert_trees_match(actual, expected, what=case)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_every_order_eagerly(order):
    actual, expected = _both("tanh logistic", order, jit=False)
    assert_trees_match(actual, expected)


def test_jet2_and_python_scalars():
    # jet2: raw Taylor coefficients. Python scalars are weakly typed; in x * 3.0 the
    # constant's terms are strongly typed zeros (JAX's jet makes them with jnp.zeros),
    # so x's terms lose their weak type, in both.
    actual = mini_jet.jet2(mjnp.sin, (0.5,), ((1.0, 0.25, -2.0),))
    expected = jax_jet.jet2(jjnp.sin, (0.5,), ((1.0, 0.25, -2.0),))
    assert_trees_match(actual, expected)
    actual = mini_jet.jet(lambda x: x * 3.0, (2.0,), ((1.0, 0.0),))
    expected = jax_jet.jet(lambda x: x * 3.0, (2.0,), ((1.0, 0.0),))
    assert_trees_match(actual, expected)


def test_zero_series_and_pytree_outputs():
    # Outputs that do not depend on the inputs, or only through piecewise-constant ops,
    # get terms of zeros; a dict/tuple output gives series of the same structure.
    def make(np_):
        return lambda x, y: {"const": np_.ones(2), "step": np_.floor(x),
                             "pair": (x * y, np_.sign(y))}
    primals, series = (X, Y), _series((X, Y), 3)
    actual = mini_jet.jet(make(mjnp), primals, series)
    expected = jax_jet.jet(make(jjnp), primals, series)
    assert_trees_match(actual, expected)


def test_jit_both_ways():
    # jit of a jet, and a jet through a jitted function (a jit of the jet'd body).
    def inner(np_, jit):
        return jit(lambda x: np_.exp(np_.sin(x)) * x)
    primals, series = (X,), _series((X,), 3)
    for wrap_jet in (False, True):
        got = []
        for lib in (MINI, JAX):
            fun = inner(lib[1], lib[0].jit)
            run = lambda p, s, fun=fun, jet=lib[3].jet: jet(fun, p, s)
            got.append(lib[0].jit(run)(primals, series) if wrap_jet else run(primals, series))
        assert_trees_match(*got, rtol=1e-5, what=f"jit outside: {wrap_jet}")


def test_grad_jvp_vmap_of_a_jet_and_a_jet_of_them():
    # Outside: the third derivative along x, differentiated and batched. Inside: jet
    # through the programs grad (a transposed jvp), jvp and vmap stage.
    def transformed(lib):
        api, np_, jet = lib[0], lib[1], lib[3].jet
        f = lambda x: np_.tanh(x) * x ** 2      # noqa: E731
        third = lambda x: jet(f, (x,), ((1.0, 0.0, 0.0),))[1][2]      # noqa: E731
        outside = (api.grad(third)(X[0]), api.jvp(third, (X[0],), (np.float32(1),)),
                   api.vmap(third)(X))
        inner = (api.vmap(api.grad(f)), lambda x: api.jvp(f, (x,), (np_.ones_like(x),))[1],
                 api.vmap(f))
        return outside, [jet(g, (X,), ((X, 2 * X, -X),)) for g in inner]
    assert_trees_match(MINI[0].jit(lambda: transformed(MINI))(),
                       JAX[0].jit(lambda: transformed(JAX))())


@pins("jet_of_custom_jvp_or_custom_vjp_leaks_a_tracer")
def test_custom_jvp_and_custom_vjp_run_their_primal_body():
    # The first-order custom rules say nothing about higher terms: jet runs the body.
    # JAX means to as well, but its jet leaks a tracer there; its jet of the body is
    # the expected value.
    def build(lib, custom=True):
        body_f, body_g = (lambda x: lib[1].sin(x) * x), lib[1].exp
        if not custom:
            return lambda x: body_f(x) + body_g(x)
        f, g = lib[0].custom_jvp(body_f), lib[0].custom_vjp(body_g)
        f.defjvp(lambda p, t: (f(p[0]), 100.0 * t[0]))
        g.defvjp(lambda x: (g(x), x), lambda r, ct: (100.0 * ct,))
        return lambda x: f(x) + g(x)
    primals, series = (X,), _series((X,), 3)
    assert_trees_match(mini_jet.jet(build(MINI), primals, series),
                       jax_jet.jet(build(JAX, custom=False), primals, series))
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jax_jet.jet(build(JAX), primals, series)


def _raises_like_jax(fun_of_lib, match):
    errors = []
    for lib in (MINI, JAX):
        with pytest.raises(Exception) as info:
            fun_of_lib(lib)
        errors.append(info)
    assert errors[0].type is errors[1].type, (errors[0].value, errors[1].value)
    assert match in str(errors[0].value), errors[0].value
    return errors[0]


def test_errors_as_jax():
    _raises_like_jax(lambda lib: lib[3].jet(lib[1].sin, (X, X), ((X,), (X, X))),
                     "inconsistent lengths")
    _raises_like_jax(lambda lib: lib[3].jet(lambda t: t[0], ((X, X),), ((X,),)),
                     "primal value at position 0 is not an array")
    _raises_like_jax(lambda lib: lib[3].jet(lib[1].sin, (X,), (([X],),)),
                     "term 0 for argument 0 is not an array")
    # A primitive without a rule: tan (JAX's jet has none), and control flow.
    _raises_like_jax(lambda lib: lib[3].jet(lib[1].tan, (X,), ((X,),)), "tan")
    _raises_like_jax(lambda lib: lib[3].jet(
        lambda x: lib[2].cond(True, lib[1].sin, lib[1].cos, x), (X,), ((X,),)), "cond")


def test_names_and_signatures_are_jaxs():
    assert set(mini_jet.__all__) <= set(dir(jax_jet))
    for name in ("jet", "jet2", "fact"):
        assert inspect.signature(getattr(mini_jet, name)) == \
            inspect.signature(getattr(jax_jet, name)), name
    assert_trees_match(mini_jet.fact(4), jax_jet.fact(4))
