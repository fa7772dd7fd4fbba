"""Exporting a minijax program to JAX: `to_jax(closed_jaxpr)` is a Python callable
built from JAX's public API, so JAX's own transformations apply to it.

Read `backends/xla.py` first: its `lowering_rules` already turn every first-order
primitive into `jax.lax` calls, and the export table starts from them. What differs
is everything the XLA backend flattens away because XLA does not need it, and JAX's
transformations do:

* `jit` stays a `jax.jit` call (so JAX sees a `jit` equation, as minijax did);
* `cond`, `while`, `scan` become `lax.switch`, `lax.while_loop`, `lax.scan`;
* `custom_linear_solve` stays `lax.custom_linear_solve` (JAX derives its own `vecmat`
  by transposing `matvec`, as it does for a user's call);
* `remat` becomes `jax.checkpoint` with the matching `jax.checkpoint_policies` entry;
* `custom_jvp_call` / `custom_vjp_call` become `jax.custom_jvp` / `jax.custom_vjp`,
  whose rules are minijax's rules traced into minijax programs and exported too;
* refs stay refs: `jax.new_ref`, `jax.ref.get/swap/addupdate/freeze`, never
  discharged;
* `stop_gradient` and `name` keep their meaning for AD (`lax.stop_gradient`,
  `checkpoint_name`), where the XLA backend may treat them as the identity.

`export_rules[prim](*jax_values, **params) -> list of jax values`, one entry per
minijax primitive; the `export` column of `python -m minijax rules`.
"""
from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util

from ..backends.jax_features import LAX_HAS_ONE_MINUS_SQUARE
from ..backends.xla import lowering_rules, _BINARY, interpret_with_table, weakened
from ..ir import primitives as P
from ..ir.core import ClosedJaxpr
from ..ir.control_flow_primitives import (cond_p, while_p, scan_p, debug_print_p,
                                          debug_callback_p, rebuild_from_layout)
from ..backends.xla_export import call_exported_lowering
from ..ir.export_primitive import call_exported_p
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p, custom_lin_p
from ..ir.linear_solve_primitive import linear_solve_p, split_operands
from ..ir.primitives import register_rule_table
from ..ir.ref_indexing import Index, Slice, NewAxis, Dynamic, DynamicSlice
from ..ir.remat_primitive import remat_p, name_p
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import MinijaxError
from ..transforms import policies as mini_policies
from ..transforms.ad_util import Zero, tangent_aval, is_differentiable, instantiate
from ..transforms.custom_derivatives import custom_lin_impl, _bwd_float_leaves
from ..transforms.jvp import jvp_rules

__all__ = ["to_jax", "export_rules", "eval_exported", "ExportError", "export_policy"]


class ExportError(MinijaxError, NotImplementedError):
    """A minijax program uses something JAX's public API cannot express."""


export_rules: dict = register_rule_table("export", {})

# First-order primitives: the XLA lowering is already a jax.lax call of the same op.
_HIGHER_ORDER = {P.jit_p, cond_p, while_p, scan_p, remat_p, custom_jvp_call_p,
                 custom_vjp_call_p, custom_lin_p, debug_print_p, debug_callback_p,
                 name_p, P.stop_gradient_p, linear_solve_p}
for _prim, _rule in lowering_rules.items():
    if _prim not in _HIGHER_ORDER:
        export_rules[_prim] = _rule
# jax.lax accepts a rank-0 operand beside an array itself; calling it so (rather than
# broadcasting first, as the XLA backend does) keeps JAX's jaxpr equal to minijax's.
for _name, _fn in _BINARY.items():
    export_rules[P.primitives_by_name[_name]] = lambda x, y, _fn=_fn: [_fn(x, y)]
# JAX has one_minus_square since 0.11; exported as it, JAX differentiates it with its
# own rule (-2x), as minijax does. An older JAX gets the formula the lowering computes.
if LAX_HAS_ONE_MINUS_SQUARE:
    export_rules[P.one_minus_square_p] = lambda x: [lax.one_minus_square(x)]


def eval_exported(jaxpr, consts, args) -> list:
    """Run a minijax jaxpr with the export table: JAX values in, JAX values out."""
    return interpret_with_table(jaxpr, consts, args, export_rules, _cannot_export)


def _cannot_export(primitive):
    return ExportError(f"minijax cannot export {primitive.name} to JAX yet")


def to_jax(closed_jaxpr: ClosedJaxpr):
    """A function of JAX values that runs `closed_jaxpr` with JAX's public API; it
    returns the list of the program's outputs."""
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"to_jax expects a minijax ClosedJaxpr, got "
                        f"{type(closed_jaxpr).__name__}")
    jaxpr, consts = closed_jaxpr.jaxpr, list(closed_jaxpr.consts)

    def run(*args):
        if len(args) != len(jaxpr.invars):
            raise TypeError(f"the program takes {len(jaxpr.invars)} arguments, got "
                            f"{len(args)}")
        return eval_exported(jaxpr, consts, args)
    run.__name__ = "minijax_program"
    return run


def _body_fn(jaxpr):
    return lambda *args: eval_exported(jaxpr, (), args)


def _distinct_refs(args):
    """`args` with each ref once (JAX refuses a ref passed twice to one function;
    a minijax equation may pass it twice), and where each argument went."""
    unique, where, seen = [], [], {}
    for arg in args:
        if type(arg).__name__ == "Ref" or _is_ref_tracer(arg):
            if id(arg) not in seen:
                seen[id(arg)] = len(unique)
                unique.append(arg)
            where.append(seen[id(arg)])
        else:
            where.append(len(unique))
            unique.append(arg)
    return unique, where


def _is_ref_tracer(x) -> bool:
    aval = getattr(x, "aval", None)
    return aval is not None and hasattr(aval, "inner_aval")


def _expanded(fn, where):
    """`fn` of the original arguments as a function of the distinct ones."""
    return lambda *unique: fn(*[unique[i] for i in where])


# -- calls and control flow -----------------------------------------------------------------

def _jit(*args, jaxpr, name, inline=False):
    unique, where = _distinct_refs(args)
    fn = _expanded(_body_fn(jaxpr), where)
    fn.__name__ = name
    return list(jax.jit(fn, inline=inline)(*unique))


def _cond(index, *operands, branches):
    unique, where = _distinct_refs(operands)
    return list(lax.switch(index, [_expanded(_body_fn(b), where) for b in branches],
                           *unique))


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    return list(lax.while_loop(
        lambda c: eval_exported(cond_jaxpr, (), [*cond_consts, *c])[0],
        lambda c: tuple(eval_exported(body_jaxpr, (), [*body_consts, *c])),
        tuple(carry)))


def _scan(*args, jaxpr, num_consts, num_carry, length, reverse=False, unroll=1):
    consts = args[:num_consts]
    init, xs = args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]

    def step(carry, x):
        outs = eval_exported(jaxpr, (), [*consts, *carry, *x])
        return tuple(outs[:num_carry]), tuple(outs[num_carry:])
    carry, ys = lax.scan(step, tuple(init), tuple(xs), length=length, reverse=reverse,
                         unroll=unroll)
    return list(carry) + list(ys)


def _linear_solve(*args, const_lengths, jaxprs):
    groups, b = split_operands(args, const_lengths)
    n_x = len(b)
    has_aux = len(jaxprs[2].outvars) > n_x

    def solver(k):
        if jaxprs[k] is None:
            return None

        def run(_, rhs):
            outs = eval_exported(jaxprs[k], (), [*groups[k], *rhs])
            return (tuple(outs[:n_x]), tuple(outs[n_x:])) if has_aux else tuple(outs)
        return run
    out = lax.custom_linear_solve(
        lambda x: tuple(eval_exported(jaxprs[0], (), [*groups[0], *x])), tuple(b),
        solver(2), solver(3), has_aux=has_aux)
    return [*out[0], *out[1]] if has_aux else list(out)


export_rules[P.jit_p] = _jit
export_rules[linear_solve_p] = _linear_solve
export_rules[cond_p] = _cond
export_rules[while_p] = _while
export_rules[scan_p] = _scan


# -- remat ----------------------------------------------------------------------------------

def export_policy(policy):
    """The `jax.checkpoint_policies` policy of a minijax policy."""
    jp = jax.checkpoint_policies
    if isinstance(policy, mini_policies.SaveFromBothPolicies):
        return jp.save_from_both_policies(export_policy(policy.first),
                                          export_policy(policy.second))
    simple = {"everything_saveable": jp.everything_saveable,
              "nothing_saveable": jp.nothing_saveable,
              "dots_saveable": jp.dots_saveable,
              "dots_with_no_batch_dims_saveable": jp.dots_with_no_batch_dims_saveable}
    named = {"save_only_these_names": jp.save_only_these_names,
             "save_any_names_but_these": jp.save_any_names_but_these,
             "save_anything_except_these_names": jp.save_anything_except_these_names}
    text_name = getattr(policy, "text_name", None)
    if text_name in simple:
        return simple[text_name]
    if text_name in named:
        return named[text_name](*policy.param_args())
    raise ExportError(f"cannot export the checkpoint policy {policy}: it is a minijax "
                      f"function of minijax primitives, which JAX cannot call")


def _remat(*args, jaxpr, policy, prevent_cse, differentiated):
    unique, where = _distinct_refs(args)
    fn = jax.checkpoint(_expanded(_body_fn(jaxpr), where), policy=export_policy(policy),
                        prevent_cse=prevent_cse)
    return list(fn(*unique))


export_rules[remat_p] = _remat


def _checkpoint_name(x, *, name):
    # Imported on use: importing it with minijax would add `jax.ad_checkpoint` to `jax`.
    return [importlib.import_module("jax.ad_checkpoint").checkpoint_name(x, name)]


export_rules[name_p] = _checkpoint_name
export_rules[P.stop_gradient_p] = lambda x: [lax.stop_gradient(x)]


# -- custom derivatives ------------------------------------------------------------------------
#
# The consts of a custom call become ordinary leading arguments of the JAX custom
# function; its rules give them no tangent and no cotangent, as minijax's rules do.

def _as_jax_array(value, dtype, weak):
    """What an exported custom rule computed, as a JAX array of `dtype`, weakly typed
    iff `weak`. A rule's program may return a constant (a Python float literal, a
    NumPy array), and JAX hands what a rule returns to the user as it is: a Python
    float came out of `jax.grad` (finding F42)."""
    value = jnp.asarray(value, dtype=dtype)
    return weakened(value) if weak else value


def _as_jax_arrays(values, avals):
    """The constants among `values` as JAX arrays typed as `avals` say; JAX values
    as they are."""
    return [v if isinstance(v, jax.Array) else _as_jax_array(v, a.dtype, a.weak_type)
            for v, a in zip(values, avals)]


def _trace_rule(fn, in_avals):
    """A custom rule traced into a minijax program. The exported program runs while
    JAX traces it (under jax.jit, grad, ...): what the rule computes eagerly (a
    constant minijax folds on concrete values, such as an index array) must run now
    with concrete values, not become a JAX tracer minijax cannot read (finding F43;
    jit's fast path does the same)."""
    with jax.ensure_compile_time_eval():
        return trace_to_jaxpr(fn, in_avals)


def _jvp_program(call_jaxpr, num_consts, rule, name):
    """minijax's jvp rule of the call traced into a program: (consts, args, float
    tangents of args) -> (outputs, tangents of the outputs)."""
    in_avals = list(call_jaxpr.in_avals)
    diff = [i >= num_consts and is_differentiable(a) for i, a in enumerate(in_avals)]

    def jvp(*flat):
        primals, tangent_iter = flat[:len(in_avals)], iter(flat[len(in_avals):])
        tangents = [next(tangent_iter) if d else Zero(tangent_aval(a))
                    for a, d in zip(in_avals, diff)]
        result = jvp_rules[custom_jvp_call_p](list(primals), tangents,
                                               call_jaxpr=call_jaxpr,
                                               num_consts=num_consts, rule=rule, name=name)
        return list(result.primals_out) + [instantiate(t) for t in result.tangents_out]
    tangent_avals = [a for a, d in zip(in_avals, diff) if d]
    return _trace_rule(jvp, in_avals + tangent_avals), diff


def _custom_jvp(*args, call_jaxpr, num_consts, rule, name):
    program, diff = _jvp_program(call_jaxpr, num_consts, rule, name)
    n_out = len(call_jaxpr.outvars)
    fn = jax.custom_jvp(_body_fn(call_jaxpr))

    def jvp(primals, tangents):
        outs = eval_exported(program.jaxpr, program.consts,
                             [*primals, *(t for t, d in zip(tangents, diff) if d)])
        outs = _as_jax_arrays(outs, program.out_avals)
        tangents_out = [t if is_differentiable(a) else np.zeros(a.shape, jax.dtypes.float0)
                        for t, a in zip(outs[n_out:], call_jaxpr.out_avals)]
        return outs[:n_out], tangents_out
    fn.defjvp(jvp)
    return list(fn(*args))


def _custom_vjp(*args, call_jaxpr, num_consts, rule, name):
    site = rule.site
    in_avals = list(call_jaxpr.in_avals)
    arg_avals = in_avals[num_consts:]
    n_out = len(call_jaxpr.outvars)
    residual_info = {}

    def fwd_flat(*flat_args):
        out, residuals = rule.fwd(*site.full_args(flat_args))
        out_leaves = tree_util.tree_leaves(out)
        res_leaves, res_tree = tree_util.tree_flatten(residuals)
        residual_info["tree"] = res_tree
        return list(out_leaves) + list(res_leaves)
    fwd_program = _trace_rule(fwd_flat, arg_avals)
    res_avals = fwd_program.out_avals[n_out:]

    def bwd_flat(*flat):
        residuals = tree_util.tree_unflatten(residual_info["tree"], list(flat[:len(res_avals)]))
        cts = list(flat[len(res_avals):])
        ct_tree = tree_util.tree_unflatten(site.out_tree, cts)
        cts_in = rule.bwd(*site.nondiff, residuals, ct_tree)
        return [instantiate(c) for c in _bwd_float_leaves(name, cts_in, site)]
    ct_avals = [tangent_aval(a) for a in call_jaxpr.out_avals]
    # Traced when JAX first calls `bwd`, not now: a bwd that cannot be traced (say,
    # one differentiating a while_loop in reverse mode) must fail only where JAX's
    # would, when something differentiates the call (finding F74).
    bwd_programs = []

    def bwd_program():
        if not bwd_programs:
            bwd_programs.append(_trace_rule(bwd_flat, list(res_avals) + ct_avals))
        return bwd_programs[0]

    fn = jax.custom_vjp(_body_fn(call_jaxpr))
    # The weak types of this call's arguments, as JAX traces them (the program's
    # avals say how minijax traced it; a vmap row may pass a strong array where the
    # program had a weak scalar): a cotangent has its primal's type.
    weak_args = {}

    def fwd(*all_args):
        weak_args["flags"] = [jax.typeof(a).weak_type for a in all_args]
        outs = eval_exported(fwd_program.jaxpr, fwd_program.consts, all_args[num_consts:])
        outs = _as_jax_arrays(outs, fwd_program.out_avals)
        return outs[:n_out], tuple(outs[n_out:])

    def bwd(residuals, cts):
        program = bwd_program()
        float_cts = iter(eval_exported(program.jaxpr, program.consts, [*residuals, *cts]))
        weak = weak_args.get("flags") or [a.weak_type for a in in_avals]
        return tuple(_as_jax_array(next(float_cts), a.dtype, weak[i])
                     if i >= num_consts and is_differentiable(a) else None
                     for i, a in enumerate(in_avals))
    fn.defvjp(fwd, bwd)
    return list(fn(*args))


def _custom_lin(*args, rule, num_residuals, name):
    """A custom_vjp call's tangent map, met inside an exported rule (a `custom_jvp`
    rule that differentiates a body holding a `custom_vjp` call, seeds rm17b:255,
    rm17b:356): JAX's `linear_call`, transposed by minijax's transpose of the call
    (the user's bwd), as JAX transposes its own `custom_lin`. Run forwards, it
    refuses as minijax's does, when it runs (tracing it, as JAX's reverse mode does,
    is fine)."""
    if getattr(rule.vjp_rule, "linear_forward", None) is not None:
        return custom_lin_impl(*args, rule=rule, num_residuals=num_residuals, name=name)
    from ..transforms.custom_derivatives import _custom_lin_transpose
    residual_avals = list(rule.in_avals[:num_residuals])
    ct_avals = list(rule.tangent_out_avals)

    def transpose_flat(*flat):
        cts = _custom_lin_transpose(list(flat[num_residuals:]), *flat[:num_residuals],
                                    *[None] * (len(args) - num_residuals), rule=rule,
                                    num_residuals=num_residuals, name=name)
        return [instantiate(ct) if type(ct) is Zero else ct for ct in cts[num_residuals:]]
    program = _trace_rule(transpose_flat, residual_avals + ct_avals)

    def forward(residuals, tangents):
        def refuse(*_):
            custom_lin_impl(*args, rule=rule, num_residuals=num_residuals, name=name)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ct_avals]
        return jax.pure_callback(refuse, shapes, *tangents)

    def transpose(residuals, cts):
        outs = eval_exported(program.jaxpr, program.consts, [*residuals, *cts])
        return _as_jax_arrays(outs, program.out_avals)
    return list(jax.custom_derivatives.linear_call(
        forward, transpose, list(args[:num_residuals]), list(args[num_residuals:])))


export_rules[custom_jvp_call_p] = _custom_jvp
export_rules[custom_vjp_call_p] = _custom_vjp
export_rules[custom_lin_p] = _custom_lin


# -- refs ----------------------------------------------------------------------------------------

def _python_index(index: Index, dynamic, shape):
    out, axis = [], 0
    for item in index.items:
        if isinstance(item, NewAxis):
            out.append(None)
            continue
        if isinstance(item, Slice):
            out.append(slice(item.start, item.stop, item.stride))
        elif isinstance(item, Dynamic):
            out.append(next(dynamic))
        elif isinstance(item, DynamicSlice):
            out.append(jax_dslice(next(dynamic), item, shape[axis]))
        else:
            out.append(int(item))
        axis += 1
    return tuple(out)


def jax_dslice(start, item: DynamicSlice, n: int):
    """`jax.ds` reading what minijax's `DynamicSlice` reads. JAX clamps a unit-stride
    start as minijax does; a strided one it indexes element by element, so that
    start is clamped here first, which leaves JAX nothing to clamp."""
    if item.stride != 1:
        start = lax.convert_element_type(start, np.int32)
        start = lax.clamp(np.int32(0), lax.select(start < 0, start + np.int32(n), start),
                          np.int32(max(n - item.span, 0)))
    return jax.ds(start, item.size, item.stride)


def _jax_place(ref, indexer, dynamic):
    """The JAX ref (or `.at` view) and final index a minijax indexer names."""
    if indexer is None:
        return ref, ...
    dynamic = iter(dynamic)
    target = ref
    for step in indexer.views:
        if not isinstance(step, Index):
            raise ExportError(f"cannot export the ref view {type(step).__name__.lower()}: "
                              f"JAX's public ref API has no such view")
        target = target.at[_python_index(step, dynamic, target.shape)]
    return target, _python_index(indexer.final, dynamic, target.shape)


def _get(ref, *dynamic, indexer=None):
    target, idx = _jax_place(ref, indexer, dynamic)
    return [jax.ref.get(target, idx)]


def _swap(ref, value, *dynamic, indexer=None):
    target, idx = _jax_place(ref, indexer, dynamic)
    return [jax.ref.swap(target, idx, value)]


def _addupdate(ref, value, *dynamic, indexer=None):
    target, idx = _jax_place(ref, indexer, dynamic)
    jax.ref.addupdate(target, idx, value)
    return []


export_rules[P.new_ref_p] = lambda x: [jax.new_ref(x)]
export_rules[P.empty_ref_p] = lambda *, shape, dtype: [
    jax.empty_ref(jax.ShapeDtypeStruct(shape, dtype))]
export_rules[P.get_p] = _get
export_rules[P.swap_p] = _swap
export_rules[P.addupdate_p] = _addupdate
export_rules[P.freeze_p] = lambda ref: [jax.ref.freeze(ref)]
export_rules[P.free_ref_p] = lambda ref: (jax.ref.free_ref(ref), [])[1]


# -- host effects --------------------------------------------------------------------------------

def _debug_print(*values, fmt, layout):
    _, args_layout, kwargs_layout = layout
    leaves = iter(values)
    args = rebuild_from_layout(args_layout, leaves)
    kwargs = rebuild_from_layout(kwargs_layout, leaves)
    jax.debug.print(fmt, *args, **kwargs)
    return []


def _debug_callback(*values, callback):
    jax.debug.callback(callback, *values)
    return []


export_rules[debug_print_p] = _debug_print
export_rules[debug_callback_p] = _debug_callback
# A saved program is called in JAX as minijax lowers the call: with JAX's `Exported.call`.
export_rules[call_exported_p] = call_exported_lowering
