"""Eager calls where JAX has one primitive are one program in minijax too (issue 18).

minijax writes some `lax` functions (and the import rules of some JAX primitives) as
several of its own primitives. Run eagerly op by op, such a call would make a program
per operation where JAX makes one. Each case here counts the programs one eager call
lowers (`tests/program_counting.py`), first call and repeat call, against JAX's own
call on the same inputs, and compares values, dtypes and weak types:

* `lax.reduce` with a computation that is not a monoid: one program per (computation,
  tree, avals, dimensions); a fresh closure over arrays per call traces and compiles
  per call, as JAX's does, while lambdas of one code over Python scalars share one
  program; `minijax.clear_caches()` lets the computations go;
* a JAX program imported with `minijax.interop` and evaluated eagerly: each JAX
  primitive that minijax composes is one `jit` equation named after it;
* `approx_min_k`, `stack`, `index_take`, `empty` (found by
  `benchmarks/eager_lax_programs.py`);
* each primitive's eager program is named as JAX's eager program for it, so that the
  two can share a compilation-cache entry.

Traced programs (`make_jaxpr`) keep the composition's equations with no nested call,
and errors are raised as before. Each case has shapes of its own, so that no other
test's program serves it on either side.
"""

import gc
import inspect
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.interop import trace_with_jax
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from tests.program_counting import counted, first_and_repeat, programs

_rng = np.random.RandomState(10)
_X = _rng.randn(7, 5).astype(np.float32)
_Y = _rng.randn(7, 5).astype(np.float32)
_I = np.array([3, -7, 1 << 20, 0, 255, -1], np.int32)


def _mixed(a, b):
    # Associative and commutative ((1 + a)(1 + b) - 1), as a reduction's computation
    # must be, but not one of lax's monoids: lax.reduce reduces it as a tree.
    return a + b + a * b


def _pair(a, b):              # a pytree computation
    return (a[0] + b[0], a[1] * b[1])


REDUCE_CASES = {
    "one operand, last axis": (lambda lax: lax.reduce(_X * 0.1, 0., _mixed, (1,))),
    "one operand, both axes": (lambda lax: lax.reduce(_X[:6] * 0.1, 1., _mixed, (0, 1))),
    "pytree of two": (lambda lax: lax.reduce((_X[:5], _Y[:5]), (0., 1.), _pair, (0,))),
    "integer operand": (lambda lax: lax.reduce(_I, np.int32(1),
                                               lambda a, b: a ^ b ^ (a & b), (0,))),
}


@pytest.mark.parametrize("name", REDUCE_CASES)
def test_eager_reduce_is_one_program(name):
    case = REDUCE_CASES[name]
    want, jax_counts = first_and_repeat(case, jax.lax)
    got, mini_counts = first_and_repeat(case, minijax.lax)
    assert_trees_match(got, want, rtol=1e-6)
    assert mini_counts == (1, 0)
    # JAX keys its trace by the function: a lambda written in the call is a new
    # computation each time, traced and compiled again. minijax shares one program
    # among the lambdas made from one code that read no global (`_Computation`).
    fresh = name == "integer operand"
    assert jax_counts == (1, 1 if fresh else 0)


_SCALE = 1.0


def _with_global_scale(a, b):     # reads a global: keyed by the function, as in JAX
    return a + b + _SCALE * a * b


def test_reduce_lambdas_share_a_program_only_when_equivalent():
    global _SCALE
    x = _X[:3, :3] * 0.1

    def both(make):
        return [lib.reduce(x, 0., make(), (1,)) for lib in (minijax.lax, jax.lax)]
    for scale in (1.0, 2.0, 2):        # closed-over scalars are part of the key
        got, want = both(lambda: lambda a, b: a + b + scale * a * b)
        assert_trees_match(got, want, rtol=1e-6)
    for _SCALE in (1.0, 3.0):          # a global read is not: the function is
        got, want = both(lambda: lambda a, b: _with_global_scale(a, b))
        assert_trees_match(got, want, rtol=1e-6)
    _SCALE = 1.0


def test_reduce_fresh_closure_traces_per_call_and_is_let_go():
    refs = []
    offset = np.float32(0.0)        # a NumPy scalar: keyed by the function, as in JAX

    def call():
        computation = lambda a, b: a * b + offset  # noqa: E731
        refs.append(weakref.ref(computation))
        return counted(lambda: minijax.lax.reduce(_X[:4], 0., computation, (1,)))[1]
    assert [call(), call()] == [1, 1]          # JAX's count too: it keys by identity
    reduce = inspect.unwrap(minijax.lax.reduce)     # (under its out_sharding keyword)
    cache = reduce.__globals__["_reduce_tree"].eager_jit.call_cache()
    assert cache.traces
    minijax.clear_caches()
    assert not cache.traces and cache.fast is None
    jax.clear_caches()    # JAX's own compile caches hold static arguments (bounded)
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_traced_reduce_has_the_tree_inline():
    fun = lambda x: minijax.lax.reduce(x, 0., _mixed, (1,))  # noqa: E731
    before = str(minijax.make_jaxpr(fun)(_X[:3, :4]))
    fun(_X[:3, :4])                                   # the eager call caches its body
    jaxpr = minijax.make_jaxpr(fun)(_X[:3, :4])
    assert str(jaxpr) == before
    names = [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]
    # The init value broadcast, the four columns as rows, two rounds of pairs, then
    # the init value combined once: as before the eager call became one program.
    combine = ["add", "mul", "add"]
    assert names == (["broadcast_in_dim", "transpose", "reshape"] + ["slice", "slice"]
                     + combine + ["slice", "slice"] + combine + ["squeeze"] + combine)


def test_eager_transformations_of_reduce_match_jax():
    # Under an eager transformation the call is one `jit` call the transformation's
    # call rules take whole.
    def loss(lax):
        return lambda x: lax.reduce(x * x, 0., _mixed, (0, 1))
    assert_trees_match(minijax.grad(loss(minijax.lax))(_X[:2] * 0.1),
                       jax.grad(loss(jax.lax))(_X[:2] * 0.1), rtol=1e-6)
    x = _X[:4, :3] * 0.1

    def rows(lib):
        return lib.vmap(lambda r: lib.lax.reduce(r, 0., _mixed, (0,)))(x)

    def pair(lib):
        return lib.jvp(lambda v: lib.lax.reduce((v, v), (0., 1.), _pair, (1,)), (x,), (x,))
    assert_trees_match(rows(minijax), rows(jax), rtol=1e-6)
    assert_trees_match(pair(minijax), pair(jax), rtol=1e-6)


def test_reduce_errors_are_raised_on_every_call():
    lax = minijax.lax
    for _ in range(2):
        with pytest.raises(ValueError, match="same tree structure"):
            lax.reduce((_X, _X), 0., _mixed, (0,))
        with pytest.raises(ValueError, match="duplicate dimensions"):
            lax.reduce(_X, 0., _mixed, (1, -1))
        with pytest.raises(TypeError, match="dtypes should match"):
            lax.reduce(_X, np.int32(0), _mixed, (0,))
        with pytest.raises(TypeError, match="operands' structure"):
            lax.reduce(_X, 0., lambda a, b: (a, b), (0,))
    with pytest.raises(TypeError):       # JAX's type for the same mistake
        jax.lax.reduce(_X, np.int32(0), _mixed, (0,))


# -- imported JAX programs ---------------------------------------------------------------------

_F = np.linspace(-1, 2, 9).astype(np.float32)
_K = np.array([5, -9, 1 << 30, 77, 2, -1, 12, 4, 100], np.int32)


def _compositions(x, i):
    lax = jax.lax
    return (*lax.split(x, [4, 5]), lax.tile(x, (3,)), lax.stack([x, x, x], 0),
            *lax.unstack(x.reshape(3, 3)), lax.reduce_xor(i, (0,)), lax.clz(i),
            lax.mulhi(i, i), lax.cumlogsumexp(x), *lax.approx_min_k(x, 3),
            lax.scatter_sub(x, np.array([[1], [1]]), x[:2],
                            lax.ScatterDimensionNumbers((), (0,), (0,))))


_COMPOSED = ["split", "tile", "stack", "unstack", "reduce_xor", "clz", "mulhi",
             "cumlogsumexp", "approx_top_k", "scatter-sub"]


def test_imported_compositions_are_one_call_each():
    program = trace_with_jax(_compositions)(_F, _K)
    calls = [eqn.params["name"] for eqn in program.jaxpr.eqns
             if eqn.primitive.name == "jit"]
    assert calls == _COMPOSED
    assert len(program.jaxpr.eqns) == len(jax.make_jaxpr(_compositions)(_F, _K).eqns)


def test_eager_imported_program_makes_no_more_programs_than_jax():
    # Both libraries start cold: an earlier test in this process (of another file)
    # may have run some of these operations at these shapes in one library only.
    jax.clear_caches()
    minijax.clear_caches()
    program = trace_with_jax(_compositions)(_F, _K)
    want, jax_counts = first_and_repeat(_compositions, _F, _K)
    run = lambda: eval_jaxpr(program.jaxpr, program.consts, [_F, _K])  # noqa: E731
    got, mini_counts = first_and_repeat(run)
    assert_trees_match(got, list(want), rtol=1e-5)
    assert mini_counts[0] <= jax_counts[0] and mini_counts[1] == 0
    # A second import of the same program binds the same bodies: nothing compiles.
    again = trace_with_jax(_compositions)(_F, _K)
    assert counted(lambda: eval_jaxpr(again.jaxpr, again.consts, [_F, _K]))[1] == 0


def test_imported_random_draw_is_one_call_and_reads_jax_flag_on_each_import():
    draw = lambda k: jax.random.bits(k, (3, 2), jnp.uint16)  # noqa: E731
    key = jax.random.key(41)
    program = trace_with_jax(draw)(key)
    assert [e.params.get("name") for e in program.jaxpr.eqns if e.primitive.name == "jit"] \
        == ["random_bits"]
    assert_trees_match(eval_jaxpr(program.jaxpr, program.consts, [key]), [draw(key)])
    with jax.threefry_partitionable(False):     # JAX's flag, read on every import
        again = trace_with_jax(draw)(key)
        assert_trees_match(eval_jaxpr(again.jaxpr, again.consts, [key]), [draw(key)])


def test_imported_size_one_broadcast_is_one_call():
    # JAX's samplers stage `f32[4] + f32[1]`; minijax's add wants equal shapes.
    add = lambda x, y: jax.lax.add_p.bind(x, y)  # noqa: E731
    x, y = _F[:4], _F[4:5]
    program = trace_with_jax(add)(x, y)
    assert [(e.primitive.name, e.params.get("name")) for e in program.jaxpr.eqns] \
        == [("jit", "add")]
    got, mini_counts = first_and_repeat(
        lambda: eval_jaxpr(program.jaxpr, program.consts, [x, y]))
    assert_trees_match(got, [add(x, y)])
    assert mini_counts == (1, 0)


# -- lax functions minijax composes --------------------------------------------------------------

_V = np.linspace(-2, 3, 11).astype(np.float32)

LAX_CASES = {
    "approx_min_k": lambda lax: lax.approx_min_k(_V, 4),
    "stack": lambda lax: lax.stack([_V, 2 * _V], 1),
    "index_take": lambda lax: lax.index_take(_V.reshape(1, 11), (np.array([0, 0, -1]),
                                                                 np.array([3, -2, 12])),
                                             (0, 1)),
    "empty": lambda lax: lax.empty((3, 11), jnp.int16),
}


@pytest.mark.parametrize("name", LAX_CASES)
def test_composed_lax_function_is_one_program(name):
    case, specified = LAX_CASES[name], name != "empty"
    want, jax_counts = first_and_repeat(case, jax.lax, same_results=specified)
    got, mini_counts = first_and_repeat(case, minijax.lax, same_results=specified)
    if not specified:         # contents unspecified: shape, dtype and weak type only
        got, want = np.zeros_like(got), np.zeros_like(want)
    assert_trees_match(got, want)
    assert mini_counts == (1, 0) and jax_counts[0] >= 1


@pytest.mark.parametrize("name", LAX_CASES)
def test_composed_lax_function_traces_inline(name):
    jaxpr = minijax.make_jaxpr(lambda: LAX_CASES[name](minijax.lax))()
    assert all(eqn.primitive.name != "jit" for eqn in jaxpr.jaxpr.eqns)


def test_composed_lax_function_errors():
    lax = minijax.lax
    with pytest.raises(ValueError, match="at least one array"):
        lax.stack([])
    with pytest.raises(ValueError, match="same shape"):
        lax.stack([_V, _V[:3]])
    with pytest.raises(ValueError, match="non-negative int"):
        lax.approx_min_k(_V, -1)


def test_eager_programs_are_named_as_jaxs():
    """An eager primitive's program takes JAX's name for the primitive (`scatter-add`,
    not minijax's `scatter_add`): with the same module text, JAX's persistent
    compilation cache then serves both libraries' eager calls from one entry."""
    from minijax.backends.eager_dispatch import JAX_PRIMITIVE_NAMES
    from minijax.ir import primitives_by_name
    compared = 0
    for name in primitives_by_name:
        jax_prim = getattr(jax.lax, f"{name}_p", None)
        if jax_prim is None:
            continue
        compared += 1
        assert JAX_PRIMITIVE_NAMES.get(name, name) == jax_prim.name, name
    assert compared > 100
    # (shapes of this test's own, so that neither library has the program yet)
    x, updates = np.zeros(11, np.float32), np.ones(3, np.float32)
    indices = np.array([[1], [3], [10]], np.int32)
    numbers = dict(update_window_dims=(), inserted_window_dims=(0,),
                   scatter_dims_to_operand_dims=(0,))
    with programs("lowered") as jax_lowered:
        want = jax.lax.scatter_add(x, indices, updates,
                                   jax.lax.ScatterDimensionNumbers(**numbers))
    with programs("lowered") as lowered, programs("cache hits") as hits:
        got = minijax.lax.scatter_add(x, indices, updates,
                                      minijax.lax.ScatterDimensionNumbers(**numbers))
    assert_trees_match(got, want)
    # minijax lowers its own program, and the run's compilation cache (tests/conftest.py)
    # hands it JAX's executable: the module texts are the same
    assert (len(jax_lowered), len(lowered), len(hits)) == (1, 1, 1)
