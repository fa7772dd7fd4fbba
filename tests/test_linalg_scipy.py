"""`minijax.scipy.linalg` and `multivariate_normal` against `jax.scipy` on small matrices:
values (eagerly and under jit, with dtypes and weak types), gradients, vmap, errors."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.stats as jstats
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.scipy.linalg as msl
from minijax.scipy.stats import multivariate_normal as mvn   # the public name, as JAX's
from minijax.testing import JAX_VERSION
from tests.numpy_helpers import check, assert_values_close, together, assert_groups_cover
from tests.test_divergences import pins

rng = np.random.default_rng(5)
A = (rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
_M = rng.normal(size=(3, 3))
S = (_M @ _M.T + np.diag([1.0, 2.0, 4.0])).astype(np.float32)
TALL = rng.normal(size=(4, 3)).astype(np.float32)
B = rng.normal(size=(3, 2)).astype(np.float32)
V = rng.normal(size=(3,)).astype(np.float32)
BATCH = np.stack([A, A.T.copy() + 0.5])


def _sl(np_):
    return jsl if np_ is jnp else msl


VALUE_CASES = {
    "cholesky": (lambda np_, a: (_sl(np_).cholesky(a), _sl(np_).cholesky(a, lower=True)), (S,)),
    "cho_solve": (lambda np_, a, b: (_sl(np_).cho_solve(_sl(np_).cho_factor(a), b),
                                     _sl(np_).cho_solve(_sl(np_).cho_factor(a, lower=True),
                                                        b[:, 0])), (S, B)),
    "solve_triangular": (lambda np_, a, b: tuple(
        _sl(np_).solve_triangular(a, b, trans=t, lower=lower, unit_diagonal=unit)
        for t in (0, "T", 2) for lower in (False, True) for unit in (False, True)), (A, B)),
    # (batched 1-d right-hand sides are deprecated in JAX and change meaning in newer
    # versions, so only the unbatched vector case is compared)
    "solve_triangular_vector": (lambda np_, a, b: _sl(np_).solve_triangular(
        a, b, lower=True), (A, V)),
    "solve_triangular_batch": (lambda np_, a, b: _sl(np_).solve_triangular(
        a, b, lower=True), (BATCH, np.stack([B, 2 * B]))),
    "solve": (lambda np_, a, b: tuple(_sl(np_).solve(a, b, assume_a=k)
                                      for k in ("gen", "sym", "pos")), (S, B)),
    "solve_pos_vector": (lambda np_, a, b: _sl(np_).solve(a, b, assume_a="pos", lower=True),
                         (S, V)),
    "inv_det": (lambda np_, a: (_sl(np_).inv(a), _sl(np_).det(a)), (BATCH,)),
    "lu": (lambda np_, a: _sl(np_).lu(a), (TALL,)),
    "lu_wide_permute_l": (lambda np_, a: _sl(np_).lu(a, permute_l=True), (TALL.T.copy(),)),
    "lu_factor_solve": (lambda np_, a, b: (_sl(np_).lu_factor(a),
                                           _sl(np_).lu_solve(_sl(np_).lu_factor(a), b),
                                           _sl(np_).lu_solve(_sl(np_).lu_factor(a), b[:, 1],
                                                             trans=1)), (A, B)),
    "eigh": (lambda np_, a: (_sl(np_).eigh(a), _sl(np_).eigh(a, lower=False,
                                                              eigvals_only=True)), (S,)),
    "svd": (lambda np_, a: (_sl(np_).svd(a), _sl(np_).svd(a, full_matrices=False),
                            _sl(np_).svd(a, compute_uv=False)), (TALL,)),
    "qr": (lambda np_, a: (_sl(np_).qr(a), _sl(np_).qr(a, mode="economic"),
                           _sl(np_).qr(a, mode="r")), (TALL,)),
    # every Padé degree and a squaring, a batch, and the triangular solve: one case, as an
    # expm program takes ~10 times as long to compile as the other cases' programs
    "expm": (lambda np_, a, batch: (
        tuple(_sl(np_).expm(a * c) for c in (0.01, 0.3, 1.0, 4.0)), _sl(np_).expm(batch),
        _sl(np_).expm(np_.triu(a) * 0.5, upper_triangular=True)), (A, BATCH * 0.5)),
    "block_diag": (lambda np_, a, b: _sl(np_).block_diag(a, b, 2.0, b[:, 0]), (A, B)),
}


def test_tril_triu_are_the_numpy_functions():
    # jax.scipy.linalg dropped these old SciPy aliases; minijax keeps them as jnp's
    assert msl.tril is mnp.tril and msl.triu is mnp.triu
    assert_values_close(msl.tril(A, -1), jnp.tril(A, -1))


# The value cases in groups, each checked as one case: one program per library for the
# group (every result still compared on its own)
VALUE_GROUPS = {
    "cholesky, solve, inv": ["cholesky", "cho_solve", "solve", "solve_pos_vector", "inv_det"],
    "solve_triangular": ["solve_triangular", "solve_triangular_vector",
                         "solve_triangular_batch"],
    "lu": ["lu", "lu_wide_permute_l", "lu_factor_solve"],
    "eigh, svd, qr, block_diag": ["eigh", "svd", "qr", "block_diag"],
    "expm": ["expm"],
}


def test_value_groups_hold_every_case_once():
    assert_groups_cover(VALUE_GROUPS, VALUE_CASES)


@pytest.mark.parametrize("group", VALUE_GROUPS)
def test_values_match_jax_scipy(group):
    fn, args = together([VALUE_CASES[name] for name in VALUE_GROUPS[group]])
    check(fn, *args, rtol=3e-4, atol=3e-4, eager=True)


def test_result_structures_match_jax_scipy():
    for fn in (lambda s: s.qr(A, mode="r"), lambda s: s.lu_factor(A), lambda s: s.eigh(S),
               lambda s: s.cho_factor(S)):
        ours, theirs = fn(msl), fn(jsl)
        assert type(ours) is type(theirs) and len(ours) == len(theirs)


LOSSES = {
    "cholesky": (lambda np_, a: np_.sum(np_.sin(_sl(np_).cholesky(a))), S),
    "cho_solve": (lambda np_, a: np_.sum(np_.sin(_sl(np_).cho_solve(_sl(np_).cho_factor(a),
                                                                    B))), S),
    "solve_pos": (lambda np_, a: np_.sum(np_.sin(_sl(np_).solve(a, B, assume_a="pos"))), S),
    "solve_pos_vector": (lambda np_, a: np_.sum(np_.sin(_sl(np_).solve(a, V, assume_a="pos"))),
                         S),
    "solve_triangular": (lambda np_, a: np_.sum(np_.sin(_sl(np_).solve_triangular(
        a, B, trans=1, lower=True))), A),
    "lu_solve": (lambda np_, a: np_.sum(np_.sin(_sl(np_).lu_solve(_sl(np_).lu_factor(a), B,
                                                                  trans=1))), A),
    "lu": (lambda np_, a: np_.sum(np_.sin(_sl(np_).lu(a)[1])) + np_.sum(_sl(np_).lu(a)[2]),
           TALL),
    # a Padé approximant alone, and (1-norm above the Padé bound) one scaling and squaring
    # step: one case, as an expm gradient program is slow to compile
    "expm": (lambda np_, a: (np_.sum(np_.sin(_sl(np_).expm(a[0])))
                             + np_.sum(_sl(np_).expm(a[1])) / 1000),
             (A * 0.5, A * 1.5)),
}


# Factored by cholesky(a, lower=False), which reads a's upper triangle only
_UPPER_CHOLESKY = {"cholesky", "cho_solve"}


def _folded_onto_upper(gradient):
    """JAX 0.10's gradient of a function of the upper triangle, as JAX 0.11's and
    minijax's: each entry above the diagonal holds what 0.10 spread over it and its
    mirror image, and the lower triangle is zero."""
    g = np.asarray(gradient)
    return np.triu(g + g.T, 1) + np.diag(np.diag(g))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_grad_matches_jax_scipy(name):
    loss, x = LOSSES[name]
    # JAX's side as one jitted program (the comparison has a tolerance), not op by op
    expected = jax.jit(jax.grad(lambda a: loss(jnp, a)))(x)
    if name in _UPPER_CHOLESKY and JAX_VERSION < (0, 11):
        # registry: cholesky_derivative_reads_the_ignored_triangle
        expected = _folded_onto_upper(expected)
    assert_values_close(minijax.grad(lambda a: loss(mnp, a))(x), expected, 2e-3, 2e-3)
    assert_values_close(minijax.jit(minijax.grad(lambda a: loss(mnp, a)))(x), expected,
                        2e-3, 2e-3)


@pins("cholesky_derivative_reads_the_ignored_triangle")
def test_cholesky_gradient_is_zero_in_the_triangle_the_value_ignores():
    def f(api):
        return lambda a: api.numpy.sum(api.numpy.sin(
            api.lax.linalg.cholesky(a, symmetrize_input=False)))
    above = np.triu(np.ones_like(S), 1)
    # the value does not depend on the strict upper triangle, in either library
    for api in (minijax, jax):
        np.testing.assert_array_equal(f(api)(S + above), f(api)(S))
    mini = np.asarray(minijax.grad(f(minijax))(S))
    theirs = np.asarray(jax.jit(jax.grad(f(jax)))(S))
    upper = np.triu_indices(len(S), 1)
    assert np.all(mini[upper] == 0)
    if JAX_VERSION >= (0, 11):      # JAX mirrors the tangent's lower triangle since 0.11
        assert np.all(theirs[upper] == 0)
    else:                           # JAX 0.10 differentiates through the ignored entries
        assert np.all(theirs[upper] != 0)
        theirs = np.tril(theirs + theirs.T, -1) + np.diag(np.diag(theirs))
    assert_values_close(mini, theirs, 1e-5, 1e-6)


@pytest.mark.parametrize("name", ["solve_pos", "lu_solve", "expm"])
def test_vmap_of_grad_matches_jax_scipy(name):
    loss, x = LOSSES[name]
    xs = jax.tree_util.tree_map(lambda v: np.stack([v, v * 1.1]), x)
    ours = minijax.vmap(minijax.grad(lambda a: loss(mnp, a)))(xs)
    theirs = jax.jit(jax.vmap(jax.grad(lambda a: loss(jnp, a))))(xs)
    assert_values_close(ours, theirs, 2e-3, 2e-3)


def test_eager_expm_is_one_cached_program_as_in_jax():
    """JAX jits expm; an eager call here runs one compiled program too, with the static
    arguments as JAX's, and the traced program holds the body inline (no nested jit)."""
    msl.expm.eager_jit.clear_cache()
    assert msl.expm.eager_jit.call_cache().fast is None
    for upper, a in ((False, A), (True, np.triu(A))):
        assert_values_close(msl.expm(a, upper_triangular=upper),
                            jax.jit(lambda a: jsl.expm(a, upper_triangular=upper))(a),
                            2e-4, 2e-4)
    assert msl.expm.eager_jit.call_cache().fast is not None
    names = [e.primitive.name for e in minijax.make_jaxpr(msl.expm)(A).jaxpr.eqns]
    assert "jit" not in names and "scan" in names


@pytest.mark.parametrize("make,error", [
    (lambda s: s.solve(A, B, assume_a="triangular"), ValueError),
    (lambda s: s.solve_triangular(A, B, trans=3), ValueError),
    (lambda s: s.qr(A, mode="raw"), ValueError),
    (lambda s: s.expm(TALL), ValueError),
    (lambda s: s.block_diag(np.ones((2, 2, 2))), ValueError),
    (lambda s: s.cho_solve((S, False), np.ones(2, np.float32)), ValueError),
])
def test_errors_have_jax_exception_types(make, error):
    with pytest.raises(error):
        make(jsl)
    with pytest.raises(error):
        make(msl)


# -- multivariate_normal --------------------------------------------------------------------------

X = rng.normal(size=(5, 3)).astype(np.float32)
MEAN = rng.normal(size=(3,)).astype(np.float32)


def _mvn(np_):
    return jstats.multivariate_normal if np_ is jnp else mvn


@pytest.mark.parametrize("args", [(X, MEAN, S), (X[0], MEAN, S), (X, MEAN, 2.0),
                                  (1.5, 0.5, 2.0), (X, MEAN, np.stack([S] * 5))],
                         ids=["matrix", "one point", "scalar cov", "scalar", "batched cov"])
def test_multivariate_normal_matches_jax(args):
    check(lambda np_, *a: (_mvn(np_).logpdf(*a), _mvn(np_).pdf(*a)), *args,
          rtol=1e-5, atol=1e-6, eager=True)


def test_multivariate_normal_gradients_and_vmap_match_jax():
    def loss(np_, cov, mean):
        return _mvn(np_).logpdf(X, mean, cov).sum()
    ours = minijax.grad(lambda c, m: loss(mnp, c, m), argnums=(0, 1))(S, MEAN)
    theirs = jax.jit(jax.grad(lambda c, m: loss(jnp, c, m), argnums=(0, 1)))(S, MEAN)
    assert_values_close(ours, theirs, 1e-4, 1e-4)
    covs = np.stack([S, 2 * S])
    assert_values_close(minijax.vmap(lambda c: loss(mnp, c, MEAN))(covs),
                        jax.jit(jax.vmap(lambda c: loss(jnp, c, MEAN)))(covs), 1e-5, 1e-5)


def test_multivariate_normal_rejects_mismatched_shapes():
    with pytest.raises(ValueError):
        jstats.multivariate_normal.logpdf(X, MEAN, np.eye(2))
    with pytest.raises(ValueError, match="incompatible shapes"):
        mvn.logpdf(X, MEAN, np.eye(2))


@pins("lu_jvp_under_jit_with_a_numpy_tangent_fails")
def test_lu_tangent_of_a_numpy_array_under_jit():
    def tangent(api, tangent_in):
        return api.jit(lambda a: api.jvp(lambda a: api.lax.linalg.lu(a)[0], (a,),
                                         (tangent_in,))[1])
    ours = tangent(minijax, S)(S)
    np.testing.assert_allclose(ours, jax.jit(lambda a: jax.jvp(
        lambda a: jax.lax.linalg.lu(a)[0], (a,), (jnp.asarray(S),))[1])(S), rtol=1e-6)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        tangent(jax, S)(S)
