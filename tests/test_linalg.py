"""`minijax.numpy.linalg` against `jax.numpy.linalg` on small well-conditioned matrices.

Values (eagerly, traced, under jit, with JAX's dtypes and weak types), derivatives
(grad, jvp, jit of grad), batching (vmap, grad of vmap) and the errors for bad shapes.
Eigenvectors and singular vectors come from the same `jax.lax.linalg` kernels as
JAX's, so they are compared directly; the derivative tests use losses that do not
depend on their signs (eigenvalues, reconstructions, projectors).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.testing import JAX_VERSION
from tests.numpy_helpers import check, assert_values_close, together, assert_groups_cover

rng = np.random.default_rng(12)


def well_conditioned(n, batch=()):
    """A random square matrix, diagonally dominated enough to be well conditioned."""
    return (rng.normal(size=batch + (n, n)) + 3 * np.eye(n)).astype(np.float32)


def spd(n, batch=()):
    """A symmetric positive definite matrix with well-separated eigenvalues."""
    a = rng.normal(size=batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + np.diag(np.arange(1.0, n + 1)) * 2).astype(np.float32)


A = well_conditioned(3)
A4 = well_conditioned(4)
S = spd(3)
TALL = rng.normal(size=(4, 3)).astype(np.float32)
WIDE = rng.normal(size=(2, 3)).astype(np.float32)
B = rng.normal(size=(3, 2)).astype(np.float32)
V = rng.normal(size=(3,)).astype(np.float32)
BATCH = well_conditioned(3, (2,))
SPD_BATCH = spd(3, (2,))


# -- values --------------------------------------------------------------------------------------

VALUE_CASES = {
    "cholesky": (lambda np_, a: np_.linalg.cholesky(a), (S,)),
    "cholesky_upper": (lambda np_, a: np_.linalg.cholesky(a, upper=True), (SPD_BATCH,)),
    "eigh": (lambda np_, a: tuple(np_.linalg.eigh(a)), (S,)),
    "eigh_upper": (lambda np_, a: tuple(np_.linalg.eigh(a, UPLO="U")), (SPD_BATCH,)),
    "eigvalsh": (lambda np_, a: np_.linalg.eigvalsh(a), (S,)),
    "svd": (lambda np_, a: tuple(np_.linalg.svd(a)), (TALL,)),
    "svd_thin_wide": (lambda np_, a: tuple(np_.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "svdvals": (lambda np_, a: np_.linalg.svd(a, compute_uv=False), (BATCH,)),
    "svd_hermitian": (lambda np_, a: tuple(np_.linalg.svd(a, hermitian=True)),
                      (S - 4 * np.eye(3, dtype=np.float32),)),
    "qr_reduced": (lambda np_, a: tuple(np_.linalg.qr(a)), (TALL,)),
    "qr_complete": (lambda np_, a: tuple(np_.linalg.qr(a, mode="complete")), (TALL,)),
    "qr_r": (lambda np_, a: np_.linalg.qr(a, mode="r"), (WIDE,)),
    "inv": (lambda np_, a: np_.linalg.inv(a), (BATCH,)),
    "solve_matrix": (lambda np_, a, b: np_.linalg.solve(a, b), (A, B)),
    "solve_vector": (lambda np_, a, b: np_.linalg.solve(a, b), (BATCH, V)),
    "solve_broadcast": (lambda np_, a, b: np_.linalg.solve(a, b), (BATCH, B)),
    "solve_int": (lambda np_, a, b: np_.linalg.solve(a, b),
                  (np.array([[2, 1], [1, 3]], np.int32), np.array([1, 2], np.int32))),
    "det_2x2": (lambda np_, a: np_.linalg.det(a), (A[:2, :2],)),
    "det_3x3": (lambda np_, a: np_.linalg.det(a), (BATCH,)),
    "det_lu": (lambda np_, a: np_.linalg.det(a), (A4,)),
    "det_singular": (lambda np_, a: np_.linalg.det(a), (np.ones((4, 4), np.float32),)),
    "slogdet": (lambda np_, a: tuple(np_.linalg.slogdet(a)), (A4,)),
    "slogdet_small": (lambda np_, a: tuple(np_.linalg.slogdet(a)), (-A[:2, :2],)),
    "slogdet_qr": (lambda np_, a: tuple(np_.linalg.slogdet(a, method="qr")), (A4,)),
    "pinv": (lambda np_, a: np_.linalg.pinv(a), (TALL,)),
    "pinv_rank_deficient": (lambda np_, a: np_.linalg.pinv(a),
                            (np.outer(V, V).astype(np.float32),)),
    "matrix_power": (lambda np_, a: (np_.linalg.matrix_power(a, 0),
                                     np_.linalg.matrix_power(a, 5),
                                     np_.linalg.matrix_power(a, -2)), (A,)),
    "lstsq": (lambda np_, a, b: np_.linalg.lstsq(a, b), (TALL, TALL[:, :2] + 1)),
    "lstsq_vector": (lambda np_, a, b: np_.linalg.lstsq(a, b), (TALL, TALL[:, 0])),
    "matrix_rank": (lambda np_, a: (np_.linalg.matrix_rank(a),
                                    np_.linalg.matrix_rank(np_.outer(a[0], a[1]))), (A,)),
    "trace_diagonal": (lambda np_, a: (np_.linalg.trace(a), np_.linalg.diagonal(a, offset=1)),
                       (BATCH,)),
    "cross_outer": (lambda np_, a, b: (np_.linalg.cross(a, b), np_.linalg.outer(a[0], b[1])),
                    (A, A[::-1].copy())),
    "multi_dot": (lambda np_, a, b: np_.linalg.multi_dot([a, a, b]), (A, B)),
    "vecdot": (lambda np_, a, b: np_.linalg.vecdot(a, b[:, :1].T), (A, B)),
    "cond": (lambda np_, a: tuple(np_.linalg.cond(a, p) for p in (None, -2, 1, "fro", np.inf)),
             (BATCH,)),
    "tensorinv_tensorsolve": (lambda np_, a: (np_.linalg.tensorinv(a.reshape(2, 2, 4), ind=2),
                                              np_.linalg.tensorsolve(a.reshape(4, 2, 2),
                                                                     a[0])), (A4,)),
    "cond_singular": (lambda np_, a: np_.linalg.cond(a, 1), (np.ones((2, 2), np.float32),)),
}


# The value cases in groups, each checked as one case: one program per library for the
# group (every result still compared on its own)
VALUE_GROUPS = {
    "cholesky, eigh": ["cholesky", "cholesky_upper", "eigh", "eigh_upper", "eigvalsh"],
    "svd, qr": ["svd", "svd_thin_wide", "svdvals", "svd_hermitian", "qr_reduced",
                "qr_complete", "qr_r"],
    "inv, solve": ["inv", "solve_matrix", "solve_vector", "solve_broadcast", "solve_int"],
    "det, slogdet": ["det_2x2", "det_3x3", "det_lu", "det_singular", "slogdet",
                     "slogdet_small", "slogdet_qr"],
    "pinv, lstsq, rank": ["pinv", "pinv_rank_deficient", "lstsq", "lstsq_vector",
                          "matrix_rank"],
    "cond, power": ["cond", "cond_singular", "matrix_power"],
    "products, tensors": ["trace_diagonal", "cross_outer", "multi_dot", "vecdot",
                          "tensorinv_tensorsolve"],
}


def test_value_groups_hold_every_case_once():
    assert_groups_cover(VALUE_GROUPS, VALUE_CASES)


@pytest.mark.parametrize("group", VALUE_GROUPS)
def test_values_match_jax(group):
    fn, args = together([VALUE_CASES[name] for name in VALUE_GROUPS[group]])
    check(fn, *args, rtol=2e-4, atol=2e-4, eager=True)


def test_result_types_are_named_tuples_like_jax():
    ours = (mnp.linalg.eigh(S), mnp.linalg.svd(A), mnp.linalg.qr(A), mnp.linalg.slogdet(A))
    theirs = (jnp.linalg.eigh(S), jnp.linalg.svd(A), jnp.linalg.qr(A), jnp.linalg.slogdet(A))
    for o, t in zip(ours, theirs):
        assert type(o).__name__ == type(t).__name__ and o._fields == t._fields


NORM_ORDS_MATRIX = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
NORM_ORDS_VECTOR = [None, 0, 1, -1, 2, 3, 0.5, np.inf, -np.inf]


def test_matrix_norms_match_jax():
    def norms(np_, x):
        return tuple(np_.linalg.norm(x, ord=o, axis=(2, 0), keepdims=k)
                     for o in NORM_ORDS_MATRIX for k in (False, True))
    check(norms, rng.normal(size=(3, 2, 4)).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_vector_norms_match_jax():
    def norms(np_, x):
        return (tuple(np_.linalg.norm(x, ord=o, axis=-1) for o in NORM_ORDS_VECTOR)
                + (np_.linalg.norm(x), np_.linalg.norm(x, keepdims=True),
                   np_.linalg.vector_norm(x, ord=1), np_.linalg.matrix_norm(x, ord="nuc")))
    check(norms, np.array([[3.0, 0.0, -4.0], [1.0, 2.0, 2.0]], np.float32), rtol=1e-5)


def test_norms_of_complex_values_match_jax():
    # the 2-norms sum |z|² (minijax's summed z², a complex result); ord=0 and ord=p
    # norms are real, as JAX's
    def norms(np_, a, v):
        return (np_.linalg.norm(a), np_.linalg.norm(a, axis=1), np_.linalg.norm(a, "fro"),
                np_.linalg.norm(a, 1), np_.linalg.norm(v), np_.linalg.norm(v, 3),
                np_.linalg.norm(v, 0), np_.linalg.vector_norm(v), np_.linalg.matrix_norm(a))
    a = np.array([[2, 1j], [-1j, 3]], np.complex64)
    check(norms, a, np.array([3 + 4j, 1j, 0], np.complex64))
    grad_of = lambda lib, np_, z: lib.grad(lambda z: np_.linalg.norm(z * z))(z)
    z = np.array([1 + 2j, -1j], np.complex64)
    assert_values_close(grad_of(minijax, mnp, z), grad_of(jax, jnp, z))


def test_linalg_vecdot_conjugates_complex_first_operand_as_jax():
    # jnp.linalg.vecdot is jnp.vecdot: sum(conj(x1) * x2) (minijax's skipped the conj)
    def dots(np_, a, b):
        return (np_.linalg.vecdot(a, b), np_.linalg.vecdot(b[:, None], a.T, axis=0),
                np_.linalg.vecdot(a, a.real))
    a = np.array([[1 + 2j, 3 - 1j, -2j], [1j, 1, 2]], np.complex64)
    check(dots, a, np.array([2 - 1j, 1j, 1], np.complex64))


@pytest.mark.parametrize("fname", ["cholesky", "eigh", "eigvalsh"])
def test_complex_hermitian_decompositions_are_refused_by_name(fname):
    # not modelled (docs/linalg.md); the error names the function, not an inner lax.div
    a = np.array([[2, 1j], [-1j, 3]], np.complex64)
    with pytest.raises(TypeError, match="(cholesky|eigh): .*real floating-point dtype"):
        getattr(mnp.linalg, fname)(a)


# -- derivatives -------------------------------------------------------------------------------

def _reconstruct_svd(np_, a):
    u, s, vh = np_.linalg.svd(a, full_matrices=False)
    return np_.sum(np_.sin((u * s) @ vh))


def _eigvec_projector(np_, a):
    """A loss on v vᵀ of the top eigenvector: independent of the eigenvector's sign."""
    v = np_.linalg.eigh(a)[1][..., -1:]
    return np_.sum((v @ np_.swapaxes(v, -1, -2)) * np_.arange(9.0).reshape(3, 3))


def _singular_projector(np_, a):
    u = np_.linalg.svd(a, full_matrices=False)[0][..., :1]
    return np_.sum((u @ np_.swapaxes(u, -1, -2)) * np_.arange(16.0).reshape(4, 4))


def _qr_loss(np_, a):
    q, r = np_.linalg.qr(a)
    return np_.sum(np_.sin(q @ r)) + np_.sum(r * r * np_.arange(9.0).reshape(3, 3))


LOSSES = {
    "cholesky": (lambda np_, a: np_.sum(np_.sin(np_.linalg.cholesky(a))), S),
    "eigvalsh": (lambda np_, a: np_.sum(np_.linalg.eigvalsh(a) ** 3), S),
    "eigh_projector": (_eigvec_projector, S),
    "svdvals": (lambda np_, a: np_.sum(np_.linalg.svd(a, compute_uv=False) ** 2
                                       * np_.arange(3.0)), TALL),
    "svd_reconstruct_tall": (_reconstruct_svd, TALL),
    "svd_reconstruct_wide": (_reconstruct_svd, WIDE),
    "svd_projector": (_singular_projector, TALL),
    "qr": (_qr_loss, TALL),
    "inv": (lambda np_, a: np_.sum(np_.sin(np_.linalg.inv(a))), A),
    "solve": (lambda np_, a: np_.sum(np_.sin(np_.linalg.solve(a, B))), A),
    "det": (lambda np_, a: np_.linalg.det(a), A4),
    "det_3x3": (lambda np_, a: np_.linalg.det(a), A),
    "slogdet": (lambda np_, a: np_.linalg.slogdet(a)[1], A4),
    "pinv": (lambda np_, a: np_.sum(np_.sin(np_.linalg.pinv(a))), TALL),
    "norm_2": (lambda np_, a: np_.linalg.norm(a, 2), TALL),
    "norm_nuc": (lambda np_, a: np_.linalg.norm(a, "nuc"), TALL),
    "lstsq": (lambda np_, a: np_.sum(np_.linalg.lstsq(a, TALL[:, :2] + 1)[0]), TALL),
    "matrix_power": (lambda np_, a: np_.sum(np_.linalg.matrix_power(a, -3)), A),
}


# The losses in groups: each group's gradient is that of the sum of its losses, each of
# its own matrix, so every loss's gradient is still compared, and JAX and minijax.jit
# compile one gradient program per group instead of one per loss
GRAD_GROUPS = {
    "cholesky, eigh": ["cholesky", "eigvalsh", "eigh_projector"],
    "svd, norms": ["svdvals", "svd_reconstruct_tall", "svd_reconstruct_wide", "svd_projector",
                   "norm_2", "norm_nuc"],
    "qr, inv, solve": ["qr", "inv", "solve", "matrix_power"],
    "det, slogdet": ["det", "det_3x3", "slogdet"],
    "pinv, lstsq": ["pinv", "lstsq"],
}


def test_grad_groups_hold_every_loss_once():
    grouped = [name for names in GRAD_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(LOSSES)


def _summed(names):
    """(the sum of the named losses, as a function of a tuple of their inputs; the tuple)"""
    cases = [LOSSES[name] for name in names]

    def loss(np_, inputs):
        return sum(case_loss(np_, a) for (case_loss, _), a in zip(cases, inputs))
    return loss, tuple(x for _, x in cases)


@pytest.mark.parametrize("group", GRAD_GROUPS)
def test_grad_and_jit_grad_match_jax(group):
    loss, x = _summed(GRAD_GROUPS[group])
    # JAX's side as one jitted program (the comparison has a tolerance): run eagerly it
    # would compile one program per op, which only the oracle would pay for
    expected = jax.jit(jax.grad(lambda a: loss(jnp, a)))(x)
    assert_values_close(minijax.grad(lambda a: loss(mnp, a))(x), expected, 2e-3, 2e-3)
    assert_values_close(minijax.jit(minijax.grad(lambda a: loss(mnp, a)))(x), expected,
                        2e-3, 2e-3)


@pytest.mark.parametrize("name", ["cholesky", "eigh_projector", "svd_reconstruct_wide", "qr",
                                  "solve", "det", "pinv"])
def test_jvp_matches_jax(name):
    loss, x = LOSSES[name]
    t = rng.normal(size=x.shape).astype(np.float32)
    ours = minijax.jvp(lambda a: loss(mnp, a), (x,), (t,))
    theirs = jax.jit(lambda p, d: jax.jvp(lambda a: loss(jnp, a), (p,), (d,)))(x, t)
    assert_values_close(ours, theirs, 2e-3, 2e-3)


@pytest.mark.parametrize("name", ["cholesky", "eigvalsh", "svd_reconstruct_tall", "qr",
                                  "inv", "slogdet", "lstsq"])
def test_vmap_and_grad_of_vmap_match_jax(name):
    loss, x = LOSSES[name]
    xs = np.stack([x, x * 1.25])
    assert_values_close(minijax.vmap(lambda a: loss(mnp, a))(xs),
                        jax.jit(jax.vmap(lambda a: loss(jnp, a)))(xs), 2e-4, 2e-4)
    ours = minijax.grad(lambda b: minijax.vmap(lambda a: loss(mnp, a))(b).sum())(xs)
    theirs = jax.jit(jax.grad(lambda b: jax.vmap(lambda a: loss(jnp, a))(b).sum()))(xs)
    assert_values_close(ours, theirs, 2e-3, 2e-3)


EAGER_JITTED = {"cholesky": (S,), "eigh": (S,), "eigvalsh": (S,), "svd": (A,), "solve": (A, B),
                "inv": (A,), "slogdet": (A,), "det": (A4,), "matrix_power": (A, 3),
                "norm": (A, 2)}


@pytest.mark.parametrize("name", sorted(EAGER_JITTED))
def test_functions_jax_jits_run_one_cached_program_eagerly(name):
    """An eager call on plain arrays goes through the function's one cached program
    (static arguments as JAX's), the result (named tuples included) is JAX's, and a
    traced call still holds the body inline."""
    ours, theirs = getattr(mnp.linalg, name), getattr(jnp.linalg, name)
    args = EAGER_JITTED[name]
    ours.eager_jit.clear_cache()
    got = ours(*args)
    assert ours.eager_jit.call_cache().fast is not None
    expected = theirs(*args)
    assert type(got).__name__ == type(expected).__name__
    assert_values_close(got, expected, 2e-4, 2e-4)
    closed = minijax.make_jaxpr(lambda a: ours(a, *args[1:]))(args[0])
    assert "jit" not in [e.primitive.name for e in closed.jaxpr.eqns]


def test_vmap_over_a_middle_axis_and_unbatched_operands():
    mats = np.stack([A, A.T.copy(), A + 1], axis=1)          # batch axis 1
    ours = minijax.vmap(mnp.linalg.solve, in_axes=(1, None))(mats, B)
    theirs = jax.jit(jax.vmap(jnp.linalg.solve, in_axes=(1, None)))(mats, B)
    assert_values_close(ours, theirs, 2e-4, 2e-4)
    ours = minijax.vmap(mnp.linalg.solve, in_axes=(None, 0))(A, np.stack([V, 2 * V]))
    theirs = jax.jit(jax.vmap(jnp.linalg.solve, in_axes=(None, 0)))(A, np.stack([V, 2 * V]))
    assert_values_close(ours, theirs, 2e-4, 2e-4)


def test_symmetrised_input_gives_a_symmetric_gradient():
    """eigh and cholesky read (a + aᵀ)/2, so their gradient is symmetric, as in JAX."""
    g = minijax.grad(lambda a: mnp.sum(mnp.linalg.eigvalsh(a) * mnp.arange(3.0)))(S)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g).T, atol=1e-6)


# -- errors ----------------------------------------------------------------------------------------

# JAX 0.12 checks that cholesky's and eigh's argument is square; 0.10 and 0.11 fail
# adding it to its transpose. minijax raises 0.12's ValueError.
NOT_SQUARE_IN_JAX = ValueError if JAX_VERSION >= (0, 12) else TypeError
ERROR_CASES = [
    (lambda np_: np_.linalg.inv(np.ones((2, 3), np.float32)), ValueError),
    (lambda np_: np_.linalg.det(np.ones((2, 3), np.float32)), ValueError),
    (lambda np_: np_.linalg.slogdet(np.ones((3,), np.float32)), ValueError),
    (lambda np_: np_.linalg.slogdet(A, method="cholesky"), ValueError),
    (lambda np_: np_.linalg.solve(np.ones((3,), np.float32), V), ValueError),
    (lambda np_: np_.linalg.solve(A, np.ones((2,), np.float32)), ValueError),
    (lambda np_: np_.linalg.solve(BATCH, np.ones((2, 3), np.float32)), ValueError),
    (lambda np_: np_.linalg.svd(V), TypeError),
    (lambda np_: np_.linalg.qr(V), TypeError),
    (lambda np_: np_.linalg.qr(A, mode="economic"), ValueError),
    (lambda np_: np_.linalg.cholesky(TALL), ValueError, NOT_SQUARE_IN_JAX),
    (lambda np_: np_.linalg.eigh(TALL), ValueError, NOT_SQUARE_IN_JAX),
    (lambda np_: np_.linalg.eigh(S, UPLO="X"), ValueError),
    (lambda np_: np_.linalg.matrix_power(TALL, 2), TypeError),
    (lambda np_: np_.linalg.matrix_power(A, 1.5), TypeError),
    (lambda np_: np_.linalg.norm(np.ones((2, 2, 2), np.float32), 3), ValueError),
    (lambda np_: np_.linalg.norm(A, "fro", axis=0), ValueError),
    (lambda np_: np_.linalg.norm(A, 3, axis=(0, 1)), ValueError),
    (lambda np_: np_.linalg.lstsq(TALL, V), ValueError),
    (lambda np_: np_.linalg.tensorinv(TALL, ind=1), ValueError),
    (lambda np_: np_.linalg.tensorinv(A, ind=0), ValueError),
    (lambda np_: np_.linalg.tensorsolve(A4.reshape(4, 2, 2), V), ValueError),
    (lambda np_: np_.linalg.cond(V), ValueError),
    (lambda np_: np_.linalg.cond(TALL, 1), ValueError),
    (lambda np_: np_.linalg.vecdot(A, TALL), ValueError),
]


@pytest.mark.parametrize("index", range(len(ERROR_CASES)))
def test_errors_have_jax_exception_types(index):
    make, error, *jax_error = ERROR_CASES[index]
    with pytest.raises(*(jax_error or [error])):
        make(jnp)
    with pytest.raises(error):
        make(mnp)


def test_non_positive_definite_cholesky_gives_nans_like_jax():
    bad = -S
    assert np.isnan(np.asarray(mnp.linalg.cholesky(bad))).any()
    assert np.isnan(np.asarray(jnp.linalg.cholesky(bad))).any()


def test_import_forms():
    import minijax.numpy.linalg as linalg_module
    assert linalg_module is mnp.linalg
    assert minijax.lax.linalg.cholesky is not None
