"""`nn.dot_product_attention` and `nn.logmeanexp`, against JAX: values, dtypes, weak
types, under jit, grad and vmap, and the errors JAX raises for bad shapes and dtypes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.nn as mnn
from minijax.testing import assert_trees_match
from tests.program_counting import programs

TOL = dict(rtol=1e-5, atol=1e-6)
_rng = np.random.default_rng(0)


def _normal(*shape, dtype=np.float32):
    return _rng.normal(size=shape).astype(dtype)


Q, K, V = _normal(2, 3, 4, 8), _normal(2, 5, 2, 8), _normal(2, 5, 2, 8)
OPTIONS = {
    "plain": {},
    "causal": dict(is_causal=True),
    "bias per head and mask broadcast": dict(bias=_normal(2, 4, 3, 5),
                                             mask=_normal(1, 1, 3, 5) > 0, scale=0.3),
    "bias broadcast over heads and mask per head": dict(bias=_normal(1, 1, 3, 5),
                                                        mask=_normal(2, 4, 3, 5) > -0.5),
    "padding and window": dict(query_seq_lengths=np.array([2, 3], np.int32),
                               key_value_seq_lengths=np.array([4, 1], np.int32),
                               local_window_size=(1, 2)),
    "window as one int, causal": dict(local_window_size=1, is_causal=True),
    "residual": dict(return_residual=True, is_causal=True),
}


@pytest.mark.parametrize("option", list(OPTIONS))
def test_dot_product_attention_matches_jax(option):
    kw = OPTIONS[option]
    # JAX's side runs jitted only (one program, not one per op); minijax's eager result
    # and its jitted one are both compared with it
    expected = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **kw))(Q, K, V)
    assert_trees_match(mnn.dot_product_attention(Q, K, V, **kw), expected, **TOL)
    assert_trees_match(minijax.jit(lambda q, k, v: mnn.dot_product_attention(q, k, v, **kw))(Q, K, V),
                       expected, **TOL)


def test_dot_product_attention_grad_and_vmap_match_jax():
    def loss(attention, np_lib):
        return lambda q, k, v: np_lib.sum(attention(q, k, v, is_causal=True) ** 2)
    assert_trees_match(minijax.grad(loss(mnn.dot_product_attention, minijax.numpy), (0, 1, 2))(Q, K, V),
                       jax.jit(jax.grad(loss(jax.nn.dot_product_attention, jnp), (0, 1, 2)))(
                           Q, K, V),
                       rtol=1e-4, atol=1e-5)
    # rank-3 inputs are one batch; vmap supplies the batch instead
    assert_trees_match(minijax.vmap(mnn.dot_product_attention)(Q, K, V),
                       jax.jit(jax.vmap(jax.nn.dot_product_attention))(Q, K, V), **TOL)
    assert_trees_match(mnn.dot_product_attention(Q[0], K[0], V[0]),
                       jax.jit(jax.nn.dot_product_attention)(Q[0], K[0], V[0]), **TOL)


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_dot_product_attention_in_half_precision(dtype):
    q, k, v = (x.astype(dtype) for x in (Q, K, V))
    ours = mnn.dot_product_attention(q, k, v, is_causal=True)
    theirs = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    assert ours.dtype == theirs.dtype == dtype
    np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(theirs, np.float32),
                               rtol=2e-2, atol=2e-2)


BAD = {
    "value shape": (lambda: (Q, K, V[:, :4]), {}, "value shape should be"),
    "query dtype": (lambda: (Q.astype(np.float16), K, V), {}, "query dtype should be"),
    "mask dtype": (lambda: (Q, K, V), dict(mask=np.ones((1, 1, 3, 5), np.float32)),
                   "mask dtype should be bool"),
    "heads": (lambda: (_normal(2, 3, 3, 8), K, V), {}, "multiple of key/value heads"),
    "lengths dtype": (lambda: (Q, K, V), dict(query_seq_lengths=np.array([1.0, 2.0])),
                      "query_seq_lengths dtype should be int32"),
    "implementation": (lambda: (Q, K, V), dict(implementation="flash"),
                       "Unsupported implementation"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_dot_product_attention_errors_as_in_jax(case):
    make, kw, message = BAD[case]
    for attention in (mnn.dot_product_attention, jax.nn.dot_product_attention):
        with pytest.raises(ValueError, match=message):
            attention(*make(), **kw)


# -- logmeanexp --------------------------------------------------------------------------------

X = _normal(3, 4)
LOGMEANEXP = [dict(), dict(axis=1), dict(axis=(0, 1), keepdims=True), dict(where=X > 0),
              dict(axis=0, where=np.array([True, False, True, True]), keepdims=True)]


@pytest.mark.parametrize("kw", LOGMEANEXP, ids=str)
def test_logmeanexp_matches_jax(kw):
    # JAX's side runs jitted (one program, not one per op); minijax's runs eagerly too
    expected = jax.jit(lambda x: jax.nn.logmeanexp(x, **kw))(X)
    assert_trees_match(mnn.logmeanexp(X, **kw), expected, **TOL)
    assert_trees_match(minijax.jit(lambda x: mnn.logmeanexp(x, **kw))(X), expected, **TOL)
    assert_trees_match(minijax.grad(lambda x: minijax.numpy.sum(mnn.logmeanexp(x, **kw)))(X),
                       jax.jit(jax.grad(lambda x: jnp.sum(jax.nn.logmeanexp(x, **kw))))(X),
                       **TOL)
    assert_trees_match(minijax.vmap(lambda x: mnn.logmeanexp(x, **kw))(np.stack([X, X + 1])),
                       jax.jit(jax.vmap(lambda x: jax.nn.logmeanexp(x, **kw)))(
                           np.stack([X, X + 1])), **TOL)


@pytest.mark.parametrize("x", [1.0, np.float16(0.5), np.arange(3, dtype=np.int32)], ids=str)
def test_logmeanexp_dtypes_and_weak_types_as_jax(x):
    assert_trees_match(mnn.logmeanexp(x), jax.nn.logmeanexp(x), **TOL)


# -- eager calls compile whole, as JAX's jitted nn functions -------------------------------

EAGER_WHOLE = {
    "logmeanexp": (lambda nn, x: nn.logmeanexp(x, axis=1, keepdims=True), "logmeanexp"),
    "log_softmax": (lambda nn, x: nn.log_softmax(x, axis=0, where=x > -1), "log_softmax"),
    "standardize": (lambda nn, x: nn.standardize(x, algorithm="stable"), "standardize"),
    "one_hot": (lambda nn, x: nn.one_hot(np.int32([0, 2, 5]), 4, axis=0), "_one_hot"),
    "silu": (lambda nn, x: nn.silu(x), "silu"),
    "elu": (lambda nn, x: nn.elu(x, 0.5), "elu"),
}


@pytest.mark.parametrize("name", list(EAGER_WHOLE))
def test_eager_nn_functions_run_as_one_cached_program_as_in_jax(name):
    """JAX jits these; an eager call runs one cached compiled program too (JAX's static
    arguments), and a traced program holds the body inline (no nested jit)."""
    call, function_name = EAGER_WHOLE[name]
    wrapped = getattr(mnn.functions, function_name).eager_jit
    wrapped.clear_cache()
    assert wrapped.call_cache().fast is None
    with programs("compiled") as compiles:
        ours, again = call(mnn, X), call(mnn, X)
    assert len(compiles) == 1 and wrapped.call_cache().fast is not None
    expected = call(jax.nn, X)       # one jitted program in JAX too
    assert_trees_match(ours, expected, **TOL)
    assert_trees_match(again, expected, **TOL)
    names = [e.primitive.name for e in minijax.make_jaxpr(lambda x: call(mnn, x))(X).jaxpr.eqns]
    assert "jit" not in names
