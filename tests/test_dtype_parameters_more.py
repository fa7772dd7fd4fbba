"""The `dtype` parameters of `jnp.argsort`, `jnp.cov`, `jnp.corrcoef`,
`jnp.ravel_multi_index` and `lax.mul(out_dtype=)`, against JAX (0.10.2, 0.11.2 and
0.12.0.1 have them all, and agree on every case here).

Each case runs eagerly in both libraries and must agree exactly: the value, its dtype
and weak type, or the exception's type. A few run under `jit`, `grad` and `vmap`.
Arrays, tracers and other non-dtypes given as these parameters are swept in
`test_dtype_arguments.py` with every other dtype parameter.
"""
import numpy as np
import pytest

import minijax
from tests.library_helpers import assert_same_outcome

# (Both libraries warn that argsort's int64 is int32 with x64 off; the warning itself
# is tested in test_dtype_arguments.py.)
pytestmark = pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")

X = np.array([3., 1., 2., 1.], np.float32)
M = np.array([[1., 2., 4.], [1., 3., 2.]], np.float32)
MI = M.astype(np.int32)
I8 = np.array([100, 3], np.int8)
F16 = np.array([1.5, 2.], np.float16)
C64 = np.array([1 + 2j, 3], np.complex64)
AW, FW = np.array([1., 2., 1.], np.float32), np.array([1, 2, 1])
ROWS, COLS = np.array([0, 1]), np.array([2, 1])

CASES = {
    # argsort: any dtype iota takes; descending ties as JAX orders them
    "argsort int8": lambda L: L.numpy.argsort(X, dtype=np.int8),
    "argsort uint8 descending": lambda L: L.numpy.argsort(X, descending=True,
                                                          dtype=np.uint8),
    "argsort unstable descending": lambda L: L.numpy.argsort(
        X, stable=False, descending=True, dtype=np.int16),
    "argsort int64 is int32": lambda L: L.numpy.argsort(X, dtype=np.int64),
    "argsort bool": lambda L: L.numpy.argsort(X, dtype=bool),
    # cov / corrcoef: inexact dtypes only; weights converted, aweights' term not
    "cov float16": lambda L: L.numpy.cov(M, dtype=np.float16),
    "cov complex64": lambda L: L.numpy.cov(M, dtype=np.complex64),
    "cov int32 refused": lambda L: L.numpy.cov(M, dtype=np.int32),
    "cov fweights": lambda L: L.numpy.cov(M, fweights=FW, dtype=np.float16),
    "cov aweights widen": lambda L: L.numpy.cov(M, aweights=AW, dtype=np.float16),
    "cov both weights": lambda L: L.numpy.cov(M, fweights=FW, aweights=AW,
                                              dtype=np.float16),
    "corrcoef float16": lambda L: L.numpy.corrcoef(M, dtype=np.float16),
    "corrcoef int32 refused": lambda L: L.numpy.corrcoef(M, dtype=np.int32),
    # ravel_multi_index: integer dtypes wide enough; by default the indices' own
    "ravel int8": lambda L: L.numpy.ravel_multi_index((ROWS, COLS), (2, 3), dtype=np.int8),
    "ravel float32 refused": lambda L: L.numpy.ravel_multi_index((ROWS, COLS), (2, 3),
                                                                 dtype=np.float32),
    "ravel int8 too narrow": lambda L: L.numpy.ravel_multi_index((ROWS, COLS), (20, 30),
                                                                 dtype=np.int8),
    "ravel of int8 indices": lambda L: L.numpy.ravel_multi_index(
        (ROWS.astype(np.int8), COLS.astype(np.int8)), (2, 3)),
    "ravel of int8 indices too narrow": lambda L: L.numpy.ravel_multi_index(
        (ROWS.astype(np.int8), COLS.astype(np.int8)), (20, 30)),
    # lax.mul: operands of any numeric dtypes, converted; weak only if both are
    "mul int8 in int32": lambda L: L.lax.mul(I8, I8, out_dtype=np.int32),
    "mul float16 by float32": lambda L: L.lax.mul(F16, F16.astype(np.float32),
                                                  out_dtype=np.float32),
    "mul scalars, weak": lambda L: L.lax.mul(2.0, 3, out_dtype=np.float32),
    "mul by a scalar, strong": lambda L: L.lax.mul(F16, 2, out_dtype=np.int32),
    "mul complex to real": lambda L: L.lax.mul(C64, C64, out_dtype=np.float32),
    "mul to bool": lambda L: L.lax.mul(I8, np.array([0, 2], np.int8), out_dtype=bool),
    "mul of bools refused": lambda L: L.lax.mul(I8 > 3, I8 > 3, out_dtype=np.int32),
    "mul None": lambda L: L.lax.mul(I8, I8, out_dtype=None),
    "mul float64 is float32": lambda L: L.lax.mul(F16, F16, out_dtype=np.float64),
}


@pytest.mark.parametrize("name", CASES)
def test_dtype_parameter_as_in_jax(name):
    assert_same_outcome(CASES[name])


def test_dtype_parameters_under_jit():
    assert_same_outcome(lambda L: L.jit(lambda x, m, i: (
        L.numpy.argsort(x, dtype=np.int16), L.numpy.corrcoef(m, dtype=np.float16),
        L.numpy.ravel_multi_index((i, i), (2, 3), mode="wrap", dtype=np.int16),
        L.lax.mul(i, i, out_dtype=np.float32)))(X, M, ROWS))


def test_dtype_parameters_under_grad_and_vmap():
    # lax.mul's derivative comes back in each operand's own dtype
    assert_same_outcome(lambda L: L.grad(lambda a, b: L.lax.mul(a, b, out_dtype=np.float16).sum(),
                            (0, 1))(F16.astype(np.float32), F16))
    assert_same_outcome(lambda L: L.vmap(lambda v: (L.numpy.argsort(v, dtype=np.int8),
                                       L.lax.mul(v, v, out_dtype=np.float16)))(M))
