"""The reference evaluator: a NumPy interpreter of the IR, equation by equation.

This is minijax's independent oracle (it never calls JAX, so when it and the XLA
backend disagree one of them is wrong) and the engine of the REPL's step-through
debugger. Read this module first, then `reference_rules.py` for the array
primitives.

* `eval_jaxpr(jaxpr, consts, *args, on_equation=None)` runs a jaxpr on NumPy values
  and returns the list of outputs; `eval_closed_jaxpr(closed_jaxpr, *args)` supplies
  the consts itself.
* `reference_rules[prim](*values, **params) -> list of NumPy arrays` says what each
  primitive computes. Values are NumPy arrays in exactly the dtypes of the avals
  (a weakly typed f32 is a float32 array; bf16 is `ml_dtypes.bfloat16`); a ref is a
  `RefBox`.
* `RefBox` is a ref's value here: a mutable cell holding an array. `new_ref` and
  `empty_ref` make one, `get`/`swap`/`addupdate` read and write it, `freeze` reads it
  for the last time and `free_ref` releases it; touching it afterwards is an error.
  The call primitive `jit` evaluates its sub-jaxpr recursively, passing boxes through,
  so a callee's writes are seen by the caller.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr, ClosedJaxpr, Literal
from ..ir.trace import MinijaxError
from ..ir.types import RefType, ShapedArray, is_key, keys_as_numpy
from .reference_rules import reference_rules
from ..ir.custom_primitives import (custom_jvp_call_p, custom_vjp_call_p, custom_lin_p,
                                    custom_vmap_call_p)
from ..transforms.custom_derivatives import custom_lin_forward

__all__ = ["reference_rules", "eval_jaxpr", "eval_closed_jaxpr", "RefBox"]


class RefBox:
    """A mutable array cell: the reference evaluator's value for a `Ref{...}` var.

    `value` is replaced on every write, never modified in place, so an array read
    from a box earlier keeps its contents. `state` is 'live', 'frozen' or 'freed'."""
    __slots__ = ("value", "state")

    def __init__(self, value):
        self.value = np.array(value)       # a copy: the box owns its contents
        self.state = "live"

    @property
    def aval(self) -> RefType:
        return RefType(ShapedArray(self.value.shape, self.value.dtype))

    def read(self, what: str) -> np.ndarray:
        if self.state != "live":
            raise MinijaxError(f"{what} of a ref that was already {self.state}: a ref "
                               f"cannot be used after freeze or free_ref")
        return self.value

    def __repr__(self):
        state = "" if self.state == "live" else f", {self.state}"
        contents = np.array2string(self.value, separator=", ", threshold=20)
        return f"RefBox({self.aval.inner.type_text()}{state}: {contents})"


# -- refs -------------------------------------------------------------------------------

def _swap(ref, value):
    old = ref.read("swap")
    ref.value = np.array(value)
    return [old]


def _addupdate(ref, value):
    ref.value = reference_rules[P.add_p](ref.read("addupdate"), value)[0]
    return []


def _freeze(ref):
    value = ref.read("freeze")
    ref.state = "frozen"
    return [value]


def _free_ref(ref):
    ref.read("free_ref")
    ref.state = "freed"
    return []


reference_rules[P.new_ref_p] = lambda x: [RefBox(x)]
# Contents of an empty ref are unspecified until written; zeros make runs reproducible.
reference_rules[P.empty_ref_p] = lambda *, shape, dtype: [RefBox(np.zeros(shape, dtype))]
reference_rules[P.get_p] = lambda ref: [ref.read("get")]
reference_rules[P.swap_p] = _swap
reference_rules[P.addupdate_p] = _addupdate
reference_rules[P.freeze_p] = _freeze
reference_rules[P.free_ref_p] = _free_ref


# -- calls ------------------------------------------------------------------------------

def _jit(*args, jaxpr, name, inline=False):
    return eval_jaxpr(jaxpr, (), *args)


reference_rules[P.jit_p] = _jit


def _custom_call(*args, call_jaxpr, num_consts, rule, name):
    # Custom derivative rules only matter to AD; evaluation runs the primal body.
    return eval_jaxpr(call_jaxpr, (), *args)


reference_rules[custom_jvp_call_p] = _custom_call
reference_rules[custom_vjp_call_p] = _custom_call
reference_rules[custom_vmap_call_p] = _custom_call


def _custom_lin(*args, rule, num_residuals, name):
    closed = custom_lin_forward(rule, num_residuals, name)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


reference_rules[custom_lin_p] = _custom_lin


# -- the interpreter -------------------------------------------------------------------------

OnEquation = Callable[[Eqn, list, list], None]


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, on_equation: OnEquation | None = None) -> list:
    """Evaluate `jaxpr` on `consts` (for its constvars) and `args` (for its invars).

    Array inputs may be NumPy or jax arrays or Python scalars; they are converted to
    the dtypes of the avals. A `Ref{...}` input must be a `RefBox`, which is updated
    in place, so the caller sees the final contents. Returns a list of NumPy arrays
    (and `RefBox`es for ref outputs). Inputs are never modified, but outputs may share
    memory with them, as NumPy views do.

    `on_equation(eqn, in_values, out_values)`, if given, is called after each
    equation of `jaxpr` has run, in program order, with the values it consumed and
    produced. It is the hook of the step-through debugger (the REPL's `:step`): it
    can print, record, or stop evaluation by raising. Ref inputs are passed as their
    `RefBox`es, so they show the contents *after* the equation. A `jit` equation is
    one step; to step into it, evaluate `eqn.params['jaxpr']` on `in_values`.
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise MinijaxError(f"the jaxpr takes {len(jaxpr.constvars)} consts and "
                           f"{len(jaxpr.invars)} arguments; got {len(consts)} and {len(args)}")
    env: dict = {}
    for i, (var, value) in enumerate(zip(jaxpr.constvars, consts)):
        env[var] = _input_value(var.aval, value, f"const {i}")
    for i, (var, value) in enumerate(zip(jaxpr.invars, args)):
        env[var] = _input_value(var.aval, value, f"argument {i}")

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[atom]

    # IEEE special values (inf, NaN, wrapping) are results here, not mistakes.
    with np.errstate(all="ignore"):
        for eqn in jaxpr.eqns:
            rule = reference_rules.get(eqn.primitive)
            if rule is None:
                raise NotImplementedError(f"the reference evaluator has no rule for "
                                          f"{eqn.primitive.name}")
            in_values = [read(atom) for atom in eqn.inputs]
            out_values = rule(*in_values, **eqn.params)
            _check_outputs(eqn, out_values)
            if on_equation is not None:
                on_equation(eqn, in_values, out_values)
            for var, value in zip(eqn.outputs, out_values):
                env[var] = value
    return [read(atom) for atom in jaxpr.outvars]


def eval_closed_jaxpr(closed_jaxpr: ClosedJaxpr, *args, on_equation=None) -> list:
    """`eval_jaxpr` with the closed jaxpr's own consts."""
    return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args,
                      on_equation=on_equation)


def _input_value(aval, value, what):
    if isinstance(aval, RefType):
        if not isinstance(value, RefBox):
            raise MinijaxError(f"{what} has type {aval} and must be a RefBox, got "
                               f"{type(value).__name__}")
        if value.aval.inner != aval.inner.strip_weak_type():
            raise MinijaxError(f"{what} has type {aval} but is a box of {value.aval}")
        return value
    array = keys_as_numpy(value) if is_key(aval.dtype) else np.asarray(value)
    if array.shape != aval.shape:
        raise MinijaxError(f"{what} should have type {aval}, got shape {array.shape}")
    return array if array.dtype == aval.dtype else array.astype(aval.dtype)


def _check_outputs(eqn, out_values):
    """A rule's results must have exactly the types the type rule declared: a cheap
    check that the two tables agree, so a disagreement is reported where it starts."""
    if len(out_values) != len(eqn.outputs):
        raise TypeError(f"the reference rule of {eqn.primitive.name} returned "
                        f"{len(out_values)} values for {len(eqn.outputs)} outputs")
    for k, (var, value) in enumerate(zip(eqn.outputs, out_values)):
        aval = var.aval
        if isinstance(aval, RefType):
            ok = isinstance(value, RefBox) and value.aval.inner == aval.inner.strip_weak_type()
        else:
            ok = (isinstance(value, np.ndarray) and value.shape == aval.shape
                  and value.dtype == aval.dtype)
        if not ok:
            got = value.aval if isinstance(value, RefBox) else (
                f"{getattr(value, 'dtype', type(value).__name__)}{list(np.shape(value))}")
            raise TypeError(f"the reference rule of {eqn.primitive.name} returned {got} "
                            f"for output {k}, but its type is {aval}")
