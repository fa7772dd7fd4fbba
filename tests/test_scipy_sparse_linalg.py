"""`minijax.scipy.sparse.linalg` (`cg`, `bicgstab`, `gmres`) against
`jax.scipy.sparse.linalg`: solutions, eagerly and under jit, with a matrix or a
function for A, a preconditioner, x0, pytree b, both GMRES methods; the implicit
gradients with respect to b and to what A closes over; JAX's errors. (Each solver's
gradient is a second solve of the same kind, so the programs are large: the cases are
grouped into two jitted programs.)"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.scipy.sparse.linalg as msl
from tests.numpy_helpers import assert_values_close

_rng = np.random.default_rng(3)
_Q = _rng.normal(size=(4, 4)).astype(np.float32)
SPD = (_Q @ _Q.T + 4 * np.eye(4)).astype(np.float32)          # for cg
GENERAL = (_Q + 5 * np.eye(4)).astype(np.float32)              # for bicgstab, gmres
B = _rng.normal(size=4).astype(np.float32)
B_BATCH = np.stack([B, B * 2 - 1])
PRECONDITIONER = np.diag(1 / np.diag(SPD)).astype(np.float32)


def _run(api, np_, sl):
    def loss(solver, **kw):
        def f(a, b):
            return np_.sum(solver(lambda v: a @ v, b, **kw)[0] ** 2)
        return f
    both = dict(argnums=(0, 1))

    def tree_solve(a, b):
        def matvec(x):
            return {"u": a @ x["u"], "v": 3.0 * x["v"]}
        return sl.cg(matvec, {"u": b, "v": b[:2]}, tol=1e-6)[0]

    def solutions(a_spd, a, b):
        return (sl.cg(a_spd, b, M=PRECONDITIONER, x0=b, atol=1e-6)[0],
                sl.cg(lambda v: a_spd @ v, b, maxiter=2)[0], tree_solve(a_spd, b),
                sl.bicgstab(lambda v: a @ v, b, tol=1e-6)[0],
                sl.gmres(a, b, restart=3, M=PRECONDITIONER),
                api.vmap(lambda v: sl.cg(a_spd, v)[0])(B_BATCH))

    def gradients(a_spd, a, b):
        return (api.grad(loss(sl.cg), **both)(a_spd, b),
                api.grad(loss(sl.bicgstab), **both)(a, b),
                api.grad(loss(sl.gmres, solve_method="incremental", restart=2), **both)(a, b))
    # GMRES compiles slowly (about 2 s a program, for JAX too): batched is run
    # forward, incremental through its gradient (its solve and its transposed solve).
    return (sl.cg(SPD, B), sl.bicgstab(GENERAL, B),
            api.jit(solutions)(SPD, GENERAL, B), api.jit(gradients)(SPD, GENERAL, B))


def test_solvers_match_jax():
    assert_values_close(_run(minijax, mnp, msl), _run(jax, jnp, jsl), 1e-4, 1e-5)


def _errors(sl, np_):
    cases = [
        (lambda: sl.cg(np.ones((3, 4), np.float32), B[:3]), "square matrix"),
        (lambda: sl.cg(SPD, B, x0=(B,)), "matching tree structure"),
        (lambda: sl.cg(SPD, B, x0=B[:2]), "matching shapes"),
        (lambda: sl.gmres(GENERAL, B, solve_method="qr"), "invalid solve_method"),
        (lambda: sl.bicgstab("A", B), "function or ndarray"),
    ]
    out = []
    for call, match in cases:
        try:
            call()
        except Exception as e:      # noqa: BLE001 -- the types are compared below
            with pytest.raises(type(e), match=match):
                call()
            out.append(type(e))
        else:
            out.append(None)
    return out


def test_errors_are_jaxs():
    ours = _errors(msl, mnp)
    assert ours == _errors(jsl, jnp) and None not in ours
