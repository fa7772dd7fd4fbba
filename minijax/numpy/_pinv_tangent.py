"""The derivative of the Moore-Penrose pseudo-inverse, for `linalg.pinv`'s custom JVP.

`pinv` computes P = A⁺ from the thin SVD with small singular values cut off. Its
derivative is not taken through the SVD (that would differentiate the singular
vectors of the dropped values too) but from the closed form for the pseudo-inverse
itself (Golub & Pereyra, 1973), valid where the rank is locally constant:

    dP = -P dA P + P Pᴴ dAᴴ (I - A P) + (I - P A) dAᴴ Pᴴ P

so the singular values the cutoff dropped stay dropped, as in JAX's `pinv`.
"""
from __future__ import annotations

import numpy as np

from . import _ufuncs as U
from ._complex import conjugate
from ._linalg import matmul
from ._promotion import shape_of, dtype_of
from ._shape import matrix_transpose


def _adjoint(x):
    return conjugate(matrix_transpose(x))


def _hermitian_part(x):
    return U.divide(U.add(x, _adjoint(x)), np.asarray(2, dtype_of(x)))


def pseudo_inverse_tangent(a, a_dot, p, hermitian: bool):
    """dP for A [..., m, n] moving along a_dot, given P = pinv(A). The products are
    grouped so that no intermediate is larger than n x m (tall A) or m x m (wide A)."""
    if hermitian:       # the hermitian SVD reads only the hermitian part of A
        a, a_dot = _hermitian_part(a), _hermitian_part(a_dot)
    m, n = shape_of(a)[-2:]
    a_dot_h, p_h = _adjoint(a_dot), _adjoint(p)
    if m >= n:
        left = matmul(matmul(p, p_h), a_dot_h)           # P Pᴴ dAᴴ
        right = matmul(matmul(a_dot_h, p_h), p)          # dAᴴ Pᴴ P
        terms = [U.negative(matmul(matmul(p, a_dot), p)), left,
                 U.negative(matmul(matmul(left, a), p)), right,
                 U.negative(matmul(matmul(p, a), right))]
    else:
        left = matmul(p, matmul(p_h, a_dot_h))
        right = matmul(a_dot_h, matmul(p_h, p))
        terms = [U.negative(matmul(p, matmul(a_dot, p))), left,
                 U.negative(matmul(left, matmul(a, p))), right,
                 U.negative(matmul(p, matmul(a, right)))]
    p_dot = terms[0]
    for term in terms[1:]:
        p_dot = U.add(p_dot, term)
    return p_dot
