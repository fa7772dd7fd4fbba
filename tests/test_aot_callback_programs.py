"""Programs in the manner of JAX's pages on ahead-of-time lowering, exporting, external
callbacks, type promotion, errors and the runtime APIs, run unchanged on JAX and on
minijax (`import jax`, no mention of minijax; `jax` is resolved to each library in
turn, as in tests/test_tutorial_programs.py). `main()`'s results must agree: arrays
in value, dtype and weak type, text exactly. The first programs pin the gaps these
pages exposed (session 23); the rest keep the pages' other lessons honest.
"""
from __future__ import annotations

import jax
import pytest

from minijax.testing import assert_trees_match
from tests.test_tutorial_programs import run_source

PROGRAMS = {}

# "Type promotion semantics": jnp.promote_types takes Python's int, float and complex
# as weakly typed (its docstring: promote_types('uint8', int) is uint8) and does not
# canonicalize its answer. minijax's made them 32-bit strong types.
PROGRAMS["promote_types_of_python_types"] = """
import jax.numpy as jnp
import numpy as np

def main():
    pairs = [("uint8", int), ("float16", float), ("bfloat16", complex), (int, float),
             ("int8", "uint8"), ("int64", "int8"), (np.int64, np.uint64), (bool, int)]
    out = [str(jnp.promote_types(a, b)) for a, b in pairs]
    x = jnp.arange(3, dtype=jnp.uint8)
    return out, x.astype(jnp.promote_types(x.dtype, int)) + 1
"""

# What the pages' programs hit next (session 23): debug.callback in its recommended
# two-call form, repeat with a traced count and a static total, a copy that survives
# donating it, and a saved program of typed keys.
PROGRAMS["callback_repeat_copy_keys"] = """
import jax
import jax.numpy as jnp
from jax import export

def main():
    seen = []

    @jax.jit
    def f(x, counts):
        jax.debug.callback(ordered=True)(lambda v, tag: seen.append((tag, float(v))),
                                         x.sum(), "sum")
        return jnp.repeat(x, counts, total_repeat_length=5)
    out = f(jnp.arange(3.0), jnp.array([2, 0, 4]))
    jax.effects_barrier()
    x = jnp.arange(3.0)
    y = jnp.copy(x)
    jax.jit(lambda a: a * 2, donate_argnums=0)(y)
    key = jax.random.key(1)
    saved = export.export(jax.jit(lambda k: jax.random.uniform(k, (2,))))(key)
    return out, seen, x.is_deleted(), x, saved.call(key), str(saved.in_avals)
"""

# "Ahead-of-time lowering and compilation": the whole trace -> lower -> compile path,
# the facts each stage knows, and calls of the executable with the wrong arguments
# (TypeError in both; minijax's message names the argument and both types).
PROGRAMS["aot_stages"] = """
import jax
import jax.numpy as jnp

def f(x, y):
    return 2 * x + y

def main():
    traced = jax.jit(f).trace(3, 4)
    lowered = traced.lower()
    compiled = lowered.compile()
    facts = [str(lowered.in_tree), str(lowered.out_info), str(lowered.args_info),
             "stablehlo" in lowered.as_text(), type(compiled.cost_analysis()).__name__,
             compiled.memory_analysis() is not None, str(traced.jaxpr.in_avals)]
    refused = []
    for args in [(1.0, 2), (jnp.ones(3), 2), (1,)]:
        try:
            compiled(*args)
        except TypeError as e:
            refused.append(type(e).__name__)
    i32 = jax.ShapeDtypeStruct((), jnp.int32)
    again = jax.jit(f).lower(i32, i32).compile()
    g = jax.jit(lambda x, n: x * n, static_argnums=1).lower(jnp.ones(2), 3).compile()
    return facts, refused, compiled(3, 4), again(jnp.int32(5), jnp.int32(1)), g(jnp.ones(2))
"""

# "Exporting and serializing staged-out computations": export, serialize with a VJP,
# deserialize, call eagerly, under jit and under grad; a call of the wrong shape is
# refused.
PROGRAMS["export_round_trip"] = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import export

def main():
    f = jax.jit(lambda d, s: {"a": jnp.sin(d["x"]) * s, "b": [d["y"].sum()]})
    spec = {"x": jax.ShapeDtypeStruct((4,), jnp.float32),
            "y": jax.ShapeDtypeStruct((2, 3), jnp.float32)}
    exp = export.export(f)(spec, 2.0)
    again = export.deserialize(exp.serialize(vjp_order=1))
    d = {"x": np.arange(4, dtype=np.float32), "y": np.ones((2, 3), np.float32)}
    facts = [str(again.in_avals), str(again.out_avals), str(again.in_tree),
             str(again.out_tree), str(again.platforms), again.fun_name]
    try:
        again.call({"x": np.ones(5, np.float32), "y": d["y"]}, 2.0)
    except ValueError as e:
        facts.append(type(e).__name__)
    grad = jax.grad(lambda x: again.call({"x": x, "y": d["y"]}, 3.0)["a"].sum())(d["x"])
    return facts, again.call(d, 2.0), jax.jit(again.call)(d, 1.5), grad
"""

# "External callbacks": pure_callback under vmap with each vmap_method (how many host
# calls, of which shapes), under grad through custom_jvp, and ordered io_callback in
# a scan under jit (the host sees the steps in order).
PROGRAMS["callbacks"] = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

def main():
    results = {}
    for method in ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"]:
        shapes = []
        def host(x, y):
            shapes.append(f"{x.shape} {y.shape}")
            return (np.sin(x) * y).astype(np.float32)
        def g(x, y):
            out = jax.ShapeDtypeStruct(jnp.broadcast_shapes(x.shape, y.shape), x.dtype)
            return jax.pure_callback(host, out, x, y, vmap_method=method)
        value = jax.jit(jax.vmap(g, in_axes=(0, None)))(jnp.ones((3, 2)), jnp.arange(2.0))
        results[method] = (value, shapes)

    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(lambda v: np.sin(v).astype(v.dtype),
                                 jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                 vmap_method="sequential")
    host_sin.defjvp(lambda p, t: (host_sin(p[0]), jnp.cos(p[0]) * t[0]))
    grads = jax.vmap(jax.grad(host_sin))(jnp.arange(3.0))

    seen = []
    def record(x):
        seen.append(int(x))
        return np.int32(x * 2)
    def body(c, x):
        y = io_callback(record, jax.ShapeDtypeStruct((), jnp.int32), x, ordered=True)
        return c + y, y
    carry = jax.jit(lambda xs: jax.lax.scan(body, 0, xs))(jnp.arange(4))
    jax.effects_barrier()
    return results, grads, carry, seen
"""

# The jax.errors page: the class raised for each mistake a traced value makes, a
# traced reduction axis among them (minijax's was a plain TypeError).
PROGRAMS["error_classes"] = """
import jax
import jax.numpy as jnp
import numpy as np

def main():
    x = jnp.arange(3.0)
    mistakes = [lambda v: v if v[0] > 0 else -v, lambda v: np.asarray(v),
                lambda v: [1, 2, 3][v.astype(int)[0]], lambda v: v[v > 0],
                lambda v: jnp.sum(v, axis=v.astype(int)[0]), lambda v: v.max(axis=v.argmax())]
    raised = []
    for mistake in mistakes:
        try:
            jax.jit(mistake)(x)
        except Exception as e:
            raised.append(type(e).__name__)
    return raised
"""

# Runtime APIs: placement, copies to the host, Array attributes, named scopes and
# profiler annotations (which change nothing computed).
PROGRAMS["runtime_apis"] = """
import jax
import jax.numpy as jnp
import numpy as np

def main():
    d = jax.devices()[0]
    x = jax.device_put(np.arange(6.0, dtype=np.float32).reshape(2, 3), d)
    host = jax.device_get({"x": x, "n": 2})
    with jax.named_scope("outer"):
        y = jax.jit(jax.named_call(lambda a: a * 2, name="double"))(x)
    with jax.profiler.TraceAnnotation("step"):
        z = jax.profiler.annotate_function(lambda a: a + 1, name="inc")(y)
    facts = [type(host["x"]).__name__, x.devices() == {d}, x.nbytes, x.itemsize,
             x.is_fully_replicated, str(jax.typeof(x)), str(x.mT.shape)]
    return facts, jax.block_until_ready(z), x.at[0, 5].get(mode="fill", fill_value=-1.0)
"""


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_agrees_with_jax(name):
    expected = run_source(PROGRAMS[name], "jax")
    actual = run_source(PROGRAMS[name], "minijax")
    is_text = lambda v: isinstance(v, (str, bool, int))
    texts = lambda tree: [v for v in jax.tree.leaves(tree, is_leaf=is_text) if is_text(v)]
    arrays = lambda tree: jax.tree.map(lambda v: None if is_text(v) else v, tree,
                                       is_leaf=is_text)
    assert texts(actual) == texts(expected)
    assert_trees_match(arrays(actual), arrays(expected))
