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


LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _lbfgs_programs(api, np_, opt):
    def rosenbrock(x):
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def solve(x0):
        return tuple(opt.minimize(rosenbrock, x0, method=LBFGS, options={"maxiter": 25}))

    def solve_limited(starts):   # a short history, and the evaluation limit reached
        return tuple(api.vmap(lambda x0: opt.minimize(
            rosenbrock, x0, method=LBFGS, options={"maxcor": 3, "maxfun": 15}))(starts))

    def solve_complex(x0):       # real parts of inner products, conj(g)
        target = np_.array([1 + 2j, -1j], np.complex64)
        return tuple(opt.minimize(lambda z: np_.sum(np_.abs(z - target) ** 2), x0,
                                  method=LBFGS))
    return solve, solve_limited, solve_complex


def test_lbfgs_matches_jax():
    # JAX's experimental L-BFGS: every field, the history-limited and the evaluation-
    # limited stop (status 2), and complex variables.
    args = (np.array([-1.2, 1.0, 0.5], np.float32), STARTS,
            np.zeros(2, np.complex64))
    solve, limited, complex_ = _lbfgs_programs(minijax, mnp, mso)
    ours = (solve(args[0]), minijax.jit(limited)(args[1]), complex_(args[2]))
    theirs = jax.jit(lambda *a: tuple(f(x) for f, x in zip(
        _lbfgs_programs(jax, jnp, jso), a)))(*args)
    assert_trees_match(ours, theirs, rtol=1e-5, atol=1e-6)
    assert [int(s) for s in theirs[1][2]] == [2, 2] and int(theirs[2][2]) == 0


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
