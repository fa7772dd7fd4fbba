"""`minijax.scipy.optimize.minimize(method="BFGS")` against `jax.scipy.optimize`: every
field of `OptimizeResults` (x, success, status, fun, jac, hess_inv, nfev, njev, nit,
with their dtypes and weak types), on a Rosenbrock function and a quadratic
with `args`; eagerly, and under jit of vmap over x0; options; JAX's errors."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.optimize as jso
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.scipy.optimize as mso
from minijax.testing import assert_trees_match

Q = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
C = np.array([1.0, 2.0], np.float32)
# Rosenbrock from near its minimum (in float32 the line search's zoom fails there,
# status 3, for JAX too) and from the classic start, which runs out of the 8
# iterations allowed (status 1)
STARTS = np.array([[0.8, 0.6], [-1.2, 1.0]], np.float32)


def _programs(api, np_, opt):
    def rosenbrock(x):
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def quadratic(x, q, c):
        return 0.5 * x @ q @ x - c @ x

    def solve_quadratic(x0):
        return tuple(opt.minimize(quadratic, x0, (Q, C), method="BFGS"))

    def solve_rosenbrocks(starts):
        return tuple(api.vmap(lambda x0: opt.minimize(
            rosenbrock, x0, method="bfgs", tol=1e-3,
            options={"maxiter": 8, "gtol": 1e-4}))(starts))
    return solve_quadratic, solve_rosenbrocks


def test_bfgs_matches_jax():
    # A BFGS program takes seconds to compile, for JAX too: minijax runs one problem
    # eagerly and one under jit; JAX, the oracle, runs both in one jitted program
    # (its eager and jitted BFGS are the same computation).
    quadratic, rosenbrocks = _programs(minijax, mnp, mso)
    ours = (quadratic(np.zeros(2, np.float32)), minijax.jit(rosenbrocks)(STARTS))
    theirs = jax.jit(lambda x0, starts: tuple(f(a) for f, a in zip(
        _programs(jax, jnp, jso), (x0, starts))))(np.zeros(2, np.float32), STARTS)
    assert_trees_match(ours, theirs, rtol=1e-5, atol=1e-6)
    # three outcomes are exercised: converged, zoom failed, out of iterations
    assert [int(theirs[0][2])] + [int(s) for s in theirs[1][2]] == [0, 3, 1]


def test_results_are_jaxs_named_tuple():
    assert mso.OptimizeResults._fields == jso.OptimizeResults._fields


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(method="Nelder-Mead"), ValueError, "Method Nelder-Mead not recognized"),
    (dict(method="BFGS", args=[1.0]), TypeError, "must be a tuple"),
])
def test_errors_are_jaxs(kwargs, error, match):
    for opt in (mso, jso):
        with pytest.raises(error, match=match):
            opt.minimize(lambda x, *a: (x ** 2).sum(), STARTS[0], **kwargs)
