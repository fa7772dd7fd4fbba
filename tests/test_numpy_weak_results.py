"""Weak types (and values) of jnp functions that JAX writes in terms of other ops.

JAX builds functions such as `log2`, `isinf`, `signbit` or `hypot` from `lax` calls
with constants of three kinds -- Python scalars (which keep a weak operand weak),
`_constant_like` arrays (strong), and `lax._const` (weak only beside a weak rank-0
operand) -- so whether the result is weak is part of each function's contract, and
users see it when the result meets another operand. Each case here runs through
minijax and JAX on the same inputs, eagerly, under jit (Python scalars passed as
arguments become weak traced inputs), and under grad and vmap where they apply;
values, dtypes AND weak types must agree, bool results included (the shared numpy
helpers ignore a bool's weak flag, so this file compares them itself).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION

I8 = np.array([3, -4], np.int8)
I32 = np.array([1, -2], np.int32)
BOOLS = np.array([True, False])
INTS = np.array([7, -7, 0, 3], np.int32)
F32 = np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
F16 = np.array([1.0, -2.0], np.float16)
C64 = np.array([1 + 2j, np.inf - 1j, 1 + np.nan * 1j], np.complex64)

# name -> (fn(np_module, *args), args)
CASES = {
    "log2_py_float": (lambda np_, x: np_.log2(x), (2.0,)),
    "log2_py_int": (lambda np_, x: np_.log2(x), (8,)),
    "log10_py_float": (lambda np_, x: np_.log10(x), (2.0,)),
    "log2_f16": (lambda np_, x: np_.log2(x), (np.abs(F16),)),
    "log10_complex": (lambda np_, x: np_.log10(x), (C64[:1],)),
    "signbit_bools": (lambda np_, x: np_.signbit(x), (BOOLS,)),
    "signbit_py_float": (lambda np_, x: np_.signbit(x), (-0.5,)),
    "signbit_py_int": (lambda np_, x: np_.signbit(x), (-3,)),
    "signbit_floats": (lambda np_, x: np_.signbit(x), (F32,)),
    "isinf_py_float": (lambda np_, x: np_.isinf(x), (0.5,)),
    "isinf_floats": (lambda np_, x: np_.isinf(x), (F32,)),
    "isinf_complex": (lambda np_, x: np_.isinf(x), (C64,)),
    "isfinite_complex": (lambda np_, x: np_.isfinite(x), (C64,)),
    "isfinite_py_float": (lambda np_, x: np_.isfinite(x), (0.5,)),
    "isnan_py_int": (lambda np_, x: np_.isnan(x), (3,)),
    "isnan_py_float": (lambda np_, x: np_.isnan(x), (0.5,)),
    "isnan_ints": (lambda np_, x: np_.isnan(x), (I8,)),
    "isposinf_py_float": (lambda np_, x: np_.isposinf(x), (0.5,)),
    "isneginf_py_float": (lambda np_, x: np_.isneginf(x), (-0.5,)),
    "hypot_py_float_int8": (lambda np_, x, y: np_.hypot(x, y), (1.5, I8)),
    "hypot_int32_py_float": (lambda np_, x, y: np_.hypot(x, y), (I32, 1.5)),
    "hypot_py_floats": (lambda np_, x, y: np_.hypot(x, y), (2.0, 3.0)),
    "hypot_inf_beats_nan": (lambda np_, x, y: np_.hypot(x, y), (F32, F32[::-1].copy())),
    "dot_int32_py_float": (lambda np_, x, y: np_.dot(x, y), (I32, 1.5)),
    "dot_py_float_int8": (lambda np_, x, y: np_.dot(x, y), (1.5, I8)),
    "dot_py_scalars": (lambda np_, x, y: np_.dot(x, y), (3, 2)),
    "inner_int32_py_float": (lambda np_, x, y: np_.inner(x, y), (I32, 1.5)),
    "floor_divide_by_zero": (lambda np_, x, y: np_.floor_divide(x, y), (F32, 0.0)),
    "floor_divide_by_neg_zero": (lambda np_, x, y: np_.floor_divide(x, y), (F32, -0.0)),
    "floor_divide_scalar_by_zeros": (lambda np_, x, y: np_.floor_divide(x, y),
                                     (1.5, np.zeros(2, np.float32))),
    "divmod_by_zero": (lambda np_, x, y: np_.divmod(x, y), (F32, 0.0)),
    "rint_complex": (lambda np_, x: np_.rint(x), (np.array([1.5 - 2.5j, 0.4 + 3.6j],
                                                           np.complex64),)),
    "round_complex": (lambda np_, x: np_.round(x, 1), (np.array([1.25 - 2.56j], np.complex64),)),
    "bitwise_count_bools": (lambda np_, x: np_.bitwise_count(x), (BOOLS,)),
    "bitwise_count_py_bool": (lambda np_, x: np_.bitwise_count(x), (True,)),
    # A Python scalar beside a bool or int array is a weak array after promotion; JAX
    # writes these with `lax._const` (weak only for a scalar) or `_constant_like`.
    "gcd_bools_py_int": (lambda np_, x, y: np_.gcd(x, y), (BOOLS, 3)),
    "gcd_py_ints": (lambda np_, x, y: np_.gcd(x, y), (12, 8)),
    "lcm_py_int_bools": (lambda np_, x, y: np_.lcm(x, y), (3, BOOLS)),
    "power_py_int_bools": (lambda np_, x, y: np_.power(x, y), (3, BOOLS)),
    "power_int32_pair": (lambda np_, x, y: np_.power(x, y), (I32, np.abs(I32))),
    "heaviside_int32_py_float": (lambda np_, x, y: np_.heaviside(x, y), (I32, 0.5)),
    "heaviside_py_float_bools": (lambda np_, x, y: np_.heaviside(x, y), (0.0, BOOLS)),
    "heaviside_py_floats": (lambda np_, x, y: np_.heaviside(x, y), (0.0, 0.5)),
    "logaddexp2_int8_py_float": (lambda np_, x, y: np_.logaddexp2(x, y), (I8, 0.5)),
    "logaddexp2_py_float_bools": (lambda np_, x, y: np_.logaddexp2(x, y), (0.5, BOOLS)),
    "logaddexp2_py_floats": (lambda np_, x, y: np_.logaddexp2(x, y), (0.5, 2.0)),
    "gradient_int32_py_float": (lambda np_, x, h: np_.gradient(x, h), (I32, 2.0)),
    "gradient_bools_py_int": (lambda np_, x, h: np_.gradient(x, h), (BOOLS, 2)),
    "gradient_f16_int_coords": (lambda np_, x, h: np_.gradient(x, h), (F16, I32)),
    # bools are made int32 (strong), as JAX's numeric promotion does
    "floor_divide_bools": (lambda np_, x, y: np_.floor_divide(x, y), (BOOLS, True)),
    "remainder_bools": (lambda np_, x, y: np_.remainder(x, y), (True, BOOLS)),
    "fmod_bools": (lambda np_, x, y: np_.fmod(x, y), (BOOLS, BOOLS[::-1].copy())),
    # Integer division by zero: JAX divides by 1 instead for `%` and fmod (0, as NumPy),
    # and floor_divide adjusts XLA's quotient by comparing signs.
    "remainder_int32_by_zero": (lambda np_, x, y: np_.remainder(x, y), (INTS, 0)),
    "remainder_uint8_by_zero": (lambda np_, x, y: np_.remainder(x, y), (INTS.astype(np.uint8),
                                                                       np.uint8(0))),
    "fmod_int8_by_zero": (lambda np_, x, y: np_.fmod(x, y), (INTS.astype(np.int8), 0)),
    "floor_divide_int32_by_zero": (lambda np_, x, y: np_.floor_divide(x, y), (INTS, 0)),
}


# Results whose weak types changed in a JAX release: (the release, the newest JAX's weak
# flags), which minijax follows and an older JAX is held to. JAX 0.11 made log2 one
# primitive (0.10 divided by a strong log(2)); JAX 0.12's hypot keeps a weak float weak
# (0.10's and 0.11's strong inf constant and where-masks did not), and its own jvp also
# gives weak gradients where 0.11's went through max's jvp (registry entry
# max_min_tangent_of_a_weak_argument_is_strong).
NEWEST_WEAK_TYPES = {
    "log2_py_float": ((0, 11), [True]),
    "log2_py_int": ((0, 11), [True]),
    "hypot_py_float_int8": ((0, 12), [True]),
    "hypot_int32_py_float": ((0, 12), [True]),
    "closed_over": ((0, 12), [True, False, True, False, True, True, False]),
    "grad_log2": ((0, 11), [True, True]),
    "grad_hypot": ((0, 12), [True, True]),
    "grad_hypot_zero": ((0, 12), [True, True]),
    "vmap_hypot_with_scalar": ((0, 12), [True]),
}


def newest_weak_types(key):
    """The newest JAX's weak flags for `key` where this JAX is older, else None."""
    since, flags = NEWEST_WEAK_TYPES.get(key, ((0,), None))
    return flags if JAX_VERSION < since else None


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def assert_same_results(ours, theirs, weak_types=None):
    """Values, shapes, dtypes and weak types (bools included) of every result;
    `weak_types` (one per result) replaces JAX's where this JAX's differ from the newest."""
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    expected_weak = weak_types or [b.weak_type for b in theirs]
    for a, b, weak in zip(ours, theirs, expected_weak):
        assert a.dtype == b.dtype, f"dtype {a.dtype} != JAX's {b.dtype}"
        assert a.weak_type == weak, (f"weak_type {a.weak_type} != expected {weak} (JAX's "
                                     f"{b.weak_type}) for {b.dtype}{list(b.shape)}")
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=0,
                                   equal_nan=True)


def _weak_flags(closed):
    # minijax's IR types every comparison result as a strong bool (bool is the bottom
    # of the lattice, so the flag never changes a promotion); a bool's weak flag is
    # compared on the arrays that eager and jit calls return, above, not here.
    return [(np.dtype(a.dtype), tuple(a.shape), a.weak_type and a.dtype != np.bool_)
            for a in closed.out_avals]


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_jax(name):
    fn, args = CASES[name]
    assert_same_results(fn(mnp, *args), fn(jnp, *args), newest_weak_types(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_matches_jax(name):
    fn, args = CASES[name]
    expected = jax.jit(lambda *a: fn(jnp, *a))(*args)
    newest = newest_weak_types(name)
    assert_same_results(minijax.jit(lambda *a: fn(mnp, *a))(*args), expected, newest)
    # The traced program's output types, without running it.
    ours = minijax.make_jaxpr(lambda *a: fn(mnp, *a))(*args)
    theirs = _weak_flags(jax.make_jaxpr(lambda *a: fn(jnp, *a))(*args))
    if newest:
        theirs = [(dtype, shape, weak) for (dtype, shape, _), weak in zip(theirs, newest)]
    assert _weak_flags(ours) == theirs


def test_constant_closed_over_under_jit():
    # A Python scalar inside the traced function (not an argument) is a weak literal.
    def fn(np_, x):
        return (np_.log2(2.0), np_.isinf(0.5), np_.isnan(3), np_.signbit(x),
                np_.hypot(1.5, x), np_.dot(x, 1.5), np_.floor_divide(np_.float32(1), 0.))
    expected = jax.jit(lambda x: fn(jnp, x))(I8)
    assert_same_results(minijax.jit(lambda x: fn(mnp, x))(I8), expected,
                        newest_weak_types("closed_over"))


DIFFERENTIABLE = {
    "log2": (lambda np_, x, y: np_.log2(x) * y, (2.0, 1.5)),
    "log10": (lambda np_, x, y: np_.log10(x) * y, (2.0, 3.0)),
    "hypot": (lambda np_, x, y: np_.hypot(x, y), (2.0, 3.0)),
    "hypot_zero": (lambda np_, x, y: np_.hypot(x, y), (0.0, 0.0)),
    "dot": (lambda np_, x, y: np_.dot(x, y), (2.0, 3.0)),
    "floor_divide": (lambda np_, x, y: np_.floor_divide(x, y) + x, (7.0, 2.0)),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_grad_matches_jax(name):
    fn, args = DIFFERENTIABLE[name]
    expected = jax.grad(lambda *a: fn(jnp, *a), argnums=(0, 1))(*args)
    if name == "hypot_zero" and JAX_VERSION < (0, 12):
        # JAX 0.12's hypot has no gradient at the origin (its jvp's unit vector is 0/0):
        # NaN, which minijax follows; JAX 0.10 and 0.11 gave (0.5, 0.5).
        expected = [jnp.full_like(e, np.nan) for e in expected]
    assert_same_results(minijax.grad(lambda *a: fn(mnp, *a), argnums=(0, 1))(*args),
                        expected, newest_weak_types(f"grad_{name}"))


VMAPPED = {
    "log2": (lambda np_, x: np_.log2(x), (np.array([1.0, 8.0], np.float32),)),
    "signbit_bools": (lambda np_, x: np_.signbit(x), (np.array([[True], [False]]),)),
    "isinf": (lambda np_, x: np_.isinf(x), (F32[:4],)),
    "isnan_ints": (lambda np_, x: np_.isnan(x), (np.array([[1], [2]], np.int32),)),
    "hypot_with_scalar": (lambda np_, x: np_.hypot(1.5, x), (np.array([[3], [4]], np.int8),)),
    "dot_with_scalar": (lambda np_, x: np_.dot(x, 1.5), (np.array([[1, 2], [3, 4]], np.int32),)),
    "floor_divide_by_zero": (lambda np_, x: np_.floor_divide(x, 0.0), (F32[:4],)),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_matches_jax(name):
    fn, args = VMAPPED[name]
    expected = jax.vmap(lambda *a: fn(jnp, *a))(*args)
    assert_same_results(minijax.vmap(lambda *a: fn(mnp, *a))(*args), expected,
                        newest_weak_types(f"vmap_{name}"))


def test_preferred_element_type_makes_products_strong():
    def fn(np_, lax_):
        w, m = lax_.broadcast(2.0, (2,)), lax_.broadcast(2.0, (2, 2))   # weak arrays
        f32 = dict(preferred_element_type=np.float32)
        return (np_.dot(w, w), np_.dot(w, w, **f32), np_.vdot(w, w, **f32),
                np_.inner(m, w), np_.inner(m, w, **f32), np_.inner(2.0, w, **f32),
                np_.matmul(m, m), np_.matmul(m, m, **f32), np_.tensordot(w, w, 1, **f32))
    expected = jax.jit(lambda: fn(jnp, jax.lax))()
    assert_same_results(minijax.jit(lambda: fn(mnp, minijax.lax))(), expected)


@pytest.mark.parametrize("fname", ["isposinf", "isneginf", "signbit"])
def test_complex_operand_errors(fname):
    with pytest.raises(ValueError, match="complex"):
        getattr(jnp, fname)(C64)
    with pytest.raises(ValueError, match=f"{fname}.*complex"):
        getattr(mnp, fname)(C64)


def test_hypot_of_complex_is_an_error():
    with pytest.raises(ValueError, match="complex"):
        jnp.hypot(C64, C64)
    with pytest.raises(ValueError, match="hypot.*complex"):
        mnp.hypot(C64, C64)


def test_fabs_of_complex_is_an_error():
    with pytest.raises(TypeError, match="complex"):
        jnp.fabs(C64)
    with pytest.raises(TypeError, match="fabs.*complex64"):
        mnp.fabs(C64)


def test_reversing_a_value_made_weak_compiles():
    """minijax makes a non-scalar weak on the JAX side with a scatter that overwrites
    its whole operand (`backends/xla.py`'s `weakened`); XLA's simplifier (jaxlib 0.10)
    aborted the whole process on a `rev` of one, so `flip(x * 1.0)` of a weak int
    vector killed the interpreter under jit."""
    weak_ints = jnp.full((2,), 1)
    ours = minijax.jit(lambda x: mnp.flip(x * 1.0))(weak_ints)
    theirs = jax.jit(lambda x: jnp.flip(x * 1.0))(weak_ints)
    assert_same_results(ours, theirs)
    assert ours.weak_type and theirs.weak_type
