"""`minijax.nn` against `jax.nn`: values, dtypes and weak types eagerly and under jit,
gradients (including at the kinks, where JAX's custom derivatives decide), vmap."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION
from tests.devices import assert_same_bits
from tests.library_helpers import check_everywhere, randn

# Inputs that include the kinks (0, 6, +-1, -3, 3) and large magnitudes.
X = np.array([[-30.0, -3.0, -1.0, -0.5, 0.0, 0.5], [1.0, 3.0, 6.0, 7.5, 30.0, 90.0]],
             np.float32)

ELEMENTWISE = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
               "swish", "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh",
               "hard_sigmoid", "hard_silu", "hard_swish", "identity", "mish", "squareplus",
               "sparse_plus", "sparse_sigmoid"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation(name):
    check_everywhere(lambda mod, x: getattr(mod.nn, name)(x), X)


@pytest.mark.parametrize("name", ["relu", "softplus", "gelu", "elu", "selu", "hard_tanh"])
def test_activation_of_python_scalars_and_ints(name):
    # A Python scalar gives a weak result; an int32 array a float (or, relu, int) one.
    check_everywhere(lambda mod: getattr(mod.nn, name)(1.5), grad=False, vmap=False)
    ints = np.array([-2, 0, 3], np.int32)
    check_everywhere(lambda mod, x: getattr(mod.nn, name)(x), ints, grad=False,
                     concrete_weak_types=False)


def test_sigmoid_of_ints_is_a_type_error_as_in_jax():
    with pytest.raises(TypeError, match="logistic"):
        jax.nn.sigmoid(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="logistic"):
        minijax.nn.sigmoid(np.array([1, 2], np.int32))


def test_log1mexp():
    x = np.array([[1e-4, 0.3, 0.69], [0.7, 5.0, 40.0]], np.float32)
    check_everywhere(lambda mod, x: mod.nn.log1mexp(x), x)


def test_gelu_exact_and_parameters():
    check_everywhere(lambda mod, x: mod.nn.gelu(x, approximate=False), X)
    check_everywhere(lambda mod, x: (mod.nn.elu(x, 0.5), mod.nn.celu(x, 2.0),
                                     mod.nn.leaky_relu(x, 0.2)), X)


def test_relu_gradient_at_zero_is_zero():
    assert minijax.grad(minijax.nn.relu)(0.0) == jax.grad(jax.nn.relu)(0.0) == 0.0
    for x in (0.0, 6.0):
        assert minijax.grad(minijax.nn.relu6)(x) == jax.grad(jax.nn.relu6)(x) == 0.0


def test_logaddexp_gradient_splits_ties_and_survives_infinities():
    # jnp.logaddexp carries JAX's custom_jvp: half the gradient to each side at a tie
    # (softplus and log_sigmoid at 0 depend on it), and no NaN from inf - inf.
    x = np.array([0.0, 1.0, np.inf, -np.inf, 3.0], np.float32)
    y = np.array([0.0, 1.0, 2.0, -np.inf, np.inf], np.float32)
    check_everywhere(lambda mod, x, y: mod.numpy.logaddexp(x, y), x, y, argnums=(0, 1))


def test_softplus_is_stable_for_large_inputs():
    big = np.array([-1000.0, 1000.0], np.float32)
    np.testing.assert_array_equal(minijax.nn.softplus(big), [0.0, 1000.0])
    check_everywhere(lambda mod, x: mod.nn.softplus(x), big)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_and_log_softmax(axis):
    x = randn(3, 4)
    check_everywhere(lambda mod, x: (mod.nn.softmax(x, axis=axis),
                                     mod.nn.log_softmax(x, axis=axis)), x,
                     vmap=axis == -1)


def test_softmax_with_where():
    x = randn(3, 4)
    where = np.array([[True, False, True, True]] * 3)
    check_everywhere(lambda mod, x: (mod.nn.softmax(x, where=where),
                                     mod.nn.log_softmax(x, where=where)), x, vmap=False)


def test_softmax_of_large_and_infinite_logits():
    x = np.array([[1000.0, 0.0, -np.inf], [-np.inf, 5.0, 5.0]], np.float32)
    check_everywhere(lambda mod, x: (mod.nn.softmax(x), mod.nn.log_softmax(x)), x,
                     grad=False)


def test_logsumexp_is_scipys():
    x = randn(3, 5, scale=50)
    check_everywhere(lambda mod, x: mod.nn.logsumexp(x), x)
    check_everywhere(lambda mod, x: mod.nn.logsumexp(x, axis=1), x, vmap=False)


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(algorithm):
    # "fast" (mean(x^2) - mean(x)^2) cancels, so XLA's fusion choices show in the result.
    tol = dict(rtol=1e-3, atol=1e-4) if algorithm == "fast" else {}
    x = randn(3, 6, shift=2.0)
    check_everywhere(lambda mod, x: mod.nn.standardize(x, algorithm=algorithm), x, **tol)
    check_everywhere(lambda mod, x: mod.nn.standardize(x, axis=0, epsilon=1e-3,
                                                       algorithm=algorithm), x, vmap=False,
                     **tol)
    mask = np.array([True, True, False, True, False, True])
    check_everywhere(lambda mod, x: mod.nn.standardize(x, where=mask, algorithm=algorithm), x,
                     **tol)


def test_standardize_with_given_moments_and_bad_algorithm():
    x = randn(2, 4)
    check_everywhere(lambda mod, x: mod.nn.standardize(x, mean=0.5, variance=2.0), x)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        minijax.nn.standardize(x, algorithm="exact")


def test_glu():
    check_everywhere(lambda mod, x: mod.nn.glu(x), randn(3, 4))
    with pytest.raises(ValueError, match="even"):
        minijax.nn.glu(randn(3, 5))


ONE_HOT_LABELS = np.array([[0, 2, 5], [-1, 1, 1]], np.int32)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    check_everywhere(lambda mod, x: mod.nn.one_hot(x, 4, axis=axis), ONE_HOT_LABELS,
                     grad=False)


def test_one_hot_dtype():
    # (was checked once per axis above, the same check three times)
    check_everywhere(lambda mod, x: mod.nn.one_hot(x, 3, dtype=np.int32), ONE_HOT_LABELS,
                     grad=False)


def test_one_hot_needs_a_concrete_class_count():
    with pytest.raises(TypeError, match="num_classes"):
        minijax.jit(lambda n: minijax.nn.one_hot(np.array([1]), n))(3)


# -- initializers ------------------------------------------------------------------------

_SCHEMES = ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
            "lecun_uniform", "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform",
            "kaiming_normal"]


def _same_parameters(ours, theirs):
    assert_same_bits(ours, theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape


@pytest.mark.parametrize("name", _SCHEMES)
def test_named_initializers_draw_jaxs_parameters(name):
    for shape in [(3, 4), (2, 3, 5)]:
        ours = getattr(minijax.nn.initializers, name)()(minijax.random.key(3), shape)
        theirs = getattr(jax.nn.initializers, name)()(jax.random.key(3), shape)
        _same_parameters(ours, theirs)


def _geo_avg_normal(init):
    return init.variance_scaling(0.7, "fan_geo_avg", "normal", in_axis=0, out_axis=(1, 2))


def _jax_parameters(make, key, shape, dtype=None):
    init = make(jax.nn.initializers)
    if make is _geo_avg_normal and JAX_VERSION < (0, 12):
        # JAX 0.10/0.11 eagerly scale sqrt(2) * erf_inv(u), one rounding from their own
        # jit (where XLA multiplies the constants first); 0.12 and minijax give the
        # jitted value eagerly too.
        return jax.jit(init, static_argnums=(1, 2))(key, shape, dtype)
    return init(key, shape) if dtype is None else init(key, shape, dtype)


@pytest.mark.parametrize("make", [
    lambda init: init.normal(0.5), lambda init: init.uniform(2.0),
    lambda init: init.truncated_normal(0.3, lower=-1.0, upper=3.0),
    lambda init: init.constant(-1.5), lambda init: init.constant(2, dtype=np.int32),
    lambda init: init.zeros, lambda init: init.ones, _geo_avg_normal,
    lambda init: init.variance_scaling(1.3, "fan_out", "uniform", batch_axis=(0,)),
    lambda init: init.he_normal(in_axis=1, out_axis=0)])
def test_initializers_with_parameters(make):
    shape = (2, 3, 4)
    ours = make(minijax.nn.initializers)(minijax.random.PRNGKey(7), shape)
    _same_parameters(ours, _jax_parameters(make, jax.random.PRNGKey(7), shape))
    ours = make(minijax.nn.initializers)(minijax.random.PRNGKey(7), (3, 4, 5), np.float16)
    theirs = _jax_parameters(make, jax.random.PRNGKey(7), (3, 4, 5), np.float16)
    _same_parameters(ours, theirs)


def test_initializer_protocol_checks_as_jaxs():
    # Flax-style modules annotate `kernel_init: jax.nn.initializers.Initializer`.
    ours, theirs = minijax.nn.initializers, jax.nn.initializers
    for value in (lambda i: i.lecun_normal(), lambda i: i.zeros, lambda i: i.constant(1.0),
                  lambda i: (lambda key, shape, dtype=np.float32: None), lambda i: 3.0,
                  lambda i: "normal"):
        assert (isinstance(value(ours), ours.Initializer)
                == isinstance(value(theirs), theirs.Initializer))


def test_initializers_under_jit_and_vmap():
    init = minijax.nn.initializers.glorot_normal()
    keys = minijax.random.split(minijax.random.key(0), 3)
    ours = minijax.jit(minijax.vmap(lambda k: init(k, (2, 3))))(keys)
    jax_init = jax.nn.initializers.glorot_normal()
    theirs = jax.vmap(lambda k: jax_init(k, (2, 3)))(jax.random.split(jax.random.key(0), 3))
    _same_parameters(ours, theirs)


def test_variance_scaling_errors():
    init = minijax.nn.initializers
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_max", "normal")
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="Must be at least 2D"):
        init.glorot_uniform()(minijax.random.key(0), (5,))
