"""Convolutions against JAX: `lax.conv_general_dilated` and its wrappers, eagerly,
under jit, in the NumPy reference evaluator, and under jvp, vjp (w.r.t. lhs and rhs),
vmap (over lhs, rhs and both) and grad-of-vmap; `jnp.convolve`/`correlate` and
`minijax.scipy.signal`; and the errors JAX raises for bad arguments."""
import jax
import jax.numpy as jjnp
import jax.scipy.signal as jsignal
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
import minijax.scipy.signal as msignal
from minijax import lax as mlax
from minijax.backends.reference import eval_closed_jaxpr
from minijax.testing import assert_trees_match
from tests.devices import on_cpu

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=1e-4)


def check_everywhere(fn, x, w, *, transforms=True):
    """`fn(lax, x, w)` through minijax and JAX: values eagerly, under jit and in the
    reference evaluator; then jvp, vjp in both operands, vmap over a new leading axis
    of x, of w and of both, and the gradient of each vmapped program."""
    ours = lambda x, w: fn(mlax, x, w)         # noqa: E731
    theirs = lambda x, w: fn(jax.lax, x, w)    # noqa: E731
    expected = jax.jit(theirs)(x, w)
    assert_trees_match(ours(x, w), expected, **TOL)
    assert_trees_match(minijax.jit(ours)(x, w), expected, **TOL)
    closed = minijax.make_jaxpr(ours)(x, w)
    assert_trees_match(eval_closed_jaxpr(closed, x, w)[0], np.asarray(expected), **TOL,
                       check_weak_types=False)
    if not transforms:
        return
    tx, tw = randn(*x.shape), randn(*w.shape)
    ct = randn(*np.shape(expected))
    xs, ws = np.stack([x, 2 * x, x - 1]), np.stack([w, -w, 0.5 * w])

    def transformed(api, f):
        """jvp, vjp, vmap over x, over w and over both, and the gradient of each
        vmapped program, all under one jit on each side (one compile, not eight);
        the results are compared one by one."""
        def every_transform(x, w, tx, tw, ct, xs, ws):
            results = [api.jvp(f, (x, w), (tx, tw)), api.vjp(f, x, w)[1](ct)]
            for in_axes, args in (((0, None), (xs, w)), ((None, 0), (x, ws)),
                                  ((0, 0), (xs, ws))):
                batched = api.vmap(f, in_axes)
                results.append(batched(*args))
                results.append(api.grad(lambda *a: (batched(*a) ** 2).sum(), (0, 1))(*args))
            return results
        return every_transform
    inputs = (x, w, tx, tw, ct, xs, ws)
    for got, want in zip(minijax.jit(transformed(minijax, ours))(*inputs),
                         jax.jit(transformed(jax, theirs))(*inputs), strict=True):
        assert_trees_match(got, want, **TOL)


CASES = {
    "nchw-strides-dilations-negative-padding": (
        (2, 4, 5, 6), (3, 4, 3, 2),
        dict(window_strides=(2, 1), padding=((1, 0), (2, -1)), lhs_dilation=(2, 1),
             rhs_dilation=(1, 2))),
    "nhwc-same-feature-groups": (
        (2, 5, 4, 4), (3, 2, 2, 6),
        dict(window_strides=(1, 1), padding="SAME", feature_group_count=2,
             dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "nchw-same-stride-2-depthwise": (
        (1, 3, 6, 5), (3, 1, 3, 3),
        dict(window_strides=(2, 2), padding="SAME", feature_group_count=3)),
    "1d-same-lower-rhs-dilation": (
        (2, 7, 3), (3, 3, 4),
        dict(window_strides=(2,), padding="SAME_LOWER", rhs_dilation=(2,),
             dimension_numbers=("NWC", "WIO", "NWC"))),
    "valid-batch-groups": (
        (4, 5, 6, 3), (3, 2, 3, 6),
        dict(window_strides=(1, 2), padding="VALID", batch_group_count=2,
             dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "odd-layouts": (
        (5, 2, 3, 4), (2, 3, 2, 3),
        dict(window_strides=(1, 1), padding=((1, 1), (0, 1)),
             dimension_numbers=("HNCW", "OHWI", "CWNH"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_general_dilated(name):
    lhs_shape, rhs_shape, params = CASES[name]
    check_everywhere(lambda lax, x, w: lax.conv_general_dilated(x, w, **params),
                     randn(*lhs_shape), randn(*rhs_shape))


def test_dimension_numbers_objects_and_precision():
    x, w = randn(2, 3, 5), randn(4, 3, 2)

    def fn(lax, x, w):
        dnums = lax.conv_dimension_numbers(x.shape, w.shape, ("NCW", "OIW", "NWC"))
        return lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=dnums,
                                        precision=lax.Precision.HIGHEST)
    check_everywhere(fn, x, w, transforms=False)
    ours = mlax.conv_dimension_numbers((2, 5, 5, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"))
    theirs = jax.lax.conv_dimension_numbers((2, 5, 5, 3), (3, 3, 3, 4),
                                            ("NHWC", "HWIO", "NHWC"))
    assert tuple(map(tuple, ours)) == tuple(map(tuple, theirs))
    # JAX's own ConvDimensionNumbers object is accepted too.
    out = mlax.conv_general_dilated(np.ones((2, 5, 5, 3), np.float32),
                                    np.ones((3, 3, 3, 4), np.float32), (1, 1), "VALID",
                                    dimension_numbers=theirs, precision=("highest", "high"))
    assert out.shape == (2, 3, 3, 4)


def test_conv_and_conv_with_general_padding():
    x, w = randn(2, 3, 6, 5), randn(4, 3, 3, 2)
    check_everywhere(lambda lax, x, w: lax.conv(x, w, (1, 2), "SAME"), x, w)
    check_everywhere(lambda lax, x, w: lax.conv_with_general_padding(
        x, w, (2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1)), x, w, transforms=False)


@pytest.mark.parametrize("padding,kwargs", [
    ("SAME", {}), ("VALID", dict(rhs_dilation=(1, 2))), (((1, 0), (2, 1)), {}),
    ("SAME", dict(transpose_kernel=True)),
    (((1, 1), (0, 2)), dict(use_consistent_padding=True)),
])
def test_conv_transpose(padding, kwargs):
    x, w = randn(2, 4, 3, 3), randn(3, 2, 3, 5)     # NHWC input, HWIO kernel
    if kwargs.get("transpose_kernel"):
        w = randn(3, 2, 5, 3)                        # I and O swap roles
    check_everywhere(lambda lax, x, w: lax.conv_transpose(x, w, (2, 1), padding, **kwargs),
                     x, w, transforms=padding == "SAME")


def test_conv_transpose_1d_and_nchw_layout():
    x, w = randn(2, 5, 3), randn(3, 3, 4)
    check_everywhere(lambda lax, x, w: lax.conv_transpose(x, w, (3,), "VALID"), x, w,
                     transforms=False)
    x, w = randn(1, 2, 4, 4), randn(3, 2, 2, 2)
    check_everywhere(lambda lax, x, w: lax.conv_transpose(
        x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")), x, w,
        transforms=False)


def test_dtypes_and_preferred_element_type():
    x, w = randn(1, 2, 5), randn(3, 2, 2)
    for dtype in (jjnp.bfloat16, np.float16):
        xl, wl = x.astype(dtype), w.astype(dtype)
        fn = lambda lax, x, w: lax.conv_general_dilated(  # noqa: E731
            x, w, (1,), "SAME", preferred_element_type=np.float32)
        assert_trees_match(minijax.jit(lambda x, w: fn(mlax, x, w))(xl, wl),
                           jax.jit(lambda x, w: fn(jax.lax, x, w))(xl, wl), **TOL)
    xi, wi = np.arange(10, dtype=np.int32).reshape(1, 2, 5), np.ones((3, 2, 2), np.int32)
    with on_cpu():      # XLA's GPU backend has no int32 convolution (tests/devices.py)
        assert_trees_match(mlax.conv(xi, wi, (1,), "VALID"), jax.lax.conv(xi, wi, (1,), "VALID"))
    grads = minijax.grad(lambda x, w: mlax.conv_general_dilated(
        x, w, (1,), "SAME", preferred_element_type=np.float32).sum(), argnums=(0, 1))(
        x.astype(jjnp.bfloat16), w.astype(jjnp.bfloat16))
    expected = jax.grad(lambda x, w: jax.lax.conv_general_dilated(
        x, w, (1,), "SAME", preferred_element_type=np.float32).sum(), argnums=(0, 1))(
        x.astype(jjnp.bfloat16), w.astype(jjnp.bfloat16))
    assert_trees_match(grads, expected)


def test_conv_in_a_small_network_jit_grad():
    # A conv -> relu -> conv -> mean, trained for a step: the gradients of both kernels.
    x = randn(2, 6, 6, 1)
    params = (randn(3, 3, 1, 4), randn(3, 3, 4, 2))

    def loss(lax, jnp, params, x):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jnp.maximum(lax.conv_general_dilated(x, params[0], (1, 1), "SAME",
                                                 dimension_numbers=dn), 0.0)
        out = lax.conv_general_dilated(h, params[1], (2, 2), "VALID", dimension_numbers=dn)
        return jnp.mean(out ** 2)
    ours = minijax.jit(minijax.grad(lambda p, x: loss(mlax, mjnp, p, x)))(params, x)
    theirs = jax.jit(jax.grad(lambda p, x: loss(jax.lax, jjnp, p, x)))(params, x)
    assert_trees_match(ours, theirs, **TOL)


@pytest.mark.parametrize("call,error,pattern", [
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 3, 2), np.float32), (1,), "SAME"),
     ValueError, "feature"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 4, 2), np.int32), (1,), "SAME"),
     TypeError, "dtype"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 4, 2, 1), np.float32), (1,), "SAME"),
     TypeError, "ndim"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 5, 4), np.float32),
                                          np.ones((2, 4, 2), np.float32), (1,), "SAME",
                                          dimension_numbers=("NWC", "WIX", "NWC")),
     TypeError, "exactly once"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 5, 4), np.float32),
                                          np.ones((2, 4, 2), np.float32), (1,), "SAME",
                                          dimension_numbers=("NWC", "WIO")),
     TypeError, "length 3"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 4, 2), np.float32), (1,), "SAME",
                                          lhs_dilation=(2,)),
     ValueError, "String padding"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 4, 2), np.float32), (1,), "FULL"),
     RuntimeError, "padding"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((2, 4, 2), np.float32), (1,), [1, 2]),
     ValueError, "pairs"),
    (lambda lax: lax.conv_general_dilated(np.ones((1, 4, 5), np.float32),
                                          np.ones((6, 2, 2), np.float32), (1,), "SAME",
                                          feature_group_count=2, batch_group_count=2),
     ValueError, "At most one"),
])
def test_errors_match_jax(call, error, pattern):
    with pytest.raises(error):
        call(jax.lax)
    with pytest.raises(error, match=pattern):
        call(mlax)
    with pytest.raises(error, match=pattern):
        minijax.make_jaxpr(lambda: call(mlax))()


# -- jnp.convolve / correlate and scipy.signal ---------------------------------------------------

@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(7, 3), (3, 6), (4, 4), (5, 1)])
def test_jnp_convolve_and_correlate(mode, lengths):
    a, v = randn(lengths[0]), randn(lengths[1])

    def both(np_):
        return np_.convolve(a, v, mode), np_.correlate(a, v, mode)
    assert_trees_match(minijax.jit(lambda: both(mjnp))(), jax.jit(lambda: both(jjnp))(),
                       **TOL)


def test_jnp_convolve_integers_defaults_and_grad():
    a, v = np.arange(5), np.array([1, 0, -1])
    assert_trees_match(mjnp.convolve(a, v), jjnp.convolve(a, v))
    assert_trees_match(mjnp.correlate(a, v), jjnp.correlate(a, v))
    x, k = randn(6), randn(3)
    assert_trees_match(
        minijax.grad(lambda x, k: (mjnp.convolve(x, k, "same") ** 2).sum(), (0, 1))(x, k),
        jax.jit(jax.grad(lambda x, k: (jjnp.convolve(x, k, "same") ** 2).sum(), (0, 1)))(x, k),
        **TOL)
    assert_trees_match(minijax.vmap(lambda x: mjnp.correlate(x, k, "full"))(np.stack([x, -x])),
                       jax.jit(jax.vmap(lambda x: jjnp.correlate(x, k, "full")))(
                           np.stack([x, -x])),
                       **TOL)


def test_jnp_convolve_errors():
    for np_ in (jjnp, mjnp):
        with pytest.raises(ValueError, match="1-dimensional"):
            np_.convolve(np.ones((2, 2)), np.ones(2))
        with pytest.raises(ValueError, match="mode"):
            np_.convolve(np.ones(3), np.ones(2), mode="circular")
        with pytest.raises(ValueError, match="empty"):
            np_.correlate(np.ones(3), np.ones(0))


@pytest.mark.parametrize("shapes", [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4,), (3,)),
                                    ((3, 4, 5), (2, 2, 3))])
def test_scipy_signal(shapes):
    a, b = randn(*shapes[0]), randn(*shapes[1])

    def every_mode(signal):
        return [(signal.convolve(a, b, mode), signal.correlate(a, b, mode, method="direct"))
                for mode in ("full", "same", "valid")]
    assert_trees_match(minijax.jit(lambda: every_mode(msignal))(),
                       jax.jit(lambda: every_mode(jsignal))(), **TOL)


def test_scipy_signal_methods_grad_and_errors():
    a, b = randn(6, 5), randn(3, 2)
    # method='fft' is computed directly: the same values up to rounding.
    assert_trees_match(msignal.convolve(a, b, method="fft"),
                       jsignal.convolve(a, b, method="fft"), **TOL)
    assert_trees_match(
        minijax.grad(lambda a, b: msignal.correlate(a, b, "same").sum(), (0, 1))(a, b),
        jax.jit(jax.grad(lambda a, b: jsignal.correlate(a, b, "same").sum(), (0, 1)))(a, b),
        **TOL)
    for signal in (jsignal, msignal):
        with pytest.raises(ValueError, match="expected 'auto'"):
            signal.convolve(a, b, method="winograd")
        with pytest.raises(ValueError, match="smaller than the other"):
            signal.convolve(np.ones((4, 2)), np.ones((2, 4)))
        with pytest.raises(ValueError, match="same number of dimensions"):
            signal.correlate(np.ones((4, 2)), np.ones(2))


@pytest.mark.parametrize("shapes", [((4, 5), (2, 3)), ((2, 3), (4, 5)), ((3, 4), (3, 4)),
                                    ((3, 1), (2, 4))])
def test_scipy_signal_2d(shapes):
    # correlate2d flips and conjugates in JAX's order, which depends on which input is
    # larger; complex inputs check the conjugations
    a, b = randn(*shapes[0]), randn(*shapes[1])
    ca, cb = (a + 1j * randn(*shapes[0])).astype(np.complex64), (b - 2j * b).astype(np.complex64)

    def every_mode(signal):
        return [(signal.convolve2d(x, y, mode), signal.correlate2d(x, y, mode))
                for x, y in ((a, b), (ca, cb), (a, cb)) for mode in ("full", "same", "valid")
                if all(i >= j for i, j in zip(x.shape, y.shape))
                or all(i <= j for i, j in zip(x.shape, y.shape))]
    if len(every_mode(msignal)) == 0:
        for signal in (jsignal, msignal):
            with pytest.raises(ValueError, match="smaller than the other"):
                signal.convolve2d(a, b)
        return
    assert_trees_match(minijax.jit(lambda: every_mode(msignal))(),
                       jax.jit(lambda: every_mode(jsignal))(), **TOL)
    assert_trees_match(
        minijax.grad(lambda a, b: (msignal.correlate2d(a, b, "full") ** 2).sum(), (0, 1))(a, b),
        jax.jit(jax.grad(lambda a, b: (jsignal.correlate2d(a, b, "full") ** 2).sum(),
                         (0, 1)))(a, b), **TOL)
    ints = np.arange(6).reshape(2, 3)                    # integers become float32
    assert_trees_match(msignal.convolve2d(ints, ints), jsignal.convolve2d(ints, ints))


def test_scipy_signal_2d_errors():
    for signal in (jsignal, msignal):
        for f in (signal.convolve2d, signal.correlate2d):
            with pytest.raises(NotImplementedError, match="boundary='fill'"):
                f(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
            with pytest.raises(NotImplementedError, match="fillvalue=0"):
                f(np.ones((3, 3)), np.ones((2, 2)), fillvalue=1.0)
            with pytest.raises(ValueError, match="2-dimensional"):
                f(np.ones(3), np.ones(2))
            with pytest.raises(ValueError, match="mode"):
                f(np.ones((3, 3)), np.ones((2, 2)), mode="circular")


def test_docs_first_jaxpr_is_current():
    """docs/convolutions.md shows this program's IR in full; it must be today's."""
    import pathlib
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "convolutions.md").read_text()
    x, w = mjnp.ones((1, 2, 5)), mjnp.ones((3, 2, 2))
    with minijax.default_matmul_precision(None):     # the doc shows the default config's IR
        printed = str(minijax.make_jaxpr(
            lambda x, w: mlax.conv_general_dilated(x, w, (2,), "SAME"))(x, w))
    assert printed in doc
    assert repr(mjnp.convolve(mjnp.array([1., 2., 3.]), mjnp.array([0., 1., 0.5]))) in doc
