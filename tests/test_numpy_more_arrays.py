"""jnp array-edit, assorted, polynomial and grid names added in session 5, each
against jax.numpy: insert/delete, block, compress/extract, choose, the functional
writes (place/put/put_along_axis/fill_diagonal), lexsort, partition; vecdot/matvec/
vecmat, cumulative_sum, gradient, vander, windows; the poly* family; mgrid/ogrid/r_/
c_. Values, dtypes and weak types (traced, jit, eager), grad and vmap, and errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check, together, assert_groups_cover
from tests.test_divergences import pins

A = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
V = np.array([3, 1, 2, 1, 5, 0], np.int32)
C = (A + 1j * A[::-1]).astype(np.complex64)
P = np.array([1., -2., 0.5, 3.], np.float32)
Q = np.array([2., 1.], np.float32)
XS = np.linspace(-1, 1, 9).astype(np.float32)
YS = (XS ** 2 * 3 - XS + 0.1 * np.sin(7 * XS)).astype(np.float32)

CASES = {
    "delete": (lambda np_, a: (np_.delete(a, 1), np_.delete(a, np.array([0, 2]), axis=1),
                               np_.delete(a, slice(0, None, 2), axis=0),
                               np_.delete(a, -1, axis=1)), (A,)),
    "insert": (lambda np_, a: (np_.insert(a, 1, 9.), np_.insert(a, 1, np.array([7, 8, 9]), axis=1),
                               np_.insert(a, np.array([0, 2, 2]), np.array([-1., -2, -3]), axis=1),
                               np_.insert(a, 3, 5, axis=0),
                               np_.insert(a, slice(1, 3), 0., axis=1)), (A,)),
    "block": (lambda np_, a: (np_.block([[a, a], [a, a]]), np_.block([a[0], 1.]),
                              np_.block([[a[:, :2]], [a[:, 2:]]]), np_.block(a)), (A,)),
    "shapes": (lambda np_, a: (np_.unstack(a), np_.unstack(a, axis=1), np_.concat([a, a], axis=1),
                               np_.rollaxis(a[None], 2), np_.rollaxis(a[None], 0, 3),
                               np_.dsplit(a.reshape(1, 3, 4), 2), np_.diagflat(a[:2, :2], -1),
                               np_.resize(a, (5, 3)), np_.resize(a, 3)), (A,)),
    # (a boolean diagonal stays boolean: minijax's off-diagonal Python 0 made it int32)
    "diag of bool and int8": (lambda np_, a: (np_.diag(a > 1), np_.diag(a > 1, 2),
                                              np_.diagflat(a > 1, -1),
                                              np_.diag(a.astype(np.int8), -1)), (A[0],)),
    "compress, extract": (lambda np_, a, c: (np_.compress(c, a, axis=1, size=3),
                                             np_.compress(c[:3], a, axis=0, size=3,
                                                          fill_value=-1.),
                                             np_.extract(a > 1.5, a, size=8)),
                          (A, np.array([True, False, True, True]))),
    "choose": (lambda np_, i, x: (np_.choose(i, [x, -x, x * 2], mode="wrap"),
                                  np_.choose(i, [x, 1.], mode="clip")),
               (V[:4], np.arange(4, dtype=np.float32))),
    "place, put": (lambda np_, a: (np_.place(a, a > 2, np.array([-1., -2.]), inplace=False),
                                   np_.put(a, np.array([0, 5, 20]), np.array([9., 8.]),
                                           inplace=False),
                                   np_.put(a, np.array([-1, 13]), 1., mode="clip", inplace=False),
                                   np_.put(a, np.array([-1, 13]), 1., mode="wrap",
                                           inplace=False)), (A,)),
    "put_along_axis, fill_diagonal": (lambda np_, a: (
        np_.put_along_axis(a, np.array([[1], [0], [3]]), -5., axis=1, inplace=False),
        np_.put_along_axis(a, np.array([[2, 0, 1, 2]]), np.array([[7., 8, 9, 10]]), axis=0,
                           inplace=False),
        np_.fill_diagonal(a, 0., inplace=False),
        np_.fill_diagonal(a, np.array([1., 2.]), inplace=False)), (A,)),
    "orderings": (lambda np_, v: (np_.lexsort((v, v % 2)), np_.lexsort([v.reshape(2, 3)], axis=0),
                                  np_.partition(v, 2), np_.argpartition(v, 2),
                                  np_.partition(v.reshape(2, 3), 1, axis=0),
                                  np_.argpartition(v.reshape(2, 3).astype(np.float32), -1)),
                  (V,)),
    "products": (lambda np_, a, c: (np_.vecdot(a, a), np_.vecdot(a, a[0]), np_.vecdot(a, a, axis=0),
                                    np_.vecdot(c, c), np_.matvec(a, a[0]), np_.matvec(a[None], a),
                                    np_.vecmat(a[:, 0], a), np_.vecmat(c[:, 0], c)), (A, C)),
    "cumulative": (lambda np_, a, v: (np_.cumulative_sum(a, axis=1),
                                      np_.cumulative_sum(v, include_initial=True),
                                      np_.cumulative_prod(a, axis=0, include_initial=True),
                                      np_.cumulative_sum(v.astype(np.int8)),
                                      np_.cumulative_prod(v, dtype=np.float32)), (A, V)),
    "tests": (lambda np_, a, c: (np_.array_equiv(a, a[0]), np_.array_equiv(a[0], np.arange(4) / 3),
                                 np_.iscomplex(c), np_.isreal(c), np_.iscomplex(a), np_.isreal(a),
                                 np_.iscomplex(1.0)), (A, C)),
    "gradient": (lambda np_, a: (np_.gradient(a), np_.gradient(a[0]), np_.gradient(a, 2.0, axis=1),
                                 np_.gradient(a, np.array([0., 1., 3.], np.float32),
                                              np.array([0., .5, 1., 3.], np.float32)),
                                 np_.gradient(a, axis=(0,))), (A,)),
    "vander": (lambda np_, x: (np_.vander(x), np_.vander(x, 2), np_.vander(x, increasing=True),
                               np_.vander(np.array([1, 2, 3], np.int32))), (A[0],)),
    "windows": (lambda np_: (np_.hamming(7), np_.hanning(6), np_.blackman(5), np_.bartlett(6),
                             np_.bartlett(1), np_.hamming(0), np_.bartlett(5)), ()),
    "mask_indices": (lambda np_: np_.mask_indices(3, np_.tril, size=8), ()),
    "packbits": (lambda np_, b: (np_.packbits(b), np_.packbits(b, axis=1),
                                 np_.packbits(b > 0, axis=0, bitorder="little"),
                                 np_.packbits(b, axis=-1, bitorder="little")),
                 (np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1, 0, 0, 1],
                            [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]], np.int32),)),
    "unpackbits": (lambda np_, u: (np_.unpackbits(u), np_.unpackbits(u, axis=1),
                                   np_.unpackbits(u, axis=0, bitorder="little"),
                                   np_.unpackbits(u, axis=1, count=5),
                                   np_.unpackbits(u, count=50)),
                   (np.array([[3, 255, 128], [0, 17, 64]], np.uint8),)),
    "polynomial arithmetic": (lambda np_, p, q: (
        np_.polyadd(p, q), np_.polyadd(q, p), np_.polysub(p, q), np_.polysub(q, p),
        np_.polymul(p, q), np_.polydiv(p, q), np_.polydiv(q, p)), (P, Q)),
    "polynomial calculus": (lambda np_, p: (
        np_.polyder(p), np_.polyder(p, 2), np_.polyder(p, 0), np_.polyint(p),
        np_.polyint(p, 2, k=np.array([1., 2.], np.float32)), np_.polyint(p, k=3.),
        np_.poly(p[:3])), (P,)),
    "integer polynomials": (lambda np_: (
        np_.polyadd(np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)),
        np_.polymul(np.array([1, 2], np.int32), np.array([3, 4], np.int32)),
        np_.polyder(np.array([1, 2, 3], np.int32)), np_.poly(np.array([1, 2], np.int32))), ()),
    "polyfit": (lambda np_, x, y: (np_.polyfit(x, y, 2), np_.polyfit(x, np_.stack([y, y * 2], 1), 3),
                                   np_.polyfit(x, y, 2, w=x * x + 1), np_.polyfit(x, y, 2, full=True),
                                   np_.polyfit(x, y, 1, cov=True),
                                   np_.polyfit(x, y, 2, cov="unscaled"),
                                   np_.polyfit(x, np_.stack([y, -y], 1), 1, cov=True)), (XS, YS)),
    "mgrid, ogrid": (lambda np_: (np_.mgrid[0:3, 0:4], np_.mgrid[0:1:5j], np_.mgrid[-1:1:3j, 0:4:2],
                                  np_.mgrid[2:5], tuple(np_.ogrid[0:3, 0:4:2]),
                                  np_.ogrid[0:2:3j]), ()),
    "r_": (lambda np_, a: (np_.r_[a[0], 0, a[1]], np_.r_[0:3, a[0]], np_.r_["-1", a, a],
                           np_.r_["0,2", a[0], a[1]], np_.r_["0,2,0", a[0], a[1]],
                           np_.r_["r", a[0], 1.], np_.r_["c", a[0], 2], np_.r_[-1:1:4j]), (A,)),
    "c_": (lambda np_, a: (np_.c_[a[0], a[1]], np_.c_[a, a], np_.c_[0:3, a[0, :3]]), (A,)),
}


# The cases in groups, each checked as one case: one program per library for the group
# (every result still compared on its own); the polynomial fits, with their looser
# tolerance, form a group of their own
GROUPS = {
    "edits": ["delete", "insert", "block", "shapes", "diag of bool and int8",
              "compress, extract", "choose"],
    "writes, orderings": ["place, put", "put_along_axis, fill_diagonal", "orderings"],
    "products, calculus": ["products", "cumulative", "tests", "gradient", "vander"],
    "windows, bits, grids": ["windows", "mask_indices", "packbits", "unpackbits",
                             "mgrid, ogrid", "r_", "c_"],
    "polynomials": ["polynomial arithmetic", "polynomial calculus", "integer polynomials",
                    "polyfit"],
}


def test_groups_hold_every_case_once():
    assert_groups_cover(GROUPS, CASES)


@pytest.mark.parametrize("group", list(GROUPS))
def test_matches_jax(group):
    fn, args = together([CASES[name] for name in GROUPS[group]])
    tolerance = 2e-4 if group == "polynomials" else 1e-5
    check(fn, *args, eager=True, rtol=tolerance, atol=tolerance)


def test_eager_only_forms_match_jax():
    assert_values_close(mnp.mask_indices(3, mnp.triu, 1), jnp.mask_indices(3, jnp.triu, 1))
    assert_values_close(mnp.compress(np.array([1, 0, 1]), A, axis=0),
                        jnp.compress(np.array([1, 0, 1]), A, axis=0))
    assert_values_close(mnp.extract(A > 1.5, A), jnp.extract(A > 1.5, A))
    assert_values_close(mnp.choose(np.array([0, 1, 0]), [A[0, :3], A[1, :3]]),
                        jnp.choose(np.array([0, 1, 0]), [A[0, :3], A[1, :3]]))
    assert mnp.einsum_path("ij,jk,kl->il", A, A.T, A)[0] == \
        jnp.einsum_path("ij,jk,kl->il", A, A.T, A)[0]


@pytest.mark.parametrize("value", [1.0, np.float32(1), np.array(1.), jnp.array(1.), [1], "a",
                                   np.ones(2), jnp.ones(2)], ids=repr)
def test_isscalar_as_jax(value):
    assert mnp.isscalar(value) == jnp.isscalar(value)


def test_predicates_and_aliases():
    assert not mnp.isrealobj(C) and mnp.isrealobj(A) and mnp.iterable([1])
    for name in ("single", "double", "csingle", "cdouble"):
        assert np.dtype(getattr(mnp, name)) == np.dtype(getattr(jnp, name))
    for name in ("character", "flexible", "object_"):  # NumPy's abstract types, as in JAX
        assert getattr(mnp, name) is getattr(jnp, name)
    with mnp.printoptions(precision=2):
        assert mnp.get_printoptions()["precision"] == 2


def test_load_returns_an_array(tmp_path):
    path = tmp_path / "a.npy"
    mnp.save(path, A)
    loaded = mnp.load(path)
    assert isinstance(loaded, jax.Array)
    assert_values_close(loaded, jnp.load(path))


GRAD_CASES = {
    "insert": lambda np_, a: np_.insert(a, 1, a[0] * 2, axis=0),
    "delete": lambda np_, a: np_.delete(a, 2, axis=1),
    "block": lambda np_, a: np_.block([[a, a * 2]]),
    "put_along_axis": lambda np_, a: np_.put_along_axis(a, np.array([[1], [0], [3]]), 0.,
                                                        axis=1, inplace=False),
    "partition": lambda np_, a: np_.partition(a, 1, axis=1),
    "vecdot": lambda np_, a: np_.vecdot(a, np_.sin(a)),
    "gradient": lambda np_, a: np_.gradient(a * a, axis=1),
    "polyfit": lambda np_, a: np_.polyfit(np.arange(4, dtype=np.float32), a.T, 1),
    "polymul": lambda np_, a: np_.polymul(a[0], a[1]),
    "compress": lambda np_, a: np_.compress(np.array([True, False, True, True]), a, axis=1,
                                            size=3),
}


GRAD_BATCH = np.stack([A, A * 2 + 1])


@pytest.fixture(scope="module")
def jax_grads_and_vmaps():
    """JAX's gradient and vmap of every GRAD_CASES function, all in one jax.jit program
    (the comparisons have a tolerance): one compile for the file's oracle, not two per
    case."""
    def every_case(a, batch):
        return {name: (jax.grad(lambda x: jnp.sum(fn(jnp, x) ** 2))(a),
                       jax.vmap(lambda x: fn(jnp, x))(batch))
                for name, fn in GRAD_CASES.items()}
    return jax.jit(every_case)(A, GRAD_BATCH)


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_and_vmap(name, jax_grads_and_vmaps):
    fn = GRAD_CASES[name]
    grad, batched = jax_grads_and_vmaps[name]
    assert_values_close(minijax.grad(lambda a: mnp.sum(fn(mnp, a) ** 2))(A), grad,
                        rtol=1e-4, atol=1e-4)
    assert_values_close(minijax.vmap(lambda a: fn(mnp, a))(GRAD_BATCH), batched,
                        rtol=1e-4, atol=1e-4)


@pins("array_equiv_raises_for_unbroadcastable_shapes")
def test_array_equiv_divergence():
    """Registered: "array_equiv_raises_for_unbroadcastable_shapes"."""
    with pytest.raises(TypeError):
        jnp.array_equiv(A, A[:2])
    assert not bool(mnp.array_equiv(A, A[:2]))


def test_errors_as_jax():
    for lib in (mnp, jnp):
        with pytest.raises(TypeError):
            lib.delete(A, [0, 1])  # lists are refused, as by JAX
        with pytest.raises(ValueError):
            lib.put(A, np.array([0]), 1., inplace=True)
        with pytest.raises(NotImplementedError):
            lib.fill_diagonal(A, 0.)
        with pytest.raises(ValueError):
            lib.place(A, A > 1, 0., inplace=True)
        with pytest.raises(ValueError):
            lib.compress(np.array([True]), A, axis=0, size=5)
        with pytest.raises(TypeError):
            lib.lexsort([])
        with pytest.raises(ValueError):
            lib.polyder(P, -1)
        with pytest.raises(TypeError):
            lib.polyfit(A, A, 1)
        with pytest.raises(ValueError):
            lib.cumulative_sum(A)
        with pytest.raises(ValueError):
            lib.vecdot(A, A.T)
        with pytest.raises(ValueError):
            lib.gradient(A[:1], axis=0)
        with pytest.raises(ValueError):
            lib.r_["bogus", A]
        with pytest.raises(TypeError):
            lib.packbits(A)
        with pytest.raises(TypeError):
            lib.unpackbits(V)
    with pytest.raises(ValueError, match="3 or more"):
        mnp.dsplit(A, 2)  # NumPy's error (JAX's is an IndexError from its shape lookup)
