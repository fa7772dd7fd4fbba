"""`jnp.poly` of a square matrix (its characteristic polynomial) against JAX's, which
goes through eigvals: minijax uses the Faddeev-LeVerrier recurrence, exact in exact
arithmetic, so the two agree to a tolerance; dtypes (complex, as JAX's) exactly."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check, rand

SQUARE = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.mark.parametrize("matrix", [
    SQUARE, rand((3, 3)), rand((4, 4), low=-1, high=1), np.array([[2.5]], np.float32),
    np.array([[1, 2], [3, 4]], np.int32),
    (rand((3, 3)) + 1j * rand((3, 3))).astype(np.complex64),
], ids=["2x2", "3x3", "4x4", "1x1", "int", "complex"])
def test_poly_of_square_matrix(matrix):
    check(lambda np_module, a: np_module.poly(a), matrix, rtol=1e-4, atol=1e-4, eager=True)


def test_poly_of_matrix_grad_and_vmap():
    loss = lambda lib: (lambda a: lib.real(lib.poly(a)).sum())
    assert_values_close(minijax.grad(loss(mnp))(SQUARE), jax.jit(jax.grad(loss(jnp)))(SQUARE),
                        rtol=1e-4, atol=1e-4)
    batch = np.stack([SQUARE, SQUARE.T * 2, np.eye(2, dtype=np.float32)])
    assert_values_close(minijax.vmap(mnp.poly)(batch), jax.jit(jax.vmap(jnp.poly))(batch),
                        rtol=1e-4, atol=1e-4)


def test_characteristic_polynomial_is_exact_on_integers():
    # Integer matrices give integer coefficients (up to float32 rounding): det, trace.
    matrix = np.array([[2, 0, 1], [1, 3, 0], [0, 1, 4]], np.float32)
    expected = np.poly(matrix.astype(np.float64))
    np.testing.assert_allclose(np.asarray(minijax.jit(mnp.poly)(matrix)).real, expected,
                               rtol=1e-6)


def test_poly_errors_as_jax():
    for lib in (mnp, jnp):
        with pytest.raises(ValueError):
            lib.poly(np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError):
            lib.poly(np.zeros((0, 0), np.float32))
