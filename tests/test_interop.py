"""Import (JAX -> minijax) and export (minijax -> JAX) of whole programs.

Round trips both ways: a JAX program imported into minijax computes JAX's results
(and, exported back, still does); a minijax program exported to JAX and traced by
`jax.make_jaxpr` imports back to the same equations, or, where JAX's own API spells
a construct differently (control flow, custom rules), to a program with the same
results. Imported programs are verified and round-tripped through the text form by
the checks conftest turns on.
"""
from __future__ import annotations

import jax
import jax.ad_checkpoint  # noqa: F401 -- imported by name: `import jax` alone lacks it
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from minijax.interop import (import_jaxpr, trace_with_jax, to_jax, MissingPrimitivesError,
                             UnsupportedParamError)
from minijax.ir import dumps
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from tests.devices import on_cpu

X = np.array([0.5, -1.25, 2.0], np.float32)
M = jnp.arange(6, dtype=jnp.float32).reshape(2, 3) / 4


def _jax_custom_jvp():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 3.0 * tangents[0]
    return f


def _jax_custom_vjp():
    @jax.custom_vjp
    def g(x, y):
        return x * y

    g.defvjp(lambda x, y: (g(x, y), (x, y)), lambda res, ct: (ct * res[1] * 2, None))
    return g


def _refs_program(x):
    r = jax.new_ref(x)
    r[...] += 1.0
    r[1] = 3.0
    r[0:2] = r[1:3] * 2
    return r[...], jax.ref.freeze(r)


def _ref_argument_program(r, x):
    r[...] = r[...] * x
    jax.ref.addupdate(r, (slice(0, 2),), x[:2])
    return r[1]


# Each JAX program of the corpus, with its arguments.
JAX_PROGRAMS = {
    "elementwise": (lambda x: jnp.sum(jnp.tanh(x) * 2.0 + x[1] ** 3), (X,)),
    "weak_scalar": (lambda x, s: x * s + 1, (X, 2.0)),
    "numpy": (lambda m: (jnp.argmax(m, axis=1), jnp.cumsum(m, 0), m.at[1, 2].set(7.0),
                         jnp.sort(-m, axis=1), m.astype(jnp.int32), jnp.where(m > 1, m, 0),
                         jnp.clip(m, 0.2, 1), m @ m.T, jnp.pad(m, 1), m[:, jnp.array([2, 0])],
                         jnp.transpose(m), m.reshape(3, 2), jnp.max(m), jnp.concatenate([m, m]))
              , (M,)),
    "constants": (lambda x: x * np.arange(3, dtype=np.float32) + jnp.asarray([1., 2., 3.]), (X,)),
    "jit": (jax.jit(lambda x: jnp.exp(x) / 2), (X,)),
    "cond": (lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x), (X,)),
    "switch": (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], x), (2, X)),
    "while": (lambda x: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1),
                                       (0, x)), (X,)),
    "fori": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x), (X,)),
    "scan": (lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x), (X,)),
    "remat": (jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) @ x,
                             policy=jax.checkpoint_policies.dots_saveable), (X,)),
    "remat_names": (jax.checkpoint(
        lambda x: jnp.sum(jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "h") ** 2),
        policy=jax.checkpoint_policies.save_only_these_names("h")), (X,)),
    "custom_jvp": (lambda x: _jax_custom_jvp()(x) * 2, (X,)),
    "custom_vjp": (lambda x: _jax_custom_vjp()(x, x + 1), (X,)),
    "refs_inside": (_refs_program, (X,)),
}


def _run_minijax(closed, args):
    leaves = jax.tree_util.tree_leaves(args)
    return eval_jaxpr(closed.jaxpr, closed.consts, leaves)


@pytest.mark.parametrize("name", sorted(JAX_PROGRAMS))
def test_import_computes_jax_results(name):
    fun, args = JAX_PROGRAMS[name]
    closed = trace_with_jax(fun)(*args)
    expected = jax.tree_util.tree_leaves(fun(*args))
    assert_trees_match(_run_minijax(closed, args), expected)
    assert_trees_match(minijax.jit(lambda *a: _run_minijax(closed, a))(*args), expected)


@pytest.mark.parametrize("name", sorted(JAX_PROGRAMS))
def test_import_then_export_gives_jax_results(name):
    fun, args = JAX_PROGRAMS[name]
    closed = trace_with_jax(fun)(*args)
    leaves = jax.tree_util.tree_leaves(args)
    expected = jax.tree_util.tree_leaves(fun(*args))
    assert_trees_match(to_jax(closed)(*leaves), expected)
    assert_trees_match(jax.jit(to_jax(closed))(*leaves), expected)


@pytest.mark.parametrize("name", ["elementwise", "cond", "scan", "remat", "custom_jvp",
                                  "custom_vjp", "remat_names"])
def test_exported_program_differentiates_like_jax(name):
    fun, args = JAX_PROGRAMS[name]
    closed = trace_with_jax(fun)(*args)
    exported = to_jax(closed)

    def jax_loss(x):
        return sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(fun(x, *args[1:]))
                   if jnp.issubdtype(leaf.dtype, jnp.floating))

    def exported_loss(x):
        return sum(jnp.sum(leaf) for leaf in exported(x, *args[1:])
                   if jnp.issubdtype(leaf.dtype, jnp.floating))
    assert_trees_match(jax.grad(exported_loss)(args[0]), jax.grad(jax_loss)(args[0]))


def test_import_keeps_weak_types_literals_and_constants():
    closed = trace_with_jax(lambda x, s: x * s + np.arange(3, dtype=np.float32))(X, 2.0)
    assert closed.jaxpr.invars[1].aval.weak_type      # the Python scalar stays weak
    assert not closed.jaxpr.invars[0].aval.weak_type
    assert len(closed.consts) == 1 and closed.consts[0].shape == (3,)


def test_import_refs_as_arguments_and_closed_over():
    ref_arg = jax.new_ref(X.copy())
    closed = import_jaxpr(jax.make_jaxpr(_ref_argument_program)(ref_arg, X))
    assert str(closed.jaxpr.invars[0].aval) == "Ref{float32[3]}"
    mini_ref = minijax.new_ref(X.copy())
    out = eval_jaxpr(closed.jaxpr, closed.consts, [mini_ref, X])
    jax_ref = jax.new_ref(X.copy())
    expected = _ref_argument_program(jax_ref, X)
    assert_trees_match(out[0], expected)
    assert_trees_match(mini_ref[...], jax_ref[...])
    # Exported, the program updates a JAX ref in place.
    jax_ref2 = jax.new_ref(X.copy())
    assert_trees_match(to_jax(closed)(jax_ref2, X)[0], expected)
    assert_trees_match(jax_ref2[...], jax_ref[...])


def test_missing_primitives_are_all_listed_at_once():
    def uses_two_unknown(x):
        doubled = lax.composite(lambda y: y * 2.0, "my.double")(x)
        return doubled + lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos)
    with pytest.raises(MissingPrimitivesError) as info:
        trace_with_jax(uses_two_unknown)(X)
    assert info.value.names == ["composite", "platform_index"]
    assert "composite" in str(info.value) and "platform_index" in str(info.value)


def test_import_refuses_unknown_policy_and_bad_input():
    custom = jax.checkpoint(jnp.sin, policy=lambda prim, *a, **k: False)
    with pytest.raises(UnsupportedParamError, match="checkpoint policy"):
        trace_with_jax(custom)(X)
    with pytest.raises(TypeError, match="ClosedJaxpr"):
        import_jaxpr(lambda x: x)


# -- minijax -> JAX -> minijax --------------------------------------------------------------

def _mini_custom_jvp():
    @minijax.custom_jvp
    def f(x):
        return mnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 3.0 * tangents[0]
    return f


MINIJAX_PROGRAMS = {
    "straight_line": (lambda x: mnp.sum(mnp.tanh(x) * 2.0 + x[1] ** 3), (X,), True),
    "numpy": (lambda m: (mnp.argmax(m, axis=1), mnp.cumsum(m, 0), m @ m.T,
                         mnp.where(m > 1, m, 0.0), m[:, 1:], m.reshape(3, 2).T), (M,), True),
    "jit": (minijax.jit(lambda x: mnp.exp(x) / 2), (X,), True),
    "cond": (lambda x: mlax.cond(x[0] > 0, mnp.sin, mnp.cos, x), (X,), False),
    "scan": (lambda x: mlax.scan(lambda c, y: (c + y, c * y), 0.0, x), (X,), False),
    "while": (lambda x: mlax.fori_loop(0, 3, lambda i, c: c * 2, x), (X,), False),
    "remat": (minijax.checkpoint(lambda x: mnp.sin(mnp.sin(x)),
                                 policy=minijax.checkpoint_policies.dots_saveable),
              (X,), True),
    "custom_jvp": (lambda x: _mini_custom_jvp()(x), (X,), False),
}


@pytest.mark.parametrize("name", sorted(MINIJAX_PROGRAMS))
def test_minijax_program_round_trips_through_jax(name):
    fun, args, same_equations = MINIJAX_PROGRAMS[name]
    closed = minijax.make_jaxpr(fun)(*args)
    back = import_jaxpr(jax.make_jaxpr(to_jax(closed))(*args))
    expected = jax.tree_util.tree_leaves(fun(*args))
    assert_trees_match(_run_minijax(back, args), expected)
    if same_equations:
        assert dumps(back) == dumps(closed)


def test_import_closed_over_ref_gets_its_own_copy():
    counter = jax.new_ref(np.float32(2.0))

    def bump(y):
        counter[...] += y
        return counter[...] * y
    closed = trace_with_jax(bump)(np.float32(3.0))
    assert len(closed.consts) == 1 and str(closed.jaxpr.constvars[0].aval) == "Ref{float32[]}"
    out = _run_minijax(closed, (np.float32(3.0),))
    assert_trees_match(out, [np.float32(15.0)])
    assert float(counter[...]) == 2.0        # JAX's ref is not touched by minijax
    assert float(closed.consts[0][...]) == 5.0


def test_cross_check_guide_runs_as_shown():
    """docs/cross_check.md's ```python blocks, run in order as doctests."""
    import doctest
    import pathlib
    import re
    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "cross_check.md"
    text = path.read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    namespace, examples = {}, 0
    for block in re.finditer(r"^```python\n(.*?)^```", text, flags=re.M | re.S):
        test = parser.get_doctest(block.group(1), namespace, path.name, str(path),
                                  text.count("\n", 0, block.start(1)))
        with on_cpu():      # the guide shows CPU output (tests/devices.py)
            runner.run(test, clear_globs=False)
        namespace, examples = test.globs, examples + len(test.examples)
    assert examples and runner.summarize(verbose=False).failed == 0


# -- error paths ----------------------------------------------------------------------------

def never_save(prim, *avals, **params):
    """A user's own checkpoint policy: a Python function JAX cannot be handed."""
    return False


def test_export_and_source_refuse_what_jax_cannot_express():
    from minijax.interop import ExportError, to_python_source
    closed = minijax.make_jaxpr(minijax.checkpoint(mnp.sin, policy=never_save))(X)
    with pytest.raises(ExportError, match="checkpoint policy"):
        to_jax(closed)(X)
    with pytest.raises(ExportError, match="checkpoint policy"):
        to_python_source(closed)
    custom = minijax.make_jaxpr(_mini_custom_jvp())(X)
    with pytest.raises(ExportError, match="custom_jvp_call"):
        to_python_source(custom)
    with pytest.raises(TypeError, match="ClosedJaxpr"):
        to_jax(lambda x: x)
    with pytest.raises(TypeError, match="takes 1 arguments"):
        to_jax(closed)(X, X)


def test_import_keeps_a_sharding_hint():
    # minijax has a sharding_constraint primitive (docs/named_axes.md)
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    program = jax.make_jaxpr(lambda x: jax.lax.with_sharding_constraint(x, sharding))(X)
    imported = import_jaxpr(program)
    assert "sharding_constraint[" in str(imported)
