"""The linear-algebra primitives themselves: type rules, text form, the NumPy reference
rules against the XLA lowering, and each rule (jvp, transpose, vmap) against JAX.

`minijax.lax.linalg` and `jax.lax.linalg` run the same kernels on the same backend, so
primal outputs (signs of eigenvectors included) and JAX's own derivative rules are
compared directly. The reference evaluator uses `numpy.linalg`, whose signs may
differ: there each result is first put in a canonical form (every eigenvector or
singular-vector pair scaled so its largest entry is positive; QR with a positive
diagonal of R), which is unique for matrices with distinct eigen/singular values.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.backends import xla
from minijax.backends.reference import eval_closed_jaxpr
from minijax.ir import loads, dumps
from minijax.ir.linalg_primitives import linalg_primitives
from minijax.testing import check_jaxpr
from tests.ad_helpers import assert_close
from tests.numpy_helpers import together, assert_groups_cover

# test_reference.py counts these as tested here (their reference rules are compared
# with XLA up to sign conventions below).
LINALG_PRIMITIVES = frozenset(p.name for p in linalg_primitives)

rng = np.random.default_rng(7)
A = (rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
_M = rng.normal(size=(3, 3))
S = (_M @ _M.T + np.diag([1.0, 3.0, 6.0])).astype(np.float32)
TALL = rng.normal(size=(4, 3)).astype(np.float32)
WIDE = rng.normal(size=(2, 3)).astype(np.float32)
B = rng.normal(size=(3, 2)).astype(np.float32)
BATCH = np.stack([A, A.T.copy() + 1])


def _lax(module):
    return module.lax.linalg if module is minijax else jax.lax.linalg


# -- type rules and text form ---------------------------------------------------------------------

@pytest.mark.parametrize("call,message", [
    (lambda L: L.cholesky(np.ones(3, np.float32)), "rank at least 2"),
    (lambda L: L.cholesky(TALL, symmetrize_input=False), "square"),
    (lambda L: L.eigh(np.ones((3, 3), np.int32), symmetrize_input=False), "floating-point"),
    (lambda L: L.triangular_solve(A, np.ones((2, 2), np.float32), left_side=True), "rows"),
    (lambda L: L.triangular_solve(A, np.ones((3, 2), np.float64).astype(np.float16)),
     "equal dtypes"),
    (lambda L: L.triangular_solve(BATCH, B, left_side=True), "batch dimensions"),
    (lambda L: L.svd(np.ones(3, np.float32)), "rank at least 2"),
])
def test_type_rules_reject_bad_operands(call, message):
    with pytest.raises(TypeError, match=message):
        call(mlax.linalg)


def test_every_primitive_prints_and_parses():
    def program(a, s, t):
        lu, pivots, perm = mlax.linalg.lu(t)
        v, w = mlax.linalg.eigh(s, lower=False, sort_eigenvalues=True)
        u, sv, vt = mlax.linalg.svd(t, full_matrices=False)
        q, r = mlax.linalg.qr(t, full_matrices=True)
        x = mlax.linalg.triangular_solve(a, b_arg(a), left_side=True, lower=True,
                                         unit_diagonal=True)
        return [mlax.linalg.cholesky(s), lu, pivots, perm, v, w, u, sv, vt, q, r, x,
                mlax.linalg.svd(t, compute_uv=False)]

    def b_arg(a):
        return a[:, :2]
    closed = check_jaxpr(minijax.make_jaxpr(program)(A, S, TALL))
    text = dumps(closed)
    for name in LINALG_PRIMITIVES:
        assert name in text
    assert dumps(loads(text)) == text


# -- reference rules against XLA (up to sign conventions) -------------------------------------------

def _positive_largest(vectors):
    """Scale each column so that its entry of largest magnitude is positive."""
    index = np.argmax(np.abs(vectors), axis=-2)[..., None, :]
    return np.sign(np.take_along_axis(vectors, index, axis=-2))


def _canonical(name, outs):
    outs = [np.asarray(o, np.float64) for o in outs]
    if name == "eigh":
        v, w = outs
        return [v * _positive_largest(v), w]
    if name == "svd" and len(outs) == 3:
        s, u, vt = outs
        k = s.shape[-1]
        signs = _positive_largest(u[..., :, :k])
        u = u.copy()
        u[..., :, :k] *= signs
        vt = vt.copy()
        vt[..., :k, :] *= np.swapaxes(signs, -1, -2)
        # columns beyond k (full_matrices) are any orthonormal completion: compare projectors
        extra_u = u[..., :, k:] @ np.swapaxes(u[..., :, k:], -1, -2)
        extra_v = np.swapaxes(vt[..., k:, :], -1, -2) @ vt[..., k:, :]
        return [s, u[..., :, :k], vt[..., :k, :], extra_u, extra_v]
    if name == "qr":
        q, r = outs
        k = min(q.shape[-2], r.shape[-1])
        signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., :k]
        q, r = q.copy(), r.copy()
        q[..., :, :k] *= signs[..., None, :]
        r[..., :k, :] *= signs[..., :, None]
        extra = q[..., :, k:] @ np.swapaxes(q[..., :, k:], -1, -2)
        return [q[..., :, :k], r, extra]
    return outs


REFERENCE_CASES = [
    ("cholesky", (S,), {}),
    ("cholesky", (np.stack([S, S + np.eye(3, dtype=np.float32)]),), {}),
    ("cholesky", (np.zeros((0, 2, 2), np.float32),), {}),
    ("triangular_solve", (A, B), dict(left_side=True, lower=True)),
    ("triangular_solve", (A, B.T.copy()), dict(left_side=False, lower=False, transpose_a=True)),
    ("triangular_solve", (BATCH, np.stack([B, B])), dict(left_side=True, unit_diagonal=True)),
    ("lu", (A,), {}),
    ("lu", (TALL,), {}),
    ("lu", (WIDE,), {}),
    ("lu", (BATCH,), {}),
    ("eigh", (S,), dict(lower=True, sort_eigenvalues=True)),
    ("eigh", (np.stack([S, 2 * S]),), dict(lower=False, sort_eigenvalues=True)),
    ("svd", (TALL,), dict(full_matrices=True, compute_uv=True)),
    ("svd", (WIDE,), dict(full_matrices=False, compute_uv=True)),
    ("svd", (BATCH,), dict(full_matrices=False, compute_uv=False)),
    ("qr", (TALL,), dict(full_matrices=True)),
    ("qr", (TALL,), dict(full_matrices=False)),
    ("qr", (WIDE,), dict(full_matrices=False)),
]


@pytest.mark.parametrize("index", range(len(REFERENCE_CASES)))
def test_reference_rule_matches_xla_lowering(index):
    from minijax.backends.reference import reference_rules
    from minijax.ir.primitives import primitives_by_name, out_avals_of
    from minijax.ir.types import aval_of_value
    name, args, params = REFERENCE_CASES[index]
    prim = primitives_by_name[name]
    got = reference_rules[prim](*args, **params)
    expected = jax.jit(lambda *a: xla.lowering_rules[prim](*a, **params))(*args)
    declared = out_avals_of(prim, [aval_of_value(a) for a in args], params)
    for g, aval in zip(got, declared):
        assert (g.shape, g.dtype) == (aval.shape, aval.dtype), (g.shape, g.dtype, aval)
    for g, e in zip(_canonical(name, got), _canonical(name, expected)):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-4)


def test_reference_lu_pivots_like_lapack():
    from minijax.backends.reference_linalg import lu_factor_numpy
    lu, pivots, permutation = lu_factor_numpy(A)
    expected = jax.lax.linalg.lu(A)
    np.testing.assert_array_equal(pivots, np.asarray(expected[1]))
    np.testing.assert_array_equal(permutation, np.asarray(expected[2]))
    np.testing.assert_allclose(lu, np.asarray(expected[0]), rtol=1e-5, atol=1e-6)


def test_reference_evaluator_runs_a_gradient_program():
    def loss(a, s):
        chol = mlax.linalg.cholesky(s)
        x = mlax.linalg.triangular_solve(chol, a, left_side=True, lower=True)
        lu = mlax.linalg.lu(a)[0]
        return (x * x).sum() + (lu * lu).sum() + mlax.linalg.eigh(s)[1].sum() ** 2

    closed = check_jaxpr(minijax.make_jaxpr(minijax.grad(loss, argnums=(0, 1)))(A, S))
    expected = xla.compile_jaxpr(closed.jaxpr)(*closed.consts, A, S)
    actual = eval_closed_jaxpr(closed, A, S)
    for g, e in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-3, atol=1e-3)


# -- jvp against JAX's own rules --------------------------------------------------------------------

JVP_CASES = {
    "cholesky": (lambda L, a: L.cholesky(a), (S,)),
    "triangular_solve_left": (lambda L, a, b: L.triangular_solve(
        a, b, left_side=True, lower=True), (A, B)),
    "triangular_solve_right_t": (lambda L, a, b: L.triangular_solve(
        a, b, left_side=False, lower=False, transpose_a=True), (A, B.T.copy())),
    "triangular_solve_unit": (lambda L, a, b: L.triangular_solve(
        a, b, left_side=True, lower=False, unit_diagonal=True), (A, B)),
    "lu_square": (lambda L, a: L.lu(a)[0], (A,)),
    "lu_tall": (lambda L, a: L.lu(a)[0], (TALL,)),
    "lu_wide": (lambda L, a: L.lu(a)[0], (WIDE,)),
    "eigh": (lambda L, a: tuple(L.eigh(a)), (S,)),
    "svd_thin_tall": (lambda L, a: tuple(L.svd(a, full_matrices=False)), (TALL,)),
    "svd_thin_wide": (lambda L, a: tuple(L.svd(a, full_matrices=False)), (WIDE,)),
    "svd_values": (lambda L, a: L.svd(a, compute_uv=False), (TALL,)),
    "qr_tall": (lambda L, a: tuple(L.qr(a, full_matrices=False)), (TALL,)),
    "qr_square": (lambda L, a: tuple(L.qr(a)), (A,)),
    "qr_wide": (lambda L, a: tuple(L.qr(a, full_matrices=False)), (WIDE,)),
    "qr_tall_full": (lambda L, a: tuple(L.qr(a, full_matrices=True)), (TALL,)),
    "svd_full_square": (lambda L, a: tuple(L.svd(a, full_matrices=True)), (A,)),
}


# The jvp cases in groups, each run as one case: one jvp program per library for the group
# (every primal and tangent still compared on its own)
JVP_GROUPS = {
    "cholesky, triangular_solve": ["cholesky", "triangular_solve_left",
                                   "triangular_solve_right_t", "triangular_solve_unit"],
    "lu": ["lu_square", "lu_tall", "lu_wide"],
    "eigh, svd": ["eigh", "svd_thin_tall", "svd_thin_wide", "svd_values", "svd_full_square"],
    "qr": ["qr_tall", "qr_square", "qr_wide", "qr_tall_full"],
}


def test_jvp_groups_hold_every_case_once():
    assert_groups_cover(JVP_GROUPS, JVP_CASES)


@pytest.mark.parametrize("group", JVP_GROUPS)
def test_jvp_matches_jax(group):
    fn, args = together([JVP_CASES[name] for name in JVP_GROUPS[group]])
    tangents = tuple(rng.normal(size=a.shape).astype(np.float32) for a in args)
    ours = minijax.jvp(lambda *a: fn(_lax(minijax), *a), args, tangents)
    # JAX's side as one jitted program (a tolerance compares), not one program per op
    theirs = jax.jit(lambda a, t: jax.jvp(lambda *x: fn(_lax(jax), *x), a, t))(args, tangents)
    assert_close(ours, theirs, tol=2e-3)
    ours = minijax.jit(lambda a, t: minijax.jvp(lambda *x: fn(_lax(minijax), *x), a, t))(
        args, tangents)
    assert_close(ours, theirs, tol=2e-3)


def test_lu_jvp_gives_integer_outputs_zero_tangents():
    _, tangents = minijax.jvp(mlax.linalg.lu, (A,), (np.ones_like(A),))
    assert tangents[1].dtype == jax.dtypes.float0 and tangents[2].dtype == jax.dtypes.float0


def test_full_svd_of_a_non_square_matrix_has_no_derivative():
    # JAX 0.10 raises NotImplementedError here too (its rule has a TODO for this case)
    with pytest.raises(NotImplementedError, match="derivative"):
        minijax.jvp(lambda a: mlax.linalg.svd(a, full_matrices=True), (TALL,), (TALL,))


# -- transpose of triangular_solve ----------------------------------------------------------------

@pytest.mark.parametrize("params", [
    dict(left_side=True, lower=True, transpose_a=False),
    dict(left_side=True, lower=False, transpose_a=True, unit_diagonal=True),
    dict(left_side=False, lower=True, transpose_a=False),
    dict(left_side=False, lower=False, transpose_a=True),
])
def test_triangular_solve_vjp_matches_jax(params):
    b = B if params["left_side"] else B.T.copy()
    ct = rng.normal(size=b.shape).astype(np.float32)
    _, ours = minijax.vjp(lambda a, x: mlax.linalg.triangular_solve(a, x, **params), A, b)
    theirs = jax.jit(lambda a, x, c: jax.vjp(
        lambda a, x: jax.lax.linalg.triangular_solve(a, x, **params), a, x)[1](c))(A, b, ct)
    assert_close(ours(ct), theirs, tol=2e-3)


def test_triangular_solve_is_linear_in_b_only():
    closed = minijax.make_jaxpr(minijax.linearize(
        lambda b: mlax.linalg.triangular_solve(A, b, left_side=True, lower=True), B)[1])(B)
    assert "triangular_solve" in dumps(closed)


# -- vmap -------------------------------------------------------------------------------------------

VMAP_CASES = [
    ("cholesky", lambda L, a: L.cholesky(a), (np.stack([S, 2 * S]),), 0),
    ("triangular_solve a batched", lambda L, a, b: L.triangular_solve(a, b, left_side=True),
     (BATCH, B), (0, None)),
    ("triangular_solve b batched on axis 2", lambda L, a, b: L.triangular_solve(
        a, b, left_side=True, lower=True), (A, np.stack([B, B + 1], axis=2)), (None, 2)),
    ("lu", lambda L, a: L.lu(a), (np.stack([TALL, TALL[::-1].copy()], axis=1),), 1),
    ("eigh", lambda L, a: L.eigh(a), (np.stack([S, S + 1]),), 0),
    ("svd", lambda L, a: L.svd(a, full_matrices=False), (np.stack([TALL, 2 * TALL]),), 0),
    ("qr", lambda L, a: L.qr(a), (np.stack([A, BATCH[1]], axis=2),), 2),
]


@pytest.mark.parametrize("case", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_jax(case):
    _, fn, args, in_axes = case
    ours = minijax.vmap(lambda *a: fn(_lax(minijax), *a), in_axes=in_axes)(*args)
    theirs = jax.jit(jax.vmap(lambda *a: fn(_lax(jax), *a), in_axes=in_axes))(*args)
    assert_close(ours, theirs, tol=2e-4)


def test_rules_table_has_no_holes_for_linalg():
    from minijax.ir.primitives import rule_tables
    for prim in linalg_primitives:
        for column in ("type", "jvp", "vmap", "xla", "reference"):
            assert prim in rule_tables[column], (prim, column)
    assert any(p.name == "triangular_solve" for p in rule_tables["transpose"])


def test_lu_pivots_to_permutation_matches_jax():
    pivots = np.array([[2, 2, 3, 3], [0, 3, 2, 3]], np.int32)
    ours = minijax.jit(lambda p: mlax.linalg.lu_pivots_to_permutation(p, 5))(pivots)
    theirs = jax.lax.linalg.lu_pivots_to_permutation(pivots, 5)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
