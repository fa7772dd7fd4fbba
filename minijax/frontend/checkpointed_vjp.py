"""Checkpointed loops: reverse mode through a loop in bounded memory.

Read `checkpoint_schedules.py` (which carries a schedule keeps) and
`custom_derivatives.py` (`custom_vjp`) first. A checkpointed loop is a `custom_vjp`
function built in minijax's own IR from the traced loop body:

* the primal is the loop itself (`scan`), so outside `grad` nothing changes;
* `fwd` runs the loop once and returns, as residuals, only the carries the schedule
  stores at its top level (plus the loop's inputs, which the caller holds anyway);
* `bwd` reverses the loop segment by segment: for each segment, last first, it runs
  the body forward again from the segment's stored carry to store the next level's
  carries, and at the innermost level differentiates a short plain `scan` (whose
  residuals are then the only per-step values alive).

Every level is a `scan` with a static trip count, so the schedule is visible in
the gradient's IR as a nest of scans, one per level. The recomputation runs the
body with its `debug.print`s and callbacks removed: they happen once per step, in
the forward pass.

`checkpointed_while_loop` is the same idea with a run-time trip count: the forward
`while` writes every `k`-th carry into a buffer of `checkpoints` slots (`k =
ceil(max_steps / checkpoints)`); the backward `while` walks the recorded segments
last first and reverses each one as a scan of exactly `k` steps, those past the end
of the segment masked off (`_MaskedStep`), by the binomial schedule.

A loop body that writes refs is first rewritten (`RefsAsCarries`), and `linearize`'s
linear function runs each loop's tangent map (forward mode from the stored initial
carry), given to `custom_vjp` as `_linear_forward`.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir import primitives as P
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import aval_of, bind, current_trace, MinijaxError
from ..ir.types import RefType, ShapedArray
from ..transforms.ad_util import Zero, is_differentiable, eval_jaxpr, tangent_aval, instantiate
from ..transforms.checkpoint_schedules import make_schedule, split, Schedule
from ..transforms.control_flow_common import strip_debug_effects, split_list, reorder
from ..transforms.custom_derivatives import custom_vjp
from ..transforms.jvp import jvp_flat
from ..transforms.linearize import linearize_flat, vjp_backward
from ..transforms.remat import without_external_refs


class CheckpointedLoopError(MinijaxError, TypeError):
    """A checkpointed loop was given a body or arguments it cannot handle."""


class RefsAsCarries:
    """A loop body that closes over refs, rewritten as the remat rule rewrites a remat
    body (`remat.without_external_refs`): the refs are discharged, a ref the body only
    reads becomes a const (its value at entry), and a ref it writes becomes a leading
    carry. So the loop itself never touches a ref: `enter` reads each ref once before
    it, `leave` writes each written ref once after it, and the recomputation of the
    backward pass works on values. Refs made inside the body were values already."""

    def __init__(self, jaxpr, n_consts, n_carry, consts):
        pure = without_external_refs(jaxpr)
        self.pure, self.refs = pure, consts
        self.written = list(pure.written)
        n_in = len(jaxpr.invars)
        kept = [i for i in range(n_consts) if i not in self.written]
        n_out = pure.num_outputs
        self.jaxpr = reorder(pure.jaxpr, kept + self.written + list(range(n_consts, n_in)),
                             list(range(n_out, n_out + len(self.written))) + list(range(n_out)))
        self.kept, self.n_consts = kept, len(kept)
        self.n_carry = len(self.written) + n_carry

    def enter(self, consts, init):
        """(consts, init) of the rewritten loop: each ref read once, here."""
        entry = self.pure.entry_values(list(consts))
        return [entry[i] for i in self.kept], [entry[i] for i in self.written] + list(init)

    def leave(self, carry):
        """The loop's carry without the refs' values, which are written back, here."""
        for position, final in zip(self.written, carry[:len(self.written)]):
            # a ref is not differentiated (as under remat): what it holds is a value
            bind(P.swap_p, self.refs[position], lax.stop_gradient(final))
        return carry[len(self.written):]


def has_ref_consts(consts) -> bool:
    return any(isinstance(aval_of(c), RefType) for c in consts)


class LoopBody:
    """A traced loop body `(consts, carry, x) -> (carry, y)` as flat leaves, with the
    copy the backward pass re-runs (no debug effects) and which leaves are
    differentiable. Refs must have been rewritten away (`RefsAsCarries`)."""

    def __init__(self, jaxpr, n_consts, n_carry, where):
        if any(isinstance(v.aval, RefType) for v in jaxpr.invars):
            raise CheckpointedLoopError(f"{where}: a checkpointed loop's condition may "
                                        f"not read refs; read them in the body")
        self.jaxpr, self.recompute_jaxpr = jaxpr, strip_debug_effects(jaxpr)
        self.n_consts, self.n_carry = n_consts, n_carry
        self.n_xs = len(jaxpr.invars) - n_consts - n_carry
        avals = jaxpr.in_avals
        self.const_diff = [is_differentiable(a) for a in avals[:n_consts]]
        self.carry_diff = [is_differentiable(a) for a in avals[n_consts:n_consts + n_carry]]
        self.x_diff = [is_differentiable(a) for a in avals[n_consts + n_carry:]]
        self.y_avals = jaxpr.out_avals[n_carry:]
        self.y_diff = [is_differentiable(a) for a in self.y_avals]

    def step(self, consts, carry, x, recompute=False):
        jaxpr = self.recompute_jaxpr if recompute else self.jaxpr
        outs = eval_jaxpr(jaxpr, (), list(consts) + list(carry) + list(x))
        return outs[:self.n_carry], outs[self.n_carry:]


def _pick(values, mask):
    return [v for v, m in zip(values, mask) if m]


def _merge(diff_values, all_values, mask):
    """`all_values` with the masked positions replaced by `diff_values`, in order."""
    it = iter(diff_values)
    return [next(it) if m else v for v, m in zip(all_values, mask)]


def _zeros_like(x):
    a = aval_of(x)
    return lax.full(a.shape, 0, a.dtype)


def _rows(xs, start, stop):
    return [lax.slice_in_dim(x, start, stop, axis=0) for x in xs]


def _chunked(xs, q, chunk):
    """The first `q * chunk` rows of each array, as `q` chunks of `chunk` rows."""
    return [lax.reshape(lax.slice_in_dim(x, 0, q * chunk, axis=0),
                        (q, chunk) + tuple(aval_of(x).shape[1:])) for x in xs]


def _unchunked(xs):
    return [lax.reshape(x, (aval_of(x).shape[0] * aval_of(x).shape[1],)
                        + tuple(aval_of(x).shape[2:])) for x in xs]


def _concat(parts_a, parts_b):
    return [lax.concatenate([a, b], 0) for a, b in zip(parts_a, parts_b)]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


# -- the forward pass ------------------------------------------------------------------------

def _plain_scan(body, consts, carry, xs, length, recompute=False):
    def one(c, x):
        c, y = body.step(consts, c, x, recompute)
        return tuple(c), tuple(y)
    carry, ys = lax.scan(one, tuple(carry), tuple(xs), length=length)
    return list(carry), list(ys)


def _forward(body, schedule: Schedule, consts, init, xs):
    """The primal loop, storing the top level's checkpoints: returns `(carry, ys,
    starts, end)`, `starts` the carries entering each top-level chunk and `end` the
    carry entering the remainder."""
    n = schedule.length
    cut = split(n, 0, schedule.chunks)
    q, chunk, r, _ = cut

    def run_chunk(c, x):
        end, ys = _plain_scan(body, consts, list(c), list(x), chunk)
        return tuple(end), (tuple(c), tuple(ys))
    end, (starts, ys) = lax.scan(run_chunk, tuple(init), tuple(_chunked(xs, q, chunk)),
                                 length=q)
    end, starts, ys = list(end), list(starts), _unchunked(list(ys))
    carry = end
    if r:
        carry, ys_r = _plain_scan(body, consts, end, _rows(xs, q * chunk, n), r)
        ys = _concat(ys, ys_r)
    return carry, ys, starts, end


def _advance(body, consts, start, xs, q, chunk, r):
    """Recompute (no ys, no prints) the carries entering a segment's chunks: returns
    `(starts, end)`, `end` the carry entering the remainder (or the last chunk)."""
    advanced = q if r else q - 1

    def run_chunk(c, x):
        end, _ = _plain_scan(body, consts, list(c), list(x), chunk, recompute=True)
        return tuple(end), tuple(c)
    end, starts = lax.scan(run_chunk, tuple(start), tuple(_chunked(xs, advanced, chunk)),
                           length=advanced)
    starts, end = list(starts), list(end)
    if not r:
        starts = _concat(starts, [lax.expand_dims(e, (0,)) for e in end])
    return starts, end


# -- the backward pass -----------------------------------------------------------------------

def _base_vjp(body, consts, start, xs, m, ct_carry, ct_ys):
    """Reverse `m` steps as a plain scan (storing its residuals). Cotangents are lists
    over the differentiable leaves only; returns (ct consts, ct start, ct xs)."""
    def loop(*leaves):
        c, s, x = split_list(leaves, [len(consts), len(start)])
        carry, ys = _plain_scan(body, c, s, x, m, recompute=True)
        return _pick(carry, body.carry_diff) + _pick(ys, body.y_diff)
    lin = linearize_flat(loop, list(consts) + list(start) + list(xs))
    cts = iter(vjp_backward(lin, list(ct_carry) + list(ct_ys)))
    out = []
    for value, diff in zip(list(consts) + list(start) + list(xs), lin.differentiable):
        if diff:
            ct = next(cts)
            out.append(_zeros_like(value) if type(ct) is Zero else ct)
    ct_k, ct_s, ct_x = split_list(out, [sum(body.const_diff), sum(body.carry_diff)])
    return ct_k, ct_s, ct_x


def _segment_vjp(body, schedule, consts, level, m, start, xs, ct_carry, ct_ys):
    """Reverse a segment of `m` steps at `level` (`checkpoint_schedules.split`)."""
    cut = split(m, level, schedule.chunks)
    if cut is None:
        return _base_vjp(body, consts, start, xs, m, ct_carry, ct_ys)
    q, chunk, r, level = cut
    starts, end = _advance(body, consts, start, xs, q, chunk, r)
    return _reverse_chunks(body, schedule, consts, level, q, chunk, r, starts, end, xs,
                           ct_carry, ct_ys)


def _reverse_chunks(body, schedule, consts, level, q, chunk, r, starts, end, xs,
                    ct_carry, ct_ys):
    """Reverse the remainder (entered with carry `end`), then the `q` chunks (entered
    with `starts`) in a reverse `scan`, each one a segment of `level + 1`."""
    ct_consts = [_zeros_like(k) for k in _pick(consts, body.const_diff)]
    ct_xs_rest = None
    if r:
        ct_k, ct_carry, ct_xs_rest = _segment_vjp(
            body, schedule, consts, level + 1, r, end, _rows(xs, q * chunk, q * chunk + r),
            ct_carry, _rows(ct_ys, q * chunk, q * chunk + r))
        ct_consts = _add(ct_consts, ct_k)
    n_ct = len(ct_carry)

    def reverse_chunk(acc, per_chunk):
        ct_c, ct_k = split_list(list(acc), [n_ct])
        start, x, ct_y = per_chunk
        ct_k2, ct_start, ct_x = _segment_vjp(body, schedule, consts, level + 1, chunk,
                                             list(start), list(x), ct_c, list(ct_y))
        return tuple(ct_start) + tuple(_add(ct_k, ct_k2)), tuple(ct_x)
    acc, ct_xs = lax.scan(reverse_chunk, tuple(ct_carry) + tuple(ct_consts),
                          (tuple(starts), tuple(_chunked(xs, q, chunk)),
                           tuple(_chunked(ct_ys, q, chunk))),
                          length=q, reverse=True)
    ct_start, ct_consts = split_list(list(acc), [n_ct])
    ct_xs = _unchunked(list(ct_xs))
    if ct_xs_rest is not None:
        ct_xs = _concat(ct_xs, ct_xs_rest)
    return ct_consts, ct_start, ct_xs


# -- forward mode from the residuals -----------------------------------------------------------

def _tangent_map(run, primals, masks, tangents):
    """Output tangents of `run(*primals)` (its differentiable outputs) for `tangents`
    of the differentiable primals: forward mode, one pass, nothing stored. This is
    what applying `linearize`'s linear function to a checkpointed loop runs."""
    mask = [m for group in masks for m in group]
    it = iter(tangents)
    tangent_in = [next(it) if m else Zero(tangent_aval(aval_of(p)))
                  for p, m in zip(primals, mask)]
    result = jvp_flat(lambda *xs: run(*xs), primals, tangent_in, current_trace())
    return [instantiate(t) for t in result.tangents_out]


# -- checkpointed scan -----------------------------------------------------------------------

def checkpointed_scan_flat(body: LoopBody, schedule: Schedule, consts, init, xs):
    """`scan` of `body` over flat leaves, differentiated by `schedule`: returns
    `(final carry, ys)` as lists."""
    n = schedule.length
    if split(n, 0, schedule.chunks) is None:
        # Nothing to split ("all", or too short): today's scan.
        return _plain_scan(body, consts, init, xs, n)

    def checkpointed_scan(consts, init, xs):
        carry, ys = _plain_scan(body, consts, init, xs, n)
        return tuple(carry), tuple(ys)

    def store_checkpoints(consts, init, xs):
        carry, ys, starts, end = _forward(body, schedule, consts, init, xs)
        return (tuple(carry), tuple(ys)), (consts, xs, starts, end)

    def reverse_segments(residuals, cts):
        consts, xs, starts, end = residuals
        ct_carry, ct_ys = cts
        q, chunk, r, level = split(n, 0, schedule.chunks)
        ct_k, ct_init, ct_xs = _reverse_chunks(
            body, schedule, list(consts), level, q, chunk, r, list(starts), list(end),
            list(xs), _pick(ct_carry, body.carry_diff), _pick(ct_ys, body.y_diff))
        return (_merge(ct_k, [None] * len(consts), body.const_diff),
                _merge(ct_init, [None] * body.n_carry, body.carry_diff),
                _merge(ct_xs, [None] * body.n_xs, body.x_diff))

    def tangent_map(residuals, tangents):
        consts, xs, starts, _ = residuals
        init = [lax.index_in_dim(s, 0, 0, keepdims=False) for s in starts]

        def loop(*leaves):
            k, c, x = split_list(leaves, [len(consts), len(init)])
            carry, ys = _plain_scan(body, k, c, x, n, recompute=True)
            return _pick(carry, body.carry_diff) + _pick(ys, body.y_diff)
        return _tangent_map(loop, list(consts) + init + list(xs),
                            [body.const_diff, body.carry_diff, body.x_diff], tangents)

    # The call's name says the schedule, so the IR shows it before differentiation too.
    checkpointed_scan.__name__ = (f"checkpointed_scan_{schedule.kind}_chunks_"
                                  + "_".join(map(str, schedule.chunks)))
    fun = custom_vjp(checkpointed_scan)
    fun.defvjp(store_checkpoints, reverse_segments)
    fun._linear_forward = tangent_map
    carry, ys = fun(list(consts), list(init), list(xs))
    return list(carry), list(ys)



# -- checkpointed while loop -----------------------------------------------------------------

def while_segment_size(max_steps: int, checkpoints) -> tuple:
    """`(slots, k)`: the forward pass stores the carry entering every `k`-th step into
    `slots` buffer rows; default `checkpoints` ceil(sqrt(max_steps))."""
    if checkpoints is None:
        checkpoints = max(1, int(np.ceil(np.sqrt(max_steps))))
    k = max(1, -(-max_steps // checkpoints))
    return max(1, -(-max_steps // k)), k


class _MaskedStep:
    """One step of a while body as a scan body over `(extra consts, consts, seg_len)`,
    carry, and the step number `i`: the step runs if `i < seg_len` and leaves the carry
    alone after. A segment of at most `k` steps is then a scan of exactly `k`."""

    def __init__(self, body: LoopBody):
        n_k = body.n_consts
        const_avals = body.jaxpr.in_avals[:n_k]
        carry_avals = body.jaxpr.in_avals[n_k:n_k + body.n_carry]
        index = ShapedArray((), np.dtype(np.int32))

        def masked(*leaves):
            k, (seg_len,), c, (i,) = split_list(leaves, [n_k, 1, body.n_carry])
            new, _ = body.step(k, c, [], recompute=True)
            return [lax.select(i < seg_len, a, b) for a, b in zip(new, c)]
        closed = trace_to_jaxpr(masked, list(const_avals) + [index] + list(carry_avals)
                                + [index])
        self.extra_consts = list(closed.consts)
        self.n_extra, self.n_body_consts = len(closed.consts), n_k
        self.body = LoopBody(convert_constvars_to_invars(closed.jaxpr),
                             len(closed.consts) + n_k + 1, body.n_carry, "a while segment")
        self.body_diff = body.const_diff

    def body_const_cts(self, cts):
        """The cotangents of the body's own differentiable consts, out of those of all
        the masked step's differentiable consts."""
        diff = self.body.const_diff
        positions = [p for p in range(len(diff)) if diff[p]]
        return [ct for ct, p in zip(cts, positions)
                if self.n_extra <= p < self.n_extra + self.n_body_consts]


def checkpointed_while_flat(cond, body: LoopBody, cond_consts, consts, init, max_steps,
                            checkpoints):
    """`while cond(carry) and steps < max_steps: carry = body(carry)` over flat leaves,
    reverse-differentiable (module docstring). `cond` is a `LoopBody` with no carry
    output: its jaxpr maps (cond consts, carry) to a bool."""
    slots, k = while_segment_size(max_steps, checkpoints)

    def keep_going(cond_consts, step, carry):
        (pred,) = eval_jaxpr(cond.jaxpr, (), list(cond_consts) + list(carry))
        return lax.bitwise_and(step < max_steps, pred)

    def checkpointed_while(cond_consts, consts, init):
        def advance(state):
            step, carry = state
            carry, _ = body.step(consts, carry, [])
            return step + 1, tuple(carry)
        _, carry = lax.while_loop(lambda s: keep_going(cond_consts, *s), advance,
                                  (np.int32(0), tuple(init)))
        return tuple(carry)

    def store_checkpoints(cond_consts, consts, init):
        buffers = tuple(lax.full((slots,) + tuple(aval_of(x).shape), 0, aval_of(x).dtype)
                        for x in init)

        def advance(state):
            step, carry, bufs = state
            slot, first = step // k, (step % k) == 0
            bufs = tuple(lax.dynamic_update_index_in_dim(
                b, lax.select(first, c, lax.dynamic_index_in_dim(b, slot, 0, False)),
                slot, 0) for b, c in zip(bufs, carry))
            carry, _ = body.step(consts, carry, [])
            return step + 1, tuple(carry), bufs
        steps, carry, bufs = lax.while_loop(lambda s: keep_going(cond_consts, s[0], s[1]),
                                            advance, (np.int32(0), tuple(init), buffers))
        return tuple(carry), (consts, bufs, steps)

    masked = _MaskedStep(body)
    segment_schedule = make_schedule(k, "binomial")

    def reverse_segments(residuals, ct_final):
        consts, bufs, steps = residuals
        ct_final = _pick(ct_final, body.carry_diff)
        ct_consts = [_zeros_like(x) for x in _pick(consts, body.const_diff)]
        n_ct = len(ct_final)

        def reverse_segment(state):
            j, acc = state
            ct_c, ct_k = split_list(list(acc), [n_ct])
            start = [lax.dynamic_index_in_dim(b, j, 0, False) for b in bufs]
            seg_len = lax.min(np.int32(k), steps - j * k)

            # The segment is a scan of k steps, those past its end masked off, and
            # is itself reversed by the binomial schedule: O(log k) carries.
            seg_consts = list(masked.extra_consts) + list(consts) + [seg_len]
            ct_all, ct_c, _ = _segment_vjp(masked.body, segment_schedule, seg_consts, 0, k,
                                           start, [np.arange(k, dtype=np.int32)], ct_c, [])
            ct_k = _add(ct_k, masked.body_const_cts(ct_all))
            acc = tuple(ct_c) + tuple(ct_k)
            return j - 1, acc
        n_segments = (steps + (k - 1)) // k
        _, acc = lax.while_loop(lambda s: s[0] >= 0, reverse_segment,
                                (n_segments - 1, tuple(ct_final) + tuple(ct_consts)))
        ct_init, ct_k = split_list(list(acc), [n_ct])
        return ([None] * len(cond_consts), _merge(ct_k, [None] * len(consts), body.const_diff),
                _merge(ct_init, [None] * body.n_carry, body.carry_diff))

    def tangent_map(residuals, tangents):
        consts, bufs, steps = residuals
        init = [lax.index_in_dim(b, 0, 0, keepdims=False) for b in bufs]

        def loop(*leaves):
            k, c = split_list(leaves, [len(consts)])

            def advance(state):
                i, carry = state
                carry, _ = body.step(k, list(carry), [], recompute=True)
                return i + 1, tuple(carry)
            _, carry = lax.while_loop(lambda s: s[0] < steps, advance,
                                      (np.int32(0), tuple(c)))
            return _pick(list(carry), body.carry_diff)
        # tangents of the cond's consts (never differentiated) come first: dropped
        return _tangent_map(loop, list(consts) + init, [body.const_diff, body.carry_diff],
                            tangents[len(tangents) - sum(body.const_diff)
                                     - sum(body.carry_diff):])

    fun = custom_vjp(checkpointed_while)
    fun.defvjp(store_checkpoints, reverse_segments)
    fun._linear_forward = tangent_map
    return list(fun(list(cond_consts), list(consts), list(init)))
