"""L-BFGS (Nocedal & Wright, *Numerical Optimization*, algorithms 7.4 and 7.5), as JAX's
`minimize(method="l-bfgs-experimental-do-not-rely-on-this")` runs it.

Instead of a d x d inverse-Hessian estimate, the last `maxcor` steps s = x' - x and
gradient changes y = g' - g are kept (rows of two history arrays, the newest last,
with rho = 1 / Re(yᵀs)). A search direction is -H g computed by the two-loop
recursion over the history, H's initial scale gamma = Re(yᵀs) / |y|² from the last
step (1 before the first). Each step takes the strong-Wolfe `line_search` along it.
Complex variables follow Sorber et al. (2012): the recursion runs on conj(g) and
takes real parts of the inner products, as JAX's does.

The loop stops when |g|_norm < gtol (status 0), or with status 1 (maxiter steps),
2 (maxfun evaluations of f), 3 (maxgrad of its gradient), 4 (f fell by less than
ftol) or 5 (the line search failed); the later of these wins, in JAX's order.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from ... import numpy as jnp
from ...frontend.autodiff import value_and_grad
from ...frontend.control_flow import fori_loop, while_loop
from ...frontend.lax_dot import Precision
from ._line_search import line_search

_dot = partial(jnp.dot, precision=Precision.HIGHEST)


class LBFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _push(history, row):
    """The history with its oldest row dropped and `row` appended as the newest."""
    return jnp.roll(history, -1, axis=0).at[-1].set(row)


def _direction(state: LBFGSResults):
    """-H g by the two-loop recursion over the `k` (at most `maxcor`) steps kept."""
    rho, s_hist, y_hist = state.rho_history, state.s_history, state.y_history
    size = rho.shape[0]
    used = jnp.minimum(state.k, size)
    real = rho.dtype

    def newest_first(j, carry):
        q, alphas = carry
        i = size - 1 - j
        alpha = rho[i] * _dot(jnp.conj(s_hist[i]), q).real.astype(real)
        return q - alpha * jnp.conj(y_hist[i]), alphas.at[i].set(alpha)
    q, alphas = fori_loop(0, used, newest_first,
                          (-jnp.conj(state.g_k), jnp.zeros_like(rho)))

    def oldest_first(j, q):
        i = size - used + j
        beta = rho[i] * _dot(y_hist[i], q).real.astype(real)
        return q + (alphas[i] - beta) * s_hist[i]
    return fori_loop(0, used, oldest_first, state.gamma * q)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    """Minimise `fun` from the 1-D `x0`; with no limit given, `maxiter` is 200 per
    variable."""
    d = x0.shape[0]
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter, maxfun, maxgrad = (np.inf if v is None else v for v in (maxiter, maxfun, maxgrad))
    f_0, g_0 = value_and_grad(fun)(x0)
    dtype = x0.dtype
    start = LBFGSResults(
        converged=jnp.array(False), failed=jnp.array(False), k=0, nfev=1, ngev=1,
        x_k=x0, f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, d), dtype),
        y_history=jnp.zeros((maxcor, d), dtype), rho_history=jnp.zeros((maxcor,), dtype),
        gamma=1.0, status=0, ls_status=0)

    def step(state: LBFGSResults):
        p_k = _direction(state)
        found = line_search(fun, state.x_k, p_k, old_fval=state.f_k, gfk=state.g_k,
                            maxiter=maxls)
        s_k = jnp.asarray(found.a_k).astype(p_k.dtype) * p_k
        y_k = found.g_k - state.g_k
        ys = jnp.real(_dot(y_k, s_k))
        status = jnp.array(0)
        # (each later condition overrides the earlier ones)
        for failed, code in ((state.f_k - found.f_k < ftol, 4), (state.ngev >= maxgrad, 3),
                             (state.nfev >= maxfun, 2), (state.k >= maxiter, 1),
                             (found.failed, 5)):
            status = jnp.where(failed, code, status)
        converged = jnp.linalg.norm(found.g_k, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & ~converged, k=state.k + 1,
            nfev=state.nfev + found.nfev, ngev=state.ngev + found.ngev,
            x_k=(state.x_k + s_k).astype(state.x_k.dtype),
            f_k=found.f_k.astype(state.f_k.dtype), g_k=found.g_k.astype(state.g_k.dtype),
            s_history=_push(state.s_history, s_k), y_history=_push(state.y_history, y_k),
            rho_history=_push(state.rho_history, jnp.reciprocal(ys).astype(y_k.dtype)),
            gamma=(ys / jnp.real(_dot(jnp.conj(y_k), y_k))).astype(state.g_k.dtype),
            status=jnp.where(converged, 0, status), ls_status=found.status)
    return while_loop(lambda s: ~s.converged & ~s.failed, step, start)
