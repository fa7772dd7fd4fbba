"""Derivatives and batching of the linear-algebra primitives.

Read `jvp.py`, `transpose.py` and `vmap.py` first for the three rule signatures.
Every JVP rule below is written as in `jvp_rules.py`: the output tangent is a
*linear* function of the input tangent (matrix products with primal factors,
triangular solves with a primal matrix, masks), so `linearize` keeps the primal
factors as residuals and `transpose.py` runs the tangent program backwards; reverse
mode needs no rule of its own. `triangular_solve` is the one primitive that is
itself linear (in `b`) and so gets a transpose rule.

Notation: for matrices, `A @ B` is the (batched) product, `Aᵀ` swaps the last two
axes, `Ȧ` is the tangent of `A`, `tril`/`triu` keep a triangle, `∘` multiplies
elementwise. Batching is the easiest part: every primitive already maps over
leading axes, so vmap moves the batch axis to the front and binds again.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir import linalg_primitives as L
from ..ir.matmul_precision import default_precision
from ..ir.trace import bind, aval_of
from .ad_util import (Zero, tangent_aval, zeros, add, sub, mul, div, neg, eq, convert,
                      broadcast_in_dim, transpose, iota)
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules, is_linear, NonLinearError
from .vmap import Batched, vmap_rules, batch_at


# -- small matrix helpers (primitives bound directly, as in ad_util) -------------------------

def _mm(a, b, precision=None):
    """Batched matrix product over equal leading axes: [..., m, k] @ [..., k, n]; with
    no `precision`, the thread's `jax_default_matmul_precision`, as JAX's rules get."""
    nd = aval_of(a).ndim
    batch = tuple(range(nd - 2))
    return bind(P.dot_general_p, a, b, dimension_numbers=(((nd - 1,), (nd - 2,)),
                                                         (batch, batch)),
                precision=default_precision() if precision is None else precision,
                preferred_element_type=None)


def _mm_highest(a, b):
    """`_mm` at full float32 precision, which JAX's cholesky, eigh, triangular_solve,
    lu and svd rules ask for (on a GPU the default would be TensorFloat-32); its qr
    rule takes the default, as `_mm` does."""
    return _mm(a, b, precision=("HIGHEST", "HIGHEST"))


def _mT(x):
    nd = aval_of(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _band_mask(shape, lowest, highest):
    """A bool mask: True where lowest <= column - row <= highest (None: unbounded)."""
    nd = len(shape)
    offset = sub(iota(np.int32, shape, nd - 1), iota(np.int32, shape, nd - 2))
    keep = None
    if lowest is not None:
        keep = bind(P.ge_p, offset, np.int32(lowest))
    if highest is not None:
        upper = bind(P.le_p, offset, np.int32(highest))
        keep = upper if keep is None else bind(P.and_p, keep, upper)
    return keep


def _keep_band(x, lowest, highest):
    """`x` where the band mask holds, else 0. A select against zeros, as JAX's `_tril`/
    `_triu` are: a non-finite entry outside the band becomes 0 (a product with a 0/1
    mask would make it NaN), and a checkpoint saves JAX's residuals for it (the bool
    mask and the zeros)."""
    aval = aval_of(x)
    return bind(P.select_n_p, _band_mask(aval.shape, lowest, highest), zeros(aval), x)


def _tril(x, k=0):
    return _keep_band(x, None, k)


def _triu(x, k=0):
    return _keep_band(x, k, None)


def _eye(shape, dtype):
    """Identity matrices of `shape` [..., n, n] (or the top-left of a rectangle)."""
    return convert(_band_mask(shape, 0, 0), dtype)


def _diagonal(x):
    """[..., m, n] -> [..., min(m, n)] (linear in x): one gather at the index pairs
    (i, i), as JAX's `x[..., i, i]` is, so a checkpoint saves JAX's i32 index."""
    shape = aval_of(x).shape
    nb = len(shape) - 2
    k = min(shape[-2:])
    column = broadcast_in_dim(iota(np.int32, (k,), 0), (k, 1), (0,))
    pairs = bind(P.concatenate_p, column, column, dimension=1)
    return bind(P.gather_p, x, pairs, offset_dims=tuple(range(nb)),
                collapsed_slice_dims=(nb, nb + 1), start_index_map=(nb, nb + 1),
                slice_sizes=shape[:-2] + (1, 1), mode="clip")


def _rows(v, n):
    """v[..., k] -> [..., n, k] with v along each row (v[..., None, :])."""
    aval = aval_of(v)
    nd = aval.ndim
    return broadcast_in_dim(v, aval.shape[:-1] + (n, aval.shape[-1]),
                            tuple(range(nd - 1)) + (nd,))


def _columns(v, n):
    """v[..., k] -> [..., k, n] with v down each column (v[..., :, None])."""
    aval = aval_of(v)
    nd = aval.ndim
    return broadcast_in_dim(v, aval.shape + (n,), tuple(range(nd)))


def _slice_last2(x, rows, cols):
    shape = aval_of(x).shape
    return bind(P.slice_p, x, start_indices=(0,) * len(shape),
                limit_indices=shape[:-2] + (rows, cols), strides=None)


def _pad_last2(x, rows, cols):
    """Zero-pad the trailing matrix axes at the end up to (rows, cols)."""
    aval = aval_of(x)
    config = ((0, 0, 0),) * (aval.ndim - 2) + ((0, rows - aval.shape[-2], 0),
                                               (0, cols - aval.shape[-1], 0))
    return bind(P.pad_p, x, np.zeros((), aval.dtype), padding_config=config)


def _solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
           unit_diagonal=False):
    """A triangular solve with every param spelled out, so equal solves print equal."""
    return bind(L.triangular_solve_p, a, b, left_side=left_side, lower=lower,
                transpose_a=transpose_a, conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


def _zero_like(x):
    return Zero(tangent_aval(aval_of(x)))


# -- cholesky --------------------------------------------------------------------------------

def _cholesky_jvp(primals, tangents):
    """A = L Lᵀ, so Ȧ = L̇ Lᵀ + L L̇ᵀ and L⁻¹ Ȧ L⁻ᵀ = L⁻¹L̇ + (L⁻¹L̇)ᵀ. L⁻¹L̇ is lower
    triangular, so it is the lower triangle of that symmetric matrix with its diagonal
    halved: L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ), Φ(X) = tril(X) / (1 + I) (Murray 2016). Both inverses
    are triangular solves with L, linear in Ȧ. The product's strict upper triangle is
    zero; like JAX (whose `cholesky` takes the lower triangle of its primitive's result,
    and so of the tangent), the rule selects the lower triangle, which keeps it zero
    when a non-finite entry meets a zero in the product.

    The primitive reads only the lower triangle of `a`, so Ȧ is taken from the lower
    triangle of the tangent too, mirrored: tril(Ȧ) + tril(Ȧ, -1)ᵀ, as JAX's rule does
    since 0.11 (before, JAX's also read the upper triangle, which the value ignores)."""
    a, = primals
    a_dot, = tangents
    chol = bind(L.cholesky_p, a)
    if type(a_dot) is Zero:
        return JvpResult([chol], [_zero_like(chol)])
    a_dot = add(_tril(a_dot), _mT(_tril(a_dot, -1)))
    right = _solve(chol, a_dot, left_side=False, lower=True, transpose_a=True)  # Ȧ L⁻ᵀ
    inner = _solve(chol, right, left_side=True, lower=True)                     # L⁻¹ Ȧ L⁻ᵀ
    aval = aval_of(a)
    halving = add(np.ones((), aval.dtype), _eye(aval.shape, aval.dtype))        # 1 + I
    return JvpResult([chol], [_tril(_mm_highest(chol, div(_tril(inner), halving)))])


# -- triangular_solve ------------------------------------------------------------------------

def _triangle_of(a, lower, unit_diagonal):
    """The part of `a` the solve reads (the diagonal too unless it is taken as ones)."""
    k = 1 if unit_diagonal else 0
    return _tril(a, -k) if lower else _triu(a, k)


def _triangular_solve_jvp(primals, tangents, **params):
    """X = op(A)⁻¹ B (left side) or B op(A)⁻¹ (right side), op(A) = A or Aᵀ.
    Differentiating op(A) X = B: Ẋ = op(A)⁻¹ (Ḃ − op(Ȧ) X); on the right side
    Ẋ = (Ḃ − X op(Ȧ)) op(A)⁻¹. Only the triangle of Ȧ the solve reads counts."""
    a, b = primals
    a_dot, b_dot = tangents
    x = _solve(a, b, **params)
    out = _zero_like(x) if type(b_dot) is Zero else _solve(a, b_dot, **params)
    if type(a_dot) is not Zero:
        g = neg(_triangle_of(a_dot, params.get("lower", False),
                             params.get("unit_diagonal", False)))
        g = _mT(g) if params.get("transpose_a", False) else g
        m, n = aval_of(b).shape[-2:]
        # Solve and multiply in the cheaper order (JAX's choice, so rounding matches):
        # A⁻¹ (Ȧ X) when X is tall, (A⁻¹ Ȧ) X when wide; likewise on the right side.
        mm = _mm_highest
        if params.get("left_side", False):
            term = _solve(a, mm(g, x), **params) if m > n else mm(_solve(a, g, **params), x)
        else:
            term = _solve(a, mm(x, g), **params) if m < n else mm(x, _solve(a, g, **params))
        out = term if type(out) is Zero else add(out, term)
    return JvpResult([x], [out])


def _triangular_solve_transpose(cts, a, b, *, transpose_a=False, **params):
    """The map B ↦ op(A)⁻¹ B has adjoint C ↦ op(A)⁻ᵀ C, i.e. the same solve with
    `transpose_a` flipped (and likewise C ↦ C op(A)⁻ᵀ on the right side)."""
    ct, = cts
    if is_linear(a):
        raise NonLinearError("triangular_solve is only linear in b, not in the matrix a")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, _solve(a, ct, transpose_a=not transpose_a, **params)]


# -- lu --------------------------------------------------------------------------------------

def _lu_factors(packed, m, n):
    """Unpack LU's result into square factors l [m, m] (unit lower) and u [n, n]
    (upper; padded with an identity block when m < n), so that P A = l[:, :k] u[:k]."""
    aval = aval_of(packed)
    k = min(m, n)
    lower = _tril(_slice_last2(packed, m, k), -1)
    l_mat = add(_pad_last2(lower, m, m), _eye(aval.shape[:-2] + (m, m), aval.dtype))
    upper = _triu(_slice_last2(packed, k, n))
    u_mat = _pad_last2(upper, n, n)
    if n > k:
        # wide A: an identity block under U's k rows makes u square and invertible; with
        # it the trailing columns of the tangent come out as L⁻¹ P Ȧ₂ − (L⁻¹ L̇) U₂, the
        # derivative of U₂ = L⁻¹ P A₂
        block = sub(_eye(aval.shape[:-2] + (n, n), aval.dtype),
                    _pad_last2(_eye(aval.shape[:-2] + (k, k), aval.dtype), n, n))
        u_mat = add(u_mat, block)
    return l_mat, u_mat


def _permute_rows(x, permutation):
    """x[..., permutation, :]: row i of each matrix is row permutation[i] (one gather;
    for a single matrix its index is JAX's, the permutation as an [m, 1] column)."""
    shape = aval_of(x).shape
    nb = len(shape) - 2
    index_shape = shape[:-1] + (1,)
    columns = [broadcast_in_dim(iota(np.int32, shape[:-1], axis), index_shape,
                                tuple(range(nb + 1))) for axis in range(nb)]
    columns.append(broadcast_in_dim(permutation, index_shape, tuple(range(nb + 1))))
    indices = columns[0] if nb == 0 else bind(P.concatenate_p, *columns, dimension=nb + 1)
    return bind(P.gather_p, x, indices, offset_dims=(nb + 1,),
                collapsed_slice_dims=tuple(range(nb + 1)), start_index_map=tuple(range(nb + 1)),
                slice_sizes=(1,) * (nb + 1) + (shape[-1],), mode="clip")


def _lu_jvp(primals, tangents):
    """P A = L U with L unit lower and U upper triangular. Then P Ȧ = L̇ U + L U̇, so
    L⁻¹ P Ȧ U⁻¹ = L⁻¹L̇ + U̇U⁻¹: a strictly lower plus an upper triangular matrix.
    Splitting it, L̇ = L tril(L⁻¹ P Ȧ U⁻¹, −1) and U̇ = triu(L⁻¹ P Ȧ U⁻¹) U; the packed
    result's tangent is their sum. Pivots and permutation are integers: zero tangent.
    P Ȧ gathers Ȧ's rows (JAX's `a_dot[permutation]`), linear in Ȧ."""
    a, = primals
    a_dot, = tangents
    packed, pivots, permutation = bind(L.lu_p, a)
    int_zeros = [_zero_like(pivots), _zero_like(permutation)]
    if type(a_dot) is Zero:
        return JvpResult([packed, pivots, permutation], [_zero_like(packed)] + int_zeros)
    m, n = aval_of(a).shape[-2:]
    l_mat, u_mat = _lu_factors(packed, m, n)
    la = _solve(l_mat, _permute_rows(a_dot, permutation), left_side=True, lower=True,
                unit_diagonal=True)
    lau = _solve(u_mat, la, left_side=False, lower=False)
    packed_dot = add(_mm_highest(l_mat, _tril(lau, -1)), _mm_highest(_triu(lau), u_mat))
    return JvpResult([packed, pivots, permutation], [packed_dot] + int_zeros)


# -- eigh ------------------------------------------------------------------------------------

def _eigh_jvp(primals, tangents, **params):
    """A = V diag(w) Vᵀ with Vᵀ V = I. With S = Vᵀ Ȧ V: ẇ = diag(S), and
    V̇ = V (F ∘ S) where F[i, j] = 1 / (w[j] − w[i]) off the diagonal and 0 on it
    (the eigenvectors rotate towards each other in proportion to the coupling over
    the eigenvalue gap; equal eigenvalues make this infinite, as in JAX)."""
    a, = primals
    a_dot, = tangents
    v, w = bind(L.eigh_p, a, **params)
    if type(a_dot) is Zero:
        return JvpResult([v, w], [_zero_like(v), _zero_like(w)])
    n = aval_of(w).shape[-1]
    eye = _eye(aval_of(v).shape, aval_of(v).dtype)
    # (I + w[j]) − w[i], then its reciprocal: JAX's order of operations, so the
    # rotations round as JAX's do
    gaps = sub(add(eye, _rows(w, n)), _columns(w, n))
    f_mat = sub(bind(P.integer_pow_p, gaps, y=-1), eye)
    s = _mm_highest(_mm_highest(_mT(v), a_dot), v)
    # S is weak where A is; JAX's F ∘ S promotes it to F's strong type with a convert
    # whose transpose hands the cotangent back weak, so grad of a weak A is weak
    coupled = mul(f_mat, convert(s, aval_of(s).dtype) if aval_of(s).weak_type else s)
    return JvpResult([v, w], [_mm_highest(v, coupled), _diagonal(s)])


# -- svd -------------------------------------------------------------------------------------

def _svd_jvp(primals, tangents, *, full_matrices=True, compute_uv=True):
    """A = U diag(s) Vᵀ (thin). With S = Uᵀ Ȧ V: ṡ = diag(S). With F[i, j] =
    1 / (s[j]² − s[i]²) off the diagonal, the rotations of the singular vectors are
    U̇ = U (F ∘ (S diag(s) + diag(s) Sᵀ)) and V̇ = V (F ∘ (diag(s) S + Sᵀ diag(s)));
    when A is not square the part of Ȧ outside span(U) (or span(V)) adds
    (I − U Uᵀ) Ȧ V / s to U̇ (or (I − V Vᵀ) Ȧᵀ U / s to V̇). Full matrices of a
    non-square A have arbitrary extra columns, with no derivative (as in JAX)."""
    a, = primals
    a_dot, = tangents
    m, n = aval_of(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"svd: the derivative of full_matrices=True for a non-square {m}x{n} matrix is "
            f"not defined (the extra singular vectors are arbitrary); use "
            f"full_matrices=False")
    outs = bind(L.svd_p, a, full_matrices=False, compute_uv=True)
    s, u, vt = outs
    primal_out = outs if compute_uv else [s]
    if type(a_dot) is Zero:
        return JvpResult(primal_out, [_zero_like(x) for x in primal_out])
    v, ut = _mT(vt), _mT(u)
    dS = _mm_highest(_mm_highest(ut, a_dot), v)
    ds = _diagonal(dS)
    if not compute_uv:
        return JvpResult([s], [ds])
    k = aval_of(s).shape[-1]
    dtype = aval_of(s).dtype
    s_rows, s_cols = _rows(s, k), _columns(s, k)
    eye = _eye(aval_of(s_rows).shape, dtype)
    diffs = mul(add(s_rows, s_cols), sub(s_rows, s_cols))
    f_mat = sub(div(np.ones((), dtype), add(diffs, eye)), eye)
    s_zero = convert(eq(s, np.zeros((), dtype)), dtype)
    s_inv = sub(div(np.ones((), dtype), add(s, s_zero)), s_zero)
    dS_s, s_dS = mul(s_rows, dS), mul(s_cols, dS)
    skew = mul(mul(sub(dS, _mT(dS)), np.asarray(0.5, dtype)), mul(eye, _rows(s_inv, k)))
    du = _mm_highest(u, add(mul(f_mat, add(dS_s, _mT(dS_s))), skew))
    dv = _mm_highest(v, mul(f_mat, add(s_dS, _mT(s_dS))))
    if m > n:
        a_dot_v = _mm_highest(a_dot, v)
        du = add(du, div(sub(a_dot_v, _mm_highest(u, _mm_highest(ut, a_dot_v))), _rows(s, m)))
    if n > m:
        a_dot_t_u = _mm_highest(_mT(a_dot), u)
        dv = add(dv, div(sub(a_dot_t_u, _mm_highest(v, _mm_highest(vt, a_dot_t_u))), _rows(s, n)))
    return JvpResult([s, u, vt], [ds, du, _mT(dv)])


# -- qr --------------------------------------------------------------------------------------

def _thin_qr_tangents(q, r, a_dot):
    """A = Q R with m ≥ n (Q thin). With C = Qᵀ Ȧ R⁻¹, Qᵀ Q̇ = Ω is antisymmetric and
    Ṙ R⁻¹ = C − Ω upper triangular, so Ω = tril(C, −1) − tril(C, −1)ᵀ and
    Q̇ = Q (Ω − C) + Ȧ R⁻¹, Ṙ = (C − Ω) R (Townsend, "Differentiating the QR
    decomposition")."""
    dx_rinv = _solve(r, a_dot, left_side=False, lower=False)
    c = _mm(_mT(q), dx_rinv)
    c_lower = _tril(c, -1)
    omega = sub(c_lower, _mT(c_lower))
    return add(_mm(q, sub(omega, c)), dx_rinv), _mm(sub(c, omega), r)


def _slice_columns(x, start, stop):
    shape = aval_of(x).shape
    return bind(P.slice_p, x, start_indices=(0,) * (len(shape) - 1) + (start,),
                limit_indices=shape[:-1] + (stop,), strides=None)


def _slice_rows(x, start, stop):
    shape = aval_of(x).shape
    return bind(P.slice_p, x, start_indices=(0,) * (len(shape) - 2) + (start, 0),
                limit_indices=shape[:-2] + (stop, shape[-1]), strides=None)


def _lu_solve_transposed(m_mat, rhs):
    """Y with Mᵀ Y = rhs, from M's LU (P M = L U, so Mᵀ = Uᵀ Lᵀ P)."""
    packed, _, permutation = bind(L.lu_p, m_mat)
    n = aval_of(m_mat).shape[-1]
    l_mat, u_mat = _lu_factors(packed, n, n)
    y = _solve(u_mat, rhs, left_side=True, lower=False, transpose_a=True)
    y = _solve(l_mat, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
    square = aval_of(m_mat).shape
    one_hot = convert(eq(_columns(permutation, n), iota(np.int32, square, len(square) - 1)),
                      aval_of(m_mat).dtype)
    return _mm(_mT(one_hot), y)


def _qr_jvp(primals, tangents, *, full_matrices=True):
    """Tall or square A: the thin rule of `_thin_qr_tangents`. Wide A = Q [R₁ R₂]:
    the square block A₁ = Q R₁ gives Q̇, Ṙ₁ by the thin rule and R₂ = Qᵀ A₂ gives
    Ṙ₂ = Q̇ᵀ A₂ + Qᵀ Ȧ₂. Full Q of a tall A = [Q₁ Q₂]: the completion Q₂ moves too;
    with Z = Q₂ₚ (Q₁ₙ − I)⁻¹ (rows n.. and ..n of Q₁), Q̇₂ = Q̇₁ Zᵀ − (Q₁ + Q₂ Z)
    (Q̇₁ₚ − Z Q̇₁ₙ)ᵀ and Ṙ's extra rows are zero (Roberts & Roberts, arXiv 2409.13374)."""
    a, = primals
    a_dot, = tangents
    q, r = bind(L.qr_p, a, full_matrices=full_matrices)
    if type(a_dot) is Zero:
        return JvpResult([q, r], [_zero_like(q), _zero_like(r)])
    m, n = aval_of(a).shape[-2:]
    if m < n:
        dq, dr1 = _thin_qr_tangents(q, _slice_columns(r, 0, m), _slice_columns(a_dot, 0, m))
        dr2 = add(_mm(_mT(dq), _slice_columns(a, m, n)),
                  _mm(_mT(q), _slice_columns(a_dot, m, n)))
        return JvpResult([q, r], [dq, bind(P.concatenate_p, dr1, dr2,
                                            dimension=aval_of(r).ndim - 1)])
    if not full_matrices or m == n:
        return JvpResult([q, r], list(_thin_qr_tangents(q, r, a_dot)))
    q_mn, q_mp = _slice_columns(q, 0, n), _slice_columns(q, n, m)
    dq_mn, dr_nn = _thin_qr_tangents(q_mn, _slice_rows(r, 0, n), a_dot)
    q_nn, q_pn = _slice_rows(q_mn, 0, n), _slice_rows(q_mn, n, m)
    dq_nn, dq_pn = _slice_rows(dq_mn, 0, n), _slice_rows(dq_mn, n, m)
    eye = _eye(aval_of(q_nn).shape, aval_of(q_nn).dtype)
    z_t = _lu_solve_transposed(sub(q_nn, eye), _mT(q_pn))                 # Zᵀ
    dq_mp = sub(_mm(dq_mn, z_t),
                _mm(add(q_mn, _mm(q_mp, _mT(z_t))), _mT(sub(dq_pn, _mm(_mT(z_t), dq_nn)))))
    dq = bind(P.concatenate_p, dq_mn, dq_mp, dimension=aval_of(q).ndim - 1)
    dr = _pad_last2(dr_nn, m, n)
    return JvpResult([q, r], [dq, dr])


jvp_rules[L.cholesky_p] = _cholesky_jvp
jvp_rules[L.triangular_solve_p] = _triangular_solve_jvp
jvp_rules[L.lu_p] = _lu_jvp
jvp_rules[L.eigh_p] = _eigh_jvp
jvp_rules[L.svd_p] = _svd_jvp
jvp_rules[L.qr_p] = _qr_jvp
transpose_rules[L.triangular_solve_p] = _triangular_solve_transpose


# -- vmap ------------------------------------------------------------------------------------

def _leading_batch_rule(prim):
    """The primitive maps over leading axes: put every operand's batch axis first
    (broadcasting an unbatched operand, since operands' batch axes must agree)."""
    def rule(axis_size, values, dims, **params):
        operands = [batch_at(x, d, 0, axis_size) for x, d in zip(values, dims)]
        outs = bind(prim, *operands, **params)
        outs = outs if prim.multiple_results else [outs]
        return Batched(list(outs), [0] * len(outs))
    return rule


for _prim in L.linalg_primitives:
    vmap_rules[_prim] = _leading_batch_rule(_prim)
