"""Derivatives and batching of `real`, `imag`, `conj` and `complex`.

All four are linear over the reals, so each JVP applies the primitive to the tangent,
and each transpose applies the adjoint map, with JAX's convention that a complex
cotangent pairs with a tangent through the real inner product Re(ct · t):

    real:     t ↦ Re t          ct ↦ ct + 0i
    imag:     t ↦ Im t          ct ↦ 0 − ct·i
    conj:     t ↦ conj t        ct ↦ conj ct
    complex:  (tx, ty) ↦ tx + i ty     ct ↦ (Re ct, −Im ct)

Batching is elementwise: `real`, `imag` and `conj` keep the batch axis where it is;
`complex` brings its two operands to one layout like any binary op.
"""
from __future__ import annotations

import numpy as np

from ..ir import complex_primitives as C
from ..ir.trace import bind, aval_of
from .ad_util import Zero, tangent_aval, instantiate, neg, sum_to_shape
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules, is_linear
from .vmap import vmap_rules, _unary_rule, _nary_rule


def _linear_jvp(prim):
    def rule(primals, tangents):
        out = bind(prim, *primals)
        if all(type(t) is Zero for t in tangents):
            return JvpResult([out], [Zero(tangent_aval(aval_of(out)))])
        return JvpResult([out], [bind(prim, *[instantiate(t) for t in tangents])])
    return rule


for _prim in C.complex_primitives:
    jvp_rules[_prim] = _linear_jvp(_prim)


def _real_zero_like(ct):
    return np.zeros((), aval_of(ct).dtype)


def _real_transpose(cts, x):
    ct, = cts
    return [bind(C.complex_p, ct, _real_zero_like(ct))]


def _imag_transpose(cts, x):
    ct, = cts
    return [bind(C.complex_p, _real_zero_like(ct), neg(ct))]


def _conj_transpose(cts, x):
    ct, = cts
    return [bind(C.conj_p, ct)]


def _complex_transpose(cts, x, y):
    ct, = cts
    # a rank-0 operand was splat across the result: its cotangent sums
    return [sum_to_shape(bind(C.real_p, ct), x.aval.shape) if is_linear(x) else None,
            sum_to_shape(neg(bind(C.imag_p, ct)), y.aval.shape) if is_linear(y) else None]


transpose_rules[C.real_p] = _real_transpose
transpose_rules[C.imag_p] = _imag_transpose
transpose_rules[C.conj_p] = _conj_transpose
transpose_rules[C.complex_p] = _complex_transpose

for _prim in (C.real_p, C.imag_p, C.conj_p):
    vmap_rules[_prim] = _unary_rule(_prim)
vmap_rules[C.complex_p] = _nary_rule(C.complex_p)
