"""The linear-algebra primitives: matrix decompositions and triangular solves.

Each primitive acts on the trailing two axes of its operand(s) and maps over any
leading ("batch") axes, as `jax.lax.linalg`'s do; so vmap only has to move the
batch axis to the front. The type rules here say which shapes and dtypes fit:

    cholesky          a[..., n, n]                -> L[..., n, n]     (lower triangle)
    triangular_solve  a[..., m, m], b[..., m, k]  -> x[..., m, k]     (left_side)
                      a[..., k, k], b[..., m, k]  -> x[..., m, k]     (right side)
    lu                a[..., m, n]                -> lu[..., m, n], pivots i32[..., min(m, n)],
                                                     permutation i32[..., m]
    eigh              a[..., n, n]                -> v[..., n, n], w[..., n]
    svd               a[..., m, n]                -> s[..., k], u[..., m, m|k], vt[..., n|k, n]
                                                     (k = min(m, n); only s if not compute_uv)
    qr                a[..., m, n]                -> q[..., m, m|k], r[..., m|k, n]
    eig               a[..., n, n]                -> w c[..., n], vl c[..., n, n] (if left),
                                                     vr c[..., n, n] (if right)
        (c: the complex dtype of a's precision; eigenvalues and eigenvectors of a
        general real matrix are complex. Only XLA's CPU backend has it, as in JAX.)

Results are weakly typed when the operands are (a weak scalar reshaped to a matrix:
JAX's standard weak-type rule, which also makes lu's integer outputs weak).
Operands must be real floating point: complex matrices would need conjugation in
every derivative rule, which minijax does not have yet. Param values are bools only, so every equation prints and parses in the text
form. Their meanings, derivatives and lowerings are in `transforms/linalg_rules.py`,
`backends/xla_linalg.py` and `backends/reference_linalg.py`.
"""
from __future__ import annotations

import numpy as np

from .types import ShapedArray, is_float
from .registry import Primitive, type_rules, _array, _fail

__all__ = ["cholesky_p", "triangular_solve_p", "lu_p", "eigh_p", "svd_p", "qr_p", "eig_p",
           "linalg_primitives"]


def _matrix(name, aval, what="operand", square=False):
    """Check that `aval` is a (batch of) floating-point matrices; return its (m, n)."""
    _array(name, aval, what)
    if aval.ndim < 2:
        _fail(name, f"{what} must have rank at least 2 (a matrix or a batch of them), "
              f"got {aval}")
    if not is_float(aval.dtype):
        _fail(name, f"{what} must have a real floating-point dtype, got {aval}")
    m, n = aval.shape[-2:]
    if square and m != n:
        _fail(name, f"{what} must be a square matrix (or a batch of them), got {aval}")
    return m, n


cholesky_p = Primitive("cholesky")


def _cholesky_rule(a):
    _matrix("cholesky", a, square=True)
    return [ShapedArray(a.shape, a.dtype, a.weak_type)]


type_rules[cholesky_p] = _cholesky_rule

triangular_solve_p = Primitive("triangular_solve")


def _triangular_solve_rule(a, b, *, left_side=False, lower=False, transpose_a=False,
                           conjugate_a=False, unit_diagonal=False):
    m, _ = _matrix("triangular_solve", a, "a", square=True)
    _matrix("triangular_solve", b, "b")
    if a.dtype != b.dtype:
        _fail("triangular_solve", f"a and b must have equal dtypes, got {a} and {b}")
    if a.shape[:-2] != b.shape[:-2]:
        _fail("triangular_solve", f"a and b must have equal batch dimensions, got {a} "
              f"and {b}")
    solved = b.shape[-2] if left_side else b.shape[-1]
    if solved != m:
        side = "rows" if left_side else "columns"
        _fail("triangular_solve", f"b must have {m} {side} to match a "
              f"(left_side={left_side}), got a {a} and b {b}")
    return [ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)]


type_rules[triangular_solve_p] = _triangular_solve_rule

lu_p = Primitive("lu", multiple_results=True)


def _lu_rule(a):
    m, n = _matrix("lu", a)
    batch = a.shape[:-2]
    weak = a.weak_type
    return [ShapedArray(a.shape, a.dtype, weak), ShapedArray(batch + (min(m, n),), np.int32, weak),
            ShapedArray(batch + (m,), np.int32, weak)]


type_rules[lu_p] = _lu_rule

eigh_p = Primitive("eigh", multiple_results=True)


def _eigh_rule(a, *, lower=True, sort_eigenvalues=True):
    n, _ = _matrix("eigh", a, square=True)
    return [ShapedArray(a.shape, a.dtype, a.weak_type),
            ShapedArray(a.shape[:-1], a.dtype, a.weak_type)]


type_rules[eigh_p] = _eigh_rule

svd_p = Primitive("svd", multiple_results=True)


def _svd_rule(a, *, full_matrices=True, compute_uv=True):
    m, n = _matrix("svd", a)
    k = min(m, n)
    batch = a.shape[:-2]
    s = ShapedArray(batch + (k,), a.dtype, a.weak_type)
    if not compute_uv:
        return [s]
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(batch + (m, u_cols), a.dtype, a.weak_type),
            ShapedArray(batch + (vt_rows, n), a.dtype, a.weak_type)]


type_rules[svd_p] = _svd_rule

qr_p = Primitive("qr", multiple_results=True)


def _qr_rule(a, *, full_matrices=True):
    m, n = _matrix("qr", a)
    k = min(m, n)
    batch = a.shape[:-2]
    q_cols = m if full_matrices else k
    return [ShapedArray(batch + (m, q_cols), a.dtype, a.weak_type),
            ShapedArray(batch + (q_cols, n), a.dtype, a.weak_type)]


type_rules[qr_p] = _qr_rule

eig_p = Primitive("eig", multiple_results=True)


def _eig_rule(a, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
              enable_eigvec_derivs=False):
    n, _ = _matrix("eig", a, square=True)
    complex_dtype = np.result_type(a.dtype, np.complex64)
    vectors = ShapedArray(a.shape, complex_dtype)
    return ([ShapedArray(a.shape[:-1], complex_dtype)]
            + [vectors] * (bool(compute_left_eigenvectors) + bool(compute_right_eigenvectors)))


type_rules[eig_p] = _eig_rule

linalg_primitives = (cholesky_p, triangular_solve_p, lu_p, eigh_p, svd_p, qr_p, eig_p)
