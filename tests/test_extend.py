"""User-defined primitives (`minijax.extend.core.Primitive`, `minijax.interpreters`)
against JAX's: JAX's tutorial primitive `multiply_add`, and a two-result `sincos`,
each defined twice with the same code, once with JAX's API and once with minijax's
(the helpers below take the library's name), then compared under each
transformation; JAX's shorthands (`defjvp`, `deflinear2`, `defbilinear`,
`defvectorized`); JAX's errors for a missing rule (the same words on jax 0.10.2,
0.11.2 and 0.12.0.1); and the user's primitives staying out of the catalogue."""
import importlib

import jax
import numpy as np
import pytest

import minijax
import minijax.extend.core
from minijax.testing import assert_trees_match


def _api(lib: str):
    mod = lambda name: importlib.import_module(f"{lib}.{name}")
    return (mod("extend.core").Primitive, mod("interpreters.ad"),
            mod("interpreters.batching"), mod("interpreters.mlir"), mod("core"),
            mod("numpy"))


def _multiply_add(lib: str, name="multiply_add"):
    """The tutorial's primitive and rules, in the library `lib`."""
    Primitive, ad, batching, mlir, core, jnp = _api(lib)
    p = Primitive(name)

    def impl(x, y, z):
        return jnp.add(jnp.multiply(x, y), z)

    def multiply_add(x, y, z):
        return p.bind(x, y, z)

    def jvp(primals, tangents):
        x, y, z = primals
        xt, yt, zt = (jnp.zeros_like(x) if type(t) is ad.Zero else t for t in tangents)
        return multiply_add(x, y, z), multiply_add(xt, y, multiply_add(x, yt, zt))

    def transpose(ct, x, y, z):
        # the jvp above is linear in `x` with `y` known, or in `y` with `x` known
        if not ad.is_undefined_primal(x):
            ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else \
                multiply_add(x, ct, jnp.zeros_like(x))
            return None, ct_y, ct
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else \
            multiply_add(ct, y, jnp.zeros_like(y))
        return ct_x, None, ct

    def batch(args, dims):
        # (the tutorial's rule takes all three batched alike; a transpose under vmap
        # passes an unbatched zeros_like, so this one moves every batch axis to 0)
        size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
        return multiply_add(*(batching.bdim_at_front(x, d, size)
                              for x, d in zip(args, dims))), 0

    p.def_impl(impl)
    p.def_abstract_eval(lambda x, y, z: core.ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))
    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batch
    return multiply_add


def _sincos(lib: str):
    """A primitive with two results, lowered through `lower_fun`'s default
    (`multiple_results=True`)."""
    Primitive, ad, batching, mlir, core, jnp = _api(lib)
    p = Primitive("sincos")
    p.multiple_results = True

    def impl(x):
        return [jnp.sin(x), jnp.cos(x)]

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        return [s, c], [t * c, -t * s]

    p.def_impl(impl)
    p.def_abstract_eval(lambda x: [core.ShapedArray(x.shape, x.dtype)] * 2)
    mlir.register_lowering(p, mlir.lower_fun(impl))
    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), [dims[0]] * 2)
    return lambda x: tuple(p.bind(x))


MULTIPLY_ADD = {"jax": _multiply_add("jax"), "minijax": _multiply_add("minijax")}
SINCOS = {"jax": _sincos("jax"), "minijax": _sincos("minijax")}

X, Y, Z = (np.array([0.5, -1.5, 2.0], np.float32), np.array([3.0, 0.25, -1.0], np.float32),
           np.array([1.0, 2.0, 4.0], np.float32))

# name -> (program, arguments); `lib` is the library's module, `ma` its multiply_add.
TRANSFORMED = {
    "eager": (lambda lib, ma: ma, (X, Y, Z)),
    "jit": (lambda lib, ma: lib.jit(ma), (X, Y, Z)),
    # weak operands, a strong result: the type is the abstract eval's, not the impl's
    "jit of Python scalars": (lambda lib, ma: lib.jit(ma), (2.0, 3.0, 4.0)),
    "jvp": (lambda lib, ma: lambda x, y: lib.jvp(lambda a, b: ma(a, b, a), (x, y), (y, x)),
            (X, Y)),
    "grad": (lambda lib, ma: lib.grad(lambda x, y: ma(x, y, x).sum(), argnums=(0, 1)),
             (X, Y)),
    "jit of grad": (lambda lib, ma: lib.jit(lib.grad(lambda x: ma(x, x, 3.0 * x).sum())),
                    (X,)),
    "vmap": (lambda lib, ma: lib.vmap(ma), (X, Y, Z)),
    "vmap of grad": (lambda lib, ma: lib.vmap(lib.grad(lambda x, y: ma(x, y, y))),
                     (X, Y)),
    "grad of remat": (lambda lib, ma: lib.grad(
        lib.checkpoint(lambda x: lib.numpy.sin(ma(x, x, x)).sum())), (X,)),
}


@pytest.mark.parametrize("name", TRANSFORMED)
def test_multiply_add_matches_jax(name):
    program, args = TRANSFORMED[name]
    expected = program(jax, MULTIPLY_ADD["jax"])(*args)
    assert_trees_match(program(minijax, MULTIPLY_ADD["minijax"])(*args), expected, what=name)


def test_the_equation_prints_with_the_users_name():
    def f(lib, ma):
        return lambda x, y: ma(x, y, x)
    for lib in (jax, minijax):
        text = " ".join(str(lib.make_jaxpr(f(lib, MULTIPLY_ADD[lib.__name__]))(X, Y)).split())
        assert "c:f32[3] = multiply_add a b a" in text, (lib.__name__, text)


def test_the_reference_evaluator_runs_the_lowered_function():
    from minijax.backends.reference import eval_closed_jaxpr
    f = lambda x, y: MULTIPLY_ADD["minijax"](x, y, 2 * x)
    closed = minijax.make_jaxpr(f)(X, Y)
    assert_trees_match(eval_closed_jaxpr(closed, X, Y)[0], MULTIPLY_ADD["jax"](X, Y, 2 * X))


def test_a_primitive_with_two_results_matches_jax():
    for lib in (jax, minijax):
        sincos = SINCOS[lib.__name__]
        loss = lambda x: (sincos(x)[0] * sincos(x)[1]).sum()
        got = {"eager": sincos(X), "jit": lib.jit(sincos)(X),
               "jvp": lib.jvp(sincos, (X,), (Y,)), "vmap": lib.vmap(sincos)(X),
               "grad": lib.grad(loss)(X)}
        if lib is jax:
            expected = got
        else:
            assert_trees_match(got, expected)


def _shorthands(lib: str):
    """`cube` by `defjvp2`, `double` by `deflinear2`, `times` by `defbilinear`, each
    batched by `defvectorized`; lowered from their jnp forms."""
    Primitive, ad, batching, mlir, core, jnp = _api(lib)
    same = lambda x, *rest: core.ShapedArray(x.shape, x.dtype)
    prims = {}
    for name, impl in [("cube", lambda x: x * x * x), ("double", lambda x: 2 * x),
                       ("times", lambda x, y: x * y)]:
        p = prims[name] = Primitive(name)
        p.def_impl(impl)
        p.def_abstract_eval(same)
        mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))
        batching.defvectorized(p)
    cube, double, times = prims["cube"], prims["double"], prims["times"]
    ad.defjvp2(cube, lambda t, ans, x: 3 * t * ans / x)
    ad.deflinear2(double, lambda ct, x: [double.bind(ct)])
    ad.defbilinear(times, lambda ct, x, y: times.bind(ct, y),
                   lambda ct, x, y: times.bind(x, ct))
    return lambda x, y: times.bind(double.bind(cube.bind(x)), y)


SHORTHANDS = {"jax": _shorthands("jax"), "minijax": _shorthands("minijax")}


def test_jaxs_shorthands_match_jax():
    for lib in (jax, minijax):
        f = SHORTHANDS[lib.__name__]
        got = {"jvp": lib.jvp(f, (X, Y), (Y, X)),
               "grad": lib.jit(lib.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1)))(X, Y),
               "vmap": lib.vmap(f)(X, Y)}
        if lib is jax:
            expected = got
        else:
            assert_trees_match(got, expected)


# -- errors ---------------------------------------------------------------------------

def _half_defined(lib: str, name: str, *, impl=True, abstract_eval=True, lowering=True,
                  jvp=True):
    """`name`: a linear primitive (x -> 2x) with only the rules asked for."""
    Primitive, ad, batching, mlir, core, jnp = _api(lib)
    p = Primitive(name)
    if impl:
        p.def_impl(lambda x: 2 * x)
    if abstract_eval:
        p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
    if lowering:
        mlir.register_lowering(p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))
    if jvp:
        ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    return p


# missing rule -> (what the primitive lacks, the program that needs it)
MISSING = {
    "impl": ({"impl": False}, lambda lib, p: p.bind(X)),
    "abstract eval": ({"abstract_eval": False}, lambda lib, p: lib.jit(p.bind)(X)),
    "lowering": ({"lowering": False}, lambda lib, p: lib.jit(p.bind)(X)),
    "jvp": ({"jvp": False}, lambda lib, p: lib.jvp(p.bind, (X,), (X,))),
    "transpose": ({}, lambda lib, p: lib.grad(lambda x: p.bind(x).sum())(X)),
    "batching": ({}, lambda lib, p: lib.vmap(p.bind)(X)),
}


@pytest.mark.parametrize("missing", MISSING)
def test_a_missing_rule_is_jaxs_not_implemented_error(missing):
    lacks, program = MISSING[missing]
    name = f"lacks_{missing.replace(' ', '_')}"
    messages = []
    for lib in (jax, minijax):
        p = _half_defined(lib.__name__, name, **lacks)
        with pytest.raises(NotImplementedError) as info:
            program(lib, p)
        messages.append(str(info.value))
    jax_message, message = messages
    assert f"'{name}' not" in jax_message and message.startswith(jax_message), messages


def test_the_rule_tables_refuse_what_minijax_cannot_serve():
    Primitive, ad, batching, mlir, core, jnp = _api("minijax")
    p = Primitive("hand_lowered")
    with pytest.raises(NotImplementedError, match="register mlir.lower_fun"):
        mlir.register_lowering(p, lambda ctx, x: [x])
    with pytest.raises(TypeError, match="takes a primitive made with"):
        ad.primitive_jvps[minijax.extend.core.primitives.sin_p] = lambda ps, ts: ps
    p.multiple_results = True
    with pytest.raises(TypeError, match="serves single-result primitives"):
        ad.defjvp(p, None)
    q = Primitive("bad_abstract_eval")
    q.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
    with pytest.raises(TypeError, match="abstract eval of bad_abstract_eval must return"):
        minijax.make_jaxpr(q.bind)(X)


# -- the catalogue, and extend.core's other names -------------------------------------

def test_user_primitives_stay_out_of_the_catalogue():
    from minijax.cli import coverage_table
    from minijax.ir.primitives import primitives_by_name, rule_tables, generic_paths
    Primitive = minijax.extend.core.Primitive
    again = Primitive("multiply_add")      # a name may be reused, as in JAX
    assert again.name == "multiply_add" and "multiply_add" not in primitives_by_name
    assert "multiply_add" not in coverage_table(primitives_by_name, rule_tables,
                                                generic_paths)


def test_jaxpr_as_fun_and_the_catalogues_primitives():
    import jax.extend.core
    f = lambda x: minijax.numpy.sin(x) * x
    closed = minijax.make_jaxpr(f)(X)
    assert isinstance(closed, minijax.extend.core.ClosedJaxpr)
    assert isinstance(closed.jaxpr, minijax.extend.core.Jaxpr)
    jax_closed = jax.make_jaxpr(lambda x: jax.numpy.sin(x) * x)(X)
    assert_trees_match(minijax.extend.core.jaxpr_as_fun(closed)(X),
                       jax.extend.core.jaxpr_as_fun(jax_closed)(X))
    assert_trees_match(minijax.grad(lambda x: minijax.extend.core.jaxpr_as_fun(closed, x)()
                                    [0].sum())(X),
                       jax.grad(lambda x: jax.extend.core.jaxpr_as_fun(jax_closed, x)()
                                [0].sum())(X))
    for name in ("add_p", "sin_p", "dot_general_p"):
        mine, theirs = (getattr(lib.extend.core.primitives, name) for lib in (minijax, jax))
        assert isinstance(mine, minijax.extend.core.Primitive.__mro__[1])
        assert mine.name == theirs.name


def test_two_primitives_of_one_name_are_two_programs():
    # The same name, types and text, but different lowerings: no compiled program
    # (nor a cached trace) of one may serve the other.
    Primitive, ad, batching, mlir, core, jnp = _api("minijax")
    results = []
    for factor in (2.0, 3.0):
        p = Primitive("scaled")
        p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
        mlir.register_lowering(p, mlir.lower_fun(lambda x, k=factor: k * x, False))
        results.append(minijax.jit(lambda x, p=p: p.bind(x))(X))
        results.append(minijax.lax.cond(True, p.bind, p.bind, X))
    assert_trees_match(results, [2 * X, 2 * X, 3 * X, 3 * X])
