"""`minijax.custom_batching` (`custom_vmap`, `sequential_vmap`) against
`jax.custom_batching`: what the rule is called with and what vmap returns, eagerly and
under jit; jvp through a custom_vmap function (jvp of vmap, vmap of jvp, jacfwd); the
reverse-mode error and a custom_vjp around one; the rule's errors; and
`minijax.custom_derivatives` as JAX's module."""
import jax
import jax.custom_batching
import jax.custom_derivatives
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.custom_batching
import minijax.custom_derivatives
import minijax.numpy as mnp
from minijax.testing import assert_trees_match

X = np.float32(0.5)
XS = np.linspace(0, 1, 3, dtype=np.float32)
LIBS = {"minijax": (minijax, mnp), "jax": (jax, jnp)}


def _sin_times(lib, np_lib, seen):
    """`sin(x) * y`, whose vmap rule computes `cos(x) * y` instead (so the tests see
    which one ran) and records `(axis_size, in_batched)`."""
    @lib.custom_batching.custom_vmap
    def f(x, y):
        return np_lib.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        seen.append((axis_size, in_batched))
        return np_lib.cos(xs) * ys, any(in_batched)
    return f


def _both(program):
    out = {}
    for name, (lib, np_lib) in LIBS.items():
        seen = []
        out[name] = (program(lib, np_lib, _sin_times(lib, np_lib, seen)), seen)
    return out["minijax"], out["jax"]


def test_the_function_outside_vmap_and_the_rule_under_it():
    def program(lib, np_lib, f):
        return [f(X, 2.0), lib.jit(f)(X, 2.0), lib.vmap(f)(XS, XS),
                lib.vmap(f, (0, None))(XS, np.float32(2)), lib.jit(lib.vmap(f, (None, 0)))(X, XS),
                lib.vmap(lib.vmap(f, (0, None)), (1, 0))(np.stack([XS, XS]), XS)]
    ours, theirs = _both(program)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1] == [(3, [True, True]), (3, [True, False]), (3, [False, True]),
                                    (2, [True, False])]


def test_pytree_arguments_and_outputs_with_mixed_batching():
    def make(lib, np_lib):
        @lib.custom_batching.custom_vmap
        def g(tree, scale):
            return {"sum": np_lib.sum(tree["a"]) * scale, "same": tree["b"] + 1.0}

        @g.def_vmap
        def g_rule(axis_size, in_batched, tree, scale):
            assert in_batched[0]["b"] is False
            return ({"sum": np_lib.sum(tree["a"], axis=-1) * scale + 100.0,
                     "same": tree["b"] + 1.0},
                    {"sum": True, "same": False})
        return lambda tree, scale: lib.vmap(g, ({"a": 0, "b": None}, None))(tree, scale)
    tree = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": XS}
    for wrap in ("eager", "jit"):
        ours, theirs = make(minijax, mnp), make(jax, jnp)
        if wrap == "jit":
            ours, theirs = minijax.jit(ours), jax.jit(theirs)
        assert_trees_match(ours(tree, 2.0), theirs(tree, 2.0))


def test_jvp_goes_through_the_call_and_vmap_of_the_jvp_uses_the_rule():
    one = np.float32(1)

    def program(lib, np_lib, f):
        eager = lib.jvp(f, (X, np.float32(2)), (one, np.float32(0)))
        return [eager, lib.jit(lambda xs: (        # one compiled program for the rest
            lib.vmap(lambda a, b: lib.jvp(f, (a, b), (one, one)))(xs, xs),
            lib.jvp(lib.vmap(f), (xs, xs), (xs, xs)),
            lib.vmap(lambda a: lib.jvp(lambda t: f(t, 2.0), (a,), (a,)))(xs),
            lib.jacfwd(lambda v: f(v, v))(xs)))(XS)]
    ours, theirs = _both(program)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_reverse_mode_is_an_error_and_a_custom_vjp_around_it_gives_one():
    for lib, np_lib in LIBS.values():
        f = _sin_times(lib, np_lib, [])
        with pytest.raises(ValueError):     # JAX: "Linearization failed ..."
            lib.grad(f)(X, np.float32(2))
    with pytest.raises(ValueError, match="reverse-mode autodiff .* custom_vmap function f"):
        minijax.grad(_sin_times(minijax, mnp, []))(X, np.float32(2))

    def make(lib, np_lib):      # the example of JAX's custom_vmap docstring
        @lib.custom_vjp
        @lib.custom_batching.custom_vmap
        def q(x, y):
            return np_lib.sin(x) * y

        @q.def_vmap
        def q_rule(axis_size, in_batched, xs, ys):
            return np_lib.cos(xs) * ys, True

        def q_fwd(x, y):
            return q(x, y), (np_lib.cos(x), np_lib.sin(x), y)

        def q_bwd(res, g):
            cos_x, sin_x, y = res
            return cos_x * g * y, sin_x * g
        q.defvjp(q_fwd, q_bwd)
        return [lib.vmap(q)(XS, XS), lib.grad(q)(X, np.float32(2)), lib.vmap(lib.grad(q))(XS, XS)]
    assert_trees_match(make(minijax, mnp), make(jax, jnp))


def test_sequential_vmap_calls_the_function_once_per_example():
    def run(lib, cb):
        calls = []

        @lib.custom_batching.sequential_vmap
        def h(x, y):
            cb(lambda v: calls.append(float(v)), x)
            return x * 2.0 + y
        out = [lib.vmap(h, (0, None))(XS, np.float32(1)), lib.jit(lib.vmap(h))(XS, XS)]
        jax.effects_barrier()
        return out, calls
    ours = run(minijax, minijax.debug.callback)
    theirs = run(jax, jax.debug.callback)
    assert_trees_match(ours[0], theirs[0])
    assert ours[1] == theirs[1] == XS.tolist() * 2


def test_the_rule_contract_and_its_errors():
    for lib, np_lib in LIBS.values():
        plain = lib.custom_batching.custom_vmap(lambda x: x)
        with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap"):
            plain(XS)

        def scaled(x, scale=2.0):
            return x * scale
        kw = lib.custom_batching.custom_vmap(scaled)
        # (np_lib: eagerly, JAX 0.10-0.12 hands the rule NumPy arrays, so `x * scale`
        # would give vmap a float64 NumPy result; minijax hands it jax Arrays)
        kw.def_vmap(lambda n, b, x, scale: (np_lib.multiply(x, scale) + 1.0, True))
        assert_trees_match(lib.vmap(lambda x: kw(x, scale=3.0))(XS), jnp.asarray(XS) * 3.0 + 1.0)

        def keyword_only(x, *, scale=2.0):
            return x * scale
        kw_only = lib.custom_batching.custom_vmap(keyword_only)
        kw_only.def_vmap(lambda n, b, x: (x, True))
        with pytest.raises(TypeError, match="could not be resolved to positional-only"):
            kw_only(X, scale=3.0)

        g = lib.custom_batching.custom_vmap(lambda x: x)
        g.def_vmap(lambda n, b, x: ((x, x), True))
        with pytest.raises(ValueError, match="output batching specification .* do not match"):
            lib.vmap(g)(XS)
        g.def_vmap(lambda n, b, x: ((x, x), (True, True)))
        with pytest.raises(ValueError, match="does not match that of original custom-vmapped"):
            lib.vmap(g)(XS)


def test_a_rule_output_that_contradicts_its_flag():
    # "custom_vmap_rule_output_shape_unchecked": JAX does not check the output
    lying = jax.custom_batching.custom_vmap(lambda x: x)
    lying.def_vmap(lambda n, b, x: (x, False))
    assert jax.vmap(lying)(XS).shape == (3, 3)
    lying.def_vmap(lambda n, b, x: (x[0], True))
    with pytest.raises(IndexError):
        jax.vmap(lying)(XS)
    g = minijax.custom_batching.custom_vmap(lambda x: x)
    g.def_vmap(lambda n, b, x: (x, False))
    with pytest.raises(ValueError, match=r"output 0 of shape \(3,\), marked not batched; "
                                         r"expected \(\)"):
        minijax.vmap(g)(XS)
    g.def_vmap(lambda n, b, x: (x[0], True))
    with pytest.raises(ValueError, match=r"output 0 of shape \(\), marked batched; expected"):
        minijax.vmap(g)(XS)


def test_the_rule_sees_arrays_eagerly():
    # "custom_vmap_rule_gets_numpy_arrays_eagerly": JAX hands an eager rule NumPy arrays
    def make(lib):
        f = lib.custom_batching.custom_vmap(lambda x, scale: x * scale)
        f.def_vmap(lambda n, b, x, scale: (x * scale, True))
        return lambda x: f(x, 3.0)
    theirs = jax.vmap(make(jax))(XS)
    assert type(theirs) is np.ndarray and theirs.dtype == np.float64
    assert_trees_match(jax.jit(jax.vmap(make(jax)))(XS), jnp.asarray(XS) * 3.0)
    assert_trees_match(minijax.vmap(make(minijax))(XS), jnp.asarray(XS) * 3.0)


def test_custom_derivatives_module_has_jax_names_minijax_implements():
    for name in ("custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"):
        assert hasattr(jax.custom_derivatives, name)
        assert getattr(minijax.custom_derivatives, name) is getattr(minijax, name)
    assert {"custom_batching", "custom_derivatives"} <= set(dir(minijax))
