"""BFGS (Nocedal & Wright, *Numerical Optimization*, algorithm 6.1), as JAX's
`minimize(method="BFGS")` runs it: the inverse-Hessian estimate H starts at the
identity, each step searches along -H g with the strong-Wolfe `line_search`, and H
takes the rank-two BFGS update unless yᵀs is 0 (then it is kept). The loop is one
`while_loop` whose steps are JAX's, so iterates, counts and status codes agree."""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from ... import numpy as jnp
from ...frontend.autodiff import value_and_grad
from ...frontend.control_flow import while_loop
from ...frontend.lax_dot import Precision
from ._line_search import line_search

_dot = partial(jnp.dot, precision=Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=Precision.HIGHEST)


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimise `fun` from the 1-D `x0` until `|grad|_norm < gtol` or `maxiter` steps
    (200 per variable by default)."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    start = BFGSResults(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0,
                        nfev=1, ngev=1, nhev=0, x_k=x0, f_k=f_0, g_k=g_0,
                        H_k=jnp.eye(d, dtype=x0.dtype),
                        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0,
                        line_search_status=0)

    def step(s):
        p_k = -_dot(s.H_k, s.g_k)
        found = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                            gfk=s.g_k, maxiter=line_search_maxiter)
        s = s._replace(nfev=s.nfev + found.nfev, ngev=s.ngev + found.ngev,
                       failed=found.failed, line_search_status=found.status)
        s_k = found.a_k * p_k
        y_k = found.g_k - s.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
        H = _einsum("ij,jk,lk", w, s.H_k, w) + rho_k * s_k[:, None] * s_k[None, :]
        H = jnp.where(jnp.isfinite(rho_k), H, s.H_k)
        return s._replace(converged=jnp.linalg.norm(found.g_k, ord=norm) < gtol, k=s.k + 1,
                          x_k=s.x_k + s_k, f_k=found.f_k, g_k=found.g_k, H_k=H,
                          old_old_fval=s.f_k)
    s = while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), step, start)
    # 0 converged, 1 out of iterations, 2 + the line search's status when it failed
    status = jnp.where(s.converged, 0, jnp.where(
        s.k == maxiter, 1, jnp.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)
