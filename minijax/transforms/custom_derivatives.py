"""`custom_jvp` and `custom_vjp`: functions that bring their own derivative rules.

Read `ir/custom_primitives.py` (the three primitives) and `linearize.py` first.

Outside any transformation a custom function simply runs. Directly under a JVP
trace (jvp, or grad/vjp, whose linearize is a JVP trace) its rule runs at once, in
the parent trace, on the primal values -- concrete ones when the parent is the root,
so both the rule and a function that branches in Python on values work eagerly, as
in JAX; the primal function itself is not traced. Under any other transformation
(jit, vmap, make_jaxpr, an outer staging) calling it traces the *primal* function
into a jaxpr and binds one `custom_jvp_call` / `custom_vjp_call` equation whose
`rule` param holds the user's rule functions, so the rule travels with the program:
`jit(f)` keeps it for a later `grad`. The rules of a staged call run only when the
call is differentiated, called in the parent trace like any jvp rule -- so they may
call the custom function itself.

* jvp of `custom_jvp_call`: call the user's jvp rule on (primals, tangents).
* jvp of `custom_vjp_call`: call `fwd` for the outputs and residuals; the output
  tangents are a `custom_lin` of the input tangents. `linearize` stages that (its
  tangent inputs are unknown) and its transpose calls `bwd`. Pure forward mode would
  have to evaluate `custom_lin`: an error, as in JAX.

Closed-over traced values become leading operands of the call; the rules see them
as constants (their tangents are not propagated), so close over values only to use
them as constants -- JAX's rule too.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np
from jax import tree_util

from ..ir import primitives as P
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p, custom_lin_p
from ..ir.source_info import user_code
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import (MinijaxError, EvalTrace, bind, aval_of, current_trace, eager_impls,
                        set_current_trace)
from ..ir.types import float0, RefType
from ..ir.ref_box import Ref, RefError
from .ad_util import (Zero, SymbolicZero, tangent_aval, is_differentiable, instantiate,
                      eval_jaxpr, zeros, as_results)
from .jvp import jvp_rules, JvpResult, JVPTrace, JVPTracer
from .partial_eval import PartialEvalTrace
from .transpose import transpose_rules
from .discharge import (discharge_rules, mentions_refs, thread_refs_through, write_back,
                        RefSlot, _copy_eqn)


class CustomDerivativeError(MinijaxError, TypeError):
    """A custom derivative rule returns values of the wrong structure."""


class CotangentShapeError(MinijaxError, ValueError):
    """A bwd rule's cotangent has the right structure but the wrong shape (JAX's
    ValueError)."""


class MissingRuleError(MinijaxError, AttributeError):
    """A custom_jvp/custom_vjp function called before its rule was defined (JAX's
    AttributeError)."""


def _resolve_args(fun, args, kwargs):
    """Keyword arguments become positional, so argument numbers mean one thing."""
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


class _CallSite:
    """One call of a custom function: the static (nondiff) arguments and how the
    differentiable ones flatten. `stage()` traces the primal body, for a call that
    becomes an equation; a call differentiated at once never traces it."""

    def __init__(self, fun, args, nondiff_argnums, name):
        self.fun, self.name = fun, name
        self.nondiff_positions = sorted({i % len(args) for i in nondiff_argnums})
        self.nondiff = [args[i] for i in self.nondiff_positions]
        dyn_args = tuple(a for i, a in enumerate(args) if i not in self.nondiff_positions)
        self.num_dyn = len(dyn_args)
        self.leaves, self.in_tree = tree_util.tree_flatten(dyn_args)
        self.in_avals = [aval_of(x) for x in self.leaves]
        self.out_tree = None        # known once the body is traced or a rule has run

    def stage(self):
        cell = []

        def flat(*leaves):
            out_leaves, out_tree = tree_util.tree_flatten(self.fun(*self.full_args(leaves)))
            _refuse_returned_refs(self.name, out_leaves)
            cell.append(out_tree)
            return out_leaves
        closed = trace_to_jaxpr(flat, self.in_avals)
        self.call_jaxpr = convert_constvars_to_invars(closed.jaxpr)
        self.consts = list(closed.consts)
        self.out_tree = cell[0]
        return self

    def full_args(self, leaves):
        """All the function's arguments, nondiff ones back in their places."""
        dyn = iter(self.dyn_tree(leaves))
        fixed = dict(zip(self.nondiff_positions, self.nondiff))
        return [fixed[i] if i in fixed else next(dyn)
                for i in range(len(fixed) + self.num_dyn)]

    def dyn_tree(self, leaves):
        return tuple(tree_util.tree_unflatten(self.in_tree, list(leaves)))

    def bind(self, prim, rule):
        outs = bind(prim, *self.consts, *self.leaves, call_jaxpr=self.call_jaxpr,
                    num_consts=len(self.consts), rule=rule, name=self.name)
        return tree_util.tree_unflatten(self.out_tree, outs)

    def __repr__(self):
        return self.name


def _refuse_returned_refs(name, out_leaves):
    """Checked while tracing, before the call is bound, so nothing has been written."""
    for k, leaf in enumerate(out_leaves):
        if _is_ref(leaf):
            raise RefError(f"the custom function {name} returns a ref (output {k}, of "
                           f"type {aval_of(leaf)}); a ref cannot leave a custom_jvp / "
                           f"custom_vjp function. Return its value r[...] instead, or "
                           f"create the ref outside and pass it in.")


def _is_ref(leaf) -> bool:
    if isinstance(leaf, Ref):
        return True
    try:
        return isinstance(aval_of(leaf), RefType)
    except TypeError:           # not an array at all: the output checks say so
        return False


def _call(custom, args, kwargs, make_rule):
    """Call a custom function in the current trace (see the module docstring)."""
    args = _resolve_args(custom.fun, args, kwargs)
    trace = current_trace()
    if isinstance(trace, EvalTrace):
        return as_results(custom.fun(*args))
    if _all_known(trace, args):
        with set_current_trace(trace.parent):
            return custom(*args)
    name = getattr(custom.fun, "__name__", type(custom).__name__)
    site = _CallSite(custom.fun, args, custom.nondiff_argnums, name)
    if isinstance(trace, JVPTrace) and not _has_tangent(trace, site.nondiff):
        primals, tangents = zip(*map(trace.unpack, site.leaves)) if site.leaves else ((), ())
        with set_current_trace(trace.parent):
            if all(type(t) is Zero for t in tangents):
                # Nothing to differentiate here: an outer transformation's business.
                return custom(*site.full_args(primals))
            site.leaves = list(primals)
            rule = make_rule(site)
            apply_rule = (_custom_jvp_call_jvp if isinstance(rule, _JvpRule)
                          else _custom_vjp_call_jvp)
            result = apply_rule(list(primals), list(tangents), call_jaxpr=None,
                                num_consts=0, rule=rule, name=name)
        outs = [trace.make_tracer(p, t) for p, t in zip(*result)]
        return tree_util.tree_unflatten(site.out_tree, outs)
    site.stage()
    rule = make_rule(site)
    prim = custom_jvp_call_p if isinstance(rule, _JvpRule) else custom_vjp_call_p
    return site.bind(prim, rule)


def _has_tangent(trace, values) -> bool:
    # A differentiated value among the nondiff arguments cannot be handed to the rule
    # as a plain primal: such a call is staged, as any other call is.
    return any(isinstance(x, JVPTracer) and x._trace is trace
               for x in tree_util.tree_leaves(values))


def _all_known(trace, args) -> bool:
    """A partial-evaluation trace (the one under grad's JVP trace) with every input
    known evaluates the call in its parent, as it would a primitive: a rule that calls
    its own custom function on primal values (`f(x)` inside f's jvp rule) then runs
    eagerly. Not under a remat policy, which must see each primitive to decide what to
    save, nor once a known ref has been redirected to a staged one."""
    if not isinstance(trace, PartialEvalTrace) or trace.policy is not None \
            or trace.ref_redirects:
        return False
    return not any(trace.is_unknown(x) for x in tree_util.tree_leaves(args))


def _out_avals(where, call_jaxpr, site, value):
    """The avals a rule's primal output must have: the staged body's, or, when the
    body was never traced, those of the rule's own primal output (whose structure
    then becomes the call's)."""
    if call_jaxpr is not None:
        return call_jaxpr.out_avals
    leaves, site.out_tree = tree_util.tree_flatten(value)
    _refuse_returned_refs(site.name, leaves)
    try:
        return [aval_of(x) for x in leaves]
    except TypeError:
        raise CustomDerivativeError(f"{where} returned a primal output that is not an "
                                    f"array pytree: {value!r}") from None


def _float0_zeros(aval):
    return np.zeros(aval.shape, float0)


def _check_like(where, value, expected_tree, expected_avals, tangent=False):
    """Flatten `value`, checking it matches the expected structure and types."""
    leaves, tree = tree_util.tree_flatten(value)
    if tree != expected_tree:
        raise CustomDerivativeError(f"{where} returned a value with tree structure {tree}, "
                                    f"expected {expected_tree}")
    for leaf, want in zip(leaves, expected_avals):
        want = tangent_aval(want) if tangent else want
        got = leaf.aval if type(leaf) is SymbolicZero else aval_of(leaf)
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CustomDerivativeError(f"{where} returned a value of type {got} where "
                                        f"{want} was expected")
    return leaves


# -- custom_jvp --------------------------------------------------------------------------------

def _forward_attr(self, name):
    """What the wrapped function has, as JAX's custom functions forward it: a
    `custom_vjp` around a `custom_vmap` takes its `def_vmap`."""
    if name == "fun":           # not set yet (copying or unpickling an instance)
        raise AttributeError(name)
    return getattr(self.fun, name)


class _JvpRule:
    """The `rule` param of a `custom_jvp_call`: the user's jvp function at one call site."""

    def __init__(self, jvp, site: _CallSite, symbolic_zeros=False):
        self.jvp, self.site, self.symbolic_zeros = jvp, site, symbolic_zeros

    def __repr__(self):
        return f"jvp={getattr(self.jvp, '__name__', 'rule')}"


class custom_jvp:
    """`f = custom_jvp(fun)`, then `@f.defjvp` a rule `(primals, tangents) ->
    (primal_out, tangent_out)` (or `f.defjvps(*per_argument_rules)`), as `jax.custom_jvp`.
    With `nondiff_argnums`, the rule is called as `rule(*nondiff_args, primals, tangents)`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    __getattr__ = _forward_attr

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """`symbolic_zeros=True`: the rule sees a `SymbolicZero` for each zero input
        tangent, and may return one for an output tangent."""
        self.jvp, self.symbolic_zeros = jvp, bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument: `jvps[i](t_i, primal_out, *primals)` is argument i's
        part of the output tangent (None: the argument does not contribute)."""
        def jvp(primals, tangents):
            primal_out = self(*primals)
            parts = [rule(t, primal_out, *primals) for rule, t in zip(jvps, tangents)
                     if rule is not None]
            total = parts[0] if parts else tree_util.tree_map(
                lambda x: zeros(aval_of(x)), primal_out)
            for part in parts[1:]:
                total = tree_util.tree_map(lambda a, b: bind(P.add_p, a, b), total, part)
            return primal_out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            name = getattr(self.fun, "__name__", "custom_jvp")
            raise MissingRuleError(f"no JVP rule defined for custom_jvp function {name}: "
                                   f"use defjvp")
        return _call(self, args, kwargs,
                     lambda site: _JvpRule(self.jvp, site, self.symbolic_zeros))


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    if isinstance(rule, _RuleOnRefs):
        return _refuse_discharged(primals, tangents, call_jaxpr=call_jaxpr,
                                  num_consts=num_consts, rule=rule, name=name)
    site = rule.site
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    if getattr(rule, "symbolic_zeros", False):
        tangent_leaves = [t if type(t) is not Zero and is_differentiable(aval_of(a)) else
                          SymbolicZero(tangent_aval(aval_of(a)))
                          for a, t in zip(args, arg_tangents)]
    else:
        tangent_leaves = [instantiate(t) if is_differentiable(aval_of(a)) else
                          _float0_zeros(aval_of(a)) for a, t in zip(args, arg_tangents)]
    with user_code():        # its equations come from the rule's own lines, as in JAX
        result = rule.jvp(*site.nondiff, site.dyn_tree(args), site.dyn_tree(tangent_leaves))
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise CustomDerivativeError(f"the JVP rule of {name} must return a pair "
                                    f"(primal_out, tangent_out)")
    where = f"the JVP rule of {name}"
    out_avals = _out_avals(where, call_jaxpr, site, result[0])
    primals_out = _check_like(where, result[0], site.out_tree, out_avals)
    tangents_out = _check_like(where, result[1], site.out_tree, out_avals, tangent=True)
    return JvpResult(primals_out, [t if is_differentiable(a) and type(t) is not SymbolicZero
                                   else Zero(tangent_aval(a))
                                   for t, a in zip(tangents_out, out_avals)])


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_call_impl(*args, call_jaxpr, num_consts, rule, name):
    # Not differentiated: the primal body, op by op like any eager code.
    return eval_jaxpr(call_jaxpr, (), args)


eager_impls[custom_jvp_call_p] = _custom_call_impl
eager_impls[custom_vjp_call_p] = _custom_call_impl


# -- custom_vjp ---------------------------------------------------------------------------------

class _VjpRule:
    """The `rule` param of a `custom_vjp_call`: the user's fwd and bwd at one call site."""

    def __init__(self, fwd, bwd, site: _CallSite, linear_forward=None,
                 symbolic_zeros=False):
        self.fwd, self.bwd, self.site = fwd, bwd, site
        self.linear_forward, self.symbolic_zeros = linear_forward, symbolic_zeros

    def __repr__(self):
        return (f"fwd={getattr(self.fwd, '__name__', 'fwd')} "
                f"bwd={getattr(self.bwd, '__name__', 'bwd')}")


class _LinRule:
    """The `rule` param of a `custom_lin`: `bwd` with the residuals' tree structure
    (and the types of the operands, for `custom_lin_forward`)."""

    def __init__(self, vjp_rule: _VjpRule, residual_tree, out_avals, in_avals, in_zeros):
        self.vjp_rule, self.residual_tree = vjp_rule, residual_tree
        self.out_avals = out_avals
        self.in_avals = tuple(in_avals)
        self.in_zeros = in_zeros    # per float argument: a zero tangent (no operand)
        self.tangent_out_avals = tuple(tangent_aval(a) for a in out_avals
                                       if is_differentiable(a))

    def __repr__(self):
        return f"bwd={getattr(self.vjp_rule.bwd, '__name__', 'bwd')}"


@dataclasses.dataclass
class CustomVJPPrimal:
    """A primal argument leaf as a `symbolic_zeros=True` fwd rule receives it."""
    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """`tree` with each `CustomVJPPrimal` leaf replaced by its value."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_util.tree_map(value, tree)


class custom_vjp:
    """`f = custom_vjp(fun)`, then `f.defvjp(fwd, bwd)` with `fwd(*args) -> (out,
    residuals)` and `bwd(*nondiff_args, residuals, out_cotangent) -> tuple of
    cotangents, one per differentiable argument`, as `jax.custom_vjp`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    __getattr__ = _forward_attr

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False):
        """`symbolic_zeros=True`: fwd gets each argument leaf as a `CustomVJPPrimal`
        (its value, and whether it is differentiated), and bwd a `SymbolicZero` for
        each zero output cotangent."""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            name = getattr(self.fun, "__name__", "custom_vjp")
            raise MissingRuleError(f"no VJP rule defined for custom_vjp function {name}: "
                                   f"use defvjp")
        return _call(self, args, kwargs, lambda site: _VjpRule(
            self.fwd, self.bwd, site, getattr(self, "_linear_forward", None),
            self.symbolic_zeros))


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    if isinstance(rule, _RuleOnRefs):
        return _refuse_discharged(primals, tangents, call_jaxpr=call_jaxpr,
                                  num_consts=num_consts, rule=rule, name=name)
    site = rule.site
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    fwd_args = args
    if getattr(rule, "symbolic_zeros", False):
        fwd_args = [CustomVJPPrimal(a, type(t) is not Zero and is_differentiable(aval_of(a)))
                    for a, t in zip(args, arg_tangents)]
    with user_code():        # its equations come from the rule's own lines, as in JAX
        result = rule.fwd(*site.full_args(fwd_args))
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise CustomDerivativeError(f"the fwd rule of {name} must return a pair "
                                    f"(output, residuals)")
    out_avals = _out_avals(f"the fwd rule of {name}", call_jaxpr, site, result[0])
    primals_out = _check_like(f"the fwd rule of {name}", result[0], site.out_tree, out_avals)
    residuals, residual_tree = tree_util.tree_flatten(result[1])
    if all(type(t) is Zero for t in arg_tangents) or not any(
            is_differentiable(aval_of(a)) for a in args):
        return JvpResult(primals_out, [Zero(tangent_aval(a)) for a in out_avals])
    # Only the nonzero tangents are operands, as in JAX (`in_zeros`): bwd never reads
    # them, and an instantiated zero made from known values would be saved as a
    # residual under linearize and checkpoint (seed rm17b:25).
    float_tangents = [t for a, t in zip(args, arg_tangents) if is_differentiable(aval_of(a))]
    in_zeros = tuple(type(t) is Zero for t in float_tangents)
    float_tangents = [t for t in float_tangents if type(t) is not Zero]
    lin_rule = _LinRule(rule, residual_tree, out_avals,
                        [aval_of(r) for r in residuals] + [aval_of(t) for t in float_tangents],
                        in_zeros)
    tangents_out = iter(bind(custom_lin_p, *residuals, *float_tangents, rule=lin_rule,
                             num_residuals=len(residuals), name=name))
    return JvpResult(primals_out, [next(tangents_out) if is_differentiable(a)
                                   else Zero(tangent_aval(a)) for a in out_avals])


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_lin_transpose(cts, *inputs, rule, num_residuals, name):
    vjp_rule = rule.vjp_rule
    site = vjp_rule.site
    residuals = tree_util.tree_unflatten(rule.residual_tree, list(inputs[:num_residuals]))
    if getattr(vjp_rule, "symbolic_zeros", False):
        ct_iter = iter(SymbolicZero(ct.aval) if type(ct) is Zero else ct for ct in cts)
        ct_leaves = [next(ct_iter) if is_differentiable(a) else SymbolicZero(tangent_aval(a))
                     for a in rule.out_avals]
    else:
        ct_iter = iter(instantiate(ct) for ct in cts)
        ct_leaves = [next(ct_iter) if is_differentiable(a) else _float0_zeros(a)
                     for a in rule.out_avals]
    ct = tree_util.tree_unflatten(site.out_tree, ct_leaves)
    cts_in = vjp_rule.bwd(*site.nondiff, residuals, ct)
    leaves = _bwd_float_leaves(name, cts_in, site)
    return [None] * num_residuals + [c for c, z in zip(leaves, rule.in_zeros) if not z]


def _bwd_float_leaves(name, cts_in, site: _CallSite):
    """The float leaves of bwd's output: one entry per argument, None meaning zero."""
    dyn_args = site.dyn_tree(site.leaves)
    if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(dyn_args):
        raise CustomDerivativeError(
            f"the bwd rule of {name} must return a tuple with one cotangent per "
            f"differentiable argument ({len(dyn_args)}), got {type(cts_in).__name__}"
            + (f" of length {len(cts_in)}" if isinstance(cts_in, (tuple, list)) else ""))
    leaves = []
    for ct, arg in zip(cts_in, dyn_args):
        arg_leaves, arg_tree = tree_util.tree_flatten(arg)
        if ct is None:
            leaves += [None] * len(arg_leaves)
            continue
        ct_leaves, ct_tree = tree_util.tree_flatten(ct, is_leaf=lambda x: x is None)
        if ct_tree != arg_tree:
            raise CustomDerivativeError(f"the bwd rule of {name} returned a cotangent with "
                                        f"tree structure {ct_tree} for an argument with "
                                        f"{arg_tree}")
        leaves += ct_leaves
    out = []
    for leaf, aval in zip(leaves, site.in_avals):
        if not is_differentiable(aval):
            continue
        if leaf is None:
            out.append(Zero(aval))
            continue
        if type(leaf) is SymbolicZero:
            if leaf.aval.shape != aval.shape or leaf.aval.dtype != tangent_aval(aval).dtype:
                raise ValueError(f"the bwd rule of {name} returned a SymbolicZero of type "
                                 f"{leaf.aval} for an argument of type {aval}; return None "
                                 f"there instead")
            out.append(Zero(aval))
            continue
        if aval_of(leaf).shape != aval.shape:
            raise CotangentShapeError(f"the bwd rule of {name} returned a cotangent of "
                                      f"shape {aval_of(leaf).shape} for an argument of "
                                      f"shape {aval.shape}")
        out.append(leaf)
    return out


transpose_rules[custom_lin_p] = _custom_lin_transpose


def custom_lin_forward(rule, num_residuals, name):
    """The tangent map of a custom_vjp call as a closed jaxpr (residuals, tangents) ->
    output tangents, when whoever built the function gave one: minijax's own
    checkpointed loops do (set as `_linear_forward` on the `custom_vjp`), so the
    linear function `linearize` returns can be applied. A user's custom_vjp
    defines reverse mode only: JAX's error."""
    linear = getattr(rule.vjp_rule, "linear_forward", None)
    if linear is None:
        raise CustomDerivativeError(
            f"can't apply forward-mode autodiff (jvp) to a custom_vjp function ({name}): "
            f"it only defines reverse mode. Use grad/vjp, or custom_jvp for forward mode.")

    def flat(*operands):
        residuals = tree_util.tree_unflatten(rule.residual_tree,
                                             list(operands[:num_residuals]))
        given = iter(operands[num_residuals:])
        float_avals = [a for a in rule.vjp_rule.site.in_avals if is_differentiable(a)]
        tangents = [zeros(tangent_aval(a)) if zero else next(given)
                    for a, zero in zip(float_avals, rule.in_zeros)]
        return list(linear(residuals, tangents))
    return trace_to_jaxpr(flat, list(rule.in_avals))


def custom_lin_impl(*args, rule, num_residuals, name):
    closed = custom_lin_forward(rule, num_residuals, name)
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


eager_impls[custom_lin_p] = custom_lin_impl


# -- refs: discharge ------------------------------------------------------------------------
#
# A custom function may create and use refs of its own, and take or close over refs
# (an outside ref read, written, or stashed into by `bwd`). Differentiated directly,
# the rules run on the refs themselves (the jvp rules above), and so they do inside
# a differentiated `cond`, `while_loop`, `scan` or `checkpoint`: those autodiff rules
# keep the refs of such a body as refs (`control_flow_common.custom_rules_take_refs`).
# Discharge -- before lowering -- turns the body into a pure one; a body whose refs
# are all its own keeps its rule unchanged (the call means the same thing). A ref
# operand becomes its value going in and its final value coming out, which the
# user's rules, written for a ref, cannot see: should such a call be differentiated
# after all, it refuses, saying why.

class _RuleOnRefs:
    """The `rule` of a custom call whose ref operands discharge made values."""

    def __init__(self, rule, name):
        self.rule, self.name = rule, name

    def __repr__(self):
        return repr(self.rule)


def _refuse_discharged(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    if all(type(t) is Zero for t in tangents):
        return JvpResult(eval_jaxpr(call_jaxpr, (), primals),
                         [Zero(tangent_aval(a)) for a in call_jaxpr.out_avals])
    raise CustomDerivativeError(
        f"the custom derivative of {name}, which takes a ref, cannot be applied here: "
        f"the ref was turned into a value (a program already lowered for XLA) that its "
        f"rules cannot write. Differentiate before lowering, or pass the ref's value "
        f"r[...] instead.")


def _custom_call_discharge(prim, b, eqn, inputs):
    body = eqn.params["call_jaxpr"]
    ref_operands = any(isinstance(x, RefSlot) for x in inputs)
    if not mentions_refs(body) and not ref_operands:
        return _copy_eqn(b, eqn, inputs)
    result, args = thread_refs_through(b, inputs, body)
    rule = eqn.params["rule"]
    if ref_operands:
        rule = _RuleOnRefs(rule, eqn.params["name"])
    outs = b.emit_eqn(prim, args, dict(eqn.params, call_jaxpr=result.jaxpr, rule=rule))
    return write_back(inputs, result, outs)


discharge_rules[custom_jvp_call_p] = functools.partial(_custom_call_discharge,
                                                       custom_jvp_call_p)
discharge_rules[custom_vjp_call_p] = functools.partial(_custom_call_discharge,
                                                       custom_vjp_call_p)


def _custom_lin_discharge(b, eqn, inputs):
    """A `custom_lin` is the tangent map of a `custom_vjp` call, waiting to be
    transposed. One that takes a ref (a residual `fwd` kept, such as the ref `bwd`
    stashes a cotangent into) can only be discharged on the way to being evaluated
    forwards -- which a `custom_vjp` function cannot be."""
    if any(isinstance(x, RefSlot) for x in inputs):
        raise CustomDerivativeError(
            f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
            f"({eqn.params['name']}): it only defines reverse mode, and its backward "
            f"rule takes a ref. (Inside a while_loop, grad too would need it forwards: "
            f"reverse mode of a while_loop does not exist; use scan or a fori_loop with "
            f"static bounds.)")
    return _copy_eqn(b, eqn, inputs)


discharge_rules[custom_lin_p] = _custom_lin_discharge
