"""More of `jax.lax` against JAX: `conv_general_dilated_patches` and
`conv_general_dilated_local` (values eager and under jit, grad, vmap), the
convolution and reduce_window shape helpers, `ragged_dot` / `ragged_dot_general` in
each of their three modes (values, jit, grad, vmap, JAX's errors),
`platform_dependent` and `dtype`."""
from __future__ import annotations

import functools
import typing

import jax
import numpy as np
import pytest

import minijax
from minijax import lax
from minijax.testing import assert_trees_match
from tests.devices import ON_CPU

RNG = np.random.default_rng(0)
IMG = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)     # NCHW


def _same(ours, theirs):
    """Bit-equal values and equal dtypes: both compute the same products and sums (off
    the CPU, XLA fuses the two programs differently: a few ulps, tests/devices.py)."""
    tol = 0 if ON_CPU else 1e-6
    assert_trees_match(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize("dn", [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "CNHW")])
def test_patches(dn):
    x = IMG if dn is None or dn[0] == "NCHW" else IMG.transpose(0, 2, 3, 1)
    args = ((2, 3), (1, 2), "SAME")
    kw = dict(rhs_dilation=(2, 1), dimension_numbers=dn)
    _same(lax.conv_general_dilated_patches(x, *args, **kw),
          jax.lax.conv_general_dilated_patches(x, *args, **kw))
    _same(minijax.jit(lambda x: lax.conv_general_dilated_patches(x, *args, **kw))(x),
          jax.lax.conv_general_dilated_patches(x, *args, **kw))


def test_patches_grad_vmap_and_precision():
    f = lambda x: (lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID") ** 2).sum()
    jf = lambda x: (jax.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID")
                    ** 2).sum()
    _same(minijax.jit(minijax.grad(f))(IMG), jax.jit(jax.grad(jf))(IMG))
    g = lambda lib: lambda x: lib.conv_general_dilated_patches(
        x, (3,), (2,), ((1, 0),), lhs_dilation=(2,), precision=lib.Precision.HIGHEST)
    xs = np.stack([IMG[..., 0], IMG[..., 1]])
    _same(minijax.vmap(g(lax))(xs), jax.vmap(g(jax.lax))(xs))


@pytest.mark.parametrize("dn", [None, ("NHWC", "WHIO", "NCHW")])
def test_local(dn):
    x = IMG if dn is None else IMG.transpose(0, 2, 3, 1)
    # Kernel: spatial axes are the output's positions (5x4 for VALID 2x2), I holds
    # 3 channels x 4 window positions, O = 2.
    shape = (2, 12, 5, 4) if dn is None else (4, 5, 12, 2)
    w = RNG.standard_normal(shape).astype(np.float32)
    kw = dict(dimension_numbers=dn)
    f = lambda lib: lambda x, w: lib.conv_general_dilated_local(x, w, (1, 1), "VALID",
                                                                (2, 2), **kw)
    _same(f(lax)(x, w), f(jax.lax)(x, w))
    _same(minijax.jit(f(lax))(x, w), f(jax.lax)(x, w))
    loss = lambda lib: lambda x, w: (f(lib)(x, w) ** 2).sum()
    assert_trees_match(minijax.jit(minijax.grad(loss(lax), (0, 1)))(x, w),
                       jax.jit(jax.grad(loss(jax.lax), (0, 1)))(x, w))
    _same(minijax.vmap(f(lax), (None, 0))(x, np.stack([w, 2 * w])),
          jax.vmap(f(jax.lax), (None, 0))(x, np.stack([w, 2 * w])))
    with pytest.raises(ValueError, match="precision"):
        lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), precision="bad",
                                       **kw)
    for lib in (lax, jax.lax):
        with pytest.raises(ValueError, match="Unsupported precision"):
            lib.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2),
                                           precision="F32_F32_F32", **kw)
    # under a default precision the local conv passes its patches the enum, as JAX's
    # (it fed its own canonical names back to a public call, which refused them)
    with minijax.default_matmul_precision("highest"), jax.default_matmul_precision("highest"):
        _same(f(lax)(x, w), f(jax.lax)(x, w))
        mine = minijax.make_jaxpr(f(lax))(x, w)
    assert "precision=('HIGHEST', 'DEFAULT')" in str(mine)


def test_shape_helpers():
    cases = [
        ("conv_shape_tuple", ((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME")),
        ("conv_shape_tuple", ((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), ((1, 0), (2, 2)))),
        ("conv_shape_tuple", ((4, 3, 9, 8), (4, 3, 3, 2), (2, 1), "VALID", 2)),
        ("conv_shape_tuple", ((1, 1, 2), (1, 1, 5), (1,), ((0, 0),))),
        ("conv_general_permutations", (("NHWC", "WHIO", "CNWH"),)),
        ("reduce_window_shape_tuple", ((5, 7), (2, 3), (1, 2), ((0, 1), (1, 1)), (2, 1),
                                       (1, 2))),
        ("reduce_window_shape_tuple", ((5, 7), (2, 3), (1, 2), ((0, 1), (1, 1)))),
    ]
    dn = ("NHWC", "HWIO", "NHWC")
    for pad in ("SAME", "VALID", ((1, 2), (0, 1))):
        for name in ("conv_general_shape_tuple", "conv_transpose_shape_tuple"):
            cases.append((name, ((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), pad, dn)))
    for name, args in cases:
        ours, theirs = getattr(lax, name)(*args), getattr(jax.lax, name)(*args)
        assert ours == tuple(theirs), (name, args)
        assert all(type(d) is int for d in jax.tree_util.tree_leaves(ours)), name
    for lib in (lax, jax.lax):
        with pytest.raises(TypeError, match="Wrong number of explicit pads"):
            lib.conv_shape_tuple((1, 1, 4, 4), (1, 1, 2, 2), (1, 1), ((0, 0),))
        with pytest.raises(ValueError, match="Negative padding"):
            lib.conv_shape_tuple((1, 1, 4), (1, 1, 2), (1,), ((-3, -3),))
        with pytest.raises(TypeError, match="exactly once"):
            lib.conv_general_permutations(("NHW", "HWIO", "NHWC"))
    ours, theirs = (typing.get_args(t) for t in (lax.ConvGeneralDilatedDimensionNumbers,
                                                 jax.lax.ConvGeneralDilatedDimensionNumbers))
    assert (ours[0], ours[2]) == (theirs[0], theirs[2]) == (tuple[str, str, str], type(None))
    assert ours[1] is lax.ConvDimensionNumbers


# -- ragged_dot ---------------------------------------------------------------------------

def _mode_cases(lib):
    dnums = lib.RaggedDotDimensionNumbers
    g2 = np.array([[1, 3, 1], [0, 2, 3]], np.int32)
    return {
        # [m,k] x [g,k,n], ragged m
        "basic": (RNG.standard_normal((7, 3)), RNG.standard_normal((3, 3, 4)),
                  np.array([2, 0, 4], np.int32), None),
        # ragged contracting axis: a leading group axis in the result
        "contracting": (RNG.standard_normal((5, 6)), RNG.standard_normal((6, 2)),
                        np.array([1, 3, 2], np.int32),
                        dnums((([1], [0]), ([], [])), [1], [])),
        # batched, ragged non-contracting, group sizes per batch row
        "batched": (RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 3, 3, 4)), g2,
                    dnums((([2], [1]), ([0], [0])), [1], [2])),
        # ragged batch axis: JAX computes the plain dot_general
        "batch": (RNG.standard_normal((4, 2, 3)), RNG.standard_normal((4, 3, 2)),
                  np.array([1, 3], np.int32), dnums((([2], [1]), ([0], [0])), [0], [])),
    }


def _ragged(lib, case):
    _, _, _, dn = _mode_cases(lib)[case]
    if dn is None:
        return lambda l, r, g: lib.ragged_dot(l, r, g)
    return lambda l, r, g: lib.ragged_dot_general(l, r, g, dn)


@pytest.mark.parametrize("case", ["basic", "contracting", "batched", "batch"])
def test_ragged_dot_modes(case):
    l, r, g, _ = _mode_cases(lax)[case]
    l, r = l.astype(np.float32), r.astype(np.float32)
    ours, theirs = _ragged(lax, case), _ragged(jax.lax, case)
    _same(ours(l, r, g), theirs(l, r, g))
    _same(minijax.jit(ours)(l, r, g), jax.jit(theirs)(l, r, g))
    # JAX's transpose rules are ragged_dots of their own, which sum in another order:
    # small integers make every sum exact, so the gradients compare bit for bit. JAX
    # 0.10-0.12 differentiate only the non-contracting mode ("Unimplemented
    # grad_x_dims"); the other two compare with JAX's gradient of what they mean.
    li, ri = np.round(3 * l), np.round(3 * r)
    loss = lambda f: lambda l, r: (f(l, r, g) ** 2).sum()
    reference = {"contracting": _dense_contracting,
                 "batch": lambda l, r, g: jax.lax.dot_general(
                     l, r, _mode_cases(jax.lax)["batch"][3].dot_dimension_numbers)}
    if case in reference:
        with pytest.raises(NotImplementedError, match="Unimplemented grad"):
            jax.jit(jax.grad(loss(theirs)))(li, ri)
        theirs = reference[case]
    _same(minijax.jit(minijax.grad(loss(ours), (0, 1)))(li, ri),
          jax.jit(jax.grad(loss(theirs), (0, 1)))(li, ri))


def _dense_contracting(l, r, g):
    """Mode 2 by its definition: group i multiplies the columns of its own group."""
    k = jax.numpy.arange(l.shape[1])
    ends = jax.numpy.cumsum(g)
    masks = (k >= (ends - g)[:, None]) & (k < ends[:, None])
    return jax.numpy.stack([(l * m) @ r for m in masks])


def test_ragged_dot_vmap_jvp_and_dtypes():
    l, r, g, _ = _mode_cases(lax)["basic"]
    l, r = l.astype(np.float32), r.astype(np.float32)
    # JAX batches only all three operands at axis 0 ("vmap over any dim but 0 - NYI"
    # for the rest); minijax batches any of them, and the answer is the loop's.
    ls = np.stack([l, 2 * l])
    gs = np.array([[2, 0, 4], [1, 5, 1]], np.int32)
    _same(minijax.vmap(lax.ragged_dot)(ls, np.stack([r, -r]), gs),
          jax.vmap(jax.lax.ragged_dot)(ls, np.stack([r, -r]), gs))
    with pytest.raises(NotImplementedError, match="NYI"):
        jax.vmap(lambda l: jax.lax.ragged_dot(l, r, g))(ls)
    _same(minijax.vmap(lambda l: lax.ragged_dot(l, r, g))(ls),
          np.stack([jax.lax.ragged_dot(l, r, g), jax.lax.ragged_dot(2 * l, r, g)]))
    batched = minijax.vmap(lambda r, g: lax.ragged_dot(l, r, g), (0, 0))(np.stack([r, -r]), gs)
    _same(batched, np.stack([jax.lax.ragged_dot(l, r, gs[0]),
                             jax.lax.ragged_dot(l, -r, gs[1])]))
    t = np.ones_like(l)
    f = lambda lib: lambda l: lib.ragged_dot(l, r, g)
    _same(minijax.jvp(f(lax), (l,), (t,)), jax.jvp(f(jax.lax), (l,), (t,)))
    lb, rb = l.astype(jax.numpy.bfloat16), r.astype(jax.numpy.bfloat16)
    for lib in (lax, jax.lax):
        out = lib.ragged_dot(lb, rb, g, preferred_element_type=np.float32,
                             precision=lib.Precision.HIGHEST)
        assert out.dtype == np.float32
    _same(lax.ragged_dot(lb, rb, g, preferred_element_type=np.float32),
          jax.lax.ragged_dot(lb, rb, g, preferred_element_type=np.float32))


def test_ragged_dot_errors():
    l, r, g, _ = _mode_cases(lax)["basic"]
    l, r = l.astype(np.float32), r.astype(np.float32)
    cases = [
        (TypeError, "group_sizes.dtype", lambda lib: lib.ragged_dot(l, r, g.astype(
            np.float32))),
        (TypeError, "expected rhs group dimension size to be 4",
         lambda lib: lib.ragged_dot(l, r, np.array([1, 2, 3, 1], np.int32))),
        (TypeError, "rank of group_sizes", lambda lib: lib.ragged_dot(l, r, np.int32(3))),
        (TypeError, "expected group_sizes to have shape",
         lambda lib: lib.ragged_dot_general(l, r, np.ones((2, 3), np.int32),
                                            lib.RaggedDotDimensionNumbers(
                                                (([1], [1]), ([], [])), [0], [0]))),
        (TypeError, "exactly one rhs group dimension",
         lambda lib: lib.ragged_dot_general(l, r, g, lib.RaggedDotDimensionNumbers(
             (([1], [1]), ([], [])), [0], []))),
        (TypeError, "zero group dimensions",
         lambda lib: lib.ragged_dot_general(l, r[0], g, lib.RaggedDotDimensionNumbers(
             (([1], [0]), ([], [])), [1], [0]))),
        (TypeError, "exactly one lhs ragged dimension",
         lambda lib: lib.ragged_dot_general(l, r, g, lib.RaggedDotDimensionNumbers(
             (([1], [1]), ([], [])), [0, 1], [0]))),
        (TypeError, "lhs ragged dimension numbers to be nonnegative",
         lambda lib: lib.ragged_dot_general(l, r, g, lib.RaggedDotDimensionNumbers(
             (([1], [1]), ([], [])), [5], [0]))),
        (NotImplementedError, "group_offset",
         lambda lib: lib.ragged_dot(l, r, g, group_offset=np.int32(1))),
    ]
    for exc, match, call in cases:
        with pytest.raises(exc, match=match):
            call(lax)
        with pytest.raises(exc, match=match):
            jax.jit(lambda: call(jax.lax))()
    d = lax.RaggedDotDimensionNumbers([[[1], [1]], [[], []]], [0], [0])
    assert d.dot_dimension_numbers == (((1,), (1,)), ((), ()))
    assert hash(d) == hash(lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,),
                                                         (0,)))


# -- platform_dependent, dtype -----------------------------------------------------------

def test_platform_dependent():
    cases = [dict(cpu=lambda x: x * 2, default=lambda x: x + 1),
             dict(tpu=lambda x: x * 3, default=lambda x: x - 1),
             dict(cpu=lambda x: x * 2, cuda=lambda x: x * 4, rocm=lambda x: x * 5)]
    for branches in cases:
        for wrap_ours, wrap_theirs in ((lambda f: f, lambda f: f), (minijax.jit, jax.jit)):
            ours = wrap_ours(lambda x: lax.platform_dependent(x, **branches))(1.5)
            theirs = wrap_theirs(lambda x: jax.lax.platform_dependent(x, **branches))(1.5)
            _same(ours, theirs)
    assert minijax.grad(lambda x: lax.platform_dependent(x, default=lambda x: x * x))(3.0) \
        == jax.grad(lambda x: jax.lax.platform_dependent(x, default=lambda x: x * x))(3.0)
    one = dict(tpu=lambda x: x * 3, rocm=lambda x: x * 4)    # neither CPU nor CUDA
    here = "cpu" if ON_CPU else "cuda"
    for lib, jit in ((lax, minijax.jit), (jax.lax, jax.jit)):
        with pytest.raises(NotImplementedError, match=f"not found for platform {here}"):
            lib.platform_dependent(1.5, **one)
        with pytest.raises(NotImplementedError, match=f"not found for platform {here}"):
            jit(lambda x: lib.platform_dependent(x, **one))(1.5)
        with pytest.raises(ValueError, match="Use 'cuda'"):
            lib.platform_dependent(1.5, gpu=lambda x: x)
        with pytest.raises(TypeError, match="'cpu' branch must be a callable"):
            lib.platform_dependent(1.5, cpu=1)
        with pytest.raises(TypeError, match="'default' branch must be a callable"):
            lib.platform_dependent(1.5, default=1)


def test_dtype():
    for value in (1.0, 1, True, np.float64(1), np.int8(3), "int32", np.float16,
                  np.ones(2, np.int16), 1j):
        assert lax.dtype(value) == jax.lax.dtype(value), value
    assert minijax.jit(lambda x: x * (lax.dtype(x) == np.float32))(2.0) == 2.0
    for lib in (lax, jax.lax):
        with pytest.raises(ValueError):
            lib.dtype(None)


def test_composite():
    def make(lib):
        @functools.partial(lib.composite, name="my.tangent", version=2)
        def tangent(x, /, *, scale):
            return lib.sin(x) / lib.cos(x) * scale
        return tangent
    x = np.array([0.0, 0.5, -1.0], np.float32)
    ours, theirs = make(lax), make(jax.lax)
    assert ours.__name__ == theirs.__name__ == "tangent"
    _same(ours(x, scale=2.0), theirs(x, scale=2.0))
    _same(minijax.jit(lambda x: ours(x, scale=3.0))(x),
          jax.jit(lambda x: theirs(x, scale=3.0))(x))
    # JAX has no jvp or batching rule for its composite primitive; minijax runs the
    # decomposition, so both follow it (compared with JAX on the decomposition).
    plain = lambda x: jax.numpy.sin(x) / jax.numpy.cos(x) * 2.0
    with pytest.raises(ValueError, match="JVP rule for composite"):
        jax.grad(lambda x: theirs(x, scale=2.0))(0.5)
    _same(minijax.grad(lambda x: ours(x, scale=2.0))(np.float32(0.5)),
          jax.grad(plain)(np.float32(0.5)))
    _same(minijax.vmap(lambda x: ours(x, scale=2.0))(x), jax.vmap(plain)(x))
    for lib, api in ((lax, minijax), (jax.lax, jax)):
        with pytest.raises(api.errors.UnexpectedTracerError, match="attribute"):
            api.jit(lambda x, s: make(lib)(x, scale=s))(x, 2.0)
