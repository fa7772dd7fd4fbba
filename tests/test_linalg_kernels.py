"""The rest of `lax.linalg` against JAX's on the same inputs: `tridiagonal`,
`tridiagonal_solve`, `householder_product`, `hessenberg`, `schur`, `ormqr` (LAPACK
kernels lowered to JAX's functions, so equal bit for bit eagerly and under jit) and
`symmetric_product`, `cholesky_update` (JAX's compositions, written again). Also:
tridiagonal_solve's jvp, transpose and vmap as JAX's, JAX's errors, the reference
rules (SciPy's LAPACK wrappers) against the lowering, the text form and importing
JAX's equations. JAX lowers hessenberg and schur on the CPU only."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax import lax as mlax
from minijax.backends import xla
from minijax.backends.reference import eval_jaxpr as reference_eval
from minijax.backends.reference import reference_rules
from minijax.ir import linalg_kernels as K
from minijax.ir import dumps, loads
from minijax.testing import assert_trees_match

KERNEL_PRIMITIVES = frozenset(p.name for p in K.kernel_primitives)
ON_CPU = jax.default_backend() == "cpu"
cpu_only = pytest.mark.skipif(not ON_CPU, reason="JAX lowers hessenberg/schur on the CPU only")

S = np.array([[4., 1, 2, .5], [1, 3, 0, 1], [2, 0, 5, 1], [.5, 1, 1, 2]], np.float32)
G = np.array([[1., 2, .5, 3], [-3, 1, 2, 0], [.3, -1, 2, 1], [1, 1, -2, .5]], np.float32)
DL = np.array([0., 1, 2, 1], np.float32)
D = np.array([4., 5, 6, 7], np.float32)
DU = np.array([1., 1, .5, 0], np.float32)
B = np.arange(8.0, dtype=np.float32).reshape(4, 2) - 3.0
EXACT = dict(rtol=0, atol=0)


def _reflectors():
    """A packed QR (LAPACK's geqrf) of G: JAX's `qr(mode='raw')` gives its transpose."""
    h, taus = jnp.linalg.qr(G, mode="raw")
    return np.asarray(h).T, np.asarray(taus)


H, TAUS = _reflectors()

CASES = {
    "tridiagonal": (lambda L: L.tridiagonal(S), True),
    "tridiagonal_upper": (lambda L: L.tridiagonal(S, lower=False), True),
    "tridiagonal_solve": (lambda L: L.tridiagonal_solve(DL, D, DU, B), True),
    "householder_product": (lambda L: L.householder_product(H, TAUS), True),
    "householder_product_thin": (lambda L: L.householder_product(H[:, :3], TAUS[:2]), True),
    "ormqr": (lambda L: L.ormqr(H, TAUS, B), True),
    "ormqr_right_transposed": (lambda L: L.ormqr(H, TAUS, B.T, left=False, transpose=True),
                               True),
    "hessenberg": (lambda L: L.hessenberg(G), ON_CPU),
    "schur": (lambda L: L.schur(G), ON_CPU),
    "schur_values_only": (lambda L: L.schur(G, compute_schur_vectors=False), ON_CPU),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_match_jax_eagerly_and_under_jit(name):
    fn, runs_here = CASES[name]
    if not runs_here:
        pytest.skip("JAX lowers it on the CPU only")
    want = fn(jax.lax.linalg)
    assert_trees_match(fn(mlax.linalg), want, **EXACT)
    assert_trees_match(minijax.jit(lambda: fn(mlax.linalg))(), want, **EXACT)


def test_compositions_match_jax():
    r = np.asarray(jnp.linalg.cholesky(S)).T
    for kw in (dict(), dict(alpha=2.0, beta=0.5, symmetrize_output=True)):
        f = lambda L, a, c: np.asarray(L.symmetric_product(a, c, **kw))
        ours, want = f(mlax.linalg, G[:, :3], S), f(jax.lax.linalg, G[:, :3], S)
        if not ON_CPU and not kw:
            # JAX's GPU kernel (cuBLAS's syrk) writes the lower triangle only and leaves
            # c's upper one; the result is defined below the diagonal (JAX's docstring).
            ours, want = np.tril(ours), np.tril(want)
        assert_trees_match(ours, want, **(EXACT if ON_CPU else dict(rtol=1e-6, atol=1e-6)))
    want = jax.lax.linalg.cholesky_update(r, G[0])
    assert_trees_match(mlax.linalg.cholesky_update(r, G[0]), want, rtol=1e-6, atol=1e-6)
    assert_trees_match(minijax.jit(mlax.linalg.cholesky_update)(r, G[0]), want,
                       rtol=1e-6, atol=1e-6)
    # a zero update leaves r as it is (the y == 0 rotation)
    assert_trees_match(mlax.linalg.cholesky_update(r, 0 * G[0]),
                       jax.lax.linalg.cholesky_update(r, 0 * G[0]), rtol=1e-6, atol=1e-6)


def test_vmap_as_jax():
    batch = np.stack([G, G.T + np.eye(4, dtype=np.float32)])
    for fn in ([lambda L, a: L.tridiagonal(a + a.T)]
               + ([lambda L, a: L.schur(a), lambda L, a: L.hessenberg(a)] if ON_CPU else [])):
        assert_trees_match(minijax.vmap(lambda a: fn(mlax.linalg, a))(batch),
                           jax.vmap(lambda a: fn(jax.lax.linalg, a))(batch), **EXACT)
    ds, bs = np.stack([D, D + 1]), np.stack([B, -B])
    for axes, args in (((None, 0, None, 0), (DL, ds, DU, bs)), ((None, 0, None, None), (DL, ds, DU, B)),
                       ((None, None, None, 1), (DL, D, DU, np.stack([B, 2 * B], 1)))):
        assert_trees_match(minijax.vmap(mlax.linalg.tridiagonal_solve, axes)(*args),
                           jax.vmap(jax.lax.linalg.tridiagonal_solve, axes)(*args),
                           rtol=1e-6, atol=1e-6)


def test_tridiagonal_solve_derivatives_as_jax():
    def loss(L):
        return lambda dl, d, du, b: (L.tridiagonal_solve(dl, d, du, b) ** 2).sum()
    args = (DL, D, DU, B)
    assert_trees_match(minijax.grad(loss(mlax.linalg), (0, 1, 2, 3))(*args),
                       jax.grad(loss(jax.lax.linalg), (0, 1, 2, 3))(*args),
                       rtol=1e-5, atol=1e-6)
    tangents = (DL * 0.5, D * -0.25, DU, B * 0.1)
    got = minijax.jvp(mlax.linalg.tridiagonal_solve, args, tangents)
    want = jax.jvp(jax.lax.linalg.tridiagonal_solve, args, tangents)
    assert_trees_match(got, want, rtol=1e-5, atol=1e-6)
    # linear in b alone: reverse mode transposes the solve (JAX's Tᵀ solve)
    f = lambda L: lambda b: L.tridiagonal_solve(DL, D, DU, b)
    ct = np.ones_like(B)
    assert_trees_match(minijax.vjp(f(mlax.linalg), B)[1](ct), jax.vjp(f(jax.lax.linalg), B)[1](ct),
                       rtol=1e-6, atol=1e-6)
    assert "transpose" not in str(minijax.make_jaxpr(minijax.grad(
        lambda b: f(mlax.linalg)(b).sum()))(B))


def test_the_other_kernels_have_no_derivative_as_in_jax():
    for L in (mlax.linalg, jax.lax.linalg):
        grad = minijax.grad if L is mlax.linalg else jax.grad
        with pytest.raises(NotImplementedError):
            grad(lambda h: L.householder_product(h, TAUS).sum())(H)


ERRORS = [
    lambda L: L.tridiagonal(S[:3]),
    lambda L: L.tridiagonal(S.astype(np.int32)),
    lambda L: L.tridiagonal_solve(DL[:3], D, DU, B),
    lambda L: L.tridiagonal_solve(DL, D, DU, B[:3]),
    lambda L: L.tridiagonal_solve(DL, D, DU, B[:, 0]),
    lambda L: L.householder_product(H[:3], TAUS),
    lambda L: L.householder_product(H[:, :2], TAUS),
    lambda L: L.ormqr(H, TAUS, B[:3]),
    lambda L: L.ormqr(H, TAUS, B, left=False),
    lambda L: L.hessenberg(G[:3]),
    lambda L: L.schur(G[:3]),
    lambda L: L.schur(G[0]),
    lambda L: L.schur(G, sort_eig_vals=True),
    lambda L: L.symmetric_product(G[:3], S),
    lambda L: L.cholesky_update(S, G[0, :3]),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jaxs(index):
    with pytest.raises(Exception) as expected:
        ERRORS[index](jax.lax.linalg)
    with pytest.raises(type(expected.value)):
        ERRORS[index](mlax.linalg)


REFERENCE_CASES = [
    (K.tridiagonal_p, (S,), dict(lower=True)),
    (K.tridiagonal_p, (np.stack([S, 2 * S]),), dict(lower=False)),
    (K.tridiagonal_solve_p, (DL, D, DU, B), dict(perturb_singular=False)),
    (K.householder_product_p, (H, TAUS), {}),
    (K.ormqr_p, (H, TAUS, B), dict(left=True, transpose=True)),
    (K.ormqr_p, (H, TAUS, B.T), dict(left=False, transpose=False)),
] + ([(K.hessenberg_p, (G,), {}), (K.schur_p, (G,), dict(compute_schur_vectors=True))]
     if ON_CPU else [])


@pytest.mark.parametrize("index", range(len(REFERENCE_CASES)))
def test_reference_rules_match_the_lowering(index):
    prim, args, params = REFERENCE_CASES[index]
    got = reference_rules[prim](*args, **params)
    want = jax.jit(lambda *a: xla.lowering_rules[prim](*a, **params))(*args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_text_form_and_importing_jax():
    def program(s, g, b):
        outs = list(mlax.linalg.tridiagonal(s, lower=False))
        outs.append(mlax.linalg.tridiagonal_solve(DL, D, DU, b, perturb_singular=True))
        outs.append(mlax.linalg.householder_product(g, TAUS))
        outs.append(mlax.linalg.ormqr(g, TAUS, b, left=True, transpose=True))
        outs += mlax.linalg.hessenberg(g) + mlax.linalg.schur(g, compute_schur_vectors=False)
        return outs
    text = dumps(minijax.make_jaxpr(program)(S, H, B))
    for name in KERNEL_PRIMITIVES:
        assert f" = {name}" in text
    assert dumps(loads(text)) == text
    if not ON_CPU:
        return
    imported = minijax.interop.trace_with_jax(
        lambda a, b: [jax.lax.linalg.schur(a)[0], jax.lax.linalg.tridiagonal_solve(DL, D, DU, b)])(G, B)
    assert "schur[" in str(imported) and "tridiagonal_solve[" in str(imported)
    assert_trees_match(reference_eval(imported.jaxpr, imported.consts, G, B),
                       [jax.lax.linalg.schur(G)[0], jax.lax.linalg.tridiagonal_solve(DL, D, DU, B)],
                       check_weak_types=False, rtol=2e-5, atol=2e-5)


# -- scipy.linalg on the kernels: hessenberg, schur, sqrtm (CPU only, as JAX) -----------------

SCIPY_CASES = {
    "hessenberg": lambda sl, a: sl.hessenberg(a),
    "hessenberg_q": lambda sl, a: sl.hessenberg(a, calc_q=True),
    "schur": lambda sl, a: sl.schur(a),
    "schur_complex": lambda sl, a: sl.schur(a, output="complex"),
    "sqrtm": lambda sl, a: sl.sqrtm(a),
}


@cpu_only
@pytest.mark.parametrize("name", sorted(SCIPY_CASES))
def test_scipy_schur_family_matches_jax(name):
    import jax.scipy.linalg as jsl
    import minijax.scipy.linalg as msl
    fn = SCIPY_CASES[name]
    want = fn(jsl, G)
    assert_trees_match(fn(msl, G), want, **EXACT)
    assert_trees_match(minijax.jit(lambda a: fn(msl, a))(G), want, **EXACT)


@cpu_only
def test_scipy_schur_family_vmap_and_errors():
    import jax.scipy.linalg as jsl
    import minijax.scipy.linalg as msl
    batch = np.stack([G, S])
    f = lambda sl: lambda a: sl.hessenberg(a, calc_q=True)
    assert_trees_match(minijax.vmap(f(msl))(batch), jax.vmap(f(jsl))(batch), **EXACT)
    for bad in (lambda sl: sl.schur(G, output="upper"), lambda sl: sl.hessenberg(G[:3]),
                lambda sl: sl.sqrtm(G, blocksize=2)):
        with pytest.raises(Exception) as expected:
            bad(jsl)
        with pytest.raises(type(expected.value)):
            bad(msl)


@cpu_only
def test_solve_sylvester_matches_jax():
    import jax.scipy.linalg as jsl
    import minijax.scipy.linalg as msl
    a, b, c = G, S[:3, :3], np.arange(12.0, dtype=np.float32).reshape(4, 3)
    assert_trees_match(msl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c),
                       rtol=1e-6, atol=1e-6)
    loss = lambda sl: lambda c: sl.solve_sylvester(a, b, c).sum()
    assert_trees_match(minijax.grad(loss(msl))(c), jax.grad(loss(jsl))(c), rtol=1e-5,
                       atol=1e-6)
    for bad in (lambda sl: sl.solve_sylvester(a, b, c.T),
                lambda sl: sl.solve_sylvester(a, b, c, method="qz")):
        with pytest.raises(Exception) as expected:
            bad(jsl)
        with pytest.raises(type(expected.value)):
            bad(msl)
    # JAX's method='eigen' solves with complex eigenvector matrices, which minijax's
    # linear algebra does not take
    with pytest.raises(NotImplementedError, match="eigen"):
        msl.solve_sylvester(a, b, c, method="eigen")


@cpu_only
def test_rsf2csf_and_funm_match_jax():
    """The closed-form eigenvalue of each 2x2 block (JAX asks `eig`) gives JAX's
    complex Schur form, and Parlett's recurrence by whole superdiagonals JAX's func(A),
    to rounding."""
    import jax.scipy.linalg as jsl
    import minijax.scipy.linalg as msl
    t, z = jsl.schur(G)
    assert np.abs(np.diagonal(np.asarray(t), -1)).max() > 0.1     # a complex pair
    close = dict(rtol=2e-5, atol=2e-5)
    assert_trees_match(msl.rsf2csf(t, z), jsl.rsf2csf(t, z), **close)
    assert_trees_match(minijax.jit(msl.rsf2csf)(t, z), jsl.rsf2csf(t, z), **close)
    batch = (np.stack([t, np.asarray(jsl.schur(S)[0])]), np.stack([z, z]))
    assert_trees_match(msl.rsf2csf(*batch), jsl.rsf2csf(*batch), **close)
    c = (G + 1j * S).astype(np.complex64)
    assert_trees_match(msl.rsf2csf(*jsl.schur(c)), jsl.rsf2csf(*jsl.schur(c)), **close)
    for a, f in ((G, "exp"), (G, "sin"), (S, "sqrt"), (c, "exp")):
        want = jsl.funm(a, getattr(jnp, f))
        mine = lambda a: msl.funm(a, getattr(minijax.numpy, f))  # noqa: E731
        assert_trees_match(mine(a), want, rtol=1e-4, atol=1e-4)
        assert_trees_match(minijax.jit(mine)(a), want, rtol=1e-4, atol=1e-4)
    assert_trees_match(msl.funm(G, minijax.numpy.exp, disp=False),
                       jsl.funm(G, jnp.exp, disp=False), rtol=1e-4, atol=1e-4)
    assert_trees_match(msl.funm(G, minijax.numpy.exp), jsl.expm(G).astype(np.complex64),
                       rtol=1e-4, atol=1e-4)
    for bad in (lambda sl: sl.rsf2csf(G[:3], G), lambda sl: sl.rsf2csf(G, G[:3, :3]),
                lambda sl: sl.rsf2csf(G[0], G), lambda sl: sl.funm(G[:3], jnp.exp)):
        with pytest.raises(ValueError) as expected:
            bad(jsl)
        with pytest.raises(ValueError, match=re.escape(str(expected.value)[:20])):
            bad(msl)


def test_qdwh_matches_jax():
    # one program (the QR and Cholesky steps, the Halley loop, the masks of a padded
    # matrix): each compile takes seconds, JAX's too. An eager call is a compiled one.
    padded = np.pad(G[:3, :2], ((0, 1), (0, 1)))
    assert_trees_match(mlax.linalg.qdwh(padded, dynamic_shape=(3, 2)),
                       jax.lax.linalg.qdwh(padded, dynamic_shape=(3, 2)),
                       rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError):
        jax.lax.linalg.qdwh(G[:2])
    with pytest.raises(ValueError):
        mlax.linalg.qdwh(G[:2])
