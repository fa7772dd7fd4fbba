"""Derivatives of `linalg.pinv` (its own rule, as JAX's) and of the other functions
with singular-value cutoffs (`lstsq`, `matrix_rank`) against JAX's, on full-rank and
rank-deficient matrices, square, tall, wide and batched, with cutoffs that drop
singular values and with the default cutoff.

JAX's `pinv` is a `custom_jvp` with the closed-form derivative of the pseudo-inverse;
differentiating through the SVD instead gives other values as soon as the cutoff
drops a singular value, so each case first asserts that its cutoff does drop one
where it claims to. JAX's side runs under one `jax.jit` (the comparisons have
tolerances anyway).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION
from tests.numpy_helpers import assert_groups_cover, assert_values_close, check, together
from tests.test_divergences import pins

rng = np.random.default_rng(31)


def with_singular_values(m, n, values, batch=()):
    """A random m x n matrix with the given singular values (the rest zero)."""
    k = min(m, n)
    u, _ = np.linalg.qr(rng.normal(size=batch + (m, k)))
    v, _ = np.linalg.qr(rng.normal(size=batch + (n, k)))
    s = np.zeros(k)
    s[:len(values)] = values
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(np.float32)


# (matrix, rtol, how many singular values the cutoff keeps in each matrix)
CASES = {
    "square_full_rank_default": (with_singular_values(3, 3, [3.0, 1.5, 0.7]), None, 3),
    "square_cut_by_rtol": (with_singular_values(3, 3, [3.0, 1.5, 0.2]), 0.3, 2),
    "tall_rank_deficient_default": (with_singular_values(4, 3, [2.5, 1.0]), None, 2),
    "tall_cut_by_rtol": (with_singular_values(4, 3, [2.5, 1.0, 0.4]), 0.25, 2),
    "wide_rank_deficient_default": (with_singular_values(2, 4, [1.8]), None, 1),
    "wide_cut_by_rtol": (with_singular_values(3, 4, [2.0, 1.2, 0.1]), 0.5, 2),
    "batched_mixed": (np.stack([with_singular_values(3, 3, [3.0, 1.5, 0.7]),
                                with_singular_values(3, 3, [2.0, 0.9])]), None, (3, 2)),
    "batched_rtol_per_matrix": (np.stack([with_singular_values(3, 2, [2.0, 1.0]),
                                          with_singular_values(3, 2, [2.0, 1.0])]),
                                np.array([0.1, 0.6], np.float32), (2, 1)),
}
WEIGHTS = {name: rng.normal(size=a.shape[:-2] + a.shape[:-3:-1]).astype(np.float32)
           for name, (a, _, _) in CASES.items()}


def pinv_loss(np_, name):
    a, rtol, _ = CASES[name]
    weights = WEIGHTS[name]
    return lambda x: np_.sum(np_.sin(np_.linalg.pinv(x, rtol=rtol)) * weights)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_cutoff_keeps_the_stated_rank(name):
    """Guards the other tests: the cases cut what they say they cut."""
    a, rtol, rank = CASES[name]
    s = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    cut = 10 * max(a.shape[-2:]) * np.finfo(np.float32).eps if rtol is None else rtol
    kept = (s > np.expand_dims(cut, -1) * s[..., :1]).sum(-1)
    assert np.array_equal(kept, rank)


def test_pinv_values_match_jax():
    # Every case's pseudo-inverse in one program per library (`together`: a pinv
    # program is slow to compile), each result still compared on its own.
    fn, args = together([((lambda rtol: lambda np_, x: np_.linalg.pinv(x, rtol=rtol))(
        CASES[name][1]), (CASES[name][0],)) for name in sorted(CASES)])
    check(fn, *args, rtol=1e-4, atol=1e-4)


# The gradient cases in groups: a group's loss is the sum of its cases' losses, each of
# its own matrix, so each case's gradient is still compared on its own, and JAX and
# minijax.jit compile one gradient program per group rather than one per case.
GRAD_GROUPS = {
    "square, tall": ["square_full_rank_default", "square_cut_by_rtol",
                     "tall_rank_deficient_default", "tall_cut_by_rtol"],
    "wide, batched": ["wide_rank_deficient_default", "wide_cut_by_rtol", "batched_mixed",
                      "batched_rtol_per_matrix"],
}


def test_grad_groups_hold_every_case_once():
    assert_groups_cover(GRAD_GROUPS, CASES)


@pytest.mark.parametrize("group", GRAD_GROUPS)
def test_grad_matches_jax_eagerly_and_under_jit(group):
    names = GRAD_GROUPS[group]
    matrices = tuple(CASES[name][0] for name in names)

    def summed(np_):
        return lambda xs: sum(pinv_loss(np_, name)(x) for name, x in zip(names, xs))
    expected = jax.jit(jax.grad(summed(jnp)))(matrices)
    eager = minijax.grad(summed(mnp))(matrices)
    jitted = minijax.jit(minijax.grad(summed(mnp)))(matrices)
    for name, want, got_eagerly, got_jitted in zip(names, expected, eager, jitted,
                                                   strict=True):
        for how, got in (("eagerly", got_eagerly), ("under jit", got_jitted)):
            try:
                assert_values_close(got, want, 2e-3, 2e-3)
            except AssertionError as error:
                raise AssertionError(f"{name}, {how}: {error}") from None


@pytest.mark.parametrize("name", ["square_cut_by_rtol", "tall_rank_deficient_default",
                                  "wide_cut_by_rtol", "batched_rtol_per_matrix"])
def test_jvp_of_pinv_matches_jax(name):
    a, rtol, _ = CASES[name]
    t = rng.normal(size=a.shape).astype(np.float32)
    ours = minijax.jvp(lambda x: mnp.linalg.pinv(x, rtol=rtol), (a,), (t,))
    theirs = jax.jit(lambda p, d: jax.jvp(lambda x: jnp.linalg.pinv(x, rtol=rtol),
                                          (p,), (d,)))(a, t)
    assert_values_close(ours, theirs, 2e-3, 2e-3)
    ours_jit = minijax.jit(lambda p, d: minijax.jvp(
        lambda x: mnp.linalg.pinv(x, rtol=rtol), (p,), (d,)))(a, t)
    assert_values_close(ours_jit, theirs, 2e-3, 2e-3)


@pytest.mark.parametrize("name", ["tall_cut_by_rtol", "wide_rank_deficient_default"])
def test_jacfwd_and_jacrev_of_pinv_match_jax(name):
    a, rtol, _ = CASES[name]
    f = lambda np_: (lambda x: np_.linalg.pinv(x, rtol=rtol))      # noqa: E731
    theirs = jax.jit(lambda x: (jax.jacfwd(f(jnp))(x), jax.jacrev(f(jnp))(x)))(a)
    assert_values_close(minijax.jacfwd(f(mnp))(a), theirs[0], 2e-3, 2e-3)
    assert_values_close(minijax.jit(minijax.jacrev(f(mnp)))(a), theirs[1], 2e-3, 2e-3)


def test_vmap_of_pinv_and_its_grad_match_jax():
    """vmap over a batch holding a full-rank and a rank-deficient matrix, with rtol
    mapped too, and the gradient of the vmapped loss."""
    a, rtol, _ = CASES["batched_rtol_per_matrix"]
    w = WEIGHTS["batched_rtol_per_matrix"]

    def loss(np_, vmap, rtol):
        def per_matrix(x, r, wx):
            return np_.sum(np_.sin(np_.linalg.pinv(x, rtol=r)) * wx)
        return lambda x: vmap(per_matrix)(x, rtol, w).sum()
    # JAX 0.12 cannot trace vmap of pinv over a closed-over NumPy rtol (registry entry
    # "jax_trace_of_vmap_of_pinv_over_a_numpy_rtol_fails"): its oracle gets a jax array.
    jax_rtol = jnp.asarray(rtol) if JAX_VERSION >= (0, 12) else rtol
    theirs = jax.jit(lambda x: (jax.vmap(lambda x, r: jnp.linalg.pinv(x, rtol=r))(x, jax_rtol),
                                jax.grad(loss(jnp, jax.vmap, jax_rtol))(x)))(a)
    assert_values_close(minijax.vmap(lambda x, r: mnp.linalg.pinv(x, rtol=r))(a, rtol),
                        theirs[0], 2e-4, 2e-4)
    assert_values_close(minijax.grad(loss(mnp, minijax.vmap, rtol))(a), theirs[1], 2e-3, 2e-3)


def test_hermitian_pinv_derivative_matches_jax():
    """The hermitian SVD reads only the symmetric part, and so does the rule: the
    tangent of a non-symmetric direction is that of its symmetric part, as in JAX."""
    a = with_singular_values(3, 3, [2.0, 1.0, 0.05])
    a = (a + a.T) / 2
    t = rng.normal(size=a.shape).astype(np.float32)
    f = lambda np_: (lambda x: np_.linalg.pinv(x, rtol=0.1, hermitian=True))  # noqa: E731
    theirs = jax.jit(lambda p, d: jax.jvp(f(jnp), (p,), (d,)))(a, t)
    assert_values_close(minijax.jvp(f(mnp), (a,), (t,)), theirs, 2e-3, 2e-3)


def test_rtol_and_rcond_get_no_gradient_as_in_jax():
    a = CASES["square_cut_by_rtol"][0]

    def loss(np_):
        return lambda x, r: np_.sum(np_.linalg.pinv(x, rcond=r) ** 2)
    theirs = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(a, 0.3)
    ours = minijax.grad(loss(mnp), argnums=(0, 1))(a, 0.3)
    assert_values_close(ours, theirs, 2e-3, 2e-3)
    assert float(ours[1]) == 0.0


def test_empty_pinv_derivative_is_empty_as_in_jax():
    a = np.zeros((2, 0, 3), np.float32)
    t = np.ones_like(a)
    ours = minijax.jvp(mnp.linalg.pinv, (a,), (t,))
    theirs = jax.jvp(jnp.linalg.pinv, (a,), (t,))
    assert_values_close(ours, theirs)


# -- the other cutoffs: lstsq and matrix_rank differentiate through the SVD, as JAX's ------

B = rng.normal(size=(4, 2)).astype(np.float32)


@pytest.mark.parametrize("rcond", [None, 0.3])
def test_lstsq_grad_on_rank_deficient_matrices_matches_jax(rcond):
    a = with_singular_values(4, 3, [2.5, 1.0, 0.4 if rcond else 0.0])

    def loss(np_):
        def f(x, b):
            solution, residuals, _, s = np_.linalg.lstsq(x, b, rcond=rcond)
            return np_.sum(np_.sin(solution)) + np_.sum(residuals) + np_.sum(s)
        return f
    theirs = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(a, B)
    assert_values_close(minijax.grad(loss(mnp), argnums=(0, 1))(a, B), theirs, 2e-3, 2e-3)
    assert_values_close(minijax.jit(minijax.grad(loss(mnp), argnums=(0, 1)))(a, B), theirs,
                        2e-3, 2e-3)


def test_matrix_rank_has_no_tangent_as_in_jax():
    a = with_singular_values(3, 3, [2.0, 1.0])

    def f(np_):
        return lambda x: np_.linalg.matrix_rank(x) * np_.sum(x ** 2)
    theirs = jax.jit(lambda x: (jax.grad(f(jnp))(x),
                                jax.jvp(jnp.linalg.matrix_rank, (x,), (x,))))(a)
    assert_values_close(minijax.grad(f(mnp))(a), theirs[0], 2e-4, 2e-4)
    rank, rank_dot = minijax.jvp(mnp.linalg.matrix_rank, (a,), (a,))
    assert int(rank) == int(theirs[1][0]) == 2
    assert np.asarray(rank_dot).dtype == np.asarray(theirs[1][1]).dtype


@pins("pinv_grad_under_jit_with_traced_rtol")
def test_pinv_grad_with_a_traced_rtol_divergence():
    """Registered: "pinv_grad_under_jit_with_traced_rtol"."""
    a, rtol, _ = CASES["square_cut_by_rtol"]

    def loss(np_, jit):
        return lambda x: jit(lambda x, r: np_.sum(np_.linalg.pinv(x, rtol=r) ** 2))(x, rtol)
    expected = jax.jit(jax.grad(lambda x: jnp.sum(jnp.linalg.pinv(x, rtol=rtol) ** 2)))(a)
    if JAX_VERSION >= (0, 12):     # rtol is a differentiated argument of the custom_jvp
        assert_values_close(jax.grad(loss(jnp, jax.jit))(a), expected, 1e-6, 1e-6)
    else:
        with pytest.raises(TypeError, match="constant handler"):
            jax.grad(loss(jnp, jax.jit))(a)
    assert_values_close(minijax.grad(loss(mnp, minijax.jit))(a), expected, 2e-3, 2e-3)


@pins("jax_trace_of_vmap_of_pinv_over_a_numpy_rtol_fails")
def test_trace_of_vmap_of_pinv_over_a_numpy_rtol_divergence():
    """Registered: "jax_trace_of_vmap_of_pinv_over_a_numpy_rtol_fails"."""
    a, rtol, _ = CASES["batched_rtol_per_matrix"]
    mapped = lambda np_, vmap: lambda x: vmap(  # noqa: E731
        lambda x, r: np_.linalg.pinv(x, rtol=r))(x, rtol)
    expected = jax.vmap(lambda x, r: jnp.linalg.pinv(x, rtol=r))(a, rtol)   # eagerly it runs
    if JAX_VERSION >= (0, 12):
        with pytest.raises(AssertionError, match="non-canonical constant"):
            jax.jit(mapped(jnp, jax.vmap))(a)
        with pytest.raises(AssertionError, match="non-canonical constant"):
            jax.make_jaxpr(mapped(jnp, jax.vmap))(a)
    else:      # rtol was a nondiff argument of pinv's custom_jvp: not mapped through it
        assert_values_close(jax.jit(mapped(jnp, jax.vmap))(a), expected, 2e-4, 2e-4)
    assert_values_close(jax.jit(jax.vmap(lambda x, r: jnp.linalg.pinv(x, rtol=r)))(a, rtol),
                        expected, 2e-4, 2e-4)                       # and with rtol an argument
    assert_values_close(minijax.jit(mapped(mnp, minijax.vmap))(a), expected, 2e-4, 2e-4)
    assert_values_close(mapped(mnp, minijax.vmap)(a), expected, 2e-4, 2e-4)


@pins("matrix_rank_rtol_taken_as_absolute")
def test_matrix_rank_rtol_is_relative_divergence():
    """Registered: "matrix_rank_rtol_taken_as_absolute"."""
    a = np.diag([10.0, 1.0, 0.05]).astype(np.float32)
    assert int(jnp.linalg.matrix_rank(a, rtol=0.2)) == 2          # JAX: 1 > 0.2, absolute
    assert int(np.linalg.matrix_rank(a, rtol=0.2)) == 1           # NumPy: 1 < 0.2 * 10
    assert int(mnp.linalg.matrix_rank(a, rtol=0.2)) == 1
    assert int(minijax.jit(lambda m, r: mnp.linalg.matrix_rank(m, rtol=r))(a, 0.2)) == 1
    batch = np.stack([a, 3 * a])      # a per-matrix rtol, relative to each matrix
    assert mnp.linalg.matrix_rank(batch, rtol=np.array([0.2, 0.001])).tolist() == [1, 3]
    # tol is absolute in both, and the default tolerance is JAX's
    for kwargs in ({"tol": 0.2}, {"tol": 0.01}, {}):
        assert int(mnp.linalg.matrix_rank(a, **kwargs)) == int(jnp.linalg.matrix_rank(a, **kwargs))
    with pytest.raises(ValueError):
        mnp.linalg.matrix_rank(a, rtol=0.1, tol=0.1)
