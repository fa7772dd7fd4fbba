"""`minijax.core` against `jax.core`: the same public names (but `AbstractValue`), and
the same behaviour where a program can see it -- `isinstance(x, core.Tracer)` under
each transformation, `eval_jaxpr` of a traced program (and its derivative),
`eval_context` inside a transformation, and the dimension helpers."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match

NOT_IN_MINIJAX = {"AbstractValue"}     # minijax's avals share no base class


def test_the_public_names_are_jax_s():
    public = lambda mod: {n for n in dir(mod) if not n.startswith("_")}
    ours = public(minijax.core)
    assert ours == public(jax.core) - NOT_IN_MINIJAX
    assert set(minijax.core.__all__) == ours


def _seen_as_tracer(api):
    seen = []
    runs = [lambda f: f(1.0), lambda f: api.jit(f)(1.0), lambda f: api.grad(f)(1.0),
            lambda f: api.vmap(f)(np.ones(2, np.float32)), lambda f: api.make_jaxpr(f)(1.0)]
    for run in runs:
        def f(x):     # a new function each time: JAX's make_jaxpr reuses jit's trace
            seen.append(isinstance(x, api.core.Tracer))
            return x * 2.0
        run(f)
    return seen


def test_tracer_is_what_a_transformation_passes():
    assert _seen_as_tracer(minijax) == _seen_as_tracer(jax) == [False, True, True, True, True]


@pytest.mark.parametrize("transform", ["eager", "jit", "grad", "vmap"])
def test_eval_jaxpr_runs_a_traced_program(transform):
    def run(api):
        closed = api.make_jaxpr(lambda a, b: api.numpy.sin(a) * b + 1.0)(1.0, 2.0)
        f = lambda a: api.core.eval_jaxpr(closed.jaxpr, closed.consts, a, 3.0)[0]
        x = np.float32(0.5)
        if transform == "eager":
            return api.core.eval_jaxpr(closed.jaxpr, closed.consts, x, 3.0)
        if transform == "vmap":
            return api.vmap(f)(np.array([0.5, 1.5], np.float32))
        return getattr(api, transform)(f)(x)
    assert_trees_match(run(minijax), run(jax))


def _interpret(jaxpr, consts, *args):
    """A jaxpr interpreter as JAX's tutorials write one, with JAX's public field names
    only (`invars`, `outvars`, a literal's `val`), binding each equation anew."""
    env = {}
    read = lambda v: v.val if hasattr(v, "val") else env[v]
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    return [read(v) for v in jaxpr.outvars]


def test_a_jaxpr_interpreter_written_for_jax_runs_on_minijax():
    def run(api):
        closed = api.make_jaxpr(lambda a: api.numpy.exp(api.numpy.tanh(a)) * 2.0)(
            np.ones(3, np.float32))
        f = lambda a: _interpret(closed.jaxpr, closed.consts, a)[0].sum()
        x = np.array([0.1, 0.2, 0.3], np.float32)
        return f(x), api.grad(f)(x), api.jit(f)(x)
    assert_trees_match(run(minijax), run(jax))


def _inside_eval_context(api):
    observed = []

    def f(x):
        with api.core.eval_context():
            y = api.numpy.sin(1.0)          # concrete, even inside the transformation
            observed.append(isinstance(y, api.core.Tracer))
            with pytest.raises(api.errors.UnexpectedTracerError):
                api.numpy.sin(x)            # a traced value there has escaped
        return x + y
    return api.jit(f)(1.0), api.grad(f)(1.0), observed


def test_eval_context_computes_now_inside_a_transformation():
    ours, theirs = _inside_eval_context(minijax), _inside_eval_context(jax)
    assert_trees_match(ours[:2], theirs[:2])
    assert ours[2] == theirs[2] == [False, False]


def test_dimension_helpers_and_shaped_array():
    for api in (minijax, jax):
        assert (api.core.max_dim(2, 3), api.core.min_dim(2, 3)) == (3, 2)
    ours, theirs = minijax.core.ShapedArray((2, 3), np.float32), jax.core.ShapedArray(
        (2, 3), np.float32)
    assert (ours.shape, ours.dtype, ours.ndim, ours.weak_type) == (
        theirs.shape, theirs.dtype, theirs.ndim, theirs.weak_type)
