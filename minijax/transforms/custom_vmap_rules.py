"""`custom_vmap_call` under the passes: vmap calls the user's rule, jvp differentiates
through the call as JAX does, every other pass sees the body.

Read `frontend/custom_batching.py` first (what the user writes). The equation's
`rule` param is a `VmapRule`: the user's `def_vmap` function with the trees of the
call's arguments and results, so the vmap rule below can hand the rule pytrees.

* vmap: batched operands get their batch axis first; the rule is called as
  `rule(axis_size, in_batched, *args)` (`in_batched` a list, one bool pytree per
  argument) and returns `(out, out_batched)`, checked against the body's output tree
  with JAX's errors. An output marked batched must have the batch axis first.
* jvp: as JAX's `custom_vmap_jvp`. The result is another `custom_vmap_call`, on primals
  and (instantiated) tangents, whose body is the jvp of the body and whose rule is the
  jvp of the user's rule: the user's rule runs on what primals and tangents have in
  common batched, and the rest of the batch (a primal batched whose tangent is not, or
  the other way round) is vmapped through the jvp of that call. So a jvp of a
  custom_vmap function batches the jvp, and a vmap of the jvp uses the user's rule.
* partial eval (`linearize`, `jacfwd`, `grad`): the jvp's call yields primals and
  tangents together; with the primals known, the primal outputs are computed by the
  call that was differentiated and the jvp'd call is staged for the tangents. It is
  not linear in a way transpose can use, so `grad` is a ValueError, as JAX has no
  reverse mode for `custom_vmap` (a `custom_vjp` around it gives one).
* lowering, the reference evaluator and eager evaluation run the body
  (`backends/xla.py`, `backends/reference.py`).
"""
from __future__ import annotations

import operator

from jax import tree_util

from ..ir.custom_primitives import custom_vmap_call_p
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import (MinijaxError, bind, aval_of, current_trace, eager_impls,
                        set_current_trace)
from .ad_util import (Zero, tangent_aval, is_differentiable, instantiate, eval_jaxpr,
                      as_results)
from .batching import moveaxis
from .jvp import jvp_rules, JvpResult, jvp_flat
from .partial_eval import partial_eval_rules
from .transpose import transpose_rules
from .vmap import vmap_rules, Batched, not_mapped, batch_function


class CustomVmapError(MinijaxError, ValueError):
    """A custom_vmap rule returned values that do not fit the function's outputs."""


class VmapRule:
    """The user's rule with the pytrees of the call's arguments (`in_tree`, of the tuple
    of positional arguments) and results (`out_tree`)."""
    __slots__ = ("rule", "in_tree", "out_tree")

    def __init__(self, rule, in_tree, out_tree):
        self.rule, self.in_tree, self.out_tree = rule, in_tree, out_tree

    def __call__(self, axis_size, in_batched, *args):
        return self.rule(axis_size, list(in_batched), *args)

    def __repr__(self):
        return _rule_name(self.rule)


def _rule_name(rule):
    return getattr(rule, "__name__", "<unnamed rule>")


def check_rule_trees(rule, original_out_tree, out_tree, out_batched_tree):
    """JAX's checks of what a vmap rule returned, with JAX's messages."""
    if out_tree != out_batched_tree:
        raise CustomVmapError(
            f"structure of output value and output batching specification returned by "
            f"custom vmap rule ({_rule_name(rule)}) do not match.\n"
            f"Output values: {out_tree}\nBatching spec: {out_batched_tree}")
    if out_tree != original_out_tree:
        raise CustomVmapError(
            f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does "
            f"not match that of original custom-vmapped function.\n"
            f"Original output: {original_out_tree}\nRule output: {out_tree}")


def _vmap_custom_vmap_call(axis_size, values, dims, *, call_jaxpr, num_consts, rule, name):
    if any(d is not not_mapped for d in dims[:num_consts]):
        raise CustomVmapError(
            f"the custom_vmap function {name} closes over a value that vmap batches; "
            f"pass it to the function as an argument instead")
    args = [v if d is not_mapped else moveaxis(v, d, 0)
            for v, d in zip(values[num_consts:], dims[num_consts:])]
    in_batched = tree_util.tree_unflatten(rule.in_tree,
                                          [d is not not_mapped for d in dims[num_consts:]])
    # eagerly, the rule sees and returns jax Arrays, as JAX's does
    out, out_batched = rule(axis_size, in_batched,
                            *as_results(tree_util.tree_unflatten(rule.in_tree, args)))
    flat_out, out_tree = tree_util.tree_flatten(as_results(out))
    flat_batched, batched_tree = tree_util.tree_flatten(out_batched)
    check_rule_trees(rule.rule, rule.out_tree, out_tree, batched_tree)
    for k, (value, batched, aval) in enumerate(zip(flat_out, flat_batched,
                                                    call_jaxpr.out_avals)):
        expected = ((axis_size,) if batched else ()) + aval.shape
        if tuple(aval_of(value).shape) != expected:
            raise CustomVmapError(
                f"the custom vmap rule ({_rule_name(rule.rule)}) of {name} returned output "
                f"{k} of shape {aval_of(value).shape}, marked "
                f"{'batched' if batched else 'not batched'}; expected {expected}")
    return Batched(list(flat_out), [0 if b else not_mapped for b in flat_batched])


class JvpOfRule:
    """The vmap rule of a jvp'd custom_vmap call (JAX's `jvp_of_rule_rule`): its
    arguments are `(primals, tangents)`, each a tuple of the original arguments."""
    __slots__ = ("rule", "in_tree", "out_tree", "primal_params")

    def __init__(self, inner: VmapRule, primal_params: dict):
        # `primal_params`: the params of the call differentiated, for partial eval
        self.rule, self.primal_params = inner, primal_params
        self.in_tree = tree_util.tree_structure((inner.in_tree.unflatten(
            [0] * inner.in_tree.num_leaves),) * 2)
        self.out_tree = tree_util.tree_structure((inner.out_tree.unflatten(
            [0] * inner.out_tree.num_leaves),) * 2)

    def __call__(self, axis_size, in_batched, primals, tangents):
        inner = self.rule
        ps_batched, ts_batched = in_batched
        mutual = tree_util.tree_map(operator.and_, ps_batched, ts_batched)
        flat_ps, flat_ts = (inner.in_tree.flatten_up_to(primals),
                            inner.in_tree.flatten_up_to(tangents))
        flat_pb, flat_tb = (inner.in_tree.flatten_up_to(ps_batched),
                            inner.in_tree.flatten_up_to(ts_batched))
        dims = ([0 if p and not t else not_mapped for p, t in zip(flat_pb, flat_tb)]
                + [0 if t and not p else not_mapped for p, t in zip(flat_pb, flat_tb)])
        n = len(flat_ps)
        mutual_out = []

        def on_rule(*leaves):
            out, out_batched = inner(axis_size, mutual,
                                     *tree_util.tree_unflatten(inner.in_tree, list(leaves)))
            check_rule_trees(inner.rule, inner.out_tree, tree_util.tree_structure(out),
                             tree_util.tree_structure(out_batched))
            mutual_out.append(tree_util.tree_leaves(out_batched))
            return tree_util.tree_leaves(out)

        def jvp_of_rule(*ps_ts):
            result = jvp_flat(on_rule, list(ps_ts[:n]), [_maybe_zero(t) for t in ps_ts[n:]],
                              current_trace())
            return list(result.primals_out) + [instantiate(t) for t in result.tangents_out]
        batched = batch_function(jvp_of_rule, flat_ps + flat_ts, dims, axis_size)
        outs = [v if d is not_mapped else moveaxis(v, d, 0)
                for v, d in zip(batched.values, batched.batch_dims)]
        m = len(outs) // 2
        extra = [d is not not_mapped for d in batched.batch_dims]
        flags = ([a or b for a, b in zip(mutual_out[0], extra[:m])]
                 + [a or b for a, b in zip(mutual_out[0], extra[m:])])
        unflatten = inner.out_tree.unflatten
        return ((unflatten(outs[:m]), unflatten(outs[m:])),
                (unflatten(flags[:m]), unflatten(flags[m:])))

    def __repr__(self):
        return f"jvp({self.rule!r})"


def _maybe_zero(t):
    aval = aval_of(t)
    return t if is_differentiable(aval) else Zero(tangent_aval(aval))


def _jvp_custom_vmap_call(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    n = len(primals)
    tangents = [instantiate(t) for t in tangents]

    def jvp_body(*ps_ts):
        result = jvp_flat(lambda *a: eval_jaxpr(call_jaxpr, (), a), list(ps_ts[:n]),
                          [_maybe_zero(t) for t in ps_ts[n:]], current_trace())
        return list(result.primals_out) + [instantiate(t) for t in result.tangents_out]
    closed = trace_to_jaxpr(jvp_body, [aval_of(x) for x in list(primals) + tangents])
    jvp_jaxpr = convert_constvars_to_invars(closed.jaxpr)
    consts = list(closed.consts)
    # The consts of the original call are arguments of the jvp'd one: the rule sees
    # them as leading arguments, unbatched (a batched one is refused by the vmap rule).
    inner = rule if num_consts == 0 else _DropConsts(rule, num_consts)
    outs = bind(custom_vmap_call_p, *consts, *primals, *tangents, call_jaxpr=jvp_jaxpr,
                num_consts=len(consts), rule=JvpOfRule(inner, dict(call_jaxpr=call_jaxpr, num_consts=num_consts,
                                              rule=rule, name=name)), name=name)
    m = len(outs) // 2
    return JvpResult(outs[:m], [t if is_differentiable(a) else Zero(tangent_aval(a))
                                for t, a in zip(outs[m:], call_jaxpr.out_avals)])


class _DropConsts(VmapRule):
    """A rule whose call had consts: they come first among the flat arguments, and the
    user's rule never sees them (they are not batched)."""
    __slots__ = ()

    def __init__(self, rule: VmapRule, num_consts: int):
        leaves = [0] * (num_consts + rule.in_tree.num_leaves)
        super().__init__(rule.rule, tree_util.tree_structure(
            (tuple(leaves[:num_consts]), rule.in_tree.unflatten(leaves[num_consts:]))),
            rule.out_tree)

    def __call__(self, axis_size, in_batched, consts, args):
        if any(tree_util.tree_leaves(in_batched[0])):
            raise CustomVmapError("a custom_vmap function closes over a value that vmap "
                                  "batches; pass it to the function as an argument instead")
        return self.rule(axis_size, list(in_batched[1]), *args)


def _partial_eval_custom_vmap_call(trace, args, params):
    """A jvp'd call with known primals (linearize, jacfwd): the primal outputs come from
    the call differentiated, run now; the tangents from the jvp'd call, staged. (JAX
    refuses this; its linearize stages the whole call. The staged call has no
    transpose, so `grad` is still an error, as in JAX.)"""
    rule, num_consts = params["rule"], params["num_consts"]
    operands = args[num_consts:]
    primals = operands[:len(operands) // 2]
    if not isinstance(rule, JvpOfRule) or any(trace.is_unknown(x) for x in primals):
        return trace.stage(custom_vmap_call_p, args, params)
    with set_current_trace(trace.parent):
        known = bind(custom_vmap_call_p, *primals, **rule.primal_params)
    staged = trace.stage(custom_vmap_call_p, args, params)
    return list(known) + staged[len(known):]


def _no_transpose(cts, *args, name, **params):
    raise ValueError(f"can't apply reverse-mode autodiff (grad, vjp) to the custom_vmap "
                     f"function {name}: it has none, as in JAX. Wrap it in a custom_vjp.")


def _eager_custom_vmap_call(*args, call_jaxpr, num_consts, rule, name):
    return eval_jaxpr(call_jaxpr, (), args)


vmap_rules[custom_vmap_call_p] = _vmap_custom_vmap_call
jvp_rules[custom_vmap_call_p] = _jvp_custom_vmap_call
partial_eval_rules[custom_vmap_call_p] = _partial_eval_custom_vmap_call
transpose_rules[custom_vmap_call_p] = _no_transpose
eager_impls[custom_vmap_call_p] = _eager_custom_vmap_call
