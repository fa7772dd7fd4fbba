"""`minimize` and `OptimizeResults`, as `jax.scipy.optimize` has them: a SciPy-like front
end over BFGS and JAX's experimental L-BFGS, whose gradients come from minijax's
autodiff. As in JAX, `tol` is accepted and unused (the tolerance is
`options={'gtol': ...}`), and `x0` is 1-D."""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from ... import numpy as jnp
from ._bfgs import minimize_bfgs
from ._lbfgs import minimize_lbfgs

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"   # JAX's name for it


class OptimizeResults(NamedTuple):
    """The result of `minimize`: the solution `x`, `success`, `status` (0 converged,
    1 out of iterations, 3 line-search zoom failed, 5 line search out of iterations,
    -1 otherwise), `fun` and `jac` at `x`, the inverse-Hessian estimate `hess_inv`, the
    counts `nfev`, `njev` and the iterations `nit`."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimise `fun(x, *args)` from `x0` with `method` ('BFGS', or JAX's L-BFGS,
    'l-bfgs-experimental-do-not-rely-on-this'); `options` go to the method (BFGS:
    `maxiter`, `norm`, `gtol`, `line_search_maxiter`; L-BFGS: `maxiter`, `norm`,
    `maxcor`, `ftol`, `gtol`, `maxfun`, `maxgrad`, `maxls`)."""
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if method.lower() == LBFGS:
        found = minimize_lbfgs(lambda x: fun(x, *args), x0, **options)
        return OptimizeResults(x=found.x_k,
                               success=found.converged & jnp.logical_not(found.failed),
                               status=found.status, fun=found.f_k, jac=found.g_k,
                               hess_inv=None, nfev=found.nfev, njev=found.ngev, nit=found.k)
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    found = minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=found.x_k, success=found.converged & jnp.logical_not(found.failed),
                           status=found.status, fun=found.f_k, jac=found.g_k,
                           hess_inv=found.H_k, nfev=found.nfev, njev=found.ngev, nit=found.k)
