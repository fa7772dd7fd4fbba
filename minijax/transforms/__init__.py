"""minijax's passes: each is an IR -> IR function a learner can call and print.

Autodiff, in reading order:

  ad_util.py       symbolic zeros, float0 tangents, `eval_jaxpr`
  jvp.py           the JVP trace and `jvp_jaxpr`            (rules: jvp_rules.py)
  partial_eval.py  the partial evaluator and `partial_eval_jaxpr` -- the hub
  dce.py           `dce_jaxpr`
  transpose.py     `backward_pass` and `transpose_jaxpr`   (rules: transpose_rules.py)
  linearize.py     linearize = jvp + partial eval; vjp = linearize + transpose
  calls.py         the `jit` primitive under each of these passes
  custom_derivatives.py  `custom_jvp` / `custom_vjp` and their primitives

Printing every stage of `grad` for one function is in docs/autodiff.md:

    closed = minijax.make_jaxpr(f)(x)
    jvp = jvp_jaxpr(closed)                                  # primals, tangents -> both
    split = partial_eval_jaxpr(jvp, [False, True])           # known / staged + residuals
    backward = transpose_jaxpr(split.staged_jaxpr, [False] * split.num_residuals + [True])
"""
from .ad_util import Zero, eval_jaxpr
from .jvp import jvp_jaxpr, JVPTrace, JVPTracer, jvp_rules
from .partial_eval import (partial_eval_jaxpr, PartialEvalResult, PartialEvalTrace,
                           save_everything, partial_eval_rules)
from .dce import dce_jaxpr, DceResult
from .transpose import transpose_jaxpr, backward_pass, UndefinedPrimal, transpose_rules
from .linearize import linearize_flat, Linearized
from . import calls as _calls  # noqa: F401  (registers the jit rules)
from . import custom_derivatives as _custom_derivatives  # noqa: F401
from . import refs as _refs  # noqa: F401  (registers every ref rule)
from . import special_rules as _special_rules  # noqa: F401  (lgamma, igamma, ...)
from . import random_rules as _random_rules  # noqa: F401  (bit ops, erf_inv, keys)

__all__ = ["jvp_jaxpr", "partial_eval_jaxpr", "transpose_jaxpr", "dce_jaxpr",
           "PartialEvalResult", "DceResult", "Zero"]
from .vmap import vmap_jaxpr
