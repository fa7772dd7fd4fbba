"""minijax's internal invariants, checked on every fuzzed program (no JAX involved).

Each check returns a `Row` like a `cross_check` row, on the case's *safe* arguments
(moderate values, so an approximation is not mistaken for a bug):

* `invariant:reference` -- the reference evaluator (NumPy, backends/reference.py)
  against the XLA backend, eagerly;
* `invariant:fd` -- `jvp` against central finite differences, for programs made of
  operations differentiable everywhere, of float32 arguments;
* `invariant:dot` -- the dot-product test: for the program's Jacobian J at x, a
  tangent u and a cotangent v, <v, J u> from `jvp` equals <J^T v, u> from `vjp`.
"""
from __future__ import annotations

import numpy as np

import minijax
from ..ir.core import eqns_nested
from ..ir.types import is_float
from ..transforms.custom_derivatives import CustomDerivativeError
from .recipes import Skip, _tangent_like
from .report import Row

_FD_STEP = 1e-3


def _run(name, check):
    try:
        return check()
    except Skip as skip:
        return Row(name, "skipped", detail=str(skip))
    except Exception as error:  # noqa: BLE001 -- a crash of minijax is a finding
        return Row(name, "error", minijax_error=f"{type(error).__name__}: {error}")


def _flat_fn(case):
    from ..transforms.ad_util import eval_jaxpr
    program = case.program

    def fn(*flat):
        return tuple(eval_jaxpr(program.jaxpr, program.consts, flat))
    return fn


def _fresh(leaves):
    return [minijax.new_ref(np.array(x[...])) if isinstance(x, minijax.Ref) else x
            for x in leaves]


def _reference(case):
    from ..backends.reference import eval_closed_jaxpr, RefBox
    name = "invariant:reference"
    # an output that is an input comes back as given (a Python float): read it in
    # the output's dtype, as the reference evaluator writes it
    xla = [np.asarray(o, dtype=aval.dtype) for o, aval in
           zip(_flat_fn(case)(*_fresh(case.safe_leaves)), case.program.out_avals)]
    inputs = [RefBox(np.array(x[...])) if isinstance(x, minijax.Ref) else np.asarray(x)
              for x in case.safe_leaves]
    reference = [np.asarray(o) for o in eval_closed_jaxpr(case.program, *inputs)]
    from . import assert_trees_match
    try:
        # NumPy's and XLA's transcendental functions differ in the last bits, and a
        # chain of operations grows that: a loose float tolerance, exact otherwise.
        for a, e in zip(xla, reference):
            loose = 1e-2 if a.dtype.itemsize <= 2 else 1e-4
            assert_trees_match(a, e, rtol=loose if is_float(a.dtype) else 0,
                               atol=loose if is_float(a.dtype) else 0,
                               check_weak_types=False, what=name)
    except AssertionError as difference:
        return Row(name, "differ", detail=str(difference).strip().splitlines()[0])
    return Row(name, "agree")


def _differentiable(case):
    positions = [i for i, x in enumerate(case.safe_leaves)
                 if not isinstance(x, minijax.Ref) and np.asarray(x).dtype == np.float32
                 and not isinstance(x, (int, float))]
    if not positions:
        raise Skip("no float32 array argument")
    fn = _flat_fn(case)
    leaves = list(case.safe_leaves)

    def restricted(*diff):
        full = _fresh(leaves)
        for i, x in zip(positions, diff):
            full[i] = x
        outs = tuple(o for o in fn(*full) if np.asarray(o).dtype == np.float32)
        if not outs:
            raise Skip("no float32 output")
        return outs
    return restricted, [np.asarray(leaves[i]) for i in positions]


def _finite_differences(case):
    name = "invariant:fd"
    if not case.smooth:
        raise Skip("the program uses operations with kinks")
    if any(eqn.primitive.name == "stop_gradient" for eqn in eqns_nested(case.program)):
        # finite differences see the values stop_gradient passes on change; its jvp
        # says they do not, by definition (finding F45)
        raise Skip("the program uses stop_gradient")
    f, primals = _differentiable(case)
    tangents = [_tangent_like(x) for x in primals]
    _, jvp_out = _jvp(f, primals, tangents)
    plus = f(*[x + _FD_STEP * t for x, t in zip(primals, tangents)])
    minus = f(*[x - _FD_STEP * t for x, t in zip(primals, tangents)])
    for i, (j, p, m) in enumerate(zip(jvp_out, plus, minus)):
        estimate = (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * _FD_STEP)
        j = np.asarray(j, np.float64)
        scale = 1.0 + np.abs(estimate) + np.abs(j)
        if np.any(np.isfinite(estimate) & np.isfinite(j) & (np.abs(j - estimate) > 3e-2 * scale)):
            return Row(name, "differ", max_error=float(np.nanmax(np.abs(j - estimate))),
                       detail=f"output {i}: jvp {j.ravel()[:4]} vs finite differences "
                              f"{estimate.ravel()[:4]}")
    return Row(name, "agree")


def _jvp(f, primals, tangents):
    try:
        return minijax.jvp(f, tuple(primals), tuple(tangents))
    except CustomDerivativeError as error:
        # a custom_vjp function with a tangent input has no forward mode, in JAX too
        raise Skip(f"no forward mode: {error}") from error


def _dot_product(case):
    name = "invariant:dot"
    if any(eqn.primitive.name == "reduce_precision" for eqn in eqns_nested(case.program)):
        # JAX defines reduce_precision as linear (its tangent and cotangent are rounded
        # the same way), but rounding is not linear, so <v, J u> = <J^T v, u> holds
        # only to the rounding of the narrow format (seed s5more:5, 3 mantissa bits: 2%)
        raise Skip("the program uses reduce_precision, whose tangent map rounds")
    f, primals = _differentiable(case)
    tangents = [_tangent_like(x) for x in primals]
    outs, jvp_out = _jvp(f, primals, tangents)
    cotangents = tuple(_tangent_like(o) * 0.5 + 0.125 for o in outs)
    try:
        # A while_loop's refusal of reverse mode may come when the pullback runs.
        _, pullback = minijax.vjp(f, *primals)
        vjp_out = pullback(cotangents)
    except Exception as error:  # noqa: BLE001
        if "ReverseMode" in type(error).__name__:   # while_loop: forward mode only
            raise Skip(f"no reverse mode: {type(error).__name__}") from error
        raise
    left = sum(float(np.sum(np.asarray(v, np.float64) * np.asarray(j, np.float64)))
               for v, j in zip(cotangents, jvp_out))
    right = sum(float(np.sum(np.asarray(g, np.float64) * np.asarray(u, np.float64)))
                for g, u in zip(vjp_out, tangents))
    if not (np.isfinite(left) and np.isfinite(right)):
        raise Skip("non-finite derivatives")
    if abs(left - right) > 1e-3 * (1.0 + abs(left) + abs(right)):
        return Row(name, "differ", max_error=abs(left - right),
                   detail=f"<v, J u> = {left:.6g} (jvp) but <J^T v, u> = {right:.6g} (vjp)")
    return Row(name, "agree")


INVARIANT_CHECKS = {
    "invariant:reference": lambda case: _run("invariant:reference", lambda: _reference(case)),
    "invariant:fd": lambda case: _run("invariant:fd", lambda: _finite_differences(case)),
    "invariant:dot": lambda case: _run("invariant:dot", lambda: _dot_product(case)),
}
