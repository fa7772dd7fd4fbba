"""Regression tests for the rows the twenty-third round's fuzz run `2302` (JAX 0.10.2,
CPU) left unexplained (docs/fuzzing_findings.md, F88 and F89): each is the seed's
program shrunk by hand, run through both APIs, or the explained finding's matcher on
the row the seed produced."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match
from minijax.testing.cross_check import compare
from minijax.testing.fuzz_explained import explaining_finding

EMPTY = np.zeros((2, 0), np.float32)


def _conv_of(api):
    """Seed 2302:12's shape of the problem: a convolution of the (empty) input."""
    def f(x):
        lhs = api.numpy.reshape(api.numpy.sum(x) + api.numpy.arange(4.0), (1, 2, 2))
        rhs = api.numpy.ones((2, 2, 2), np.float32) * api.numpy.sum(x)
        return api.lax.conv_general_dilated(lhs, rhs, (2,), ((0, 1),), rhs_dilation=(2,),
                                            dimension_numbers=("NCH", "OIH", "NCH"))
    return f


def test_jacfwd_of_a_convolution_of_an_empty_input():
    """F-2302:12: jacfwd over an input with no elements vmaps the tangent over a batch
    of none, and the convolution's batching rule divided by that size (ZeroDivisionError);
    the result is built from the type rule."""
    for transform in ("jacfwd", "hessian"):
        assert_trees_match(getattr(minijax, transform)(_conv_of(minijax))(EMPTY),
                           getattr(jax, transform)(_conv_of(jax))(EMPTY))
    lhs, rhs = np.ones((0, 1, 2, 4), np.float32), np.ones((2, 2, 2), np.float32)
    for in_axes, args in (((0, None), (lhs, rhs)), ((0, 0), (lhs, np.ones((0, 2, 2, 2))))):
        def conv(lib):
            return lib.vmap(lambda a, b: lib.lax.conv_general_dilated(
                a, b, (1,), "VALID", dimension_numbers=("NCH", "OIH", "NCH")), in_axes)
        args = tuple(np.asarray(a, np.float32) for a in args)
        assert_trees_match(conv(minijax)(*args), conv(jax)(*args))


def _tanh_of_a_negative(api):
    # an infinite cotangent meets tanh' at tanh x < 0
    return lambda x, w: (api.numpy.tanh(x) * w).sum()


X = np.array([-1.5, 0.5], np.float32)
W = np.array([-np.inf, -np.inf], np.float32)


def test_tanh_of_an_infinite_cotangent_is_jax_0_11s():
    """F88: JAX 0.10's tanh rule, (t + t tanh x)(1 - tanh x), is inf - inf = NaN for an
    infinite tangent where tanh x < 0; minijax's, t (1 - tanh² x), as JAX 0.11's, is
    -inf there. On JAX 0.10 the matcher files the row as explained."""
    mine = minijax.grad(_tanh_of_a_negative(minijax))(X, W)
    assert np.isneginf(np.asarray(mine)).all()
    theirs = jax.grad(_tanh_of_a_negative(jax))(X, W)
    if JAX_VERSION < (0, 11):
        assert np.isnan(np.asarray(theirs)[0]) and np.isneginf(np.asarray(theirs)[1])
    else:
        assert_trees_match(mine, theirs)
    row = compare("grad", lambda: mine, lambda: theirs)
    program = minijax.make_jaxpr(_tanh_of_a_negative(minijax))(X, W)
    if JAX_VERSION < (0, 11):
        assert row.status == "differ" and row.jax_nan_for_infinity
        assert explaining_finding("grad", program, row) == "explained:F88"
    else:
        assert row.status == "agree"


NINF, NAN = -np.inf, np.nan


@pytest.mark.parametrize("mine, theirs, flagged", [
    ([NINF, NINF], [NAN, NINF], True),      # NaN where minijax has -inf: F88's shape
    ([NINF, -2.0], [NAN, 1.0], False),      # a finite value differs too
    ([NINF, 3.0], [NINF, NAN], False),      # NaN where minijax is finite
])
def test_the_nan_for_infinity_flag_is_exact(mine, theirs, flagged):
    mine, theirs = np.array(mine, np.float32), np.array(theirs, np.float32)
    row = compare("grad", lambda: mine, lambda: theirs)
    assert row.status == "differ" and row.jax_nan_for_infinity is flagged
    # the matcher needs a two-factor rule in the program as well
    no_tanh = minijax.make_jaxpr(lambda x: x * 2.0)(X)
    assert explaining_finding("grad", no_tanh, row) == ""


def test_cholesky_masks_of_jax_0_10_are_the_only_residual_difference():
    """F89: JAX 0.10's cholesky rule read the whole tangent; minijax's mirrors its lower
    triangle, as JAX 0.11's does, and a checkpoint saves that rule's two more triangle
    masks and zeros per factor. The gradients agree on every version; the saved
    residuals agree from JAX 0.11 on."""
    def f(api):
        def loss(a):
            m = api.lax.mul(a.reshape(1, 1), a.reshape(1, 1)) + 1.0
            return api.lax.linalg.cholesky(m, symmetrize_input=False).sum()
        return loss
    x = np.array([0.5], np.float32)
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x))
    from minijax.testing.recipes import Side

    def saved(api):
        remat = api.checkpoint(f(api), policy=api.checkpoint_policies.everything_saveable)
        return sorted(Side(api.__name__, api, None).saved_residuals(remat, x))
    mine, theirs = saved(minijax), saved(jax)
    if JAX_VERSION >= (0, 11):
        assert mine == theirs
    else:
        extra = list(mine)
        for r in theirs:
            extra.remove(r)
        assert sorted(extra) == ["bool[1,1]"] * 2 + ["f32[1,1]"] * 2, extra
