"""`minijax.test_util.check_grads`: check a function's derivatives against finite
differences, with minijax's own `jvp` and `vjp` (as `jax.test_util.check_grads`).

For random directions t (and cotangents c) drawn from a fixed seed:

* forward mode: `jvp(f, args, t)` must match the central difference
  (f(args + eps t) - f(args - eps t)) / (2 eps), and its primal output f(args);
* reverse mode: `<t, vjp(c)>` must match `<numerical jvp(t), c>` (the vjp is the
  transpose of the jvp, so the two inner products agree).

With `order > 1` the same checks run on the derivative functions themselves: forward
on `(primals, tangents) -> jvp(f, primals, tangents)`, reverse on
`args -> vjp(f, *args)[1](f(*args))`. Tolerances default per dtype (float32: 2e-3).
"""
from __future__ import annotations

import functools

import numpy as np
from jax import tree_util

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_EPS = 1e-4
_DEFAULT_TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
                      np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3,
                      np.dtype(np.complex128): 1e-5}


def _tolerance(given, dtype):
    if given is None:
        return _DEFAULT_TOLERANCE.get(np.dtype(dtype), 1e-5)
    if isinstance(given, dict):
        return given.get(np.dtype(dtype), _DEFAULT_TOLERANCE.get(np.dtype(dtype), 1e-5))
    return given


def _rand_like(rng, x):
    dtype = np.asarray(x).dtype
    values = rng.randn(*np.shape(x))
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.randn(*np.shape(x))
    return np.asarray(values, dtype=dtype)


def _map(fn, *trees):
    return tree_util.tree_map(fn, *trees)


def _numerical_jvp(f, primals, tangents, eps):
    def shifted(sign):
        return f(*_map(lambda p, t: np.asarray(p) + sign * eps * np.asarray(t, np.asarray(p).dtype)
                       if np.issubdtype(np.asarray(p).dtype, np.inexact) else p,
                       primals, tangents))
    f_pos, f_neg = shifted(1), shifted(-1)
    return _map(lambda a, b: (np.asarray(a) - np.asarray(b)) * (0.5 / eps)
                if np.issubdtype(np.asarray(a).dtype, np.inexact) else np.zeros_like(a),
                f_pos, f_neg)


def _inner_product(xs, ys):
    """sum <x, y> over the leaves, accumulated in float64 but returned in the leaves'
    dtype, so that it is compared with that dtype's tolerance."""
    leaves = list(zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)))
    dtype = np.result_type(*(np.asarray(v).dtype for pair in leaves for v in pair))
    total = sum(np.vdot(np.asarray(x, np.complex128), np.asarray(y, np.complex128))
                for x, y in leaves)
    return np.asarray(total if np.issubdtype(dtype, np.complexfloating) else total.real,
                      dtype=dtype)


def _check_close(actual, expected, atol, rtol, err_msg):
    actual_leaves = tree_util.tree_leaves(actual)
    expected_leaves = tree_util.tree_leaves(expected)
    if len(actual_leaves) != len(expected_leaves):
        raise AssertionError(f"{err_msg}: {len(actual_leaves)} outputs, expected "
                             f"{len(expected_leaves)}")
    for a, e in zip(actual_leaves, expected_leaves):
        a, e = np.asarray(a), np.asarray(e)
        if a.dtype.kind == "V" or e.dtype.kind == "V":   # float0 tangents carry no values
            continue
        dtype = np.promote_types(a.dtype, e.dtype)
        np.testing.assert_allclose(a.astype(dtype), e.astype(dtype),
                                   atol=_tolerance(atol, dtype), rtol=_tolerance(rtol, dtype),
                                   err_msg=err_msg)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=_EPS, err_msg=""):
    """`f_jvp(primals, tangents)` against `f` and its central difference."""
    rng = np.random.RandomState(0)
    tangent = _map(functools.partial(_rand_like, rng), args)
    value, tangent_out = f_jvp(args, tangent)
    _check_close(value, f(*args), atol, rtol, err_msg or "jvp primal output")
    expected = _numerical_jvp(f, args, tangent, eps)
    _check_close(tangent_out, expected, atol, rtol, err_msg or "jvp tangent output")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=_EPS, err_msg=""):
    """`f_vjp(*args) -> (value, vjp_fun)` against `f` and its central difference,
    through the inner products <t, vjp(c)> and <jvp(t), c>."""
    rng = np.random.RandomState(0)
    value, vjp_fun = f_vjp(*args)
    _check_close(value, f(*args), atol, rtol, err_msg or "vjp primal output")
    tangent = _map(functools.partial(_rand_like, rng), args)
    tangent_out = _numerical_jvp(f, args, tangent, eps)
    cotangent = _map(functools.partial(_rand_like, rng), value)
    cotangent_out = _map(np.conj, vjp_fun(_map(np.conj, cotangent)))
    _check_close(_inner_product(tangent, cotangent_out), _inner_product(tangent_out, cotangent),
                 atol, rtol, err_msg or "vjp inner product")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of `f` at `args` up to `order` in forward ("fwd") and
    reverse ("rev") mode against finite differences; raises AssertionError."""
    from . import jvp, vjp
    eps = eps or _EPS
    if not set(modes) <= {"fwd", "rev"}:
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {modes!r}")

    def check(f, args, order, err_msg):
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, fwd_msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, rev_msg)
            if order > 1:
                def f_vjp(*primals):
                    value, vjp_fun = vjp(f, *primals)
                    return vjp_fun(value)
                check(f_vjp, args, order - 1, rev_msg)

    check(f, tuple(args), order, "")
