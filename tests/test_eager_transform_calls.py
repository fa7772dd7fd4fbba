"""Eager transformations keep a jitted jnp function whole, as JAX's do (issue 18).

Under an eager `grad`/`vjp`/`jvp`/`vmap`/`jacfwd`/`jacrev`/`hessian` a `jitted_eagerly`
function (`minijax/frontend/eager_jit.py`) is one `jit` call marked `inline`: the
transformation's call rules transform its body once, and the root compiles each
transformed body once. Each case runs against JAX's transformation of JAX's own jnp
function (values, dtypes, weak types; where the comparison has a tolerance, JAX's side
runs under one `jax.jit`, one program instead of one per operation), and the programs
made are counted with a `jax.monitoring` listener against JAX's eager transformation:
no more than JAX's on a first call, none on a repeat call.
Traced programs (`make_jaxpr`, `jit`, and a pullback or linearized function traced
later) hold the body inline with the caller's lines (`test_inline_calls.py`); refs,
errors, custom derivative rules and `jax_debug_nans` behave as op by op.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.program_counting import programs

_rng = np.random.RandomState(18)
_A = _rng.randn(4, 3).astype(np.float32)
_SQUARE = (_rng.randn(3, 3) + 3 * np.eye(3)).astype(np.float32)
_SQUARES = (_rng.randn(2, 3, 3) + 3 * np.eye(3)).astype(np.float32)
_V = _rng.randn(5).astype(np.float32)
_V_NAN = np.array([1.5, np.nan, -0.5, 2.0, np.nan], np.float32)


def _svd_loss(np_, a):
    u, s, vt = np_.linalg.svd(a, full_matrices=False)
    return np_.sum(s ** 2) + np_.sum(u[0] * vt[0])


# name -> (function of (numpy module, x) -> scalar, the argument)
LOSSES = {
    "svd": (_svd_loss, _A),
    "inv": (lambda np_, a: np_.sum(np_.linalg.inv(a) ** 2), _SQUARE),
    "det": (lambda np_, a: np_.linalg.det(a), _SQUARE),
    "nanvar": (lambda np_, v: np_.nanvar(v * _V_NAN), _V),
    "polyval": (lambda np_, v: np_.sum(np_.polyval(v, v[:3] * 0.5)), _V),
    "sort": (lambda np_, v: np_.sum(np_.sort(v) * np_.arange(5.0)), _V),
    "take": (lambda np_, v: np_.sum(np_.take(v, np.array([4, 0, 0, 2])) ** 2), _V),
    "cumsum": (lambda np_, v: np_.sum(np_.cumsum(v) ** 2), _V),
    "logaddexp": (lambda np_, v: np_.sum(np_.logaddexp(v, v[::-1])), _V),
    "i0 (custom_jvp inside)": (lambda np_, v: np_.sum(np_.i0(v)), _V),
}


def _both(make):
    """`make(transforms module, numpy module)` run by minijax and by JAX."""
    return make(minijax, mnp)(), make(jax, jnp)()


def _eager_twice_and_jitted_jax(make):
    """`make(transforms module, numpy module)` run by minijax eagerly twice (the second
    call runs the cached programs) and by JAX once under `jax.jit` (the oracle of a
    comparison with a tolerance: one program, not one per operation)."""
    return [make(minijax, mnp)() for _ in range(2)], jax.jit(make(jax, jnp))()


@pytest.mark.parametrize("name", LOSSES)
def test_eager_grad_matches_jax(name):
    loss, x = LOSSES[name]
    ours, theirs = _eager_twice_and_jitted_jax(
        lambda t, np_: lambda: t.grad(lambda x: loss(np_, x))(x))
    for run in ours:
        assert_trees_match(run, theirs, rtol=2e-5, atol=1e-5, what=name)


@pytest.mark.parametrize("name", ["svd", "nanvar", "sort", "logaddexp"])
def test_eager_vjp_and_jvp_match_jax(name):
    loss, x = LOSSES[name]
    tangent = np.ones_like(x)

    def vjp_then_jvp(t, np_):
        def run():
            value, pullback = t.vjp(lambda x: loss(np_, x), x)
            return value, pullback(np.float32(0.5)), t.jvp(lambda x: loss(np_, x), (x,),
                                                           (tangent,))
        return run
    ours = vjp_then_jvp(minijax, mnp)()
    theirs = jax.jit(vjp_then_jvp(jax, jnp))()
    assert_trees_match(ours, theirs, rtol=2e-5, atol=1e-5, what=name)


VMAPPED = {
    "inv": (lambda np_: np_.linalg.inv, _SQUARES),
    "svd values": (lambda np_: lambda a: np_.linalg.svd(a, compute_uv=False), _SQUARES),
    "sort": (lambda np_: np_.sort, _SQUARES),
    "cumsum": (lambda np_: lambda a: np_.cumsum(a, axis=0), _SQUARES),
    "take": (lambda np_: lambda a: np_.take(a, np.array([2, 0]), axis=1), _SQUARES),
    "polyval": (lambda np_: lambda a: np_.polyval(a[0], a[1]), _SQUARES),
}


@pytest.mark.parametrize("name", VMAPPED)
def test_eager_vmap_matches_jax(name):
    make, x = VMAPPED[name]
    ours, theirs = _eager_twice_and_jitted_jax(lambda t, np_: lambda: t.vmap(make(np_))(x))
    for run in ours:
        assert_trees_match(run, theirs, rtol=2e-5, atol=1e-5, what=name)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("name", ["det", "cumsum", "logaddexp"])
def test_eager_jacobians_match_jax(transform, name):
    loss, x = LOSSES[name]
    make = lambda t, np_: lambda: getattr(t, transform)(lambda x: loss(np_, x))(x)
    ours, theirs = make(minijax, mnp)(), jax.jit(make(jax, jnp))()
    assert_trees_match(ours, theirs, rtol=1e-4, atol=1e-4, what=f"{transform} {name}")


WEAK_AND_DTYPES = {
    "grad at a Python float": lambda t, np_: t.grad(lambda x: np_.sin(x) * 2)(0.5),
    "grad through cumsum": lambda t, np_: t.grad(
        lambda x: np_.sum(np_.cumsum(np_.stack([x, x * 2]))))(0.5),
    "jvp of logaddexp": lambda t, np_: t.jvp(lambda x: np_.logaddexp(x, 1.0), (0.5,), (1.0,)),
    "jvp by a Python int": lambda t, np_: t.jvp(lambda x: np_.multiply(x, 3), (2.0,), (1.0,)),
    "vmap of int add": lambda t, np_: t.vmap(lambda x: np_.add(x, 1))(np.arange(3)),
    "vmap, unbatched weak": lambda t, np_: t.vmap(lambda x: np_.multiply(x, 2.5),
                                                  in_axes=None, axis_size=2)(1.0),
    "vmap of sum with dtype": lambda t, np_: t.vmap(lambda x: np_.sum(x, dtype=np.int16))(
        np.ones((2, 3), np.int8)),
    # The transposed `add` forwards the cotangent (no program), as a jax.Array:
    "vjp of add, NumPy cotangent": lambda t, np_: t.vjp(np_.add, _V, _V)[1](_V * 2),
    "vjp of add, weak cotangent": lambda t, np_: t.vjp(np_.add, 1.0, 2.0)[1](3.0),
    # ... and the tangent `add` forwards, in every JAX release.
    "jvp of add, Python tangent": lambda t, np_: t.jvp(lambda x: np_.add(x, 2.0), (1.0,),
                                                       (3.0,)),
}


# JAX 0.10/0.11 inline `jnp.add` and hand the cotangent back as it was given (a Python
# float, a NumPy array); 0.12 runs its transpose as a jit call, whose results are
# jax.Arrays, weak for a Python float. minijax follows 0.12.
FORWARDED_BEFORE_0_12 = {"vjp of add, NumPy cotangent", "vjp of add, weak cotangent"}


@pytest.mark.parametrize("name", WEAK_AND_DTYPES)
def test_dtypes_and_weak_types_match_jax_under_transformations(name):
    ours, theirs = _both(lambda t, np_: lambda: WEAK_AND_DTYPES[name](t, np_))
    if name in FORWARDED_BEFORE_0_12:
        assert all(isinstance(x, jax.Array) for x in ours), ours
        assert all(isinstance(x, jax.Array) == (JAX_VERSION >= (0, 12)) for x in theirs), theirs
        if JAX_VERSION < (0, 12):
            theirs = tuple(jax.device_put(x) for x in theirs)    # JAX 0.12's result
    assert_trees_match(ours, theirs, rtol=1e-6, what=name)


# -- programs made -----------------------------------------------------------------------

COUNTED = {
    "grad svd": lambda t, np_: t.grad(lambda a: _svd_loss(np_, a)),
    "vmap inv": lambda t, np_: t.vmap(np_.linalg.inv),
    "grad nanvar": lambda t, np_: t.grad(lambda v: np_.nanvar(v * _V_NAN)),
    "jacrev det": lambda t, np_: t.jacrev(np_.linalg.det),
    "vjp svd": lambda t, np_: lambda a: t.vjp(lambda a: _svd_loss(np_, a), a)[1](
        np.float32(1.0)),
    "jvp cumsum": lambda t, np_: lambda v: t.jvp(
        lambda v: np_.sum(np_.cumsum(np_.sin(v)) ** 2), (v,), (v,)),
}
_COUNTED_ARGS = {"grad svd": _A, "vmap inv": _SQUARES, "grad nanvar": _V,
                 "jacrev det": _SQUARE, "vjp svd": _A, "jvp cumsum": _V}


@pytest.mark.parametrize("name", COUNTED)
def test_an_eager_transformation_makes_no_more_programs_than_jax_and_none_again(name):
    x = _COUNTED_ARGS[name]
    minijax.clear_caches()
    jax.clear_caches()      # both sides start with nothing compiled
    counts = {}
    for side, (t, np_) in {"minijax": (minijax, mnp), "jax": (jax, jnp)}.items():
        f = COUNTED[name](t, np_)
        with programs("lowered") as first:
            jax.block_until_ready(f(x))
        with programs("lowered") as repeat:
            jax.block_until_ready(f(x))
        counts[side] = (len(first), len(repeat))
    assert counts["minijax"][0] <= counts["jax"][0], counts
    assert counts["minijax"][1] == 0, counts
    # A new function of the same jnp calls reuses the transformed bodies' programs.
    with programs("lowered") as again:
        jax.block_until_ready(COUNTED[name](minijax, mnp)(x))
    assert again == [], counts


def test_svd_grad_runs_as_few_whole_programs():
    # Op by op it made 50 programs (JAX: 17); whole, about JAX's number.
    minijax.clear_caches()
    with programs("lowered") as made:
        minijax.grad(lambda a: _svd_loss(mnp, a))(_A * 1.5)
    assert len(made) <= 20, len(made)


# -- what stays as it was ---------------------------------------------------------------

def _call_names(jaxpr):
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                names |= _call_names(inner)
    return names


def test_traced_transformations_hold_the_bodies_inline():
    loss = lambda v: mnp.sum(mnp.cumsum(v) ** 2) + mnp.nanvar(v)
    minijax.grad(loss)(_V)          # the eager call made its programs first
    for traced in (minijax.make_jaxpr(minijax.grad(loss))(_V),
                   minijax.make_jaxpr(minijax.vmap(mnp.linalg.inv))(_SQUARES)):
        names = _call_names(traced.jaxpr)
        assert "jit" not in names, names
    assert "cumsum" in _call_names(minijax.make_jaxpr(minijax.grad(loss))(_V).jaxpr)
    assert_trees_match(minijax.jit(minijax.grad(loss))(_V),
                       jax.jit(jax.grad(lambda v: jnp.sum(jnp.cumsum(v) ** 2)
                                        + jnp.nanvar(v)))(_V), rtol=2e-5)
    # ... and so does an `ensure_compile_time_eval` block inside a trace.
    def with_block(v):
        with minijax.ensure_compile_time_eval():
            w = minijax.grad(lambda u: mnp.sum(mnp.cumsum(u) ** 2))(_V)
        return v * w
    assert "jit" not in _call_names(minijax.make_jaxpr(with_block)(_V).jaxpr)


def test_an_eager_linearization_holds_one_call_per_jnp_function():
    # Run, the linearized function is one program per jnp call, none made again;
    # traced, it shows their equations and no call.
    _, f_jvp = minijax.linearize(lambda v: mnp.cumsum(mnp.sort(v)), _V)
    minijax.clear_caches()
    with programs("lowered") as first:
        jax.block_until_ready(f_jvp(_V))
    with programs("lowered") as repeat:
        jax.block_until_ready(f_jvp(_V * 2))
    assert len(first) <= 2 and repeat == [], (first, repeat)
    names = [e.primitive.name for e in minijax.make_jaxpr(f_jvp)(_V).jaxpr.eqns]
    assert "jit" not in names and "cumsum" in names, names
    assert_trees_match(f_jvp(_V), jax.linearize(lambda v: jnp.cumsum(jnp.sort(v)), _V)[1](_V))


def test_errors_of_the_body_keep_their_types_under_transformations():
    for _ in range(2):
        with pytest.raises(ValueError, match="axis 3 is out of bounds"):
            minijax.grad(lambda v: mnp.sum(mnp.cumsum(v, axis=3)))(_V)
        with pytest.raises(TypeError, match="subtract does not accept dtype bool"):
            minijax.vmap(lambda b: mnp.subtract(b, b))(jnp.asarray([[True, False]]))
        with pytest.raises(OverflowError, match="too large to convert to int32"):
            minijax.vmap(lambda i: mnp.add(i, 2**31))(np.ones((2, 2), np.int8))


def test_a_ref_operand_keeps_the_direct_path_under_grad():
    def loss(v):
        ref = minijax.new_ref(v)
        return mnp.sum(mnp.sin(ref))
    with pytest.raises(TypeError, match="a ref is not an array"):
        minijax.grad(loss)(_V)

    def through_a_ref(v):     # the ref's value is an ordinary operand
        ref = minijax.new_ref(v)
        return mnp.sum(mnp.cumsum(ref[...]) ** 2)
    assert_trees_match(minijax.grad(through_a_ref)(_V),
                       jax.grad(lambda v: jnp.sum(jnp.cumsum(v) ** 2))(_V), rtol=2e-5)


def test_custom_derivative_rules_inside_are_used():
    # `logaddexp`'s rule gives each of two equal inputs half the weight, and
    # `ldexp`'s differentiates only through x.
    tie = np.array([0.5, 0.5], np.float32)
    ours = minijax.grad(lambda v: mnp.sum(mnp.logaddexp(v, v[::-1])))(tie)
    theirs = jax.grad(lambda v: jnp.sum(jnp.logaddexp(v, v[::-1])))(tie)
    assert_trees_match(ours, theirs)
    k = np.array([1, -2, 3, 0, 2], np.int32)
    assert_trees_match(minijax.grad(lambda v: mnp.sum(mnp.ldexp(v, k)))(_V),
                       jax.grad(lambda v: jnp.sum(jnp.ldexp(v, k)))(_V))


def test_debug_nans_locates_the_operation_under_grad():
    minijax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="encountered in log"):
            minijax.grad(lambda v: mnp.sum(mnp.log(v)))(-_V * _V - 1)
        assert_trees_match(minijax.grad(lambda v: mnp.sum(mnp.cumsum(v) ** 2))(_V),
                           jax.grad(lambda v: jnp.sum(jnp.cumsum(v) ** 2))(_V), rtol=2e-5)
    finally:
        minijax.config.update("jax_debug_nans", False)


def test_disable_jit_runs_the_body_op_by_op_under_transformations():
    with minijax.disable_jit():
        _, f_jvp = minijax.linearize(lambda v: mnp.cumsum(mnp.sort(v)), _V)
        ours = minijax.grad(lambda v: mnp.sum(mnp.cumsum(v) ** 2))(_V)
    names = [e.primitive.name for e in minijax.make_jaxpr(f_jvp)(_V).jaxpr.eqns]
    assert "jit" not in names and "cumsum" in names, names
    assert_trees_match(ours, jax.grad(lambda v: jnp.sum(jnp.cumsum(v) ** 2))(_V),
                       rtol=2e-5)


# `pinv` and `interp` are jitted in JAX too (JAX's `interp` jits its body with
# `period` static); composed of jitted jnp calls but run inline, each of those calls
# was its own transformed program under `grad` (pinv's eager grad: 51 programs).
WHOLE = {
    "pinv": (lambda np_, a: np_.sum(np_.sin(np_.linalg.pinv(a))), _A),
    "pinv rtol": (lambda np_, a: np_.sum(np_.linalg.pinv(a, rtol=0.1)), _A),
    "interp": (lambda np_, v: np_.sum(np_.interp(v, np.array([-2., 0., 1.5], np.float32),
                                                 v[2::-1] * 2)), _V),
    "interp period": (lambda np_, v: np_.sum(np_.interp(
        v, np.array([-2., 0., 1.5], np.float32), np.array([1., 3., 0.], np.float32),
        period=2.5)), _V),
}


@pytest.mark.parametrize("name", WHOLE)
def test_jitted_composites_match_jax_eagerly_and_under_grad(name):
    loss, x = WHOLE[name]
    # Counted first, from empty caches, so that the value checks below run the
    # programs made here rather than compiling them once more before the clearing.
    minijax.clear_caches()
    jax.clear_caches()
    made = {}
    for side, (t, np_) in {"minijax": (minijax, mnp), "jax": (jax, jnp)}.items():
        with programs("lowered") as made_here:
            jax.block_until_ready(t.grad(lambda x: loss(np_, x))(x))
        made[side] = len(made_here)
    assert made["minijax"] <= made["jax"], made
    for _ in range(2):
        assert_trees_match(loss(mnp, x), loss(jnp, x), rtol=2e-5, atol=1e-5, what=name)
        assert_trees_match(minijax.grad(lambda x: loss(mnp, x))(x),
                           jax.grad(lambda x: loss(jnp, x))(x), rtol=2e-4, atol=1e-5,
                           what=name)
    whole = {"pinv": mnp.linalg.pinv, "interp": mnp.interp}[name.split()[0]]
    assert whole.eager_jit.call_cache().fast is not None     # ran as one program
