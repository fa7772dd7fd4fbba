"""`minijax.stages` against `jax.stages`: what a program sees of `jit(f).trace(...)`,
its `.lower()` and that one's `.compile()` -- argument and output structure and types,
donation, the function's name, the executable's results."""
import jax
import jax.numpy as jnp
import jax.stages
import numpy as np

import minijax
import minijax.numpy as mnp
import minijax.stages
from minijax.testing import assert_trees_match


def _f(a, n, b, c=1.0):
    return {"s": a * n + c, "w": 2.0 + c}, b


def _args(np_):
    return (np_.ones(2, np.float32), 3, np_.zeros(3, np.int32)), {"c": 2.0}


def _stages(api, np_):
    jitted = api.jit(_f, static_argnums=1, donate_argnums=2)
    args, kwargs = _args(np_)
    traced = jitted.trace(*args, **kwargs)
    lowered = traced.lower()
    return jitted, traced, lowered, lowered.compile()


def _avals(tree):
    return jax.tree.map(lambda a: (a.shape, np.dtype(a.dtype), a.weak_type), tree)


def _info(tree):
    return jax.tree.map(lambda i: (i.shape, np.dtype(i.dtype), i.donated), tree)


def test_the_names_and_the_classes_of_each_stage():
    public = sorted(n for n in dir(jax.stages) if not n.startswith("_"))
    assert sorted(minijax.stages.__all__) == public
    mine, theirs = _stages(minijax, mnp), _stages(jax, jnp)
    for name, m, j in zip(["Wrapped", "Traced", "Lowered", "Compiled"], mine, theirs):
        assert isinstance(j, getattr(jax.stages, name))
        assert isinstance(m, getattr(minijax.stages, name))
    assert isinstance(minijax.jit(abs), minijax.stages.Wrapped)


def test_each_stage_describes_the_call_as_jaxs():
    (_, *mine), (_, *theirs) = _stages(minijax, mnp), _stages(jax, jnp)
    for m, j in zip(mine, theirs):
        assert m.in_tree == j.in_tree                  # the static argument left out
        assert m.out_tree == j.out_tree
        assert m.donate_argnums == j.donate_argnums == (1,)
        assert _info(m.args_info) == _info(j.args_info)
        assert _avals(m.in_avals) == _avals(j.in_avals)
    traced, lowered, compiled = mine
    jtraced, jlowered, jcompiled = theirs
    assert traced.fun_name == jtraced.fun_name == "_f"
    assert _avals(traced.out_avals) == _avals(jtraced.out_avals)
    # weak types included: `2.0 + c` stays weak
    assert traced.out_info == jtraced.out_info
    assert lowered.out_info == jlowered.out_info
    assert compiled.out_info == jcompiled.out_info      # with shardings and layouts


def test_the_compiled_stage_runs_without_the_static_argument():
    (_, traced, lowered, compiled) = _stages(minijax, mnp)
    (_, jtraced, jlowered, jcompiled) = _stages(jax, jnp)
    (a, _, b), kwargs = _args(np)
    assert_trees_match(compiled(a, b, **kwargs), jcompiled(a, b, **kwargs))
    assert "@main" in lowered.as_text() and "@main" in jlowered.as_text()
    assert type(lowered.cost_analysis()) is type(jlowered.cost_analysis())
    assert compiled.input_shardings == jcompiled.input_shardings
    # Traced.jaxpr: the program a call runs (a ClosedJaxpr on JAX 0.10, a Jaxpr later)
    assert [e.primitive.name for e in traced.jaxpr.eqns][-1] == "add"
    assert [e.primitive.name for e in jtraced.jaxpr.eqns][-1] == "add"


def test_stages_of_a_program_with_refs_describe_the_users_call():
    # The XLA program takes the ref's contents as one more input and output; the
    # stages still speak of the call as written.
    box = minijax.new_ref(mnp.zeros(2))

    def step(x):
        box[...] += x
        return x * 2

    traced = minijax.jit(step).trace(mnp.ones(2))
    compiled = traced.lower().compile()
    assert compiled.in_tree == traced.in_tree
    assert compiled.out_info == traced.out_info
    assert_trees_match(compiled(mnp.ones(2)), np.full(2, 2.0, np.float32))
    assert_trees_match(box[...], np.ones(2, np.float32))
