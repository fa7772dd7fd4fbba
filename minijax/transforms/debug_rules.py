"""`debug_print` and `debug_callback` under every pass: printed once, never dropped.

Read `minijax/debug.py` first. These equations have no outputs and the `Debug`
effect; what each pass does with them decides how often the user sees a print:

* jvp: print the *primal* values, once. The tangents are not printed (JAX prints
  only primals too), and the equation has no outputs, so there is no tangent.
* partial eval (linearize, grad): the printed primals are known, so the print runs
  with the known computation -- once, in the forward pass. It is never staged into
  the linear program, so the backward pass prints nothing. (A print of an unknown
  value is staged as is: it prints when that value exists.)
* transpose: a print inside a linear program (one of a tangent) is dropped: the
  backward pass computes cotangents, there is no tangent left to show.
* vmap: one print per example ("lane"), each showing that example's values, in lane
  order -- a user who vmaps a function expects to see what each call would print.
  A callback with a `vmap_rule` of its own batches itself (a checkify `check`
  reduces its lanes to one error).
* DCE keeps every equation with an effect, so prints survive without a rule.
"""
from __future__ import annotations

from ..ir import control_flow_primitives as CF
from ..ir.trace import bind
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules
from .vmap import vmap_rules, Batched, not_mapped
from .batching import lane_of


def _print_primals(prim):
    def rule(primals, tangents, **params):
        bind(prim, *primals, **params)
        return JvpResult([], [])
    return rule


def _no_cotangents(cts, *args, **params):
    return [None] * len(args)


def _print_per_lane(prim):
    def rule(axis_size, values, dims, **params):
        own_rule = getattr(params.get("callback"), "vmap_rule", None)
        if own_rule is not None:
            return own_rule(axis_size, values, dims)
        for lane in range(axis_size):
            bind(prim, *[v if d is not_mapped else lane_of(v, d, lane)
                         for v, d in zip(values, dims)], **params)
        return Batched([], [])
    return rule


for _prim in (CF.debug_print_p, CF.debug_callback_p):
    jvp_rules[_prim] = _print_primals(_prim)
    transpose_rules[_prim] = _no_cotangents
    vmap_rules[_prim] = _print_per_lane(_prim)
