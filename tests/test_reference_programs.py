"""The reference evaluator against the XLA backend on whole programs.

`test_reference.py` checks first-order primitives one equation at a time. A primitive
that carries a sub-jaxpr (cond, scan, while, remat, custom derivative calls) or an
effect (debug output) only means something inside a program, so each gets programs
here: traced with `make_jaxpr`, evaluated by `backends.reference` and by
`backends.xla`, and compared. `PROGRAM_PRIMITIVES` lists what this file covers;
`test_reference.py` counts it, so a new primitive with neither a case nor a program
still fails the coverage test.
"""
from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import lax
from minijax.ad_checkpoint import checkpoint_name
from minijax.backends import xla
from minijax.backends.reference import eval_closed_jaxpr
from minijax.experimental import io_callback
from minijax.testing import assert_trees_match, check_jaxpr

f32 = np.float32
_rng = np.random.default_rng(7)
X = _rng.uniform(-1, 1, (3,)).astype(f32)
M = _rng.uniform(-1, 1, (4, 3)).astype(f32)


def _cond(x):
    return lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * 2.0, lambda v: v - 1.0, x)


def _switch(x):
    return lax.switch(2, [jnp.sin, jnp.cos, lambda v: v * v], x)


def _scan(m):
    def body(carry, row):
        carry = jnp.tanh(carry + row)
        return carry, carry.sum()
    return lax.scan(body, jnp.zeros(3, f32), m)


def _reverse_scan(m):
    return lax.scan(lambda c, row: (c * 0.5 + row, c), jnp.ones(3, f32), m, reverse=True)


def _while(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))


def _fori(x):
    return lax.fori_loop(0, 4, lambda i, v: v + jnp.float32(i) * v, x)


def _remat(x):
    return minijax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x)


def _remat_grad(x):
    return minijax.grad(lambda v: minijax.checkpoint(
        lambda u: jnp.sin(u) * u, policy=minijax.checkpoint_policies.nothing_saveable)(v).sum())(x)


def _named(x):
    return checkpoint_name(x * 3.0, "h") + 1.0


@minijax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


_softplus.defjvp(lambda primals, tangents: (_softplus(primals[0]),
                                            tangents[0] * lax.logistic(primals[0])))


@minijax.custom_vjp
def _clipped(x):
    return x * 2.0


_clipped.defvjp(lambda x: (_clipped(x), None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def _debug(x):
    minijax.debug.print("x = {}", x)
    return x + 1.0


def _host_callback(x):
    spec = minijax.ShapeDtypeStruct(x.shape, x.dtype)
    return minijax.pure_callback(lambda v: np.tanh(v) * 2, spec, x * 3.0) + x


def _linear_solve(x):
    d = x * x + 1.0
    return lax.custom_linear_solve(lambda v: d * v, x, lambda mv, b: b / d, symmetric=True)


def _io_host_callback(x):
    spec = minijax.ShapeDtypeStruct(x.shape, x.dtype)
    return io_callback(lambda v: np.tanh(v) * 2, spec, x * 3.0, ordered=True) + x


@minijax.custom_batching.custom_vmap
def _sin_custom_vmap(x):
    return jnp.sin(x) * 2.0


_sin_custom_vmap.def_vmap(lambda n, batched, xs: (jnp.cos(xs), batched[0]))


PROGRAMS = {
    "cond": [(_cond, (X,)), (_cond, (-X,)), (_switch, (X,))],
    "scan": [(_scan, (M,)), (_reverse_scan, (M,)), (_fori, (X,))],
    "while": [(_while, (X,))],
    "remat": [(_remat, (X,)), (_remat_grad, (X,))],
    "name": [(_named, (X,))],
    "custom_jvp_call": [(_softplus, (X,)), (minijax.grad(lambda v: _softplus(v).sum()), (X,))],
    "custom_vjp_call": [(_clipped, (X,)), (minijax.grad(lambda v: _clipped(v).sum()), (X,))],
    "debug_print": [(_debug, (X,))],
    "pure_callback": [(_host_callback, (X,))],
    "custom_linear_solve": [(_linear_solve, (X,)),
                            (minijax.grad(lambda v: _linear_solve(v).sum()), (X,))],
    "io_callback": [(_io_host_callback, (X,))],
    "custom_vmap_call": [(_sin_custom_vmap, (X,)),
                         (lambda x: minijax.jvp(_sin_custom_vmap, (x,), (x,)), (X,))],
}
# custom_lin only exists between linearize and transpose, and debug_callback is the
# general form of debug_print; their rules are exercised through the programs above
# and the control-flow and autodiff suites.
PROGRAM_PRIMITIVES = frozenset(PROGRAMS) | {"custom_lin", "debug_callback"}


def _uses(closed, prim_name) -> bool:
    from minijax.ir.core import jaxprs_in_params

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == prim_name:
                return True
            if any(walk(getattr(sub, "jaxpr", sub)) for sub in jaxprs_in_params(eqn.params)):
                return True
        return False
    return walk(closed.jaxpr)


@pytest.mark.parametrize("prim_name,index", [(name, i) for name, programs in PROGRAMS.items()
                                             for i in range(len(programs))])
def test_reference_matches_xla_on_program(prim_name, index, capsys):
    fun, args = PROGRAMS[prim_name][index]
    closed = check_jaxpr(minijax.make_jaxpr(fun)(*args))
    assert _uses(closed, prim_name), f"the program does not exercise {prim_name}"
    expected = xla.compile_jaxpr(closed.jaxpr)(*closed.consts, *args)
    actual = eval_closed_jaxpr(closed, *args)
    assert_trees_match([np.asarray(a) for a in actual], [np.asarray(e) for e in expected],
                       check_weak_types=False, rtol=1e-5, atol=1e-6)
    if prim_name == "debug_print":
        printed = capsys.readouterr().out
        assert printed.count("x = ") == 2, printed  # once per backend, never dropped
