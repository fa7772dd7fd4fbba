"""`lax.X_p`: JAX's primitive objects are minijax's own primitives (minijax/lax/primitives.py).

Each exposed primitive is bound with the params of JAX's own equation (from the
jaxpr of the matching `lax` function) and gives JAX's result; minijax's jaxpr of that
function holds the very object. Primitives whose params are jaxprs are bound with
minijax's params, since a JAX jaxpr is not a minijax one.
"""
from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest
from jax.extend.core import Literal as JaxLiteral

import minijax
import minijax.ad_checkpoint  # noqa: F401  (not loaded by `import minijax`, as in JAX)
import minijax.custom_derivatives  # noqa: F401
from minijax.extend.core import Literal
from minijax.lax import primitives as table
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.devices import on_cpu
from tests.library_helpers import assert_same_outcome, check_everywhere

f32 = np.float32
X = np.array([0.3, 0.6, 0.2], f32)
Y = np.array([0.5, 0.25, 0.9], f32)
I = np.array([3, 5, 6], np.int32)
J = np.array([1, 2, 3], np.int32)
B = np.array([True, False, True])
M = np.arange(6, dtype=f32).reshape(2, 3)
SPD = np.array([[2., 1.], [1., 3.]], f32)


def _fn(name, *static, **kw):
    return lambda mod: lambda *a: getattr(mod.lax, name)(*a, *static, **kw)


def _linalg(name, **kw):
    return lambda mod: lambda a: getattr(mod.lax.linalg, name)(a, **kw)


UNARY = ("abs acos acosh asin asinh atan atanh bessel_i0e bessel_i1e cbrt ceil cos cosh "
         "digamma erf erf_inv erfc exp exp2 expm1 floor is_finite lgamma log log1p "
         "logistic neg round rsqrt sign sin sinh sqrt square tan tanh").split()
BINARY = ("add atan2 div max min mul nextafter pow rem sub eq ne lt le gt ge igamma "
          "igammac igamma_grad_a zeta polygamma complex").split()
XC = X.astype(np.complex64)

# attribute, function of the module (jax or minijax) to trace, its arguments
ELEMENTWISE = [
    *[(f"{n}_p", _fn(n), (X,)) for n in UNARY],
    *[(f"{n}_p", _fn(n), (X, Y)) for n in BINARY],
    *[(f"{p}_p", _fn(f"bitwise_{p}"), (I, J)) for p in ("and", "or", "xor")],
    ("not_p", _fn("bitwise_not"), (I,)),
    *[(f"{n}_p", _fn(n), (I, J)) for n in
      ("shift_left", "shift_right_arithmetic", "shift_right_logical")],
    ("population_count_p", _fn("population_count"), (I,)),
    ("real_p", _fn("real"), (XC,)), ("imag_p", _fn("imag"), (XC,)),
    ("conj_p", _fn("conj"), (XC,)),
]
if JAX_VERSION >= (0, 11):  # JAX 0.11 made one_minus_square and log2 primitives
    ELEMENTWISE += [(f"{n}_p", _fn(n), (X,)) for n in ("one_minus_square", "log2")]
CASES = [
    ("clamp_p", _fn("clamp"), (f32(0.25), X, f32(0.5))),
    ("select_n_p", _fn("select_n"), (B, X, Y)),
    ("integer_pow_p", _fn("integer_pow", 3), (X,)),
    ("convert_element_type_p", _fn("convert_element_type", np.int32), (X * 10,)),
    ("bitcast_convert_type_p", _fn("bitcast_convert_type", np.int32), (X,)),
    ("reduce_precision_p", _fn("reduce_precision", 5, 10), (X,)),
    ("regularized_incomplete_beta_p", _fn("betainc"), (X, Y, X)),
    *[(f"reduce_{n}_p", _fn(f"reduce_{n}", (1,)), (M,)) for n in ("sum", "max", "min", "prod")],
    ("reduce_and_p", _fn("reduce_and", (0,)), (B,)),
    ("reduce_or_p", _fn("reduce_or", (0,)), (B,)),
    ("argmax_p", _fn("argmax", 1, np.int32), (M,)),
    ("argmin_p", _fn("argmin", 1, np.int32), (M,)),
    *[(f"cum{n}_p", _fn(f"cum{n}", axis=1), (M,)) for n in ("sum", "prod", "max", "min")],
    ("broadcast_in_dim_p", _fn("broadcast_in_dim", (2, 3), (1,)), (X,)),
    ("concatenate_p", lambda mod: lambda a, b: mod.lax.concatenate([a, b], 0), (X, Y)),
    ("dot_general_p", _fn("dot_general", (((1,), (1,)), ((), ()))), (M, M)),
    ("dynamic_slice_p", lambda mod: lambda a, i: mod.lax.dynamic_slice(a, (i,), (2,)),
     (X, np.int32(1))),
    ("dynamic_update_slice_p",
     lambda mod: lambda a, u, i: mod.lax.dynamic_update_slice(a, u, (i,)),
     (X, Y[:1], np.int32(1))),
    ("iota_p", lambda mod: lambda: mod.lax.iota(np.int32, 4), ()),
    ("pad_p", lambda mod: lambda a: mod.lax.pad(a, f32(0), [(1, 2, 0)]), (X,)),
    ("reshape_p", _fn("reshape", (3, 2)), (M,)),
    ("rev_p", _fn("rev", (0,)), (M,)),
    ("slice_p", _fn("slice", (0, 1), (2, 3)), (M,)),
    ("squeeze_p", _fn("squeeze", (0,)), (M[:1],)),
    ("transpose_p", _fn("transpose", (1, 0)), (M,)),
    ("sort_p", _fn("sort"), (X,)),
    ("top_k_p", _fn("top_k", 2), (X,)),
    ("optimization_barrier_p", lambda mod: lambda a, b: mod.lax.optimization_barrier((a, b)),
     (X, Y)),
    ("gather_p", lambda mod: lambda a: a[np.array([2, 0])], (X,)),
    *[(f"scatter{s}_p", lambda mod, m=m: lambda a: getattr(a.at[np.array([2, 0])], m)(Y[:2]),
       (X,)) for s, m in (("", "set"), ("_add", "add"), ("_mul", "multiply"),
                          ("_min", "min"), ("_max", "max"))],
    ("conv_general_dilated_p",
     lambda mod: lambda a, b: mod.lax.conv(a, b, (1,), "VALID"), (X[None, None], Y[None, None, :2])),
    ("reduce_window_sum_p",
     lambda mod: lambda a: mod.lax.reduce_window(a, f32(0), mod.lax.add, (2,), (1,), "VALID"), (X,)),
    ("reduce_window_max_p",
     lambda mod: lambda a: mod.lax.reduce_window(a, -np.inf, mod.lax.max, (2,), (1,), "VALID"),
     (X,)),
    ("reduce_window_min_p",
     lambda mod: lambda a: mod.lax.reduce_window(a, np.inf, mod.lax.min, (2,), (1,), "VALID"),
     (X,)),
    ("rng_bit_generator_p",
     lambda mod: lambda k: mod.lax.rng_bit_generator(k, (2,), dtype=np.uint32), (np.arange(4, dtype=np.uint32),)),
    ("cholesky_p", _linalg("cholesky"), (SPD,)),
    ("eigh_p", _linalg("eigh"), (SPD,)),
    ("lu_p", _linalg("lu"), (SPD,)),
    ("qr_p", _linalg("qr"), (SPD,)),
    ("svd_p", _linalg("svd"), (SPD,)),
    ("hessenberg_p", _linalg("hessenberg"), (SPD,)),
    ("tridiagonal_p", _linalg("tridiagonal"), (SPD,)),
    ("householder_product_p", lambda mod: lambda a: mod.lax.linalg.householder_product(
        a, a[:, 0]), (SPD,)),
    ("ormqr_p", lambda mod: lambda a: mod.lax.linalg.ormqr(a, a[:, 0], a), (SPD,)),
    ("tridiagonal_solve_p", lambda mod: lambda a: mod.lax.linalg.tridiagonal_solve(
        a[0], a[1], a[0], a[:, :1]), (SPD,)),
    ("eig_p", _linalg("eig"), (SPD,)),
    ("schur_p", _linalg("schur"), (SPD,)),
    ("rng_uniform_p", lambda mod: lambda: mod.lax.rng_uniform(f32(0), f32(1), (2,)), ()),
    ("triangular_solve_p",
     lambda mod: lambda a, b: mod.lax.linalg.triangular_solve(a, b, left_side=True), (SPD, SPD)),
]

NAME = ("name_p", lambda mod: lambda a: mod.ad_checkpoint.checkpoint_name(a, "n"), (X,))
if JAX_VERSION >= (0, 12):  # jax.ad_checkpoint.name_p is public from JAX 0.12
    CASES.append(NAME)

# JAX's lax.fft is a jit around its primitive (JAX's `fft` equation sits inside).
FFT = ("fft_p", lambda mod: lambda a: mod.lax.fft(a, "FFT", (3,)), (XC,))


def _exposed(attr):
    module = next(m for m, names in table.TABLES.items() if attr in names)
    return (importlib.import_module(module), importlib.import_module("jax" + module[7:]))


def _jax_equation(attr, fn, args):
    """JAX's primitive, the values of its equation's inputs and its params: the
    equations before it are run by binding them (JAX's lax.fft wraps its equation in
    a `jit`, which is entered)."""
    prim = getattr(_exposed(attr)[1], attr)
    closed = jax.make_jaxpr(fn(jax))(*args)
    jaxpr, env = closed.jaxpr, dict(zip(closed.jaxpr.invars, args))
    env.update(zip(jaxpr.constvars, closed.consts))
    read = lambda v: v.val if isinstance(v, JaxLiteral) else env[v]  # noqa: E731
    eqns = list(jaxpr.eqns)
    while eqns:
        eqn = eqns.pop(0)
        ins = [read(v) for v in eqn.invars]
        if eqn.primitive is prim:
            return prim, ins, eqn.params
        if eqn.primitive.name in ("jit", "pjit") and not eqns:
            inner = eqn.params["jaxpr"]
            env.update(zip(inner.jaxpr.invars, ins))
            eqns = list(inner.jaxpr.eqns)
            continue
        outs = eqn.primitive.bind(*ins, **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    raise AssertionError(f"JAX's jaxpr has no {attr} equation")


def _ours(attr, fn, args):
    """The exposed object, checked to be the primitive of minijax's own equation."""
    ours = getattr(_exposed(attr)[0], attr)
    jaxpr = minijax.make_jaxpr(fn(minijax))(*args)
    assert any(e.primitive is ours for e in jaxpr.eqns), [e.primitive for e in jaxpr.eqns]
    return ours


def _jax_equations(cases):
    """`_jax_equation` of each case, the inputs computed in one JAX program."""
    found = []

    def inputs():
        found.clear()
        values = []
        for case in cases:
            prim, ins, params = _jax_equation(*case)
            found.append((prim, params))
            values.append(ins)
        return values
    values = jax.jit(inputs)()
    return [(prim, ins, params) for (prim, params), ins in zip(found, values)]


def test_bind_takes_the_precision_jax_fills_in():
    # Under jax_default_matmul_precision JAX's contraction equations hold a pair of
    # `Precision` members; bind takes them as minijax's names.
    a, b = np.ones((2, 3), np.float32), np.full((3, 2), 0.5, np.float32)
    with jax.default_matmul_precision("highest"):
        [eqn] = jax.make_jaxpr(lambda a, b: jax.lax.dot(a, b))(a, b).eqns
    assert eqn.params["precision"] == (jax.lax.Precision.HIGHEST,) * 2
    ours = minijax.lax.dot_general_p
    closed = minijax.make_jaxpr(lambda a, b: ours.bind(a, b, **eqn.params))(a, b)
    assert closed.eqns[0].params["precision"] == ("HIGHEST", "HIGHEST")
    assert_trees_match(ours.bind(a, b, **eqn.params), eqn.primitive.bind(a, b, **eqn.params))


@pytest.mark.parametrize("cases", [ELEMENTWISE, CASES + [FFT]], ids=["elementwise", "others"])
def test_bind_with_jax_params_matches_jax(cases):
    # All binds of a side in ONE jitted program: a program per primitive would cost
    # a compile each.
    # (JAX lowers hessenberg, schur and eig on the CPU only: tests/devices.py)
    with on_cpu():
        binds = [(_ours(*case),) + eqn for case, eqn in zip(cases, _jax_equations(cases))]
        got = minijax.jit(lambda: [ours.bind(*ins, **ps) for ours, _, ins, ps in binds])()
        want = jax.jit(lambda: [prim.bind(*ins, **ps) for _, prim, ins, ps in binds])()
    for (attr, *_), g, w in zip(cases, got, want):
        if attr == "cholesky_p":   # JAX's primitive leaves the upper triangle unspecified
            g, w = np.tril(g), np.tril(w)
        if attr == "rng_uniform_p":    # XLA's RngUniform draws from per-program state
            assert g.dtype == w.dtype and g.shape == w.shape and ((0 <= g) & (g < 1)).all()
            continue
        assert_trees_match(g, w, what=attr)


def _relu(mod):
    return mod.nn.relu


def _clip_gradient(mod):
    @mod.custom_vjp
    def f(a):
        return mod.numpy.sin(a)
    f.defvjp(lambda a: (f(a), a), lambda a, g: (g * a,))
    return f


# Params that are jaxprs are each system's own: these are bound with minijax's
# params, by an interpreter that binds every equation of minijax's jaxpr anew.
OWN_PARAMS = [
    ("cond_p", lambda mod: lambda a: mod.lax.cond(a[0] > 0, mod.numpy.sin, mod.numpy.cos, a),
     (X,)),
    ("while_p", lambda mod: lambda a: mod.lax.while_loop(lambda c: c[0] < 2, lambda c: c + 1,
                                                         a), (X,)),
    ("scan_p", lambda mod: lambda a: mod.lax.scan(lambda c, z: (c + z, c * z), f32(0), a),
     (X,)),
    ("custom_jvp_call_p", _relu, (X - 0.4,)),
    ("custom_vjp_call_p", _clip_gradient, (X,)),
    ("linear_solve_p", lambda mod: lambda a: mod.lax.custom_linear_solve(
        lambda v: 2 * v, a, lambda mv, b: b / 2), (X,)),
]


def _rebind(closed, args):
    env = dict(zip(closed.jaxpr.invars, args))
    env.update(zip(closed.jaxpr.constvars, closed.consts))
    read = lambda v: v.val if isinstance(v, Literal) else env[v]  # noqa: E731
    for eqn in closed.jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    return [read(v) for v in closed.jaxpr.outvars]


@pytest.mark.parametrize("attr,fn,args", OWN_PARAMS, ids=[c[0] for c in OWN_PARAMS])
def test_bind_with_own_params_matches_jax(attr, fn, args):
    _ours(attr, fn, args)
    got = _rebind(minijax.make_jaxpr(fn(minijax))(*args), args)
    assert_trees_match(got, jax.tree_util.tree_leaves(fn(jax)(*args)))


# Collectives bind inside a named vmap, with JAX's params for its axis `i`.
COLLECTIVES = [
    ("psum_p", _fn("psum", "i")), ("pmax_p", _fn("pmax", "i")), ("pmin_p", _fn("pmin", "i")),
    ("all_gather_p", _fn("all_gather", "i")),
    ("ppermute_p", _fn("ppermute", "i", [(0, 1), (1, 0)])),
    ("axis_index_p", lambda mod: lambda a: mod.lax.axis_index("i")),
]


@pytest.mark.parametrize("attr,fn", COLLECTIVES, ids=[c[0] for c in COLLECTIVES])
def test_collectives_bind_with_jax_params(attr, fn):
    eqn = next(e for e in jax.make_jaxpr(fn(jax), axis_env=[("i", 2)])(X).eqns
               if e.primitive is getattr(jax.lax, attr))
    operands = (M,) if eqn.invars else ()

    def run(mod):
        prim = getattr(mod.lax, attr)
        return mod.vmap(lambda *a: prim.bind(*a, **eqn.params), axis_name="i",
                        axis_size=2)(*operands)
    assert_trees_match(run(minijax), run(jax))


def test_every_exposed_primitive_is_swept():
    swept = {c[0] for c in ELEMENTWISE + CASES + OWN_PARAMS + COLLECTIVES + [FFT, NAME]}
    swept |= {"one_minus_square_p", "log2_p"}   # in ELEMENTWISE from JAX 0.11 on
    exposed = {attr for names in table.TABLES.values() for attr in names}
    assert exposed - swept == {"all_to_all_p", "sharding_constraint_p"}, exposed - swept


def test_dir_lists_the_exposed_primitives_as_jax_does():
    for module in table.TABLES:
        ours = importlib.import_module(module)
        jaxs = importlib.import_module(module.replace("minijax", "jax", 1))
        assert set(table.names(module)) <= set(dir(ours)), module
        # every `_p` name both answer is listed by both
        both = {n for n in dir(jaxs) if n.endswith("_p") and hasattr(ours, n)}
        assert both <= set(dir(ours)), module
    assert "sin" in dir(minijax.lax) and "sin_p" in dir(minijax.lax)


def test_make_jaxpr_holds_the_exposed_object():
    eqn = minijax.make_jaxpr(minijax.lax.sin)(X).eqns[0]
    assert eqn.primitive is minijax.lax.sin_p and minijax.lax.sin_p.name == "sin"
    assert minijax.lax.scatter_add_p.name == "scatter_add"   # JAX's is "scatter-add"


def _gather_bind(mod, a, fill_value=None):
    dnums = mod.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                           start_index_map=(0,))
    return mod.lax.gather_p.bind(mod.numpy.ravel(a), np.array([[2], [0]], np.int32), dimension_numbers=dnums,
                                 slice_sizes=(1,), unique_indices=False,
                                 indices_are_sorted=False, mode=mod.lax.GatherScatterMode.CLIP,
                                 fill_value=fill_value)


@pytest.mark.parametrize("fn", [
    lambda mod, a: mod.lax.sin_p.bind(a, accuracy=None),
    lambda mod, a: mod.lax.reduce_sum_p.bind(a * a, axes=(0,), out_sharding=None),
    _gather_bind,
], ids=["sin", "reduce_sum", "gather"])
def test_bind_under_transforms(fn):
    check_everywhere(fn, M)


def test_jax_only_param_values_minijax_cannot_honour_are_refused():
    with pytest.raises(NotImplementedError, match="accuracy"):
        minijax.lax.exp_p.bind(X, accuracy=jax.lax.AccuracyMode.HIGHEST)
    with pytest.raises(NotImplementedError, match="fill_value"):
        _gather_bind(minijax, X, fill_value=1.0)


def test_names_without_a_minijax_primitive_are_absent():
    assert_same_outcome(lambda mod: mod.lax.no_such_thing_p)
    assert hasattr(jax.lax.linalg, "lu_pivots_to_permutation_p")
    with pytest.raises(AttributeError, match="lu_pivots_to_permutation_p"):
        minijax.lax.linalg.lu_pivots_to_permutation_p  # noqa: B018
