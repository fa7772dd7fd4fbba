"""`svd(subset_by_index=)`, `scipy.linalg.eigh_tridiagonal` and `qr_multiply` against
JAX's on the same inputs: values eagerly and under jit, vmap, gradients where JAX has
them, and JAX's errors. The bisection of `eigh_tridiagonal` is JAX's own, so its
eigenvalues are compared exactly (its eigenvectors, JAX's inverse iteration from the
same random vectors, to float32 rounding); `qr_multiply` forms Q where JAX applies LAPACK's
reflectors, so it agrees to float32 rounding."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.scipy.linalg as msl
from minijax import lax as mlax
from minijax.testing import assert_trees_match

A = (np.arange(12.0).reshape(4, 3) ** 1.3 - 3.0).astype(np.float32)
D = np.array([1.0, 2.0, -1.0, 3.0], np.float32)
E = np.array([0.5, -1.0, 0.25], np.float32)
QR_TOL = dict(rtol=2e-5, atol=2e-5)


def _raises_like(minijax_call, jax_call):
    """Both calls raise, minijax with the exception type JAX raises."""
    with pytest.raises(Exception) as expected:
        jax_call()
    with pytest.raises(type(expected.value)):
        minijax_call()


# -- svd(subset_by_index=) -----------------------------------------------------------


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_whole_subset_is_the_svd(full_matrices):
    kw = dict(full_matrices=full_matrices, subset_by_index=(0, 3))
    for wrap in (lambda f: f, minijax.jit):
        got = wrap(lambda a: mnp.linalg.svd(a, **kw))(A)
        assert type(got).__name__ == "SVDResult"
        assert_trees_match(tuple(got), tuple(jax.jit(lambda a: jnp.linalg.svd(a, **kw))(A)),
                           rtol=1e-5, atol=1e-5)
    s = mlax.linalg.svd(A, compute_uv=False, subset_by_index=(0, 3))
    assert_trees_match(s, jax.lax.linalg.svd(A, compute_uv=False, subset_by_index=(0, 3)),
                       rtol=1e-5, atol=1e-5)


def test_svd_whole_subset_gradient_and_vmap():
    def loss(np_):
        return lambda a: np_.linalg.svd(a, full_matrices=False, subset_by_index=(0, 3))[1].sum()
    assert_trees_match(minijax.grad(loss(mnp))(A), jax.grad(loss(jnp))(A), rtol=1e-4,
                       atol=1e-5)
    batch = np.stack([A, 2 * A])
    svals = lambda np_: lambda a: np_.linalg.svd(a, compute_uv=False, subset_by_index=(0, 3))
    assert_trees_match(minijax.vmap(svals(mnp))(batch), jax.vmap(svals(jnp))(batch),
                       rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", [
    dict(subset_by_index=(0, 2)),                          # with full matrices: ValueError
    dict(subset_by_index=(0, 2), full_matrices=False),     # a proper subset: CPU/GPU lack it
    dict(subset_by_index=(1, 3), full_matrices=False, compute_uv=False),
    dict(subset_by_index=[0, 3], full_matrices=False),     # a list is not a static argument
    dict(subset_by_index=(0, 2), hermitian=True),          # eigh has no subsets there either
], ids=["full", "proper", "values", "list", "hermitian"])
def test_svd_subset_errors_are_jaxs(kw):
    square = A[:3] + A[:3].T
    a = square if kw.get("hermitian") else A
    _raises_like(lambda: mnp.linalg.svd(a, **kw), lambda: jnp.linalg.svd(a, **kw))


def test_lax_svd_subset_errors_are_jaxs():
    for kw in (dict(subset_by_index=[0, 3]), dict(subset_by_index=(0, 1), full_matrices=False)):
        _raises_like(lambda: mlax.linalg.svd(A, **kw), lambda: jax.lax.linalg.svd(A, **kw))


# -- eigh_tridiagonal --------------------------------------------------------------------


def test_eigh_tridiagonal_eigenvalues_are_jaxs():
    # each case is its own compiled program (seconds of XLA time each, JAX's as well)
    for (d, e), kw, wrap in (((D, E), dict(), lambda f: f),
                             ((D, E), dict(select="i", select_range=(1, 2)), minijax.jit),
                             ((D.astype(np.float64), E.astype(np.float64)), dict(tol=1e-3),
                              lambda f: f)):
        kw = dict(eigvals_only=True, **kw)
        got = wrap(lambda d, e: msl.eigh_tridiagonal(d, e, **kw))(d, e)
        assert_trees_match(got, jsl.eigh_tridiagonal(d, e, **kw), rtol=0, atol=0)


def test_eigh_tridiagonal_eigenvectors_are_jaxs():
    # inverse iteration from the same PRNG vectors; the all-equal diagonal makes one
    # cluster of four eigenvalues, orthonormalised together (one program for both)
    for d, e in ((D, E), (np.ones(4, np.float32), np.zeros(3, np.float32))):
        assert_trees_match(msl.eigh_tridiagonal(d, e), jsl.eigh_tridiagonal(d, e),
                           rtol=1e-6, atol=1e-6)


def test_eigh_tridiagonal_complex_vmap_and_trivial_sizes():
    c = (E * 1j).astype(np.complex64)
    assert_trees_match(msl.eigh_tridiagonal(D.astype(np.complex64), c, eigvals_only=True),
                       jsl.eigh_tridiagonal(D.astype(np.complex64), c, eigvals_only=True),
                       rtol=0, atol=0)
    batch = np.stack([D, 2 * D])
    f = lambda sl: lambda d: sl.eigh_tridiagonal(d, E, eigvals_only=True)
    assert_trees_match(minijax.vmap(f(msl))(batch), jax.vmap(f(jsl))(batch), rtol=0, atol=0)
    one = D[:1]
    assert_trees_match(msl.eigh_tridiagonal(one, E[:0], eigvals_only=True),
                       jsl.eigh_tridiagonal(one, E[:0], eigvals_only=True))


@pytest.mark.parametrize("args,kw", [
    ((D, E.astype(np.int32)), dict(eigvals_only=True)),
    ((D.astype(np.int32), E.astype(np.int32)), dict(eigvals_only=True)),
    ((D, E), dict(eigvals_only=True, select="i")),
    ((D, E), dict(eigvals_only=True, select="i", select_range=(2, 1))),
    ((D, E), dict(eigvals_only=True, select="v", select_range=(0.0, 1.0))),
    ((D, E), dict(eigvals_only=True, select="x")),
], ids=["dtypes", "int", "no-range", "empty-range", "by-value", "select"])
def test_eigh_tridiagonal_errors_are_jaxs(args, kw):
    _raises_like(lambda: msl.eigh_tridiagonal(*args, **kw),
                 lambda: jsl.eigh_tridiagonal(*args, **kw))


# -- qr_multiply --------------------------------------------------------------------------

C_RIGHT = np.arange(8.0, dtype=np.float32).reshape(2, 4) - 3.0
C_LEFT = C_RIGHT.T[:3, :2]


@pytest.mark.parametrize("a,c,kw", [
    (A, C_RIGHT, dict()),
    (A, C_LEFT, dict(mode="left")),
    (A, C_RIGHT[0], dict()),
    (A[:3].T, C_RIGHT[:, :3], dict(conjugate=True)),
    (A.T, C_RIGHT[:, :3].T, dict(mode="left")),
], ids=["right", "left", "vector", "conjugate", "wide"])
def test_qr_multiply_matches_jax(a, c, kw):
    want = jsl.qr_multiply(a, c, **kw)
    assert_trees_match(msl.qr_multiply(a, c, **kw), want, **QR_TOL)
    assert_trees_match(minijax.jit(lambda a, c: msl.qr_multiply(a, c, **kw))(a, c), want,
                       **QR_TOL)


def test_qr_multiply_gradient_and_vmap():
    # JAX has no derivative for geqrf/ormqr; minijax's goes through qr's rule, so the
    # gradient is checked against the same function written with JAX's qr
    def loss(a):
        return minijax.numpy.sum(msl.qr_multiply(a, C_RIGHT)[0] ** 2 * np.arange(3.0))
    def jax_loss(a):
        q, _ = jnp.linalg.qr(a)
        return jnp.sum((C_RIGHT @ q) ** 2 * np.arange(3.0))
    assert_trees_match(minijax.grad(loss)(A), jax.grad(jax_loss)(A), rtol=1e-4, atol=1e-4)
    with pytest.raises(Exception):
        jax.grad(lambda a: jsl.qr_multiply(a, C_RIGHT)[0].sum())(A)
    batch = np.stack([A, A[::-1]])
    f = lambda sl: lambda a: sl.qr_multiply(a, C_RIGHT)
    assert_trees_match(minijax.vmap(f(msl))(batch), jax.vmap(f(jsl))(batch), **QR_TOL)


@pytest.mark.parametrize("c,kw", [
    (C_RIGHT, dict(mode="middle")),
    (C_RIGHT[:, :3], dict()),
    (C_RIGHT, dict(mode="left")),
], ids=["mode", "right-shape", "left-shape"])
def test_qr_multiply_errors_are_jaxs(c, kw):
    _raises_like(lambda: msl.qr_multiply(A, c, **kw), lambda: jsl.qr_multiply(A, c, **kw))
