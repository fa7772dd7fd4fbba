"""Batching (vmap): run a program written for one example on a whole batch at once.

Read `ir/trace.py` (stackless tracing) first. Then this file, then `vmap_rules.py`.

A *batched value* is a pair `(value, batch_dim)`: `value` holds every example
stacked along axis `batch_dim`. When every example sees the same value -- a
constant, or an input mapped with `in_axes=None` -- there is no batch axis at all
and `batch_dim` is `not_mapped` (None); the value is then stored once, not copied
per example. So with 5 examples of type `f32[3]`:

    (f32[5,3] value, batch_dim=0)     (f32[3,5] value, batch_dim=1)     (f32[3], None)

all stand for "a `f32[3]` per example".

The batching trace
------------------
`BatchTrace` interprets each primitive application on batched values. Its tracers
(`BatchTracer`) carry `(value, batch_dim)` and report the *per-example* aval, so the
user's function cannot tell it is being batched. Only batched values become tracers:
an unbatched value is passed around as itself (a constant, or a tracer of the parent
trace), which keeps Python control flow on unbatched values working, as in JAX.

When a primitive has no batched input, the trace simply binds it in the parent: the
result is the same for every example. Otherwise it looks up the primitive's rule:

    vmap_rules[prim](axis_size, values, batch_dims, **params) -> Batched(values, batch_dims)

A rule receives the stacked values and where their batch axes are, runs (under the
parent trace) primitives that compute the results for all examples at once, and says
where the batch axis of each result ended up. Rules are free to leave the batch axis
anywhere: moving it costs a transpose, so they move axes only when the primitive
cannot work around them (an elementwise op whose operands disagree, a reshape with
the batch axis in the middle, ...). With `vmap(..., axis_name=)` the trace asks
`named_axis_rules` first: collectives over its axis, and primitives whose bodies hold
them, whose rules then get `axis_name=` too (`collective_rules.py`). `vmap_rules.py`
holds the rules for shape ops, contractions and indexing; this file holds the trace,
the elementwise rules and `vmap_jaxpr`. Refs add a little to the trace itself: it remembers the refs made in
it, promotes them when a batched value is written, and asks `vmap_refs.py` about
aliasing and increments of refs from outside (read that after `ref_rules.py`).

The pass
--------
`vmap_jaxpr(jaxpr, in_axes, axis_size)` is batching as an IR -> IR function: it
interprets `jaxpr` under a `BatchTrace` whose parent is a staging trace, and returns
the batched jaxpr with the batch axis of each output. The `jit` rule uses it, so a
vmapped jitted function stays one staged call. `minijax.vmap` (in `frontend/vmap.py`) is
the same trace driven by a Python function instead of a jaxpr.
"""
from __future__ import annotations

from typing import Sequence

from ..ir import primitives as P
from ..ir.core import Jaxpr, ClosedJaxpr
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import Trace, aval_of, current_trace, set_current_trace
from ..ir.types import RefType
from .ad_util import eval_jaxpr
from . import vmap_refs as ref_checks
# The batching vocabulary, re-exported: rule modules import it from here or there.
from .batching import (not_mapped, Batched, BatchedJaxpr, BatchingError,  # noqa: F401
                       trace_vmap_rules, vmap_rules, named_axis_rules, BatchTracer, moveaxis,
                       batch_at, shift_axes, unbatched_ndim)

# -- the trace ---------------------------------------------------------------------

class BatchTrace(Trace):
    kind = "vmap"

    def __init__(self, parent: Trace, axis_size: int, axis_name=None):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name       # the name collectives use for this axis, if any
        # id(promoted ref) -> (it, its batched tracer): every later use goes there.
        # What the trace knows about refs (made here, mapped as arguments, read from
        # outside) is in its `ref_ledger`, see `vmap_refs.py`.
        self.ref_redirects: dict = {}

    def to_batched(self, x):
        """`(value, batch_dim)` for anything that reaches this trace."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.value, x.batch_dim
        return x, not_mapped

    def wrap(self, value, batch_dim):
        return value if batch_dim is not_mapped else BatchTracer(self, value, batch_dim)

    def process_primitive(self, prim, args, params):
        if self.ref_redirects:
            args = [self.ref_redirects[id(x)][1] if id(x) in self.ref_redirects else x
                    for x in args]
        if self.ref_ledger.mapped_arguments:
            ref_checks.check_no_closure_alias(self, args)
        if self.axis_name is not None and prim in named_axis_rules:
            outs = named_axis_rules[prim](self, args, params)
            if outs is not None:
                return outs
        values, dims = [], []
        for x in args:
            value, dim = self.to_batched(x)
            values.append(value)
            dims.append(dim)
        if any(d is not not_mapped for d in dims):
            return self.apply_rule(prim, values, dims, params)
        # Every example computes the same thing: compute it once -- unless it
        # increments a ref from outside, which is ambiguous (vmap_refs.py).
        parent = self.parent
        with set_current_trace(parent):
            if ref_checks.watched(prim):
                ref_checks.check_unbatched_write(self, prim, values, params)
            outs = parent.process_primitive(prim, values, params)
            if prim.allocates_ref:
                self.ref_ledger.note_made_below(outs)
            if ref_checks.reading(prim):
                ref_checks.note_reads(self, prim, values, params)
        return outs

    def apply_rule(self, prim, values, dims, params, **rule_options):
        """Run `prim`'s batching rule on the stacked `values` one level out; the
        results come back as values of this trace. `rule_options` go to the rule
        as keywords (`axis_name=` for rules that batch bodies, see
        `collective_rules.py`)."""
        with set_current_trace(self.parent):
            if prim.has_ref_effects_of_body:
                values, dims = ref_checks.promote_written_refs(self, prim, values, dims,
                                                               params)
            trace_rule = trace_vmap_rules.get(prim)
            if trace_rule is not None:
                out = trace_rule(self, values, dims, **params)
            else:
                rule = vmap_rules.get(prim)
                if rule is None:
                    raise _missing_rule(prim)
                out = rule(self.axis_size, values, dims, **rule_options, **params)
            if ref_checks.reading(prim):
                ref_checks.note_reads(self, prim, values, params, dims)
        return [self.wrap(v, d) for v, d in zip(out.values, out.batch_dims)]


def _missing_rule(prim):
    return prim.missing_rule_error("vmap", BatchingError(
        f"vmap has no batching rule for the primitive `{prim.name}`"))


# -- elementwise rules ------------------------------------------------------------------

def _unary_rule(prim):
    """One operand: the op is per element, so the batch axis stays where it is."""
    def rule(axis_size, values, dims, **params):
        return Batched([prim.bind(values[0], **params)], [dims[0]])
    return rule


def broadcast_batched(axis_size, values, dims, may_stay_scalar):
    """Bring operands of an elementwise op to one common stacked shape.

    Per example, an operand is either full-rank or rank-0 (the IR lets a rank-0
    operand stand for a splat of itself). The result's batch axis is that of the first
    batched full-rank operand, so that operand and every other already laid out the
    same way pass through untouched. Returns `(operands, result_batch_dim)`.

    `may_stay_scalar[i]` says operand i may stay rank-0 when unbatched (true for
    `add`'s operands; for `select_n` only the predicate)."""
    ranks = [unbatched_ndim(x, d) for x, d in zip(values, dims)]
    out_rank = max(ranks)
    target = next((d for d, r in zip(dims, ranks) if d is not None and r == out_rank), 0)
    full = next(aval_of(x) for x, r in zip(values, ranks) if r == out_rank)
    full_dim = next(d for d, r in zip(dims, ranks) if r == out_rank)
    per_example_shape = full.shape if full_dim is None else (
        full.shape[:full_dim] + full.shape[full_dim + 1:])
    stacked_shape = (per_example_shape[:target] + (axis_size,)
                     + per_example_shape[target:])
    operands = []
    for x, d, rank, stay in zip(values, dims, ranks, may_stay_scalar):
        if d is None and rank == 0 and stay:
            operands.append(x)                       # a splat works at any shape
        elif rank == out_rank:
            operands.append(batch_at(x, d, target, axis_size))
        else:                                        # rank-0 per example, full result
            operands.append(P.broadcast_in_dim_p.bind(
                x, shape=stacked_shape, broadcast_dimensions=() if d is None else (target,)))
    return operands, target


def _nary_rule(prim):
    def rule(axis_size, values, dims, **params):
        first = dims[0]
        if first is not None and all(d == first for d in dims) and len(
                {aval_of(x).ndim for x in values}) == 1:
            # The common case, e.g. `x * y` with both batched alike: nothing to do.
            return Batched([prim.bind(*values, **params)], [first])
        operands, target = broadcast_batched(axis_size, values, dims,
                                             [True] * len(values))
        return Batched([prim.bind(*operands, **params)], [target])
    return rule


def _select_n_rule(axis_size, values, dims):
    # The cases must share one shape; only the predicate may be a rank-0 splat.
    operands, target = broadcast_batched(axis_size, values, dims,
                                         [True] + [False] * (len(values) - 1))
    return Batched([P.select_n_p.bind(*operands)], [target])


def _clamp_rule(axis_size, values, dims):
    operands, target = broadcast_batched(axis_size, values, dims, [True, False, True])
    return Batched([P.clamp_p.bind(*operands)], [target])


_UNARY_NAMES = [
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "exp2", "log", "log2", "log1p", "expm1", "logistic", "sqrt",
    "rsqrt", "cbrt", "erf", "floor", "ceil", "neg", "abs", "sign", "square",
    "one_minus_square", "round", "is_finite", "not", "stop_gradient", "integer_pow",
    "convert_element_type"]
_NARY_NAMES = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "and",
               "or", "xor", "eq", "ne", "lt", "le", "gt", "ge"]
for _name in _UNARY_NAMES:
    _prim = P.primitives_by_name[_name]
    vmap_rules[_prim] = _unary_rule(_prim)
for _name in _NARY_NAMES:
    _prim = P.primitives_by_name[_name]
    vmap_rules[_prim] = _nary_rule(_prim)
vmap_rules[P.select_n_p] = _select_n_rule
vmap_rules[P.clamp_p] = _clamp_rule


# -- reductions and scans -----------------------------------------------------------------

def _reduction_rule(prim):
    """Reduce the same axes, renumbered around the batch axis, which survives."""
    def rule(axis_size, values, dims, *, axes, **params):
        (x,), (d,) = values, dims
        out = prim.bind(x, axes=shift_axes(axes, d), **params)
        return Batched([out], [d - sum(a < d for a in axes)])
    return rule


def _cumulative_rule(prim):
    def rule(axis_size, values, dims, *, axis, **params):
        (x,), (d,) = values, dims
        return Batched([prim.bind(x, axis=axis + (axis >= d), **params)], [d])
    return rule


for _prim in (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p,
              P.reduce_and_p, P.reduce_or_p, P.argmax_p, P.argmin_p):
    vmap_rules[_prim] = _reduction_rule(_prim)
for _prim in (P.cumsum_p, P.cumprod_p, P.cummax_p, P.cummin_p):
    vmap_rules[_prim] = _cumulative_rule(_prim)


# -- the pass: vmap_jaxpr ----------------------------------------------------------------

def batched_aval(aval, batch_dim, axis_size):
    if batch_dim is None:
        return aval
    if isinstance(aval, RefType):
        return RefType(batched_aval(aval.inner, batch_dim, axis_size))
    shape = aval.shape[:batch_dim] + (axis_size,) + aval.shape[batch_dim:]
    return aval.update(shape=shape)


def _check_in_axes(jaxpr: Jaxpr, in_axes) -> list:
    in_axes = list(in_axes)
    if len(in_axes) != len(jaxpr.invars):
        raise BatchingError(f"vmap_jaxpr: {len(in_axes)} in_axes for a jaxpr with "
                            f"{len(jaxpr.invars)} inputs")
    out = []
    for i, (axis, var) in enumerate(zip(in_axes, jaxpr.invars)):
        if axis is not None:
            ndim = var.aval.ndim + 1
            if not -ndim <= axis < ndim:
                raise BatchingError(f"vmap_jaxpr: in_axes[{i}]={axis} is out of range "
                                    f"for input {i} of type {var.aval} (batched rank {ndim})")
            axis %= ndim
        out.append(axis)
    return out


def vmap_jaxpr(jaxpr: Jaxpr | ClosedJaxpr, in_axes: Sequence[int | None],
               axis_size: int, out_axes: Sequence[int | None] | None = None,
               axis_name=None) -> BatchedJaxpr:
    """Batch `jaxpr`: the returned jaxpr computes it for `axis_size` examples at once.

    `in_axes[i]` is the axis of input i that indexes examples, or None if every
    example shares that input (constvars are always shared). The result's
    `out_axes` say where each output's batch axis is (None: the output does not
    depend on any batched input). Pass `out_axes` to ask for specific positions
    instead; an output requested at None must then be unbatched. `axis_name` names
    the batch axis for the collectives in `jaxpr`, as `vmap(axis_name=...)` does."""
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else None
    program = closed.jaxpr if closed is not None else jaxpr
    in_axes = _check_in_axes(program, in_axes)
    n_consts = len(program.constvars)
    const_avals = [v.aval for v in program.constvars]
    in_avals = [batched_aval(v.aval, a, axis_size) for v, a in zip(program.invars, in_axes)]
    out_dims_found: list = []

    def batched_program(*args):
        trace = BatchTrace(current_trace(), axis_size, axis_name)
        inputs = [trace.wrap(x, a) for x, a in zip(args[n_consts:], in_axes)]
        with set_current_trace(trace):
            outs = eval_jaxpr(program, args[:n_consts], inputs)
        values, dims = [], []
        for out in outs:
            value, dim = trace.to_batched(out)
            if out_axes is not None:
                value = move_batch_axis(value, dim, out_axes[len(values)], axis_size,
                                        f"output {len(values)}")
                dim = out_axes[len(values)]
                dim = None if dim is None else dim % aval_of(value).ndim
            values.append(value)
            dims.append(dim)
        out_dims_found[:] = dims
        return values

    traced = trace_to_jaxpr(batched_program, const_avals + in_avals).jaxpr
    if traced.constvars:
        raise AssertionError("a batching rule closed over a non-scalar constant")
    batched = Jaxpr(traced.invars[:n_consts], traced.invars[n_consts:], traced.eqns,
                    traced.outvars)
    if closed is not None:
        batched = ClosedJaxpr(batched, closed.consts)
    return BatchedJaxpr(batched, tuple(out_dims_found))


def batch_function(fun, values, dims, axis_size, axis_name=None) -> Batched:
    """Run `fun(*per_example_values) -> list` on batched values, in a fresh batching
    trace under the current one: for rules that must batch user Python code (the
    derivative rules of custom_jvp / custom_vjp functions) rather than a jaxpr.
    `axis_name` names the batch axis for the collectives `fun` uses."""
    trace = BatchTrace(current_trace(), axis_size, axis_name)
    inputs = [trace.wrap(v, d) for v, d in zip(values, dims)]
    with set_current_trace(trace):
        outs = fun(*inputs)
    pairs = [trace.to_batched(out) for out in outs]
    return Batched([v for v, _ in pairs], [d for _, d in pairs])


def move_batch_axis(value, batch_dim, out_axis, axis_size, what: str):
    """`value` with its batch axis where an `out_axes` entry asks for it."""
    if out_axis is None:
        if batch_dim is not None:
            raise BatchingError(
                f"vmap out_axes is None for {what}, but that output is batched (on axis "
                f"{batch_dim}): it depends on a mapped input, so it differs per example "
                f"and cannot be returned without a batch axis")
        return value
    ndim = unbatched_ndim(value, batch_dim) + 1
    if not -ndim <= out_axis < ndim:
        raise BatchingError(f"vmap out_axes {out_axis} is out of range for {what}, "
                            f"which has rank {ndim} once batched")
    return batch_at(value, batch_dim, out_axis % ndim, axis_size)
