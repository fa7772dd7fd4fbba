"""Programs in the manner of JAX's tutorials, run unchanged on JAX and on minijax.

Each program below exercises what one tutorial teaches (checkify in "Introduction to
debugging", policies in "Gradient checkpointing", custom rules in "Custom derivative
rules", ...), written as a user following it would write it: `import jax`, no mention
of minijax. It runs twice, with `jax` resolved to each library (as the corpus of
tests/programs/ does), and `main()`'s results must agree. The first programs pin gaps
the tutorials exposed; the rest keep the tutorials' other lessons honest.
"""
from __future__ import annotations

import builtins
import textwrap

import jax
import pytest

from minijax.testing import assert_trees_match
from tests.test_programs import _import_resolving_jax_to


def run_source(source: str, library: str):
    namespace = {"__name__": f"tutorial_{library}",
                 "__builtins__": {**vars(builtins),
                                  "__import__": _import_resolving_jax_to(library)}}
    exec(compile(textwrap.dedent(source), f"<tutorial {library}>", "exec",
                 dont_inherit=True), namespace)
    return namespace["main"]()


PROGRAMS = {}

# "Introduction to debugging" / checkify: a Python int index is static, and JAX still
# reports it out of bounds (minijax used to clamp it silently into a static slice).
PROGRAMS["checkify_index_checks"] = """
import jax
import jax.numpy as jnp
from jax.experimental import checkify

def f(x, i):
    return x[i]

def g(x, y):
    checkify.check(y > 0., "y needs to be positive!")
    return x / y

def main():
    checked_f = checkify.checkify(f, errors=checkify.index_checks)
    err, out = checked_f(jnp.ones((3,)), 5)
    err2, out2 = checked_f(jnp.arange(6.).reshape(2, 3), -4)
    err3, out3 = jax.jit(checked_f)(jnp.ones((3,)), 1)
    err4, out4 = jax.jit(checkify.checkify(g))(jnp.array(1.), jnp.array(-2.))
    return [err.get(), out, err2.get(), out2, err3.get(), out3, err4.get(), out4]
"""

# "Gradient checkpointing": the offloading policy (minijax lacked the name).
PROGRAMS["checkpoint_offload_policy"] = """
import jax
import jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name

def g(W, x):
    y = checkpoint_name(jnp.dot(W, x), name="y")
    return jnp.sin(y)

def f(W1, W2, x):
    return jnp.sum(g(W2, g(W1, x)))

def main():
    W1, W2, x = jnp.ones((5, 4)) * 0.1, jnp.ones((3, 5)) * 0.2, jnp.arange(4.)
    policies = jax.checkpoint_policies
    by_name = policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["y"],
        offload_src="device", offload_dst="pinned_host")
    dots = policies.offload_dot_with_no_batch_dims("device", "pinned_host")
    return [jax.grad(jax.checkpoint(f, policy=p), argnums=(0, 1))(W1, W2, x)
            for p in (by_name, dots)]
"""

# "Custom derivative rules": clipping gradients, and a fixed point with a custom_vjp
# whose function argument is nondiff.
PROGRAMS["custom_derivative_rules"] = """
from functools import partial
import jax
import jax.numpy as jnp

@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x

def clip_fwd(lo, hi, x):
    return x, (lo, hi)

def clip_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))

clip_gradient.defvjp(clip_fwd, clip_bwd)

@partial(jax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return jnp.abs(x_prev - x) > 1e-6
    def body_fun(carry):
        _, x = carry
        return x, f(a, x)
    _, x_star = jax.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star

def fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)

def rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]

def fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
    a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, jnp.zeros_like(x_star)

fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

def newton_sqrt(a):
    return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

def main():
    t = jnp.linspace(0., 10., 11)
    clipped = jax.vmap(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))))(t)
    return [clipped, newton_sqrt(2.), jax.grad(newton_sqrt)(2.),
            jax.jit(jax.vmap(jax.grad(newton_sqrt)))(jnp.array([1., 4., 9.]))]
"""

# "Working with pytrees": custom nodes, dataclasses, key paths, transposition.
PROGRAMS["pytrees"] = """
import dataclasses
import jax
import jax.numpy as jnp

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: jax.Array
    b: jax.Array
    act: str = dataclasses.field(metadata=dict(static=True))

class Pair:
    def __init__(self, name, a, b):
        self.name, self.a, self.b = name, a, b

jax.tree_util.register_pytree_node(
    Pair, lambda p: ((p.a, p.b), p.name), lambda name, kids: Pair(name, *kids))

def forward(layers, x):
    for layer in layers:
        x = x @ layer.w + layer.b
        x = jnp.tanh(x) if layer.act == "tanh" else x
    return jnp.sum(x ** 2)

def main():
    layers = [Layer(jnp.ones((3, 4)) * 0.1, jnp.zeros(4), "tanh"),
              Layer(jnp.ones((4, 2)) * 0.2, jnp.ones(2), "id")]
    grads = jax.jit(jax.grad(forward))(layers, jnp.arange(3.))
    new = jax.tree.map(lambda p, g: p - 0.1 * g, layers, grads)
    pair = jax.tree.map(lambda v: v * 2, Pair("p", jnp.ones(2), 3.))
    paths = [jax.tree_util.keystr(p) for p, _ in
             jax.tree_util.tree_flatten_with_path({"a": [1, (2, 3)], "b": new[0]})[0]]
    steps = [dict(t=1, obs=jnp.ones(2)), dict(t=2, obs=jnp.zeros(2))]
    transposed = jax.tree.transpose(jax.tree.structure([0, 0]),
                                    jax.tree.structure(steps[0]), steps)
    # Each run defines its own classes: return their leaves, not the objects.
    return [jax.tree.leaves(new), pair.a, pair.b, pair.name, paths, transposed]
"""

# "Control flow and logical operators with JIT".
PROGRAMS["control_flow"] = """
from functools import partial
import jax
import jax.numpy as jnp
from jax import lax

@partial(jax.jit, static_argnames="n")
def partial_sum(x, n):
    y = 0.
    for i in range(n):
        y = y + x[i]
    return y

def main():
    branches = [lambda x: x - 1, lambda x: x, lambda x: x + 1]
    x = jnp.array([0.])
    switched = [lax.switch(i, branches, x) for i in (-1, 0, 2, 5)]
    cumsum = lax.scan(lambda c, v: (c + v, c), 0., jnp.arange(5.))
    loops = (lax.fori_loop(0, 10, lambda i, c: c + i, 0),
             lax.while_loop(lambda c: c < 10, lambda c: c + 3, 0))
    grads = jax.vmap(jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)))(
        jnp.array([1., -1.]))
    where = jax.jit(lambda x: jnp.where((x > 0) & (x < 2), x, 0.))(jnp.arange(-2., 4.))
    return [partial_sum(jnp.array([2., 3., 4.]), 2), switched, cumsum, loops, grads, where]
"""


def assert_results_agree(actual, expected):
    """Text in the results (checkify's messages, key paths) must be equal; arrays
    match in value, dtype and weak type."""
    is_text = lambda v: isinstance(v, str)  # noqa: E731
    texts = lambda tree: [v for v in jax.tree.leaves(tree, is_leaf=is_text) if is_text(v)]  # noqa: E731
    arrays = lambda tree: jax.tree.map(lambda v: None if is_text(v) else v, tree,  # noqa: E731
                                       is_leaf=is_text)
    assert texts(actual) == texts(expected)
    assert_trees_match(arrays(actual), arrays(expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tutorial_program_agrees_with_jax(name):
    assert_results_agree(run_source(PROGRAMS[name], "minijax"),
                         run_source(PROGRAMS[name], "jax"))


# "Thinking in JAX": under jit, jnp.array of host data is traced too, so a shape or a
# Python branch computed from it fails (minijax kept it concrete and let both through).
STATIC_VS_TRACED = """
import numpy as np
import jax
import jax.numpy as jnp

@jax.jit
def bad_reshape(x):
    return x.reshape(jnp.array(x.shape).prod())

@jax.jit
def bad_branch(x):
    if jnp.asarray(np.ones(2)).sum() > 1:
        return x
    return -x

@jax.jit
def good_reshape(x):
    return x.reshape((np.prod(x.shape),)) + jnp.array([1., 2., 3., 4., 5., 6.])

def main():
    outcomes = []
    for f, error in ((bad_reshape, TypeError),
                     (bad_branch, jax.errors.TracerBoolConversionError)):
        try:
            f(jnp.ones((2, 3)))
            outcomes.append("ran")
        except error:
            outcomes.append(error.__name__)
    traced = []
    jax.jit(lambda x: traced.extend(
        [jnp.array(2.0), jnp.float32(3), jnp.asarray(np.ones(2)), jnp.array([1, 2])]))(1.)
    return outcomes, [str(t) for t in traced], good_reshape(jnp.ones((2, 3)))
"""


def test_host_data_under_jit_is_traced_as_in_jax():
    expected = run_source(STATIC_VS_TRACED, "jax")
    actual = run_source(STATIC_VS_TRACED, "minijax")
    assert actual[0] == expected[0] == ["TypeError", "TracerBoolConversionError"]
    assert actual[1] == expected[1] == ["JitTracer(~float32[])",
                                        "JitTracer(float32[])", "JitTracer(float32[2])",
                                        "JitTracer(int32[2])"]
    assert_trees_match(actual[2], expected[2])


def test_host_data_under_a_transform_inside_jit_is_traced_as_in_jax():
    # Inside jit, a grad or vmap trace passes the constant on to the staged program:
    # JAX's jnp.array there is a tracer too; eagerly under grad it is concrete.
    source = """
import jax
import jax.numpy as jnp

def main():
    kinds = []
    def f(x):
        kinds.append(str(jnp.array([1., 2.])))
        return jnp.sum(jnp.array([1., 2.]) * x)
    out = (jax.jit(jax.grad(f))(1.), jax.jit(jax.vmap(f))(jnp.ones(2)), jax.grad(f)(1.))
    return kinds, out
"""
    expected = run_source(source, "jax")
    actual = run_source(source, "minijax")
    assert actual[0] == expected[0] == ["JitTracer(float32[2])"] * 2 + ["[1. 2.]"]
    assert_trees_match(actual[1], expected[1])
