"""Derivatives and batching of the LAPACK kernels (`ir/linalg_kernels.py`).

As in JAX, `tridiagonal_solve` is the only one with derivative rules: the others
(tridiagonal and Hessenberg reductions, Householder products, Schur forms, `ormqr`)
raise JAX's NotImplementedError under jvp or grad. All of them map over leading axes,
so vmap moves the batch axes to the front, as for the decompositions.

tridiagonal_solve: differentiating T X = B, with T the tridiagonal matrix of
(dl, d, du), gives T Ẋ = Ḃ − Ṫ X, one more solve with the primal diagonals. The solve
is linear in B; the adjoint of B ↦ T⁻¹ B is C ↦ T⁻ᵀ C, a solve with Tᵀ, whose lower
diagonal is du shifted down one place and whose upper diagonal is dl shifted up.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir import linalg_kernels as K
from ..ir.trace import bind, aval_of
from .ad_util import Zero, add, sub, mul, broadcast_in_dim, instantiate
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules, is_linear, NonLinearError
from .linalg_rules import _leading_batch_rule
from .vmap import vmap_rules


def _shift(x, offset, axis):
    """x moved `offset` places along `axis` (towards the end if positive), zero-filled."""
    aval = aval_of(x)
    n = aval.shape[axis]
    axis = axis % aval.ndim
    start = [0] * aval.ndim
    limit = list(aval.shape)
    if offset > 0:
        limit[axis] = n - offset
    else:
        start[axis] = -offset
    part = bind(P.slice_p, x, start_indices=tuple(start), limit_indices=tuple(limit),
                strides=None)
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (offset, 0, 0) if offset > 0 else (0, -offset, 0)
    return bind(P.pad_p, part, np.zeros((), aval.dtype), padding_config=tuple(config))


def _columns(v, b_aval):
    """A batch of diagonals [..., m] broadcast against the columns of b [..., m, k]."""
    nd = len(b_aval.shape)
    return broadcast_in_dim(v, b_aval.shape, tuple(range(nd - 1)))


def _tridiagonal_product(dl, d, du, x):
    """T x for the tridiagonal T of (dl, d, du): dl[i] x[i-1] + d[i] x[i] + du[i] x[i+1]."""
    aval = aval_of(x)
    y = mul(_columns(d, aval), x)
    y = add(y, mul(_columns(dl, aval), _shift(x, 1, -2)))
    return add(y, mul(_columns(du, aval), _shift(x, -1, -2)))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular=False):
    dl, d, du, b = primals
    *diag_dots, b_dot = tangents
    x = bind(K.tridiagonal_solve_p, dl, d, du, b, perturb_singular=perturb_singular)
    if all(type(t) is Zero for t in diag_dots):
        if type(b_dot) is Zero:
            return JvpResult([x], [b_dot])
        rhs = b_dot
    else:
        product = _tridiagonal_product(*map(instantiate, diag_dots), x)
        rhs = bind(P.neg_p, product) if type(b_dot) is Zero else sub(b_dot, product)
    x_dot = bind(K.tridiagonal_solve_p, dl, d, du, rhs, perturb_singular=perturb_singular)
    return JvpResult([x], [x_dot])


def _tridiagonal_solve_transpose(cts, dl, d, du, b, *, perturb_singular=False):
    ct, = cts
    if any(is_linear(v) for v in (dl, d, du)):
        raise NonLinearError("tridiagonal_solve is only linear in b, not in the diagonals")
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    dl_t, du_t = _shift(du, 1, -1), _shift(dl, -1, -1)
    return [None, None, None, bind(K.tridiagonal_solve_p, dl_t, d, du_t, ct,
                                   perturb_singular=perturb_singular)]


jvp_rules[K.tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose_rules[K.tridiagonal_solve_p] = _tridiagonal_solve_transpose
for _prim in K.kernel_primitives:
    vmap_rules[_prim] = _leading_batch_rule(_prim)
