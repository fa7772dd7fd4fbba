"""`lax.reduce_window` (sum / max / min pooling) against JAX: values eagerly, under
jit and in the reference evaluator, with every padding form, strides and both
dilations, identity and other init values, integer dtypes; jvp, vjp, vmap and
grad-of-vmap; and errors."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax import lax as mlax
from minijax.backends.reference import eval_closed_jaxpr
from minijax.testing import assert_trees_match

RNG = np.random.default_rng(1)
TOL = dict(rtol=1e-5, atol=1e-5)
IDENTITY = {"add": 0.0, "max": -np.inf, "min": np.inf}


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def pool(lax, x, computation, init, **params):
    return lax.reduce_window(x, init, getattr(lax, computation), **params)


def check_values(fn, *args):
    ours, theirs = (lambda *a: fn(mlax, *a)), (lambda *a: fn(jax.lax, *a))
    expected = jax.jit(theirs)(*args)
    # Low-precision sums round differently in another order: their dtype's tolerance.
    tol = TOL if np.dtype(expected.dtype) == np.float32 else {}
    assert_trees_match(ours(*args), expected, **tol)
    assert_trees_match(minijax.jit(ours)(*args), expected, **tol)
    closed = minijax.make_jaxpr(ours)(*args)
    assert_trees_match(eval_closed_jaxpr(closed, *args)[0], np.asarray(expected), **tol,
                       check_weak_types=False)


def check_transforms(fn, x, reverse_mode=True):
    """jvp and vmap, and (reverse_mode) vjp and the gradient of the vmapped program,
    all under one jit on each side (one compile, not four); the results are compared
    one by one."""
    ours, theirs = (lambda x: fn(mlax, x)), (lambda x: fn(jax.lax, x))
    t = randn(*x.shape)
    xs = np.stack([x, -x, 2 * x])
    ct = randn(*jax.eval_shape(theirs, x).shape)

    def transformed(api, f):
        def every_transform(x, t, xs, ct):
            results = [api.jvp(f, (x,), (t,)), api.vmap(f)(xs)]
            if reverse_mode:
                results.append(api.vjp(f, x)[1](ct))
                results.append(api.grad(lambda xs: (api.vmap(f)(xs) ** 2).sum())(xs))
            return results
        return every_transform
    for got, want in zip(minijax.jit(transformed(minijax, ours))(x, t, xs, ct),
                         jax.jit(transformed(jax, theirs))(x, t, xs, ct), strict=True):
        assert_trees_match(got, want, **TOL)


WINDOWS = {
    "2x2-pool-nhwc": dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1),
                          padding="VALID"),
    "3x3-same-stride-2-nchw": dict(window_dimensions=(1, 1, 3, 3),
                                   window_strides=(1, 1, 2, 2), padding="SAME"),
    "explicit-negative-padding": dict(window_dimensions=(1, 2, 1, 2),
                                      window_strides=(1, 1, 1, 2),
                                      padding=((0, 0), (1, 2), (0, 0), (1, -1))),
    "base-dilation": dict(window_dimensions=(1, 3, 2, 1), window_strides=(1, 2, 1, 1),
                          padding=((0, 0), (1, 1), (0, 1), (0, 0)),
                          base_dilation=(1, 2, 1, 1)),
}


@pytest.mark.parametrize("computation", ["add", "max", "min"])
@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_pooling(computation, window):
    x = randn(2, 5, 6, 3)
    fn = lambda lax, x: pool(lax, x, computation, IDENTITY[computation],  # noqa: E731
                             **WINDOWS[window])
    check_values(fn, x)
    # JAX's max/min gradient crashes on negative padding (divergence registry).
    check_transforms(fn, x, reverse_mode=computation == "add" or "negative" not in window)


def test_max_pool_gradient_with_negative_padding():
    # Registry entry "max_pool_vjp_with_negative_padding_crashes": JAX raises, minijax
    # sends each window's cotangent to its maximum (cropped elements get zero).
    x = np.array([0.0, 3.0, 1.0, 4.0, 2.0, 5.0], np.float32)

    def loss(lax):
        return lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,),
                                           ((0, -1),)).sum()
    try:
        jax.grad(loss(jax.lax))(x)
    except Exception:       # (0.10.2: a TypeError from lax.slice; others may differ)
        jax_crashes = True
    else:
        jax_crashes = False
    if not jax_crashes:
        from tests.test_divergences import seen_on_this_jax
        if seen_on_this_jax("max_pool_vjp_with_negative_padding_crashes"):
            pytest.fail("JAX now differentiates this: retire the registry entry")
    assert_trees_match(minijax.grad(loss(mlax))(x),
                       np.array([0, 2, 0, 2, 0, 0], np.float32))


@pytest.mark.parametrize("computation", ["add", "max", "min"])
def test_window_dilation_and_same_lower(computation):
    x = randn(7, 6)
    fn = lambda lax, x: pool(lax, x, computation, IDENTITY[computation],  # noqa: E731
                             window_dimensions=(2, 3), window_strides=(1, 2),
                             padding="SAME_LOWER", window_dilation=(3, 1))
    check_values(fn, x)
    if computation == "add":
        check_transforms(fn, x)


def test_window_dilated_max_gradient():
    # JAX 0.10 has no VJP for max pooling with window dilation (NotImplementedError);
    # minijax's is checked against the same pooling written out with slices in JAX.
    x = randn(7, 5)

    def ours(x):
        return mlax.reduce_window(x, -np.inf, mlax.max, (2, 2), (1, 1), "VALID",
                                  window_dilation=(2, 1))

    def spelled_out(x):
        taps = [x[i:i + 5, j:j + 4] for i in (0, 2) for j in (0, 1)]
        return jjnp.max(jjnp.stack(taps), axis=0)
    assert_trees_match(ours(x), spelled_out(x))
    assert_trees_match(minijax.jit(minijax.grad(lambda x: (ours(x) ** 2).sum()))(x),
                       jax.jit(jax.grad(lambda x: (spelled_out(x) ** 2).sum()))(x), **TOL)


@pytest.mark.parametrize("computation,init", [("add", 1.5), ("max", 0.25), ("min", -0.5)])
def test_other_init_values(computation, init):
    x = randn(2, 6)
    fn = lambda lax, x: pool(lax, x, computation, init, window_dimensions=(1, 3),  # noqa
                             window_strides=(1, 2), padding="SAME")
    check_values(fn, x)
    # JAX's generic reduce_window (any init but the identity) has jvp but no vjp;
    # minijax's gradient is the identity-init pooling's, combined with the init once.
    check_transforms(fn, x, reverse_mode=False)
    combine = {"add": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[computation]
    spelled_out = lambda x: combine(pool(jax.lax, x, computation,  # noqa: E731
                                         IDENTITY[computation], window_dimensions=(1, 3),
                                         window_strides=(1, 2), padding="SAME"), init)
    # (JAX's side, compared to a tolerance, as one jitted program.)
    assert_trees_match(minijax.grad(lambda x: (fn(mlax, x) ** 2).sum())(x),
                       jax.jit(jax.grad(lambda x: (spelled_out(x) ** 2).sum()))(x), **TOL)
    # A traced init value.
    fn = lambda lax, x, init: pool(lax, x, computation, init,  # noqa: E731
                                   window_dimensions=(2, 2), window_strides=(1, 1),
                                   padding=((1, 0), (0, 1)))
    check_values(fn, x, np.float32(init))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, jjnp.bfloat16])
def test_integer_and_low_precision_dtypes(dtype):
    x = (RNG.integers(0, 50, (3, 8)) if dtype != jjnp.bfloat16 else randn(3, 8)).astype(dtype)
    for computation in ("add", "max", "min"):
        init = {"add": 0, "max": jjnp.array(-np.inf, dtype) if dtype == jjnp.bfloat16
                else np.iinfo(dtype).min, "min": np.array(np.inf, dtype)
                if dtype == jjnp.bfloat16 else np.iinfo(dtype).max}[computation]
        init = np.asarray(init, dtype)
        check_values(lambda lax, x: pool(lax, x, computation, init, window_dimensions=(2, 3),
                                         window_strides=(1, 2), padding="SAME"), x)


def test_average_pool_and_grad_in_a_network():
    x = randn(2, 6, 6, 2)
    kernel = randn(3, 3, 2, 4)

    def net(lax, jnp, kernel, x):
        h = lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.reduce_window(h, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0
        return jnp.mean(h ** 2)
    assert_trees_match(minijax.jit(minijax.value_and_grad(
                           lambda k, x: net(mlax, mjnp, k, x)))(kernel, x),
                       jax.jit(jax.value_and_grad(
                           lambda k, x: net(jax.lax, jjnp, k, x)))(kernel, x), **TOL)


def test_jaxpr_uses_the_window_primitive():
    text = str(minijax.make_jaxpr(lambda x: mlax.reduce_window(
        x, -np.inf, mlax.max, (2,), (2,), "VALID"))(np.ones(4, np.float32)))
    assert "reduce_window_max[" in text and "max " not in text.split("reduce_window_max")[1]


@pytest.mark.parametrize("call,error,pattern", [
    (lambda lax: lax.reduce_window(np.ones((4,), np.float32), 0.0, lax.add, (2, 2), (1,),
                                   "VALID"), TypeError, "window_dimensions"),
    (lambda lax: lax.reduce_window(np.ones((4,), np.float32), 0.0, lax.add, (2,), (1,),
                                   "FULL"), RuntimeError, "padding"),
    (lambda lax: lax.reduce_window(np.ones((4,), np.float32), np.int32(1), lax.add, (2,),
                                   (1,), "VALID"), TypeError, "inconsistent dtypes"),
])
def test_errors_match_jax(call, error, pattern):
    with pytest.raises(error):
        call(jax.lax)
    with pytest.raises(error, match=pattern):
        call(mlax)


def test_unsupported_computation_is_named():
    with pytest.raises(TypeError, match="lax.add, lax.max and lax.min"):
        mlax.reduce_window(np.ones(4, np.float32), 1.0, mlax.mul, (2,), (1,), "VALID")
