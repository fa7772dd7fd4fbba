"""`jnp.linalg.eig`/`eigvals` and `lax.linalg.eig` against JAX's: eigenvalues compared
after sorting, eigenvectors through A v = λ v (and vlᴴ A = λ vlᴴ) and LAPACK's
normalisation, which JAX's are; the jvp of the eigenvalues (and of the eigenvectors
with `enable_eigvec_derivs`), grad, vmap, the errors, the reference evaluator and
importing JAX's equation. JAX lowers eig on the CPU only, so elsewhere these skip."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from minijax.backends.reference import eval_jaxpr as reference_eval
from minijax.testing import assert_trees_match

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu",
                                reason="JAX computes a general eig on the CPU only")

# a complex pair and a real eigenvalue, well separated (eigenvector derivatives exist)
A = np.array([[1., 2., 0.5], [-3., 1., 2.], [0.3, -1., 2.]], np.float32)
BATCH = np.stack([A, A.T * 0.5 + np.eye(3, dtype=np.float32)])
TOL = dict(rtol=2e-5, atol=2e-5)


def _order(w):
    """The permutation sorting eigenvalues by real part, then imaginary part."""
    w = np.asarray(w)
    return np.lexsort((np.round(w.imag, 4), np.round(w.real, 4)), axis=-1)


def _sorted(w, *also):
    """`w` sorted, and each of `also` (per-eigenvalue arrays: vectors along the last
    axis) permuted the same way."""
    order = _order(w)
    return [np.take_along_axis(np.asarray(x), order if np.ndim(x) == np.ndim(w) else
                               np.broadcast_to(order[..., None, :], np.shape(x)), axis=-1)
            for x in (w,) + also]


def _check_vectors(a, w, v, left=False):
    """Columns of `v` are unit eigenvectors with their largest component real (LAPACK's
    normalisation, JAX's): a v = v diag(w), or vᴴ a = diag(w) vᴴ for left ones."""
    a, w, v = np.asarray(a, np.complex128), np.asarray(w), np.asarray(v)
    if left:
        np.testing.assert_allclose(v.conj().swapaxes(-1, -2) @ a,
                                   w[..., :, None] * v.conj().swapaxes(-1, -2), atol=1e-4)
    else:
        np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=1e-5)
    largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    np.testing.assert_allclose(largest.imag, 0.0, atol=1e-5)


def test_eig_and_eigvals_match_jax_eagerly_and_under_jit():
    for wrap in (lambda f: f, minijax.jit):
        w, v = wrap(mnp.linalg.eig)(A)
        assert type(mnp.linalg.eig(A)).__name__ == "EigResult"
        jw, jv = jax.jit(jnp.linalg.eig)(A)
        assert w.dtype == jw.dtype == np.complex64
        assert_trees_match(_sorted(w, v), _sorted(jw, jv), **TOL)
        _check_vectors(A, w, v)
        assert_trees_match(_sorted(wrap(mnp.linalg.eigvals)(BATCH)),
                           _sorted(jnp.linalg.eigvals(BATCH)), **TOL)
    # an integer matrix is promoted as JAX promotes it
    ints = np.array([[2, 1], [1, 3]], np.int32)
    assert_trees_match(_sorted(mnp.linalg.eigvals(ints)), _sorted(jnp.linalg.eigvals(ints)),
                       **TOL)


@pytest.mark.parametrize("left,right", [(True, True), (True, False), (False, True),
                                        (False, False)])
def test_lax_eig_left_and_right_eigenvectors(left, right):
    kw = dict(compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    ours = minijax.jit(lambda a: mlax.linalg.eig(a, **kw))(BATCH)
    theirs = jax.lax.linalg.eig(BATCH, **kw)
    assert len(ours) == len(theirs) == 1 + left + right
    assert_trees_match(_sorted(*ours), _sorted(*theirs), **TOL)
    if left:
        _check_vectors(BATCH, ours[0], ours[1], left=True)
    if right:
        _check_vectors(BATCH, ours[0], ours[-1])


def test_jvp_grad_and_vmap_of_the_eigenvalues_as_jax():
    def run(lib, np_lib):
        def all_of_them(a, batch):          # one compiled program per library
            w, w_dot = lib.jvp(np_lib.linalg.eigvals, (a,), (a.T,))
            loss = lambda a: (np_lib.linalg.eigvals(a).real.sum()            # noqa: E731
                              + (np_lib.linalg.eigvals(a).imag ** 2).sum())
            batched = lib.vmap(lambda m, t: lib.jvp(np_lib.linalg.eigvals, (m,), (t,)))(
                batch, batch * 0.1)
            return (w, w_dot), lib.grad(loss)(a), batched, lib.vmap(
                lib.grad(lambda m: np_lib.linalg.eigvals(m).real.sum()))(batch)
        (w, w_dot), grad, batched, batched_grads = lib.jit(all_of_them)(A, BATCH)
        return _sorted(w, w_dot), grad, _sorted(*batched), batched_grads
    assert_trees_match(run(minijax, mnp), run(jax, jnp), rtol=2e-4, atol=2e-4)


def test_eigenvector_derivatives_need_enable_eigvec_derivs_as_in_jax():
    for lib, np_lib in ((minijax, mnp), (jax, jnp)):
        with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
            lib.jvp(np_lib.linalg.eig, (A,), (A,))

    def run(lib):
        outs, dots = lib.jit(lambda a: lib.jvp(
            lambda m: lib.lax.linalg.eig(m, enable_eigvec_derivs=True), (a,), (a.T,)))(A)
        return _sorted(*outs, *dots)
    assert_trees_match(run(minijax), run(jax), rtol=5e-4, atol=5e-4)


def test_errors_are_jaxs():
    for lib, np_lib in ((minijax, mnp), (jax, jnp)):
        with pytest.raises(ValueError, match="must be a square matrix"):
            np_lib.linalg.eig(np.ones((2, 3), np.float32))
        with pytest.raises(TypeError, match="must have rank at least 2"):
            np_lib.linalg.eigvals(np.ones(3, np.float32))
        with pytest.raises(TypeError, match="eig does not accept dtype int32"):
            lib.lax.linalg.eig(np.ones((2, 2), np.int32))


def test_reference_evaluator_and_importing_jax_eig():
    closed = minijax.make_jaxpr(lambda a: mlax.linalg.eig(a))(BATCH)
    w, vl, vr = reference_eval(closed.jaxpr, closed.consts, BATCH)
    assert w.dtype == vl.dtype == vr.dtype == np.complex64
    assert_trees_match(_sorted(w), _sorted(jnp.linalg.eigvals(BATCH)), check_weak_types=False,
                       **TOL)
    _check_vectors(BATCH, w, vr)
    _check_vectors(BATCH, w, vl, left=True)
    imported = minijax.interop.trace_with_jax(
        lambda a: jax.lax.linalg.eig(a, compute_left_eigenvectors=False)[0] * 2.0)(A)
    assert "eig[" in str(imported)
    assert_trees_match(_sorted(reference_eval(imported.jaxpr, imported.consts, A)[0]),
                       _sorted(jnp.linalg.eigvals(A) * 2.0), check_weak_types=False, **TOL)


def test_roots_as_jax_with_and_without_strip_zeros():
    # one length, so each library compiles few programs (an eig compiles slowly)
    polys = [np.array([1., -6., 11., -6.], np.float32), np.array([0., 1., -3., 2.], np.float32),
             np.zeros(4, np.float32), np.array([0, 0, 1, 2], np.int32)]
    for p in polys:
        keep = lambda lib: lambda q: lib.roots(q, strip_zeros=False)       # noqa: E731
        ours = [mnp.roots(p), minijax.jit(keep(mnp))(p)]
        theirs = [jnp.roots(p), jax.jit(keep(jnp))(p)]
        # sorted: the roots come in LAPACK's order; a leading zero's NaN roots come last
        assert_trees_match([_sorted(r) for r in ours], [_sorted(r) for r in theirs], **TOL)
    assert mnp.roots(np.float32([5.])).shape == (0,)


def test_roots_under_transformations_and_its_errors():
    ps = np.array([[1., -3., 2.], [0., 1., 2.]], np.float32)

    def run(lib, np_lib):
        keep = lambda q: np_lib.roots(q, strip_zeros=False)                 # noqa: E731
        batched, (r, r_dot) = lib.jit(lambda qs: (lib.vmap(keep)(qs),
                                                  lib.jvp(keep, (qs[0],), (qs[1],))))(ps)
        return _sorted(batched), _sorted(r, r_dot)
    assert_trees_match(run(minijax, mnp), run(jax, jnp), **TOL)
    for lib, np_lib in ((minijax, mnp), (jax, jnp)):
        with pytest.raises(TypeError, match="pass strip_zeros=False"):    # concretization
            lib.jit(np_lib.roots)(ps[0])
        with pytest.raises(ValueError, match="Input must be a rank-1 array"):
            np_lib.roots(ps)
