"""`minijax.vmap` against `jax.vmap`: axes, pytrees, nesting, jit, errors, lean IR.

Programs are written once against a `lax` module argument and run with
`minijax.lax` and `jax.lax`, so both sides run the same program. Per-primitive rules
are in test_vmap_rules.py; compositions with autodiff in test_vmap_ad.py.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.ir import primitives as P
from minijax.ir.trace import bind
from minijax.ir.verify import verify_jaxpr
from minijax.transforms.vmap import vmap_jaxpr, BatchingError

rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def assert_close(ours, theirs):
    ours_leaves, ours_tree = jax.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
    assert ours_tree == theirs_tree
    for a, b in zip(ours_leaves, theirs_leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def both(program, in_axes=0, out_axes=0, axis_size=None):
    """`program(lax, *args)` vmapped by minijax and by jax: a function of the args
    returning both results after checking they agree and the jaxpr verifies."""
    def run(*args, **kwargs):
        ours_f = minijax.vmap(lambda *a, **k: program(mlax, *a, **k), in_axes=in_axes,
                              out_axes=out_axes, axis_size=axis_size)
        theirs_f = jax.vmap(lambda *a, **k: program(jax.lax, *a, **k), in_axes=in_axes,
                            out_axes=out_axes, axis_size=axis_size)
        ours = ours_f(*args, **kwargs)
        assert_close(ours, theirs_f(*args, **kwargs))
        verify_jaxpr(minijax.make_jaxpr(ours_f)(*args, **kwargs))
        return ours
    return run


def mlp(lax, x, w1, w2):
    return lax.reduce_sum(lax.tanh(lax.dot(lax.tanh(lax.dot(x, w1)), w2)), axes=(0,))


# -- axes ------------------------------------------------------------------------------

@pytest.mark.parametrize("in_axes", [0, (0, None, None), (-1, None, None), (1, None, None)])
def test_in_axes_ints_negative_none(in_axes):
    x = randn(3, 4) if in_axes in (0, (0, None, None)) else randn(4, 3)
    w1, w2 = randn(4, 5), randn(5, 2)
    if in_axes == 0:
        x, w1, w2 = randn(3, 4), randn(3, 4, 5), randn(3, 5, 2)
    both(mlp, in_axes=in_axes)(x, w1, w2)


@pytest.mark.parametrize("out_axes", [0, 1, -1, 2, -3])
def test_out_axes_positions(out_axes):
    both(lambda lax, x: lax.sin(x), in_axes=0, out_axes=out_axes)(randn(3, 4, 5))


def test_unbatched_output_is_broadcast_or_kept_with_none():
    def f(lax, x, y):
        return lax.mul(x, 2.0), lax.cos(y)
    ours = both(f, in_axes=(0, None), out_axes=0)(randn(3, 2), randn(4))
    assert ours[1].shape == (3, 4)
    ours = both(f, in_axes=(0, None), out_axes=(1, None))(randn(3, 2), randn(4))
    assert ours[1].shape == (4,)


def test_pytree_in_axes_and_out_axes():
    def f(lax, params, xs):
        y = lax.add(lax.dot(xs["a"], params["w"]), params["b"])
        return {"y": y, "z": (lax.neg(xs["c"]), params["b"])}
    params = {"w": randn(4, 2), "b": randn(2)}
    xs = {"a": randn(4, 3), "c": randn(5, 3)}
    out = both(f, in_axes=({"w": None, "b": None}, {"a": 1, "c": -1}),
               out_axes={"y": 1, "z": (0, None)})(params, xs)
    assert out["y"].shape == (2, 3) and out["z"][1].shape == (2,)
    both(f, in_axes=(None, 1), out_axes={"y": 0, "z": 1})(params, xs)
    both(f, in_axes=[None, {"a": 1, "c": 1}])(params, xs)   # a top-level list is a tuple


def test_kwargs_are_mapped_over_axis_zero_as_in_jax():
    def f(lax, x, *, scale):
        return lax.mul(x, scale)
    both(f, in_axes=(None,))(randn(2), scale=randn(3, 2))


def test_axis_size_when_nothing_is_mapped():
    out = both(lambda lax, x: lax.exp(x), in_axes=None, axis_size=4)(randn(2))
    assert out.shape == (4, 2)
    out = both(lambda lax, x: lax.exp(x), in_axes=None, axis_size=4, out_axes=1)(randn(2))
    assert out.shape == (2, 4)


def test_python_control_flow_on_unbatched_values():
    def f(x, n):
        for _ in range(int(n)):
            x = mlax.sin(x)
        return x if n > 1 else mlax.neg(x)
    x = randn(3, 2)
    np.testing.assert_allclose(minijax.vmap(f, in_axes=(0, None))(x, 3),
                               np.sin(np.sin(np.sin(x))), rtol=1e-6)


def test_nested_vmap_with_different_in_axes():
    def inner(lax, x, y):
        return lax.add(lax.mul(x, y), lax.reduce_sum(x, axes=(0,)))
    x, y = randn(4, 3, 5), randn(5, 4)

    def nested(vmap, lax):
        f = vmap(lambda x, y: inner(lax, x, y), in_axes=(1, None))
        return vmap(f, in_axes=(2, 0), out_axes=1)
    ours = nested(minijax.vmap, mlax)(x, y)
    assert_close(ours, nested(jax.vmap, jax.lax)(x, y))
    verify_jaxpr(minijax.make_jaxpr(nested(minijax.vmap, mlax))(x, y))
    # Three levels, each mapping a different axis of the same argument.
    three = lambda vmap, lax: vmap(vmap(vmap(lambda a: lax.sin(a), 0), 1), 2)
    assert_close(three(minijax.vmap, mlax)(x), three(jax.vmap, jax.lax)(x))


def test_vmap_of_jit_stays_one_staged_call():
    f = minijax.jit(lambda x, w: mlax.tanh(mlax.dot(x, w)))
    x, w = randn(3, 4), randn(4, 2)
    batched = minijax.vmap(f, in_axes=(0, None))
    np.testing.assert_allclose(batched(x, w), np.tanh(x @ w), rtol=1e-5)
    jaxpr = minijax.make_jaxpr(batched)(x, w)
    verify_jaxpr(jaxpr)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    inner = jaxpr.eqns[0].params["jaxpr"]
    assert [e.primitive.name for e in inner.eqns] == ["dot_general", "tanh"]
    # vmap of vmap of jit, and jit of vmap of jit
    xs = randn(2, 3, 4)
    twice = minijax.vmap(minijax.vmap(f, in_axes=(0, None)), in_axes=(1, None))
    np.testing.assert_allclose(twice(xs, w), np.tanh(np.swapaxes(xs, 0, 1) @ w), rtol=1e-5)
    np.testing.assert_allclose(minijax.jit(twice)(xs, w), twice(xs, w), rtol=1e-6)


def test_jit_of_vmap():
    x, w1, w2 = randn(3, 4), randn(4, 5), randn(5, 2)
    ours = minijax.jit(minijax.vmap(lambda x, a, b: mlp(mlax, x, a, b), (0, None, None)))
    theirs = jax.jit(jax.vmap(lambda x, a, b: mlp(jax.lax, x, a, b), (0, None, None)))
    assert_close(ours(x, w1, w2), theirs(x, w1, w2))


def test_jit_output_unbatched_inside_vmap():
    f = minijax.jit(lambda x, y: (mlax.sin(x), mlax.cos(y)))
    a, b = minijax.vmap(f, in_axes=(0, None), out_axes=(0, None))(randn(3, 2), randn(2))
    assert a.shape == (3, 2) and b.shape == (2,)


# -- errors ------------------------------------------------------------------------------

def test_error_inconsistent_sizes_names_arguments_and_sizes():
    def f(x, y):
        return mlax.add(x, y)
    with pytest.raises(ValueError) as info:
        minijax.vmap(f)(randn(3), randn(4))
    message = str(info.value)
    assert "inconsistent sizes" in message
    assert "argument x" in message and "argument y" in message
    assert "size 3" in message and "size 4" in message
    with pytest.raises(ValueError, match="axis_size` argument was 5"):
        minijax.vmap(f, axis_size=5)(randn(3), randn(3))
    with pytest.raises(ValueError, match=r"argument p\['b'\]"):
        minijax.vmap(lambda p: p)({"a": randn(3), "b": randn(2)})
    with pytest.raises(ValueError, match=r"kwargs\['y'\]"):
        minijax.vmap(f, in_axes=(0,))(randn(3), y=randn(2))


def test_error_out_of_range_in_axes():
    with pytest.raises(ValueError, match="along axis 2.*rank should be at least 3.*only 2"):
        minijax.vmap(mlax.neg, in_axes=2)(randn(3, 3))
    with pytest.raises(ValueError, match="axis -3"):
        minijax.vmap(mlax.neg, in_axes=-3)(randn(3, 3))
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        minijax.vmap(mlax.neg)(np.float32(2.0))


def test_error_in_axes_not_a_tree_prefix():
    with pytest.raises(ValueError, match="in_axes specification must be a tree prefix"):
        minijax.vmap(lambda x, y: x, in_axes=({"a": 0}, 0))(randn(3), randn(3))
    with pytest.raises(ValueError, match="one entry per positional argument"):
        minijax.vmap(lambda x, y: x, in_axes=(0, 0, 0))(randn(3), randn(3))
    with pytest.raises(ValueError, match="out_axes specification must be a tree prefix"):
        minijax.vmap(lambda x: x, out_axes=(0, 1))(randn(3, 3))
    with pytest.raises(TypeError, match="must be an int, None, or a"):
        minijax.vmap(lambda x: x, in_axes=(0, "a"))
    with pytest.raises(TypeError, match="must be an int, None, or a"):
        minijax.vmap(lambda x: x, in_axes=1.0)


def test_error_out_axes_none_for_batched_output():
    with pytest.raises(BatchingError, match="out_axes is None.*batched"):
        minijax.vmap(lambda x, y: (y, mlax.neg(x)), out_axes=(None, None),
                     in_axes=(0, None))(randn(3), randn(2))
    with pytest.raises(BatchingError, match="out of range"):
        minijax.vmap(lambda x: x, out_axes=3)(randn(3, 3))


def test_error_nothing_mapped_without_axis_size():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        minijax.vmap(lambda x: x, in_axes=None)(randn(3))


def test_refs_made_inside_are_batched():
    # (was: refs rejected; their vmap rules now live in transforms/ref_rules.py, tested in
    # tests/test_refs_vmap.py)
    def f(x):
        ref = bind(P.new_ref_p, x)
        return bind(P.get_p, ref)
    x = randn(3, 2)
    np.testing.assert_array_equal(np.asarray(minijax.vmap(f)(x)), np.asarray(x))


def test_error_vmap_jaxpr_bad_axes():
    jaxpr = minijax.make_jaxpr(mlax.sin)(randn(2))
    with pytest.raises(BatchingError, match="out of range"):
        vmap_jaxpr(jaxpr, (2,), 3)
    with pytest.raises(BatchingError, match="1 in_axes for a jaxpr with"):
        vmap_jaxpr(minijax.make_jaxpr(mlax.add)(randn(2), randn(2)), (0,), 3)


# -- lean IR ---------------------------------------------------------------------------------

def _prims(fun, *args):
    jaxpr = minijax.make_jaxpr(fun)(*args)
    verify_jaxpr(jaxpr)
    return [e.primitive.name for e in jaxpr.eqns]


def _jax_prims(fun, *args):
    return [e.primitive.name for e in jax.make_jaxpr(fun)(*args).eqns]


LEAN_PROGRAMS = [
    # (program(lax, *args), in_axes, args)
    (mlp, (0, None, None), (randn(3, 4), randn(4, 5), randn(5, 2))),
    (mlp, (1, None, None), (randn(4, 3), randn(4, 5), randn(5, 2))),
    (mlp, (None, 2, None), (randn(4), randn(4, 5, 3), randn(5, 2))),
    (lambda lax, x, y: lax.mul(lax.exp(x), y), (1, 1), (randn(2, 3, 4), randn(2, 3, 4))),
    (lambda lax, x: lax.reduce_max(lax.cumsum(x, 0), (1,)), 1, (randn(4, 3, 5),)),
    (lambda lax, x: lax.reshape(x, (8,)), 2, (randn(2, 4, 3),)),
    (lambda lax, x: lax.transpose(x, (1, 0)), 1, (randn(2, 3, 4),)),
    (lambda lax, x, i: lax.dynamic_slice(x, (i, 0), (2, 3)), (1, None),
     (randn(5, 4, 3), np.int32(1))),
    (lambda lax, x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))), (2, None),
     (randn(2, 4, 3), randn(4, 6))),
]


@pytest.mark.parametrize("index", range(len(LEAN_PROGRAMS)))
def test_batched_ir_is_as_lean_as_jax(index):
    program, in_axes, args = LEAN_PROGRAMS[index]
    ours = _prims(minijax.vmap(lambda *a: program(mlax, *a), in_axes), *args)
    theirs = _jax_prims(jax.vmap(lambda *a: program(jax.lax, *a), in_axes), *args)
    assert len(ours) <= len(theirs), (ours, theirs)
    assert ours.count("transpose") <= theirs.count("transpose"), (ours, theirs)


def test_rules_move_batch_axes_only_where_needed():
    x, w1, w2 = randn(4, 3), randn(4, 5), randn(5, 2)
    assert "transpose" not in _prims(
        minijax.vmap(lambda *a: mlp(mlax, *a), (1, None, None)), x, w1, w2)
    # Elementwise operands batched on the same axis: nothing moves.
    assert _prims(minijax.vmap(mlax.add, (2, 2), out_axes=2),
                  randn(2, 4, 3), randn(2, 4, 3)) == ["add"]
    # A reshape keeps a trailing batch axis in place.
    assert _prims(minijax.vmap(lambda a: mlax.reshape(a, (8,)), 2, out_axes=1),
                  randn(2, 4, 3)) == ["reshape"]
    # Gather with batched indices from an unbatched operand: no moves, no iota.
    prims = _prims(minijax.vmap(lambda i: mlax.dynamic_index_in_dim(w1, i, 0, False)),
                   np.arange(3, dtype=np.int32))
    assert "transpose" not in prims and "iota" not in prims


def test_vmap_jaxpr_out_axes_and_closed_jaxprs():
    closed = minijax.make_jaxpr(lambda x: (mlax.sin(x), mlax.reduce_sum(x, (0,))))(randn(4))
    batched = vmap_jaxpr(closed, (0,), 3)
    verify_jaxpr(batched.jaxpr)
    assert batched.out_axes == (0, 0)
    moved = vmap_jaxpr(closed, (0,), 3, out_axes=(1, 0))
    verify_jaxpr(moved.jaxpr)
    assert moved.jaxpr.out_avals[0].shape == (4, 3) and moved.out_axes == (1, 0)
    unbatched = vmap_jaxpr(closed, (None,), 3)
    assert unbatched.out_axes == (None, None)


# -- minijax.numpy programs -------------------------------------------------------------------

def _numpy_programs():
    x = randn(3, 4, 5)
    w = randn(5, 6)
    idx = np.array([[0, 2], [3, 1], [1, 1]], np.int32)
    idx4 = np.array([[0, 2], [1, 1], [2, 0], [0, 0]], np.int32)
    return [  # (program(np, *args), args, in_axes)
        (lambda np_, a, b: a @ b, (x, w), (0, None)),
        (lambda np_, a, b: a @ b, (x, w), (1, None)),
        (lambda np_, a, b: np_.einsum("ij,jk->ik", a, b), (x, w[:4]), (2, None)),
        (lambda np_, a, i: a[i], (x, idx), (0, 0)),
        (lambda np_, a, i: a[:, i], (x, idx), (0, 0)),
        (lambda np_, a, i: a[i[0]], (x, idx), (0, 0)),
        (lambda np_, a: a[1:, ::2], (x,), 1),
        (lambda np_, a, b: np_.concatenate([a, b], axis=1), (x, x.transpose(1, 2, 0)), (0, 2)),
        (lambda np_, a, b: np_.stack([a, b], axis=-1), (x, x[:, 0]), (1, None)),
        (lambda np_, a: np_.sort(a, axis=0), (x,), 2),
        (lambda np_, a: np_.cumsum(a, axis=1), (x,), 1),
        (lambda np_, a: np_.where(a > 0, a, 0.0), (x,), 1),
        (lambda np_, a: a.reshape(-1), (x,), 1),
        (lambda np_, a: a.T, (x,), 2),
        (lambda np_, a: np_.max(a, axis=1) - a.mean(axis=1), (x,), 2),
        (lambda np_, a: np_.argmax(a, axis=1), (x,), 0),
        (lambda np_, a: np_.clip(a, -0.5, 0.5), (x,), 1),
        (lambda np_, a, i: a.at[i[0]].set(1.0), (x, idx), (0, 0)),
        (lambda np_, a, i: a.at[i].add(1.0), (x, idx4), (1, 0)),
        (lambda np_, a: np_.exp(a) / np_.sum(np_.exp(a), axis=-1, keepdims=True), (x,), 1),
        (lambda np_, a, b: np_.outer(a, b), (x[:, 0], w[0]), (0, None)),
    ]


def test_numpy_programs_under_vmap():
    mjnp = pytest.importorskip("minijax.numpy")
    programs = _numpy_programs()

    def run(vmap, np_):
        return lambda: [vmap(lambda *a, p=p: p(np_, *a), in_axes)(*args)
                        for p, args, in_axes in programs]
    ours = minijax.jit(run(minijax.vmap, mjnp))()
    theirs = jax.jit(run(jax.vmap, jax.numpy))()
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5,
                                   err_msg=f"program {i}")
    verify_jaxpr(minijax.make_jaxpr(run(minijax.vmap, mjnp))())


def test_error_python_control_flow_on_a_batched_value():
    def f(x):
        return mlax.neg(x) if x > 0 else x
    with pytest.raises(minijax.errors.TracerBoolConversionError, match="differs from example to example"):
        minijax.vmap(f)(randn(3))
