"""The public checkpointed loops: `checkpointed_scan`, `checkpointed_while_loop`,
`checkpoint_schedule` (re-exported by `minijax.ad_checkpoint`).

Read `transforms/checkpoint_schedules.py` (the schedules) and
`frontend/checkpointed_vjp.py` (the construction) first. This module checks the
user's arguments and traces the body once, as `lax.scan` / `lax.while_loop` do.
"""
from __future__ import annotations

from typing import Callable

from jax import tree_util

from .pytrees import fun_name
from ..ir.trace import aval_of
from ..ir.types import ShapedArray, is_bool
from .control_flow import (ControlFlowError, _flatten, _reject_refs, _trace_loop_body,
                           _trace_body, _show_tree, scan_length, trace_scan_body)
from ..numpy._shape import flip
from ..transforms.checkpoint_schedules import make_schedule, describe, Schedule
from .checkpointed_vjp import (LoopBody, RefsAsCarries, has_ref_consts,
                                            checkpointed_scan_flat, checkpointed_while_flat,
                                            CheckpointedLoopError)
from ..transforms.control_flow_common import with_unused_inputs

__all__ = ["checkpointed_scan", "checkpointed_while_loop", "checkpoint_schedule"]


class ScheduleView:
    """`checkpoint_schedule(...)`: the schedule, printable (`describe`)."""

    def __init__(self, schedule: Schedule):
        self.schedule = schedule

    def __repr__(self):
        return describe(self.schedule)


def checkpoint_schedule(length: int, schedule: str = "binomial", checkpoints=None):
    """Which carries a `checkpointed_scan` of `length` steps stores, and how often each
    step is recomputed in the backward pass: print it (REPL: just evaluate it)."""
    return ScheduleView(make_schedule(length, schedule, checkpoints))


def checkpointed_scan(f: Callable, init, xs=None, length: int | None = None, *,
                      reverse: bool = False, checkpoints: int | None = None,
                      schedule: str = "binomial"):
    """`lax.scan(f, init, xs, length, reverse)` -- the same results -- whose reverse
    pass stores only `checkpoints` carries and recomputes the others from the nearest
    stored one. `schedule`: `"binomial"` (O(log n) memory, O(n log n) recomputation;
    default `checkpoints` 2*ceil(log2 n)), `"sqrt"` (two levels: `checkpoints`
    carries, default ceil(sqrt n), plus one segment of n/checkpoints steps) or
    `"all"` (`lax.scan`'s own: every step stored). Gradients equal `lax.scan`'s."""
    where = f"checkpointed_scan ({fun_name(f)})"
    _reject_refs(init, where, "loop carry (init)")
    _reject_refs(xs, where, "scanned-over values (xs)")
    carry_leaves, carry_tree = _flatten(init, f"{where} init")
    x_leaves, _ = _flatten(xs, f"{where} xs")
    n = scan_length(x_leaves, length, where)
    plan = make_schedule(n, schedule, checkpoints)
    num_carry = len(carry_leaves)
    traced, carry_leaves, _ = trace_scan_body(f, (init, xs), carry_leaves, carry_tree,
                                              x_leaves, where)
    jaxpr, consts, refs = traced.jaxpr, traced.consts, None
    if has_ref_consts(consts):
        refs = RefsAsCarries(jaxpr, len(consts), num_carry, consts)
        jaxpr, (consts, carry_leaves) = refs.jaxpr, refs.enter(consts, carry_leaves)
    body = LoopBody(jaxpr, len(consts), len(carry_leaves), where)
    if reverse:
        x_leaves = [flip(x, 0) for x in x_leaves]
    carry, ys = checkpointed_scan_flat(body, plan, consts, carry_leaves, x_leaves)
    if reverse:
        ys = [flip(y, 0) for y in ys]
    if refs is not None:
        carry = refs.leave(carry)
    _, y_tree = traced.out_tree.children()
    return (tree_util.tree_unflatten(carry_tree, carry),
            tree_util.tree_unflatten(y_tree, ys))


def checkpointed_while_loop(cond_fun: Callable, body_fun: Callable, init_val, *,
                            max_steps: int, checkpoints: int | None = None):
    """`lax.while_loop(cond_fun, body_fun, init_val)` that stops after at most
    `max_steps` steps, and that `grad`, `vjp` and `linearize` go through: gradients
    are those of the loop unrolled for the steps it took. The forward pass stores the
    carry entering every `k`-th step, `k = ceil(max_steps / checkpoints)` (default
    `checkpoints` ceil(sqrt(max_steps))); the backward pass reverses each segment of
    at most `k` steps from its stored carry by the binomial schedule. Memory:
    `checkpoints` carries plus O(log k)."""
    where = f"checkpointed_while_loop ({fun_name(body_fun)})"
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 0:
        raise CheckpointedLoopError(f"{where}: max_steps must be a non-negative int (a "
                                    f"static bound on the number of steps), got "
                                    f"{max_steps!r}")
    if checkpoints is not None and (not isinstance(checkpoints, int)
                                    or isinstance(checkpoints, bool) or checkpoints < 1):
        raise CheckpointedLoopError(f"{where}: checkpoints must be a positive int, got "
                                    f"{checkpoints!r}")
    _reject_refs(init_val, where, "loop carry (init_val)")
    carry_leaves, carry_tree = _flatten(init_val, f"{where} init_val")
    in_tree = tree_util.tree_structure((init_val,))
    traced, carry_leaves, carry_avals = _trace_loop_body(
        body_fun, in_tree, carry_leaves, carry_tree, [aval_of(x) for x in carry_leaves],
        [], where, lambda body: (body.out_tree, body.out_avals))
    cond_traced = _trace_body(cond_fun, in_tree, carry_avals,
                              f"checkpointed_while_loop cond_fun ({fun_name(cond_fun)})")
    out = cond_traced.out_avals
    if len(out) != 1 or not isinstance(out[0], ShapedArray) or out[0].shape != () \
            or not is_bool(out[0].dtype):
        raise ControlFlowError(
            f"checkpointed_while_loop: cond_fun ({fun_name(cond_fun)}) must return a "
            f"boolean scalar, got {_show_tree(cond_traced.out_tree, out)}")
    if max_steps == 0:
        return init_val
    jaxpr, consts, refs = traced.jaxpr, traced.consts, None
    cond_jaxpr = cond_traced.jaxpr
    if has_ref_consts(consts):
        refs = RefsAsCarries(jaxpr, len(consts), len(carry_leaves), consts)
        jaxpr, (consts, carry_leaves) = refs.jaxpr, refs.enter(consts, carry_leaves)
        # the condition does not see the refs' values riding in the carry
        cond_jaxpr = with_unused_inputs(cond_jaxpr, len(cond_traced.consts),
                                        refs.jaxpr.in_avals[len(consts):len(consts)
                                                            + len(refs.written)])
    body = LoopBody(jaxpr, len(consts), len(carry_leaves), where)
    cond = LoopBody(cond_jaxpr, len(cond_traced.consts), 0, where)
    outs = checkpointed_while_flat(cond, body, cond_traced.consts, consts, carry_leaves,
                                   max_steps, checkpoints)
    if refs is not None:
        outs = refs.leave(outs)
    return tree_util.tree_unflatten(carry_tree, outs)
