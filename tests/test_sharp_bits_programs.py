"""Programs in the manner of "JAX - The Sharp Bits", "Key concepts", "Working with
pytrees" and "The Autodiff Cookbook", run unchanged on JAX and on minijax.

Each program is what a reader of those pages would write (`import jax`, no mention of
minijax); it runs twice, with `jax` resolved to each library (the harness of
tests/test_tutorial_programs.py), and `main()`'s results must agree. The first
programs pin gaps these pages exposed; the rest keep their other lessons honest.
"""
from __future__ import annotations

import pytest

from tests.test_tutorial_programs import assert_results_agree, run_source

PROGRAMS = {}

# "Sharp Bits", dynamic shapes: a size that is a jitted argument cannot make a shape.
# JAX's error is a plain TypeError ("Shapes must be 1D sequences of concrete values of
# integer type"); minijax raised its ConcretizationTypeError (a subclass) instead.
PROGRAMS["traced_size_in_a_shape"] = """
import jax
import jax.numpy as jnp
from functools import partial

def main():
    makers = [lambda n: jnp.ones((n,)), lambda n: jnp.zeros(n),
              lambda n: jnp.full((n, 2), 1.), lambda n: jnp.empty((n,)),
              lambda n: jnp.eye(n), lambda n: jnp.ones(3).reshape(n),
              lambda n: jnp.broadcast_to(1., (n,)),
              lambda n: jax.random.normal(jax.random.key(0), (n,)),
              lambda n: jnp.arange(n)]
    kinds = []
    for make in makers:
        try:
            jax.jit(make)(3)
            kinds.append("ran")
        except TypeError as e:
            # (minijax's errors are its own subclasses of Python's and JAX's classes)
            named = isinstance(e, jax.errors.ConcretizationTypeError)
            first = "" if named else str(e).split(",")[0]
            kinds.append(("ConcretizationTypeError" if named else "TypeError") + ":" + first)
    static = jax.jit(lambda n, v: jnp.ones((n,)) * v, static_argnums=0)(3, 4.)
    from_shape = jax.jit(lambda x: jnp.zeros(x.shape[0] * 2))(jnp.ones(2))
    return kinds, static, from_shape
"""

# "Key concepts", tracing: a print in the function runs when it is traced. JAX's
# make_jaxpr, eval_shape, jit, .trace and .lower share one trace cache, so the print
# runs once per signature (and again after a flag a trace reads changes); minijax's
# make_jaxpr and eval_shape traced every time, and apart from jit's cache.
PROGRAMS["tracing_runs_python_once_per_signature"] = """
import jax
import jax.numpy as jnp

def main():
    seen = []
    def log2(x):
        seen.append(str(x))
        return jnp.log(x) / jnp.log(2.)
    jax.make_jaxpr(log2)(3.0)
    jax.make_jaxpr(log2)(4.0)
    jax.jit(log2)(3.0)
    jax.eval_shape(log2, 3.0)
    jax.jit(log2).lower(3.0)
    jax.make_jaxpr(log2)(jnp.ones(2))
    jax.eval_shape(log2, jax.ShapeDtypeStruct((3,), jnp.float32))
    def g(x):
        seen.append("g")
        return x + jnp.ones((2, 3))
    jax.make_jaxpr(g)(jnp.ones(3))
    with jax.numpy_rank_promotion("raise"):
        try:
            jax.make_jaxpr(g)(jnp.ones(3))
            seen.append("allowed")
        except ValueError:
            seen.append("refused")
    shape = jax.eval_shape(lambda x: jnp.tile(x, 3), jnp.ones(2))
    static = jax.make_jaxpr(lambda x, n: x * n, static_argnums=1)(1., 3)
    return seen, str(shape.shape), str(static.out_avals)
"""

# "Autodiff cookbook", has_aux: the aux may hold what is no array (a run's name in a
# metrics dict); JAX's grad, vjp, jvp, linearize and jacrev hand it back unchanged
# (minijax refused a string), while jacfwd, which batches the aux, refuses it.
PROGRAMS["aux_outputs_that_are_not_arrays"] = """
import jax
import jax.numpy as jnp

def loss(x):
    value = jnp.sum(x ** 2)
    return value, {"name": "l2", "steps": 3, "value": value, "none": None}

def main():
    x = jnp.array([1., 2.])
    g, aux = jax.grad(loss, has_aux=True)(x)
    (v, aux2), g2 = jax.value_and_grad(loss, has_aux=True)(x)
    _, pullback, aux3 = jax.vjp(loss, x, has_aux=True)
    _, tangent, aux4 = jax.jvp(loss, (x,), (x,), has_aux=True)
    _, f_jvp, aux5 = jax.linearize(loss, x, has_aux=True)
    jac, aux6 = jax.jacrev(lambda x: (x ** 2, "tag"), has_aux=True)(x)
    try:
        jax.jacfwd(lambda x: (x ** 2, "tag"), has_aux=True)(x)
        forward = "ran"
    except TypeError as e:
        forward = type(e).__name__
    names = [a["name"] for a in (aux, aux2, aux3, aux4, aux5)] + [aux6, forward]
    steps = [type(a["steps"]).__name__ for a in (aux, aux2, aux3, aux4, aux5)]
    return (names, steps, g, g2, v, pullback(1.), tangent, f_jvp(x), jac,
            [a["value"] for a in (aux, aux3, aux4)])
"""

# jnp.linalg.norm of complex values: the 2-norm sums |z|², not z² (minijax's was
# complex, sqrt(sum z²)); ord=0 and ord=p norms are real too.
PROGRAMS["complex_norms"] = """
import jax
import jax.numpy as jnp

def main():
    a = jnp.array([[2., 1j], [-1j, 3.]])
    v = jnp.array([3 + 4j, 1j, 0j])
    norms = [jnp.linalg.norm(a), jnp.linalg.norm(v), jnp.linalg.norm(a, axis=1),
             jnp.linalg.norm(a, "fro"), jnp.linalg.norm(v, 3), jnp.linalg.norm(v, 0),
             jnp.linalg.vector_norm(v), jnp.linalg.matrix_norm(a)]
    grads = [jax.grad(lambda x: jnp.linalg.norm(x * (1 + 1j)))(jnp.array([1., 2.])),
             jax.grad(jnp.linalg.norm)(v[:2])]
    return norms, grads
"""

# The "Sharp Bits" lessons that already held: .at[] methods and modes, out-of-bounds
# reads and writes, lists refused by jnp functions, pure functions under jit.
PROGRAMS["in_place_updates_and_bounds"] = """
import jax
import jax.numpy as jnp

def main():
    x = jnp.arange(8.)
    i = jnp.array([0, 0, 2])
    updates = [x.at[i].add(1.), x.at[i].multiply(2.), x.at[i].divide(2.),
               x.at[i].power(2.), x.at[i].min(-1.), x.at[i].max(10.),
               x.at[i].apply(jnp.sin)]
    far = jnp.array([1, 10])
    modes = [x.at[far].get(mode="fill", fill_value=-1), x.at[far].get(mode="clip"),
             x.at[far].set(5., mode="drop"), x.at[10].get(), jnp.arange(10)[11],
             jax.jit(lambda x, i: x.at[i].set(1.))(x, 20)]
    try:
        x[1] = 0.
        refused = "assigned"
    except TypeError as e:
        refused = type(e).__name__
    try:
        jnp.sum([1, 2, 3])
        listed = "summed"
    except TypeError as e:
        listed = type(e).__name__
    g = 0.
    def uses_global(x):
        return x + g
    first = jax.jit(uses_global)(4.)
    g = 10.
    return updates, modes, refused, listed, first, jax.jit(uses_global)(4.)
"""

PROGRAMS["pytree_gotchas"] = """
import dataclasses
import jax
import jax.numpy as jnp
from jax import tree_util as tu

@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: jax.Array
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))

def main():
    tree = [1., {"k1": 2., "k2": (3., None)}, Layer(jnp.ones(2))]
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]]
    with_none = tu.tree_map(lambda v: -1. if v is None else v, tree,
                            is_leaf=lambda v: v is None)
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure((0, (0, 0)))
    transposed = tu.tree_transpose(outer, inner, [(1., (2., 3.)), (4., (5., 6.))])
    try:
        jax.tree.map(lambda a, b: a + b, (1, 2), [1, 2])
        mismatch = "mapped"
    except ValueError as e:
        mismatch = type(e).__name__
    grads = jax.grad(lambda layer: (layer.w ** 2).sum())(Layer(jnp.arange(2.)))
    return paths, jax.tree.leaves(with_none), transposed, mismatch, grads.w
"""

PROGRAMS["autodiff_cookbook"] = """
import jax
import jax.numpy as jnp
from jax import lax

def main():
    f = lambda x: jnp.sum(jnp.tanh(x) ** 2)
    x = jnp.arange(6.).reshape(2, 3) / 6.
    v = jnp.ones((2, 3))
    hvp_fwd_rev = jax.jvp(jax.grad(f), (x,), (v,))[1]
    hvp_rev_rev = jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)
    predict = lambda p, x: jnp.tanh(x @ p["w"] + p["b"])
    params = {"w": jnp.ones(3) / 3., "b": 0.5}
    jac = jax.jacrev(predict)(params, x)
    transpose = jax.linear_transpose(lambda x: (2. * x, x.sum()), jnp.ones(3))
    complex_grads = [jax.grad(lambda z: jnp.abs(z) ** 2)(3. + 4j),
                     jax.grad(jnp.sin, holomorphic=True)(1. + 1j),
                     jax.jacfwd(jnp.sin, holomorphic=True)(jnp.array([1 + 1j, 2j])),
                     jax.jacfwd(lambda x: jnp.exp(1j * x))(jnp.array([1., 2.]))]
    a = jnp.array([[4., 1.], [1., 3.]])
    solve = lambda b: lax.custom_linear_solve(lambda y: a @ y, b,
                                              lambda mv, b: jnp.linalg.solve(a, b),
                                              symmetric=True)
    linear = jax.grad(lambda b: solve(b).sum())(jnp.array([1., 2.]))
    straight_through = jax.grad(
        lambda x: (x - lax.stop_gradient(x) + lax.stop_gradient(jnp.round(x))).sum())(
            jnp.array([1.3, 2.7]))
    decompositions = [jax.grad(jnp.linalg.det)(a),
                      jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(a),
                      jax.grad(lambda a: jnp.linalg.eigh(a)[0].sum())(a),
                      jax.grad(lambda a: jnp.linalg.svd(a, compute_uv=False).sum())(a)]
    return (hvp_fwd_rev, hvp_rev_rev, jac, transpose((jnp.arange(3.), 1.)),
            complex_grads, linear, straight_through, decompositions)
"""


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_sharp_bits_program_agrees_with_jax(name):
    assert_results_agree(run_source(PROGRAMS[name], "minijax"),
                         run_source(PROGRAMS[name], "jax"))


def test_traced_size_errors_are_jax_type_errors():
    kinds = run_source(PROGRAMS["traced_size_in_a_shape"], "minijax")[0]
    shape_error = "TypeError:Shapes must be 1D sequences of concrete values of integer type"
    assert kinds[:-1] == [shape_error] * 8
    assert kinds[-1] == "ConcretizationTypeError:"    # arange's, as in JAX
