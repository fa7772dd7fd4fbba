"""The reference evaluator's rules for control flow: plain Python `if`, `while`, `for`.

Read `reference.py` first. These rules say what the control-flow primitives *mean*,
with no XLA in sight: a `cond` runs one branch, a `while` loops while its predicate
holds, a `scan` steps through the leading axis of its `xs` and stacks the `ys`.
Bodies are evaluated recursively with `eval_jaxpr`, so a body's ref writes land in
the caller's `RefBox`es and its prints happen in program order.
"""
from __future__ import annotations

import sys

import numpy as np

from ..ir import control_flow_primitives as CF
from ..ir.linear_solve_primitive import linear_solve_p, split_operands
from ..ir.types import canonical_dtype
from .reference import reference_rules, eval_jaxpr


def _cond(index, *operands, branches):
    # minijax.lax.switch clamps the index; clamping here too makes hand-written IR safe.
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return eval_jaxpr(branches[i], (), *operands)


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_jaxpr(cond_jaxpr, (), *cond_consts, *carry)[0]):
        carry = eval_jaxpr(body_jaxpr, (), *body_consts, *carry)
    return [np.asarray(c, dtype=v.dtype) for c, v in zip(carry, body_jaxpr.out_avals)]


def _scan(*args, jaxpr, num_consts, num_carry, length, reverse=False, unroll=1):
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.zeros((length,) + a.shape, a.dtype) for a in y_avals]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = eval_jaxpr(jaxpr, (), *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, value in zip(ys, outs[num_carry:]):
            y[i] = value
    return [np.asarray(c, dtype=v.dtype) for c, v in
            zip(carry, jaxpr.in_avals[num_consts:num_consts + num_carry])] + ys


def _debug_print(*values, fmt, layout):
    sys.stdout.write(CF.format_debug_print(fmt, layout, values) + "\n")
    return []


def _debug_callback(*values, callback):
    callback(*[np.asarray(v) for v in values])
    return []


def _pure_callback(*values, callback, result_shapes, result_dtypes, vmap_method):
    results = callback(*[np.asarray(v) for v in values])
    return [check_callback_result(i, result, shape, dtype)
            for i, (result, shape, dtype) in enumerate(zip(results, result_shapes,
                                                           result_dtypes))]


def _io_callback(*values, callback, result_shapes, result_dtypes, ordered):
    return _pure_callback(*values, callback=callback, result_shapes=result_shapes,
                          result_dtypes=result_dtypes, vmap_method=None)


def check_callback_result(position, result, shape, dtype):
    """A callback's result `position` as the declared array, or the error JAX gives."""
    result = np.asarray(result)
    if result.shape != tuple(shape):
        raise ValueError(f"Incorrect output shape for return value {position}: Expected: "
                         f"{tuple(shape)}, Actual: {result.shape}")
    if canonical_dtype(result.dtype) != dtype:
        raise ValueError(f"Incorrect output dtype for return value {position}: Expected: "
                         f"{np.dtype(dtype)}, Actual: {result.dtype}")
    return result.astype(dtype)


def _linear_solve(*args, const_lengths, jaxprs):
    groups, b = split_operands(args, const_lengths)
    return eval_jaxpr(jaxprs[2], (), *groups[2], *b)


reference_rules[CF.cond_p] = _cond
reference_rules[CF.while_p] = _while
reference_rules[CF.scan_p] = _scan
reference_rules[CF.debug_print_p] = _debug_print
reference_rules[CF.debug_callback_p] = _debug_callback
reference_rules[CF.pure_callback_p] = _pure_callback
reference_rules[linear_solve_p] = _linear_solve
reference_rules[CF.io_callback_p] = _io_callback
