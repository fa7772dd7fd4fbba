"""jacfwd / jacrev / hessian run the linear map ONCE, batched over the stacked basis
(as JAX vmaps its pushforward / pullback): a custom rule's side effects happen as
often as in JAX, a jitted Jacobian holds one copy of the linear program whatever the
number of outputs or inputs, and the values, dtypes and weak types stay JAX's."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing.comparison import assert_trees_match
from tests.test_debug_print import printed


# -- side effects of custom rules: as often as in JAX --------------------------------------

def _custom_vjp_program(lib):
    """A custom_vjp whose backward rule prints (Python print and debug.print)."""
    def body(a):
        lib.debug.print("p {x}", x=a)
        return (a,)

    def fwd(a):
        print("fwd")
        return body(a), (a,)

    def bwd(res, ct):
        print("bwd")
        return lib.vjp(body, *res)[1](ct)

    c = lib.custom_vjp(body)
    c.defvjp(fwd, bwd)
    return lambda x: c(x)[0] * 2


def _custom_jvp_program(lib):
    """A custom_jvp whose jvp rule prints (Python print and debug.print)."""
    @lib.custom_jvp
    def f(x):
        return lib.numpy.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        print("rule")
        lib.debug.print("t {t}", t=t)
        return f(x), lib.numpy.cos(x) * t
    return lambda x: f(x) * 3


@pytest.mark.parametrize("size", [1, 3])
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("transform, program, rule_line", [
    ("jacrev", _custom_vjp_program, "bwd"),     # a custom_vjp's backward rule
    ("jacfwd", _custom_jvp_program, "rule"),    # a custom_jvp's rule
])
def test_a_custom_rule_runs_once_per_jacobian_as_in_jax(capsys, size, jitted, transform,
                                                         program, rule_line):
    x = np.arange(1, size + 1, dtype=np.float32)

    def run(lib):
        jac = getattr(lib, transform)(program(lib))
        return (lib.jit(jac) if jitted else jac)(x)
    ours = printed(capsys, lambda: run(minijax))
    theirs = printed(capsys, lambda: run(jax))
    assert ours.count(rule_line) == theirs.count(rule_line) == 1
    assert sorted(line.split()[0] for line in ours) == \
        sorted(line.split()[0] for line in theirs)


# -- one copy of the linear program under jit ----------------------------------------------

def _equation_count(fun, n):
    closed = minijax.make_jaxpr(fun)(np.linspace(0.5, 1.5, n, dtype=np.float32))
    return len(closed.jaxpr.eqns)


def _vector_valued(x):
    return mnp.sin(x) * mnp.sum(x ** 2) + mnp.cumsum(mnp.cos(x))


def _scalar_valued(x):
    return mnp.sum(mnp.sin(x) * x) * mnp.sum(x ** 3)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_program_size_does_not_grow_with_the_basis(transform):
    jac = getattr(minijax, transform)(_vector_valued)
    # One batched pass: 2 and 16 basis vectors give programs of the same size (a
    # pass per basis vector would add a copy of the linear program for each).
    assert _equation_count(jac, 2) == _equation_count(jac, 16)
    assert _equation_count(minijax.jit(jac), 2) == _equation_count(minijax.jit(jac), 16)


def test_hessian_program_size_does_not_grow_with_the_basis():
    small, large = (_equation_count(minijax.hessian(_scalar_valued), n) for n in (2, 16))
    assert small == large
    jitted = minijax.jit(minijax.hessian(_scalar_valued))
    assert _equation_count(jitted, 3) == _equation_count(jitted, 12)


def test_one_backward_pass_holds_one_transposed_sin():
    # jacrev of sin(x) * 2: the pullback has one cos-multiply; one pass per output
    # basis vector would hold a `mul` per output element.
    closed = minijax.make_jaxpr(minijax.jacrev(lambda x: mnp.sin(x) * 2))(
        np.ones(8, np.float32))
    names = [eqn.primitive.name for eqn in closed.jaxpr.eqns]
    assert names.count("cos") == 1
    assert names.count("mul") <= 3


# -- values, dtypes and weak types against JAX ---------------------------------------------

X3 = np.array([0.5, -1.0, 2.0], np.float32)
X23 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


def _pytree_program(lib):
    def f(d):
        return {"a": d["x"] * d["y"][0], "b": lib.numpy.sum(d["x"] ** 2),
                "c": lib.numpy.sin(d["y"][1])}
    return f


PYTREE_ARG = {"x": X3, "y": (np.float32(2.0), X23)}


def _cases():
    """(name, function of the library, transform keywords, arguments)."""
    return [
        ("matrix", lambda lib: lambda x: lib.numpy.tanh(x) * lib.numpy.sum(x), {}, (X23,)),
        ("pytree", _pytree_program, {}, (PYTREE_ARG,)),
        ("argnums", lambda lib: lambda a, b: a * b, {"argnums": (0, 1)}, (X3, 2.0)),
        ("argnums_int", lambda lib: lambda a, b: a * b, {"argnums": 1}, (X3, X23[0])),
        ("python_scalar", lambda lib: lambda a: a * 3.0, {}, (2.0,)),
        ("python_scalars", lambda lib: lambda a, b: a * b, {"argnums": (0, 1)}, (2.0, 3.0)),
        ("scalar_to_vector", lambda lib: lambda a: a * X3, {}, (2.0,)),
        ("has_aux", lambda lib: lambda a: (a * 2, {"s": lib.numpy.sum(a)}),
         {"has_aux": True}, (X3,)),
        ("size_zero_input", lambda lib: lambda a: a * 2, {}, (np.zeros((0,), np.float32),)),
        ("size_zero_output", lambda lib: lambda a: a[:0] * 2, {}, (X3,)),
        ("constant_output", lambda lib: lambda a: lib.numpy.ones(2), {}, (X3,)),
        ("holomorphic", lambda lib: lambda a: a * a + 1j * a, {"holomorphic": True},
         (np.array([1 + 2j, 3j], np.complex64),)),
    ]


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_jacobians_match_jax(transform, case):
    _, program, kwargs, args = case
    if transform == "hessian" and case[0] in ("has_aux", "constant_output"):
        pytest.skip("hessian of these is covered by test_hessian_with_aux_matches_jax")
    ours = getattr(minijax, transform)(program(minijax), **kwargs)
    # the oracle as one jitted program (eagerly, JAX compiles one per operation); the
    # comparison is up to a tolerance, and jit keeps JAX's dtypes and weak types
    expected = jax.jit(getattr(jax, transform)(program(jax), **kwargs))(*args)
    assert_trees_match(ours(*args), expected, rtol=1e-5, atol=1e-5)
    assert_trees_match(minijax.jit(ours)(*args), expected, rtol=1e-5, atol=1e-5)


def test_hessian_with_aux_matches_jax():
    def program(lib):
        return lambda a: (lib.numpy.sum(lib.numpy.sin(a) * a), a * 2)
    ours = minijax.hessian(program(minijax), has_aux=True)(X3)
    theirs = jax.jit(jax.hessian(program(jax), has_aux=True))(X3)   # one program
    assert_trees_match(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_under_vmap_and_grad_matches_jax(transform):
    def program(lib):
        return lambda x: lib.numpy.sin(x) * lib.numpy.sum(x)
    ours, theirs = (getattr(lib, transform)(program(lib)) for lib in (minijax, jax))
    # JAX's side under jax.jit: one program each, not one per operation
    assert_trees_match(minijax.vmap(ours)(X23), jax.jit(jax.vmap(theirs))(X23), rtol=1e-5)
    assert_trees_match(minijax.grad(lambda x: mnp.sum(ours(x)))(X3),
                       jax.jit(jax.grad(lambda x: jnp.sum(theirs(x))))(X3), rtol=1e-5)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_integer_output_block_matches_jax(transform):
    # An integer output's Jacobian block: jacfwd gives zeros of the output's dtype, as
    # JAX; jacrev refuses an integer output with a TypeError, as JAX's does.
    def program(lib):
        return lambda a: (a * 2, lib.numpy.zeros(2, np.int32), 3)
    if transform == "jacfwd":
        ours = minijax.jacfwd(program(minijax))(X3)
        assert_trees_match(ours, jax.jacfwd(program(jax))(X3))
    else:
        with pytest.raises(TypeError, match="int32"):
            jax.jacrev(program(jax))(X3)
        with pytest.raises(TypeError, match="int32"):
            minijax.jacrev(program(minijax))(X3)


def test_jacrev_allow_int_gives_zeros_of_the_integer_inputs_dtype():
    # JAX casts each jacrev block to its input's dtype: int32 zeros, not float0.
    ours = minijax.jacrev(lambda a, b: a * b, argnums=(0, 1), allow_int=True)(
        X3, np.arange(3, dtype=np.int32))
    theirs = jax.jacrev(lambda a, b: a * b, argnums=(0, 1), allow_int=True)(
        X3, np.arange(3, dtype=np.int32))
    assert_trees_match(ours, theirs)
    assert ours[1].shape == (3, 3) and ours[1].dtype == np.int32


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_errors_are_unchanged(transform):
    from minijax.frontend.autodiff import ArgnumsError, NonDifferentiableInputError
    jac = getattr(minijax, transform)
    with pytest.raises(NonDifferentiableInputError):
        jac(lambda a: a * 2)(np.arange(3))
    with pytest.raises(ArgnumsError):
        jac(lambda a: a, argnums=3)(X3)
