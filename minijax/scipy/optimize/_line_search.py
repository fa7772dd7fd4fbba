"""The strong-Wolfe line search behind BFGS (Nocedal & Wright, *Numerical
Optimization*, algorithms 3.5 and 3.6), as JAX's `jax._src.scipy.optimize.line_search`.

JAX does not export it from `jax.scipy.optimize`, so neither does minijax: `minimize`
uses it. Steps grow (doubling) until one satisfies both Wolfe conditions or brackets a
point that does; a bracket is shrunk by `_zoom`, which tries the cubic through the
last three points, then the quadratic, then bisection. Both loops are `while_loop`s
that run the same arithmetic as JAX's, in the same order, so the two libraries take
the same steps. A branch that is not taken still runs (its zoom with `pass_through`
set stops at once) and its result is dropped by `where`, as in JAX.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

from ... import numpy as jnp
from ...frontend.autodiff import value_and_grad
from ...frontend.control_flow import while_loop
from ...frontend.lax_dot import Precision
from ...numpy._promotion import promote_dtypes_inexact

_dot = partial(jnp.dot, precision=Precision.HIGHEST)


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through (a, fa) with slope fpa, (b, fb), (c, fc)."""
    dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = jnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom
    return a + (-B + jnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    """The minimiser of the parabola through (a, fa) with slope fpa, and (b, fb)."""
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


def _where(cond, state, **new):
    """`state` with each field in `new` taken from `new` where `cond` holds."""
    return state._replace(**{k: jnp.where(cond, v, getattr(state, k)) for k, v in new.items()})


class _Zoom(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object
    ngev: object


def _zoom(along, sufficient_decrease, curvature, a_lo, phi_lo, dphi_lo, a_hi, phi_hi,
          dphi_hi, g_0, pass_through):
    start = _Zoom(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
                  a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0,
                  phi_rec=(phi_lo + phi_hi) / 2.0, a_star=1.0, phi_star=phi_lo,
                  dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)

    def step(s):
        width = s.a_hi - s.a_lo
        low, high = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        cubic_margin, quad_margin = 0.2 * width, 0.1 * width
        # the bracket has become too narrow to make progress in this precision
        smallest = jnp.where(jnp.finfo(width.dtype).bits < 64, 1e-5, 1e-10)
        s = s._replace(failed=s.failed | (width <= smallest))
        cubic = _cubicmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > low + cubic_margin) & (cubic < high - cubic_margin)
        quad = _quadmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = (~use_cubic) & (quad > low + quad_margin) & (quad < high - quad_margin)
        use_bisection = (~use_cubic) & (~use_quad)
        a_j = jnp.where(use_cubic, cubic, s.a_rec)
        a_j = jnp.where(use_quad, quad, a_j)
        a_j = jnp.where(use_bisection, (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = along(a_j)
        phi_j = phi_j.astype(s.phi_lo.dtype)
        dphi_j = dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        hi_to_j = sufficient_decrease(a_j, phi_j) | (phi_j >= s.phi_lo)
        star_to_j = curvature(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)
        s = _where(hi_to_j, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                   phi_rec=s.phi_hi)
        s = _where(star_to_j, s._replace(done=star_to_j | s.done), a_star=a_j, phi_star=phi_j,
                   dphi_star=dphi_j, g_star=g_j)
        s = _where(hi_to_lo, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                   a_rec=s.a_hi, phi_rec=s.phi_hi)
        s = _where(lo_to_j & ~hi_to_lo, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _where(lo_to_j, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s = s._replace(j=s.j + 1)
        return s._replace(failed=s.failed | (s.j >= 30))
    return while_loop(lambda s: (~s.done) & (~pass_through) & (~s.failed), step, start)


class _Search(NamedTuple):
    done: object
    failed: object
    i: object
    a_i1: object
    phi_i1: object
    dphi_i1: object
    nfev: object
    ngev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


class LineSearchResults(NamedTuple):
    """What `line_search` found: `a_k` the step, `f_k`/`g_k` the value and gradient
    there; `status` 0 passed, 1 zoom failed, 3 out of iterations."""
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


_BRACKET_KEYS = ("a_star", "phi_star", "dphi_star", "g_star")


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step along the descent direction `pk` from `xk` satisfying the strong Wolfe
    conditions with constants `c1`, `c2`; `old_fval`/`gfk` are f and its gradient at
    `xk` when known, and `old_old_fval` (f at the previous iterate) picks the first
    trial step."""
    xk, pk = promote_dtypes_inexact("line_search", xk, pk)

    def along(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g
    known = old_fval is not None and gfk is not None
    if known:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = along(0)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        first_step = jnp.where(candidate > 1, 1.0, candidate)
    else:
        first_step = 1

    def sufficient_decrease(a, phi):        # violated, that is
        return phi > phi_0 + c1 * a * dphi_0

    def curvature(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0
    start = _Search(done=jnp.array(False), failed=jnp.array(False), i=1, a_i1=0.0,
                    phi_i1=phi_0, dphi_i1=dphi_0, nfev=0 if known else 1,
                    ngev=0 if known else 1, a_star=0.0, phi_star=phi_0, dphi_star=dphi_0,
                    g_star=gfk)

    def step(s):
        a_i = jnp.where(s.i == 1, first_step, s.a_i1 * 2.0)
        phi_i, dphi_i, g_i = along(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        zoom_below = sufficient_decrease(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
        accept = curvature(dphi_i) & (~zoom_below)
        zoom_above = (dphi_i >= 0.0) & (~zoom_below) & (~accept)
        zoom1 = _zoom(along, sufficient_decrease, curvature, s.a_i1, s.phi_i1, s.dphi_i1,
                      a_i, phi_i, dphi_i, gfk, ~zoom_below)
        s = s._replace(nfev=s.nfev + zoom1.nfev, ngev=s.ngev + zoom1.ngev)
        zoom2 = _zoom(along, sufficient_decrease, curvature, a_i, phi_i, dphi_i, s.a_i1,
                      s.phi_i1, s.dphi_i1, gfk, ~zoom_above)
        s = s._replace(nfev=s.nfev + zoom2.nfev, ngev=s.ngev + zoom2.ngev)
        s = _where(zoom_below, s._replace(done=zoom_below | s.done,
                                          failed=(zoom_below & zoom1.failed) | s.failed),
                   **{k: getattr(zoom1, k) for k in _BRACKET_KEYS})
        s = _where(accept, s._replace(done=accept | s.done), a_star=a_i, phi_star=phi_i,
                   dphi_star=dphi_i, g_star=g_i)
        s = _where(zoom_above, s._replace(done=zoom_above | s.done,
                                          failed=(zoom_above & zoom2.failed) | s.failed),
                   **{k: getattr(zoom2, k) for k in _BRACKET_KEYS})
        return s._replace(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
    s = while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), step, start)
    status = jnp.where(s.failed, jnp.array(1), jnp.where(s.i > maxiter, jnp.array(3),
                                                         jnp.array(0)))
    a_k = jnp.asarray(s.a_star)
    # a step too small to move x in 32 bits is raised to 1e-8, as JAX does
    a_k = jnp.where((jnp.finfo(a_k.dtype).bits != 64) & (jnp.abs(a_k) < 1e-8),
                    jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s.failed | (~s.done), nit=s.i - 1, nfev=s.nfev,
                             ngev=s.ngev, k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star,
                             status=status)
