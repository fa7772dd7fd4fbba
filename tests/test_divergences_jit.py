"""Pins for `minijax/divergences/jit.py` and the records of this session in
`minijax/divergences/refs_jit.py`: valid programs that JAX fails on only under
`jax.jit`. Each test asserts JAX's behaviour on the installed version *and*
minijax's; when a JAX release changes one, its test fails and the record can be
revisited."""
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.nn as mnn
import minijax.numpy as mjnp
from minijax import lax as mlax
from minijax.backends.xla import barrier_between_scatter_and_rev
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins

V = np.array([1.0, 2.0, 3.0], np.float32)

# -- rev of a scatter that overwrites its whole operand -----------------------------------

# In a child process: XLA's CHECK failure kills the process that compiles the program.
_JAX_FLIP_OF_WHOLE_SCATTER = textwrap.dedent("""
    import jax, jax.numpy as jnp
    f = lambda x: jnp.flip(jnp.zeros(2).at[:].set(x))
    print("eager", f(jnp.arange(2.)).tolist(), flush=True)
    print("jit", jax.jit(f)(jnp.arange(2.)).tolist(), flush=True)
""")

# `.at[:].set` as JAX lowers it: a scatter with no indices whose window is the operand.
_WHOLE_WINDOW = mlax.ScatterDimensionNumbers(update_window_dims=(0,),
                                             inserted_window_dims=(),
                                             scatter_dims_to_operand_dims=())
_NO_INDICES = np.zeros((0,), np.int32)


def _flip_of_whole_scatter(x):
    return mlax.rev(mlax.scatter(mjnp.zeros(2), _NO_INDICES, x, _WHOLE_WINDOW), (0,))


def _flip_in_a_call_of_whole_scatter_add(x):
    flip = minijax.jit(mjnp.flip)
    return flip(mlax.scatter_add(mjnp.zeros(2), _NO_INDICES, x, _WHOLE_WINDOW))


@pins("xla_aborts_on_rev_of_a_whole_operand_scatter")
def test_rev_of_whole_operand_scatter():
    child = subprocess.run([sys.executable, "-c", _JAX_FLIP_OF_WHOLE_SCATTER],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode != 0
    assert "eager [1.0, 0.0]" in child.stdout and "jit" not in child.stdout
    assert "Invalid binary instruction opcode map" in child.stderr

    x = np.arange(2, dtype=np.float32)
    expected = jnp.flip(jnp.zeros(2).at[:].set(x))
    for f in (lambda x: mjnp.flip(mjnp.zeros(2).at[:].set(x)),
              lambda x: mjnp.flip(mjnp.zeros(2).at[:].add(x)),
              _flip_of_whole_scatter, _flip_in_a_call_of_whole_scatter_add):
        for run in (f, minijax.jit(f)):
            assert_trees_match(run(x), expected)


def test_the_barrier_goes_only_between_a_scatter_and_a_rev():
    x = np.arange(2, dtype=np.float32)

    def barriers(f):
        jaxpr = minijax.make_jaxpr(f)(x).jaxpr
        rewritten = barrier_between_scatter_and_rev(jaxpr)
        if rewritten is jaxpr:
            return 0
        return sum(eqn.primitive.name == "optimization_barrier" for eqn in rewritten.eqns)
    assert barriers(_flip_of_whole_scatter) == 1
    assert barriers(_flip_in_a_call_of_whole_scatter_add) == 1
    assert barriers(lambda x: mjnp.flip(mjnp.sin(x))) == 0
    assert barriers(lambda x: mlax.scatter(mjnp.zeros(2), _NO_INDICES, x, _WHOLE_WINDOW)) == 0
    assert barriers(lambda x: mjnp.flip(mlax.scatter(mjnp.zeros(2), _NO_INDICES, x,
                                                     _WHOLE_WINDOW) * 2.0)) == 0


# -- jit of the vjp of an integer-array index set of a ref, NumPy cotangent ---------------

def _indexed_set(lib):
    def f(x):
        r = lib.new_ref(lib.numpy.zeros(3, np.float32))
        r[np.array([0, 1, 2])] = x * x
        return r[...]
    return f


@pins("jax_jit_of_vjp_of_indexed_ref_set_with_numpy_cotangent_fails")
def test_jit_of_vjp_of_indexed_ref_set_with_numpy_cotangent():
    f, ct = _indexed_set(jax), np.ones(3, np.float32)
    expected = jax.vjp(f, V)[1](ct)
    if JAX_VERSION >= (0, 11):      # fixed in 0.11.2: the closed-over cotangent works
        assert_trees_match(jax.jit(lambda x: jax.vjp(f, x)[1](ct))(V), expected)
    else:
        with pytest.raises(AttributeError,
                           match="'TypedNdArray' object has no attribute 'at'"):
            jax.jit(lambda x: jax.vjp(f, x)[1](ct))(V)
    assert_trees_match(jax.jit(lambda x, c: jax.vjp(f, x)[1](c))(V, ct), expected)

    g = _indexed_set(minijax)
    assert_trees_match(minijax.jit(lambda x: minijax.vjp(g, x)[1](ct))(V), expected)
    assert_trees_match(minijax.vjp(g, V)[1](ct), expected)


@pins("jax_jit_of_float16_dot_product_attention_fails_on_cpu")
def test_jit_of_float16_dot_product_attention():
    q = np.random.default_rng(0).normal(size=(1, 3, 2, 4)).astype(np.float16)
    expected = jax.nn.dot_product_attention(q, q, q)            # JAX, eagerly: runs
    if jax.default_backend() == "cpu":
        with pytest.raises(ValueError, match="F16_F16_F32"):
            jax.jit(jax.nn.dot_product_attention)(q, q, q)
    for ours in (mnn.dot_product_attention(q, q, q),
                 minijax.jit(mnn.dot_product_attention)(q, q, q)):
        assert ours.dtype == np.float16
        assert_trees_match(ours, expected)


# -- explain_cache_misses on a static argument's new value ---------------------------------

def _explained_static_change(lib, caplog):
    def times(x, n):
        return x * n
    f = lib.jit(times, static_argnums=1)
    f(V, 1)
    with caplog.at_level("WARNING"), lib.explain_cache_misses(True):
        caplog.clear()
        f(V, 3)
    return "\n".join(r.getMessage() for r in caplog.records
                     if r.getMessage().startswith("TRACING CACHE MISS"))


@pins("jax_explain_cache_misses_cannot_explain_a_static_argument_change")
def test_explain_cache_misses_of_a_static_argument_change(caplog):
    explained = _explained_static_change(jax, caplog)
    if JAX_VERSION >= (0, 11):
        assert explained.endswith("cache miss explanation unavailable")
    else:      # the intended answer, in JAX's internal terms: the static node's value
        assert "Static(val=3)" in explained and "Static(val=1)" in explained
    assert _explained_static_change(minijax, caplog).endswith(
        "different static arguments:\n  * at n (by position), now 3 and before 1")
