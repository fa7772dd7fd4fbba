"""`minijax.example_libraries` (optimizers, stax) against `jax.example_libraries`, and
`minijax.test_util.check_grads`.

Optimizers: a few steps of each on a small quadratic, from the same parameters, with
the same gradients, under jit, must give JAX's parameters. stax: init of a small net
from the same key gives JAX's parameters and output shape; apply gives JAX's outputs.
"""
from __future__ import annotations

import pickle

import jax
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.example_libraries import optimizers, stax
from minijax.test_util import check_grads
from minijax.testing import assert_trees_match

jax_optimizers = pytest.importorskip("jax.example_libraries.optimizers")
jax_stax = pytest.importorskip("jax.example_libraries.stax")

TOL = dict(rtol=2e-5, atol=2e-6)


def _quadratic_loss(numpy):
    target = {"w": np.array([[1.0, -2.0], [0.5, 3.0]], np.float32),
              "b": np.array([0.25, -1.0], np.float32)}

    def loss(params):
        return (numpy.sum((params["w"] - target["w"]) ** 2 * np.array([1.0, 4.0], np.float32))
                + numpy.sum((params["b"] - target["b"]) ** 2))
    return loss


PARAMS = {"w": np.zeros((2, 2), np.float32), "b": np.ones(2, np.float32)}

OPTIMIZERS = [
    ("sgd", (0.1,), {}), ("momentum", (0.05, 0.9), {}), ("nesterov", (0.05, 0.9), {}),
    ("adagrad", (0.3,), {}), ("adagrad", (0.3,), {"momentum": 0.5}),
    ("rmsprop", (0.05,), {}), ("rmsprop", (0.05,), {"gamma": 0.8, "eps": 1e-6}),
    ("rmsprop_momentum", (0.05,), {}), ("adam", (0.1,), {}),
    ("adam", (0.1,), {"b1": 0.5, "b2": 0.9}), ("adamax", (0.1,), {}), ("sm3", (0.2,), {}),
]


def _no_jit(fn):
    return fn


def _run(library, grad, jit, name, args, kwargs, steps=5):
    init, update, get_params = getattr(library, name)(*args, **kwargs)
    loss = _quadratic_loss(mnp if library is optimizers else jax.numpy)

    @jit
    def step(i, state):
        return update(i, grad(loss)(get_params(state)), state)

    state = init(PARAMS)
    for i in range(steps):
        state = step(i, state)
    return get_params(state)


@pytest.mark.parametrize("name,args,kwargs", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(OPTIMIZERS)])
def test_optimizer_steps_match_jax(name, args, kwargs):
    # sm3 keeps the parameter's shape (Python ints) in its state, which jit would trace.
    ours_jit, theirs_jit = (minijax.jit, jax.jit) if name != "sm3" else (_no_jit, _no_jit)
    ours = _run(optimizers, minijax.grad, ours_jit, name, args, kwargs)
    if name != "sm3":
        theirs = _run(jax_optimizers, jax.grad, theirs_jit, name, args, kwargs)
    else:   # JAX's side: every step in one jax.jit program (eagerly, a compile per op)
        theirs = jax.jit(lambda: _run(jax_optimizers, jax.grad, _no_jit, name, args, kwargs))()
    assert_trees_match(ours, theirs, **TOL)


SCHEDULES = [
    ("constant", (0.3,)), ("exponential_decay", (0.5, 2, 0.5)),
    ("inverse_time_decay", (0.5, 2, 0.5)), ("inverse_time_decay", (0.5, 2, 0.5, True)),
    ("polynomial_decay", (0.5, 3, 0.05)), ("polynomial_decay", (0.5, 3, 0.05, 2.0)),
    ("piecewise_constant", ([1, 3], [0.5, 0.2, 0.1])),
]


@pytest.mark.parametrize("name,args", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedules_match_jax(name, args):
    ours = getattr(optimizers, name)(*args)
    theirs = getattr(jax_optimizers, name)(*args)
    for i in range(6):
        np.testing.assert_allclose(minijax.jit(ours)(i), jax.jit(theirs)(i), rtol=1e-6)
    # A schedule drives an optimizer too.
    got = _run(optimizers, minijax.grad, minijax.jit, "sgd", (ours,), {})
    want = _run(jax_optimizers, jax.grad, jax.jit, "sgd", (theirs,), {})
    assert_trees_match(got, want, **TOL)


def test_schedule_errors():
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(TypeError, match="scalar or a schedule"):
        optimizers.sgd(np.ones(2))


def test_l2_norm_and_clip_grads():
    tree = {"a": np.array([3.0, 0.0], np.float32), "b": (np.array([[4.0]], np.float32),)}
    assert_trees_match(optimizers.l2_norm(tree), jax_optimizers.l2_norm(tree))
    for max_norm in (1.0, 10.0):
        assert_trees_match(
            minijax.jit(optimizers.clip_grads, static_argnums=1)(tree, max_norm),
            jax_optimizers.clip_grads(tree, max_norm), **TOL)


def test_optimizer_state_is_a_pytree_and_packs():
    init, update, get_params = optimizers.momentum(0.1, 0.9)
    state = init(PARAMS)
    assert isinstance(state, optimizers.OptimizerState)
    leaves = minijax.tree.leaves(state)
    assert len(leaves) == 4                           # (x, velocity) for w and b
    unpacked = pickle.loads(pickle.dumps(optimizers.unpack_optimizer_state(state)))
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    repacked = optimizers.pack_optimizer_state(unpacked)
    assert_trees_match(get_params(repacked), PARAMS)
    with pytest.raises(TypeError, match="does not match the parameter tree"):
        update(0, {"w": PARAMS["w"]}, state)


def test_optimizer_decorator_on_a_custom_optimizer():
    @optimizers.optimizer
    def sign_descent(step_size):
        return (lambda x0: x0, lambda i, g, x: x - step_size * mnp.sign(g), lambda x: x)
    init, update, get_params = sign_descent(0.5)
    state = update(0, {"w": np.array([2.0, -1.0], np.float32)},
                   init({"w": np.zeros(2, np.float32)}))
    np.testing.assert_array_equal(get_params(state)["w"], [-0.5, 0.5])


# -- stax ---------------------------------------------------------------------------------

def _net(library, *extra):
    return library.serial(library.Dense(8), library.Relu, library.Dense(6), library.Tanh,
                          *extra, library.Dense(3), library.LogSoftmax)


def _compare_layer(make, input_shape, inputs, **apply_kwargs):
    ours_init, ours_apply = make(stax)
    theirs_init, theirs_apply = make(jax_stax)
    ours_shape, ours_params = ours_init(minijax.random.PRNGKey(0), input_shape)
    theirs_shape, theirs_params = theirs_init(jax.random.PRNGKey(0), input_shape)
    assert tuple(ours_shape) == tuple(theirs_shape)
    assert_trees_match(ours_params, theirs_params)
    ours = minijax.jit(lambda p, x: ours_apply(p, x, **apply_kwargs))(ours_params, inputs)
    theirs = jax.jit(lambda p, x: theirs_apply(p, x, **apply_kwargs))(theirs_params, inputs)
    assert_trees_match(ours, theirs, **TOL)
    return ours_params, ours_apply, theirs_params


def test_serial_mlp_init_apply_and_grad():
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    params, apply, jax_params = _compare_layer(_net, (-1, 5), x)
    ours = minijax.grad(lambda p: mnp.sum(apply(p, x)[:, 0]))(params)
    # JAX's side as one program (eagerly, a compile per distinct operation)
    theirs = jax.jit(jax.grad(lambda p: jax.numpy.sum(_net(jax_stax)[1](p, x)[:, 0])))(
        jax_params)
    assert_trees_match(ours, theirs, **TOL)


@pytest.mark.parametrize("name", ["Sigmoid", "Elu", "Softplus", "Gelu", "Softmax", "Exp",
                                  "LeakyRelu", "Selu", "Identity"])
def test_elementwise_layers(name):
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    _compare_layer(lambda lib: getattr(lib, name), (3, 4), x)


def test_fan_out_parallel_fan_in():
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    for fan_in in ("sum", "concat"):
        def make(lib):
            join = lib.FanInSum if fan_in == "sum" else lib.FanInConcat(axis=-1)
            return lib.serial(lib.FanOut(2), lib.parallel(lib.Dense(4), lib.Identity),
                              lib.parallel(lib.Identity, lib.Dense(4)), join)
        _compare_layer(make, (2, 3), x)
    _compare_layer(lambda lib: lib.serial(lib.FanOut(3), lib.parallel(lib.Dense(2),
                                                                      lib.Dense(5),
                                                                      lib.Tanh),
                                          lib.FanInConcat(axis=1)), (2, 3), x)


def test_flatten_batchnorm_shape_dependent():
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    _compare_layer(lambda lib: lib.serial(lib.BatchNorm(axis=(0, 1)), lib.Flatten,
                                          lib.Dense(2)), (2, 3, 4), x)
    _compare_layer(lambda lib: lib.BatchNorm(axis=0, center=False), (2, 3, 4), x)
    _compare_layer(lambda lib: lib.shape_dependent(lambda shape: lib.Dense(shape[-1])),
                   (2, 3, 4), x)


def test_dropout():
    x = np.ones((4, 5), np.float32)
    key = minijax.random.PRNGKey(3)
    init, apply = stax.Dropout(0.7)
    _, params = init(key, (4, 5))
    ours = minijax.jit(lambda x, k: apply(params, x, rng=k))(x, key)
    theirs = jax_stax.Dropout(0.7)[1]((), x, rng=jax.random.PRNGKey(3))
    assert_trees_match(ours, theirs)
    np.testing.assert_array_equal(stax.Dropout(0.7, mode="test")[1]((), x, rng=key), x)
    with pytest.raises(ValueError, match="PRNG key"):
        apply(params, x)
    # Inside serial, the layer gets its own split of the key.
    net_init, net_apply = stax.serial(stax.Dense(5), stax.Dropout(0.5))
    jax_init, jax_apply = jax_stax.serial(jax_stax.Dense(5), jax_stax.Dropout(0.5))
    _, p = net_init(minijax.random.PRNGKey(0), (4, 5))
    _, jp = jax_init(jax.random.PRNGKey(0), (4, 5))
    assert_trees_match(net_apply(p, x, rng=minijax.random.PRNGKey(9)),
                                       jax_apply(jp, x, rng=jax.random.PRNGKey(9)), **TOL)


@pytest.mark.skipif(not hasattr(minijax.lax, "conv_general_dilated"),
                    reason="minijax.lax.conv_general_dilated comes from the conv branch")
@pytest.mark.parametrize("padding", ["VALID", "SAME", ((1, 0), (0, 2))])
def test_conv(padding):
    x = np.random.default_rng(3).standard_normal((2, 6, 5, 3)).astype(np.float32)
    _compare_layer(lambda lib: lib.serial(lib.Conv(4, (3, 2), strides=(2, 1), padding=padding),
                                          lib.Relu, lib.Flatten, lib.Dense(2)),
                   (2, 6, 5, 3), x)
    _compare_layer(lambda lib: lib.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (2, 2),
                                               padding=padding), (2, 3, 6, 5),
                   x.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv_transpose(padding):
    x = np.random.default_rng(4).standard_normal((2, 4, 3, 3)).astype(np.float32)
    _compare_layer(lambda lib: lib.serial(lib.ConvTranspose(2, (3, 2), strides=(2, 1),
                                                            padding=padding),
                                          lib.Flatten, lib.Dense(2)), (2, 4, 3, 3), x)
    _compare_layer(lambda lib: lib.Conv1DTranspose(3, (2,), strides=(3,), padding=padding),
                   (2, 4, 3), x[..., 0])
    _compare_layer(lambda lib: lib.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 2, (2, 2),
                                                        padding=padding), (2, 3, 4, 3),
                   x.transpose(0, 3, 1, 2))


def test_old_short_names():
    key, shape = minijax.random.PRNGKey(5), (3, 4)
    assert_trees_match(stax.glorot()(key, shape),
                       jax_stax.glorot()(jax.random.PRNGKey(5), shape))
    assert_trees_match(stax.randn(0.5)(key, shape),
                       jax_stax.randn(0.5)(jax.random.PRNGKey(5), shape))
    x = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)
    assert_trees_match(stax.logsoftmax(x), jax_stax.logsoftmax(x), **TOL)


@pytest.mark.skipif(not hasattr(minijax.lax, "reduce_window"),
                    reason="minijax.lax.reduce_window comes from the conv branch")
@pytest.mark.parametrize("name", ["MaxPool", "AvgPool", "SumPool"])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pooling(name, padding):
    x = np.random.default_rng(4).standard_normal((2, 5, 6, 3)).astype(np.float32)
    _compare_layer(lambda lib: getattr(lib, name)((2, 3), strides=(2, 2), padding=padding),
                   (2, 5, 6, 3), x)
    _compare_layer(lambda lib: getattr(lib, name)((2, 2), spec="NCHW"), (2, 3, 5, 6),
                   x.transpose(0, 3, 1, 2))


# -- test_util.check_grads ----------------------------------------------------------------

def test_check_grads_passes_on_correct_derivatives():
    check_grads(lambda x, y: mnp.sin(x) * y, (np.float32(0.3), np.ones(3, np.float32)),
                order=2)
    check_grads(minijax.nn.softplus, (np.linspace(-2, 2, 5, dtype=np.float32),), order=2,
                modes=("rev",))
    check_grads(lambda t: {"out": mnp.tanh(t["a"]) @ t["b"]},
                ({"a": np.ones((2, 3), np.float32), "b": np.ones(3, np.float32)},), order=1,
                modes=("fwd",))
    check_grads(mnp.exp, (np.array([0.1, 0.2], np.float32),), order=3, atol=1e-2,
                rtol=1e-2, eps=1e-3)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_derivative(modes):
    wrong = minijax.custom_jvp(lambda x: mnp.sin(x))
    wrong.defjvps(lambda t, ans, x: t * 2.0)
    with pytest.raises(AssertionError, match="JVP" if modes == ("fwd",) else "VJP"):
        check_grads(wrong, (np.float32(0.3),), order=1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    # Right first derivative (cos), wrong second: the rule's tangent ignores x's tangent.
    wrong = minijax.custom_jvp(lambda x: mnp.sin(x))
    wrong.defjvps(lambda t, ans, x: t * minijax.lax.stop_gradient(mnp.cos(x)))
    check_grads(wrong, (np.float32(0.3),), order=1)
    with pytest.raises(AssertionError):
        check_grads(wrong, (np.float32(0.3),), order=2)


def test_check_grads_rejects_unknown_modes():
    with pytest.raises(ValueError, match="modes"):
        check_grads(mnp.sin, (np.float32(1.0),), order=1, modes=("forward",))
