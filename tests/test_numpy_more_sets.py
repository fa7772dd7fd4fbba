"""jnp set operations added in session 5, each against jax.numpy: isin, the array-API
unique_all/unique_counts/unique_inverse/unique_values, jnp.unique(size=...), and
intersect1d/union1d/setdiff1d/setxor1d. With a static `size` they trace (checked
traced, under jit and eagerly); without one they run eagerly on concrete values and
refuse a tracer, as JAX does."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check

X = np.array([[3, 1, 2], [3, 7, 1]], np.int32)
F = np.array([1., np.nan, np.nan, 0.5, 1.], np.float32)
A = np.array([5, 1, 3, 3, 9], np.int32)
B = np.array([3, 4, 5, 0], np.int32)

SIZED = {
    "unique_all": (lambda np_, x: (tuple(np_.unique_all(x, size=6)),
                                   tuple(np_.unique_all(x, size=6, fill_value=-5)),
                                   tuple(np_.unique_all(x, size=2))), (X,)),
    "unique_* with NaNs": (lambda np_, x: (tuple(np_.unique_counts(x, size=7)),
                                           tuple(np_.unique_inverse(x, size=7)),
                                           np_.unique_values(x, size=7)), (F,)),
    "unique(size=)": (lambda np_, x: np_.unique(x, return_inverse=True, return_index=True,
                                                return_counts=True, size=6), (X,)),
    "unique(size=) equal_nan": (lambda np_, x: (
        np_.unique(x, size=4, return_counts=True),
        np_.unique(x, size=4, return_counts=True, equal_nan=False),
        np_.unique(x, size=3, fill_value=9.)), (F,)),
    "isin": (lambda np_, a, b: (np_.isin(a, b), np_.isin(a, b, invert=True),
                                np_.isin(a.reshape(5, 1), 3),
                                np_.isin(a, b.astype(np.float32))), (A, B)),
    "intersect1d": (lambda np_, a, b: (np_.intersect1d(a, b, size=4),
                                       np_.intersect1d(a, b, size=4, return_indices=True),
                                       np_.intersect1d(a, b, size=1, fill_value=7)), (A, B)),
    "ints": (lambda np_, a, b: (np_.union1d(a, b, size=9), np_.setdiff1d(a, b, size=5),
                                np_.setxor1d(a, b, size=8),
                                np_.setdiff1d(a, b, size=5, fill_value=-1),
                                np_.union1d(a, b, size=2)), (A, B)),
    "floats with NaNs": (lambda np_, a, b: (np_.union1d(a, b, size=9),
                                            np_.setdiff1d(a, b, size=5),
                                            np_.setxor1d(a, b, size=8),
                                            np_.intersect1d(a, b, size=3)), (F, F[:2])),
    "2-d inputs, mixed dtypes": (lambda np_, a, b: (np_.union1d(a, b, size=8),
                                                    np_.intersect1d(a, b, size=2)),
                                 (X, B.astype(np.float32))),
}


@pytest.mark.parametrize("name", list(SIZED))
def test_sized_set_operations_match_jax(name):
    fn, args = SIZED[name]
    check(fn, *args, eager=True)


UNSIZED = {
    "unique_all": (lambda np_, x: tuple(np_.unique_all(x)), (X,)),
    "unique_* with NaNs": (lambda np_, x: (tuple(np_.unique_counts(x)),
                                           tuple(np_.unique_inverse(x)),
                                           np_.unique_values(x)), (F,)),
    "ints": (lambda np_, a, b: (np_.union1d(a, b), np_.setdiff1d(a, b), np_.setxor1d(a, b),
                                np_.intersect1d(a, b, return_indices=True)), (A, B)),
    "floats": (lambda np_, a, b: (np_.union1d(a, b), np_.setdiff1d(a, b),
                                  np_.setxor1d(a, b), np_.intersect1d(a, b)), (F, F[:2])),
    "empty": (lambda np_, a, b: (np_.intersect1d(a, b), np_.setdiff1d(a, a),
                                 np_.unique_values(a[:0])), (A, B[:0])),
}


@pytest.mark.parametrize("name", list(UNSIZED))
def test_unsized_set_operations_eagerly_match_jax(name):
    fn, args = UNSIZED[name]
    assert_values_close(fn(mnp, *args), fn(jnp, *args))


def test_unique_results_are_named_tuples_as_in_jax():
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        assert getattr(mnp, name)(X)._fields == getattr(jnp, name)(X)._fields


def test_vmap_of_sized_set_operations():
    batch = np.stack([A, A[::-1] + 1])
    fns = (lambda np_, a: np_.unique_values(a, size=5),
           lambda np_, a: np_.isin(a, B),
           lambda np_, a: np_.setdiff1d(a, B, size=4),
           lambda np_, a: np_.intersect1d(a, B, size=3, return_indices=True))
    # JAX's side of the four in one program.
    wants = jax.jit(lambda b: [jax.vmap(lambda a: fn(jnp, a))(b) for fn in fns])(batch)
    for fn, want in zip(fns, wants):
        assert_values_close(minijax.vmap(lambda a: fn(mnp, a))(batch), want)


def test_grad_through_sized_union():
    f = lambda np_, a: np_.sum(np_.union1d(a, a * 2, size=6) ** 2)  # noqa: E731
    a = np.array([3., 1., 2.], np.float32)
    assert_values_close(minijax.grad(lambda a: f(mnp, a))(a),
                        jax.jit(jax.grad(lambda a: f(jnp, a)))(a))


def test_unsized_under_jit_is_a_concretization_error():
    for name in ("unique_values", "union1d", "setdiff1d", "intersect1d", "setxor1d"):
        fn = getattr(mnp, name)
        args = (A,) if name == "unique_values" else (A, B)
        with pytest.raises(TypeError, match="size="):
            minijax.jit(fn)(*args)
        with pytest.raises(jax.errors.ConcretizationTypeError):
            jax.jit(getattr(jnp, name))(*args)


def test_isin_bad_method():
    with pytest.raises(ValueError, match="method"):
        mnp.isin(A, B, method="hash")
