"""The special-matrix constructors of `minijax.scipy.linalg` against JAX's: those
built from vectors eagerly and under jit, with their gradients and vmapped over a
batch (they take leading axes as JAX's do); those built from a size eagerly and under
jit; and the errors JAX raises for bad sizes and kinds. Also `polar` and
`expm_frechet`, the same ways."""
from __future__ import annotations

import jax
import jax.scipy.linalg  # noqa: F401
import numpy as np
import pytest

import minijax
import minijax.scipy.linalg  # noqa: F401
from minijax.testing import assert_trees_match
from tests.devices import ON_CPU
from tests.library_helpers import assert_raises_as_jax, check_everywhere

rng = np.random.default_rng(15)
C = rng.normal(size=(2, 4)).astype(np.float32)   # a batch of two vectors of length 4
R = rng.normal(size=(2, 3)).astype(np.float32)


def _from_vectors(mod, c, r):
    sl = mod.scipy.linalg
    return (sl.toeplitz(c, r), sl.hankel(c), sl.circulant(c), sl.companion(c),
            sl.leslie(c, r), sl.fiedler(c), sl.fiedler_companion(c),
            sl.convolution_matrix(c, 3, "same"))


def test_constructors_from_vectors():
    check_everywhere(_from_vectors, C, R, argnums=(0, 1), rtol=1e-5, atol=1e-6)


def test_complex_and_integer_vectors():
    def fn(mod, c):
        sl = mod.scipy.linalg
        z = c + 1j * c[..., ::-1]
        return (sl.toeplitz(z), sl.hankel(z, c[..., :2]), sl.convolution_matrix(c, 5),
                sl.convolution_matrix(c, 6, "valid"),
                sl.toeplitz(np.arange(3), np.arange(5.0)), sl.companion(np.arange(1, 5)),
                sl.fiedler(np.arange(4)))
    check_everywhere(fn, C, grad=False, rtol=1e-6)


def _from_sizes(mod):
    sl = mod.scipy.linalg
    return (sl.dft(5), sl.dft(4, "sqrtn"), sl.dft(3, scale="n", dtype=np.complex64),
            sl.hadamard(8), sl.hadamard(4, np.float32), sl.helmert(5),
            sl.helmert(4, full=True), sl.hilbert(4), sl.invhilbert(5),
            *(sl.pascal(5, kind) for kind in (None, "lower", "upper")),
            *(sl.invpascal(5, kind) for kind in (None, "lower", "upper")))


def test_constructors_from_sizes():
    theirs = jax.jit(lambda: _from_sizes(jax))()
    # JAX computes the integer-valued pascal/invpascal/invhilbert entries through
    # lgamma (up to some 40 ulps off, 50 on a GPU); minijax's are exact, so the
    # comparison allows that
    rtol = 5e-6 if ON_CPU else 2e-5
    assert_trees_match(_from_sizes(minijax), theirs, rtol=rtol, atol=1e-6, what="eager")
    assert_trees_match(minijax.jit(lambda: _from_sizes(minijax))(), theirs, rtol=rtol,
                       atol=1e-6, what="jit")
    np.testing.assert_array_equal(np.asarray(minijax.scipy.linalg.invhilbert(4)),
                                  [[16, -120, 240, -140], [-120, 1200, -2700, 1680],
                                   [240, -2700, 6480, -4200], [-140, 1680, -4200, 2800]])


TALL = rng.normal(size=(2, 4, 3)).astype(np.float32)   # a batch of two 4x3 matrices
SQUARE = rng.normal(size=(2, 3, 3)).astype(np.float32)


def test_polar():
    # JAX differentiates only the 'svd' method (its 'qdwh' loop has no reverse mode)
    def svd(mod, a):
        return (mod.scipy.linalg.polar(a, method="svd"),
                mod.scipy.linalg.polar(a, "left", method="svd"))
    check_everywhere(svd, TALL, rtol=1e-4, atol=1e-5)

    def qdwh(mod, a):
        wide = mod.numpy.matrix_transpose(a)
        return mod.scipy.linalg.polar(a), mod.scipy.linalg.polar(wide, side="left")
    check_everywhere(qdwh, TALL, grad=False, rtol=1e-4, atol=1e-5)


def test_expm_frechet():
    # expm's programs are large (one Pade branch per degree): the batch is compared
    # eagerly against JAX's jit, without grad/vmap (expm's own tests differentiate
    # and batch it; this is its jvp)
    def fn(mod, a, e):
        sl = mod.scipy.linalg
        return sl.expm_frechet(a, e), sl.expm_frechet(a, e, compute_expm=False)
    theirs = jax.jit(lambda a, e: fn(jax, a, e))(SQUARE, SQUARE[::-1])
    assert_trees_match(fn(minijax, SQUARE, SQUARE[::-1]), theirs, rtol=1e-4, atol=1e-5,
                       what="eager")


ERRORS = {
    "polar_vector": lambda sl: sl.polar(C[0]),
    "polar_side": lambda sl: sl.polar(TALL, side="top"),
    "polar_method": lambda sl: sl.polar(TALL, method="newton"),
    "polar_qdwh_shape": lambda sl: sl.polar(TALL, side="left"),
    "expm_frechet_a": lambda sl: sl.expm_frechet(TALL[0], SQUARE[0]),
    "expm_frechet_e": lambda sl: sl.expm_frechet(SQUARE[0], TALL[0]),
    "expm_frechet_shapes": lambda sl: sl.expm_frechet(SQUARE, SQUARE[0]),
    "hankel_scalar_c": lambda sl: sl.hankel(1.0),
    "hankel_scalar_r": lambda sl: sl.hankel(C[0], 1.0),
    "companion_short": lambda sl: sl.companion(C[:, :1]),
    "leslie_short": lambda sl: sl.leslie(C[0, :1], R[0, :0]),
    "leslie_lengths": lambda sl: sl.leslie(C[0], R[0, :2]),
    "fiedler_companion_empty": lambda sl: sl.fiedler_companion(C[:, :0]),
    "convolution_matrix_n": lambda sl: sl.convolution_matrix(C[0], 0),
    "convolution_matrix_mode": lambda sl: sl.convolution_matrix(C[0], 3, "circular"),
    "convolution_matrix_scalar": lambda sl: sl.convolution_matrix(C[0, 0], 3),
    "dft_scale": lambda sl: sl.dft(3, "sqrt"),
    "dft_dtype": lambda sl: sl.dft(3, dtype=np.float32),
    "hadamard_n": lambda sl: sl.hadamard(6),
    "helmert_n": lambda sl: sl.helmert(0),
    "pascal_kind": lambda sl: sl.pascal(3, "diagonal"),
    "invpascal_kind": lambda sl: sl.invpascal(3, "diagonal"),
    "toeplitz_list": lambda sl: sl.toeplitz([1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jaxs(name):
    # (for a list, JAX's message names its argument check)
    assert_raises_as_jax(lambda mod: ERRORS[name](mod.scipy.linalg),
                         same_message=name != "toeplitz_list")
