"""JAX's `jax.extend.core`: primitives of your own, and the IR's data structures.

`Primitive(name)` makes an operation of minijax's IR that the user gives meaning to
with JAX's API: `def_impl` (eager), `def_abstract_eval` (its type rule), and the
tables of `minijax.interpreters` (`ad.primitive_jvps`, `ad.primitive_transposes`,
`batching.primitive_batchers`, `mlir.register_lowering`). Each rule goes into
minijax's own rule table for that pass, translated from JAX's signature to
minijax's (docs/primitives.md), so every pass treats the
primitive as one of its own.

A user's primitive is kept out of the catalogue (`primitives_by_name`): two
libraries may name their primitives alike, as JAX allows, the IR text parser does
not know it, and `python -m minijax rules` and the rule-coverage tests list the
catalogue only, so a primitive a test makes does not show there.

`Jaxpr`, `ClosedJaxpr`, `Literal` and `Var` are minijax's own (`ir/core.py`), so they
have minijax's fields and constructors (an equation's `inputs`/`outputs`, not JAX's
`invars`/`outvars`; `Jaxpr(constvars, invars, eqns, outvars)`);
JAX's `JaxprEqn` and its jaxpr-building helpers are not here for that reason.
"""
from __future__ import annotations

import functools as _functools

from ...frontend.user_primitives import Primitive
from ...ir.core import ClosedJaxpr, Jaxpr, Literal, Var
from ...transforms.ad_util import eval_jaxpr as _eval_jaxpr
from . import primitives

__all__ = ["ClosedJaxpr", "Jaxpr", "Literal", "Primitive", "Var", "jaxpr_as_fun",
           "primitives"]


def _run_closed_jaxpr(closed_jaxpr, *args):
    return _eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, args)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args):
    """A function that runs `closed_jaxpr`, as JAX's (curried: the arguments given
    here come first): `jaxpr_as_fun(make_jaxpr(f)(x))(x)` is `f(x)`'s outputs, as a
    list. It binds each equation in the current trace, so transformations apply."""
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun takes a ClosedJaxpr (what make_jaxpr returns), "
                        f"got {type(closed_jaxpr).__name__}")
    return _functools.partial(_run_closed_jaxpr, closed_jaxpr, *args)
