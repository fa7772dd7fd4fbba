"""The LAPACK kernels of `jax.lax.linalg` that minijax cannot write in `jax.lax`:
reductions to tridiagonal and Hessenberg form, Householder products, Schur forms and
tridiagonal solves. Each is a primitive lowered to the `jax.lax.linalg` function of
the same name (`backends/xla_linalg.py`), as `eig` is:

    tridiagonal          a[..., n, n]                 -> a', d[..., n], e[..., n-1],
                                                         taus[..., n-1]
    tridiagonal_solve    dl, d, du [..., m], b[..., m, k] -> x[..., m, k]
    householder_product  a[..., m, n], taus[..., k]   -> q[..., m, n]      (m >= n >= k)
    hessenberg           a[..., n, n]                 -> a', taus[..., n-1]
    schur                a[..., n, n]                 -> t (, z if compute_schur_vectors)
                                                         (a real or complex)
    ormqr                a[..., m, k], taus, c        -> Q c, Qᵀ c, c Q or c Qᵀ

(a' holds the reduced matrix with the Householder vectors below it, LAPACK's packing.)
Like JAX's, they map over leading axes and only `tridiagonal_solve` has derivative
rules (`transforms/linalg_rules.py`: jvp; transpose in b). JAX lowers `hessenberg`
and `schur` on the CPU only. The checks users see, with JAX's exception types and
messages, are in `frontend/linalg_kernels.py`; these type rules guard the IR.
"""
from __future__ import annotations

from .types import ShapedArray, is_float, is_complex
from .registry import Primitive, type_rules, _fail, _array
from .linalg_primitives import _matrix

__all__ = ["tridiagonal_p", "tridiagonal_solve_p", "householder_product_p", "hessenberg_p",
           "schur_p", "ormqr_p", "kernel_primitives"]


def _like(aval, shape=None):
    return ShapedArray(aval.shape if shape is None else shape, aval.dtype, aval.weak_type)


def _vector(name, aval, batch, length, what):
    if aval.dtype != batch.dtype or aval.shape != batch.shape[:-2] + (length,):
        _fail(name, f"{what} must be a {batch.dtype} vector of length {length} per "
              f"matrix of {batch}, got {aval}")


tridiagonal_p = Primitive("tridiagonal", multiple_results=True)


def _tridiagonal_rule(a, *, lower=True):
    n, _ = _matrix("tridiagonal", a, square=True)
    off = a.shape[:-2] + (max(n - 1, 0),)
    return [_like(a), _like(a, a.shape[:-1]), _like(a, off), _like(a, off)]


type_rules[tridiagonal_p] = _tridiagonal_rule

tridiagonal_solve_p = Primitive("tridiagonal_solve")


def _tridiagonal_solve_rule(dl, d, du, b, *, perturb_singular=False):
    _matrix("tridiagonal_solve", b, "b")
    for what, diag in (("dl", dl), ("d", d), ("du", du)):
        _vector("tridiagonal_solve", diag, b, b.shape[-2], what)
    return [_like(b)]


type_rules[tridiagonal_solve_p] = _tridiagonal_solve_rule

householder_product_p = Primitive("householder_product")


def _householder_product_rule(a, taus):
    m, n = _matrix("householder_product", a, "a")
    if m < n or taus.ndim != a.ndim - 1 or taus.shape[-1] > n:
        _fail("householder_product", f"needs a with at least as many rows as columns "
              f"and at most that many taus, got {a} and {taus}")
    _vector("householder_product", taus, a, taus.shape[-1], "taus")
    return [_like(a)]


type_rules[householder_product_p] = _householder_product_rule

hessenberg_p = Primitive("hessenberg", multiple_results=True)


def _hessenberg_rule(a):
    n, _ = _matrix("hessenberg", a, square=True)
    return [_like(a), _like(a, a.shape[:-2] + (max(n - 1, 0),))]


type_rules[hessenberg_p] = _hessenberg_rule

schur_p = Primitive("schur", multiple_results=True)


def _schur_rule(a, *, compute_schur_vectors=True):
    # complex matrices too: schur has no derivative rules that would need conjugation
    _array("schur", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or not (is_float(a.dtype)
                                                        or is_complex(a.dtype)):
        _fail("schur", f"operand must be a (batch of) square floating-point or complex "
              f"matrices, got {a}")
    return [_like(a)] * (2 if compute_schur_vectors else 1)


type_rules[schur_p] = _schur_rule

ormqr_p = Primitive("ormqr")


def _ormqr_rule(a, taus, c, *, left=True, transpose=False):
    m, _ = _matrix("ormqr", a, "a")
    _matrix("ormqr", c, "c")
    _vector("ormqr", taus, a, taus.shape[-1] if taus.ndim else 0, "taus")
    if c.dtype != a.dtype or c.shape[:-2] != a.shape[:-2] or \
            (c.shape[-2] if left else c.shape[-1]) != m:
        _fail("ormqr", f"c must be a {a.dtype} matrix with {m} "
              f"{'rows' if left else 'columns'} (left={left}) per matrix of a, got a {a} "
              f"and c {c}")
    return [_like(c)]


type_rules[ormqr_p] = _ormqr_rule

kernel_primitives = (tridiagonal_p, tridiagonal_solve_p, householder_product_p, hessenberg_p,
                     schur_p, ormqr_p)
