"""The derivative of `eig` (a general real matrix's eigenvalues and eigenvectors).

vmap is the linear-algebra primitives' one (`linalg_rules.py`: the batch axis first).
The jvp is JAX's (`jax.lax.linalg.eig_jvp_rule`), written without a complex solve
(minijax's LU and triangular solve are real): for a = vr diag(w) vr^-1, the rows of
vr^-1 are the left eigenvectors, vr^-1 = diag(d)^-1 vl^H with d = diag(vl^H vr). So
with P = vr^-1 ȧ vr = (vl^H ȧ vr) / d[:, None]:

* ẇ = diag(P), the eigenvalue derivative (eq. 4.60 of arXiv:1701.00392);
* eigenvectors only with `enable_eigvec_derivs=True`, as in JAX (else JAX's
  NotImplementedError): v̇r = vr (F ∘ P) + vr diag(c), F[i, j] = 1 / (w[j] - w[i]) off
  the diagonal, and c fixing LAPACK's normalisation (unit 2-norm, largest component
  real); the left ones are the same for aᴴ, whose eigenvalues are conj(w) and whose
  right eigenvectors are vl.

Every step is linear in ȧ, so transposition gives `grad` (of a real function of the
eigenvalues, as JAX's does).
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir import linalg_primitives as L
from ..ir.complex_primitives import real_p, imag_p, conj_p, complex_p
from ..ir.trace import bind, aval_of
from .ad_util import Zero, tangent_aval, add, sub, mul, div, neg, eq, convert, iota, reduce_sum
from .jvp import jvp_rules, JvpResult
from .linalg_rules import _mm, _mT, _eye, _rows, _columns


def _conj(x):
    return bind(conj_p, x)


def _column_sums(x):
    """[..., n, k] -> [..., k]: the sum down each column."""
    return reduce_sum(x, (aval_of(x).ndim - 2,))


def _vector_jvp(w, v, p_mat):
    """JAX's `_eig_vec_jvp` for eigenvalues `w`, unit eigenvectors `v` (columns) and
    P = v^-1 ȧ v: the tangent of v under LAPACK's normalisation."""
    shape, dtype = aval_of(v).shape, aval_of(v).dtype
    n = shape[-1]
    eye = _eye(shape, dtype)
    f_mat = sub(bind(P.integer_pow_p, sub(add(eye, _rows(w, n)), _columns(w, n)), y=-1), eye)
    u = _mm(v, mul(f_mat, p_mat))
    magnitude = bind(P.abs_p, v)
    largest = bind(P.argmax_p, magnitude, axes=(len(shape) - 2,), index_dtype=np.dtype(np.int32))
    mask = convert(eq(iota(np.int32, shape, len(shape) - 2), _rows(largest, n)), dtype)
    c = bind(complex_p, neg(bind(real_p, _column_sums(mul(_conj(v), u)))),
             div(neg(bind(imag_p, _column_sums(mul(mask, u)))),
                 bind(real_p, _column_sums(mul(mask, v)))))
    return add(u, mul(v, _rows(c, n)))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors=True,
             compute_right_eigenvectors=True, enable_eigvec_derivs=False):
    a, = primals
    a_dot, = tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to "
            "opt in. See https://github.com/jax-ml/jax/issues/2748 for discussion.")
    w, vl, vr = bind(L.eig_p, a, compute_left_eigenvectors=True,
                     compute_right_eigenvectors=True,
                     enable_eigvec_derivs=bool(enable_eigvec_derivs))
    outs = ([w] + [vl] * bool(compute_left_eigenvectors)
            + [vr] * bool(compute_right_eigenvectors))
    if type(a_dot) is Zero:
        return JvpResult(outs, [Zero(tangent_aval(aval_of(x))) for x in outs])
    n = aval_of(w).shape[-1]
    a_dot = convert(a_dot, aval_of(vr).dtype)
    d = _column_sums(mul(_conj(vl), vr))             # diag(vl^H vr)
    p_right = div(_mm(_mT(_conj(vl)), _mm(a_dot, vr)), _columns(d, n))
    w_dot = _column_sums(mul(_eye(aval_of(vr).shape, aval_of(vr).dtype), p_right))
    tangents_out = [w_dot]
    if compute_left_eigenvectors:
        # aᴴ = vl diag(conj w) vl^-1, vl^-1 = diag(conj d)^-1 vr^H
        p_left = div(_mm(_mT(_conj(vr)), _mm(_mT(a_dot), vl)), _columns(_conj(d), n))
        tangents_out.append(_vector_jvp(_conj(w), vl, p_left))
    if compute_right_eigenvectors:
        tangents_out.append(_vector_jvp(w, vr, p_right))
    return JvpResult(outs, tangents_out)


jvp_rules[L.eig_p] = _eig_jvp
