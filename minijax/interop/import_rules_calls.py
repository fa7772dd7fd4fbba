"""The import table, continued: `checkpoint` (with its policy) and `name`, and the
custom-derivative calls.

Read `import_rules.py` first: same table, same conventions.

* A checkpoint policy is one of JAX's built-in policies, read through its own fields
  (`import_policy`); any other policy function is refused by name.
* `custom_jvp_call` / `custom_vjp_call` become minijax `custom_jvp` / `custom_vjp`
  functions whose primal is the imported call jaxpr and whose rules evaluate JAX's
  jvp jaxpr, fwd jaxpr and bwd function (traced with JAX at the residuals' types
  and imported) on minijax values.
* `custom_linear_solve` is minijax's primitive of the same name, its four bodies
  imported.
* `call_exported` (a call of a `jax.export.Exported`) is minijax's primitive of the
  same name, calling the same saved program.
"""
from __future__ import annotations

import inspect

import jax

from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p
from ..ir.export_primitive import call_exported_p, SavedProgram
from ..ir.linear_solve_primitive import linear_solve_p, split_operands
from ..ir.remat_primitive import remat_p, name_p
from ..ir.trace import bind, aval_of
from ..transforms import policies as mini_policies
from ..transforms.ad_util import zeros
from ..transforms.custom_derivatives import custom_jvp, custom_vjp
from .import_rules import UnsupportedParamError
from .importing import register_import, import_body, eval_jax_jaxpr, open_jaxpr


# -- remat -----------------------------------------------------------------------------------------

def import_policy(policy):
    """The minijax policy of a JAX checkpoint policy, read through its own fields.

    JAX 0.10 makes its built-in policies objects (`DotsSaveable`, `SaveOnlyTheseNames`,
    ... with the names as fields); newer releases make them plain functions, the
    name policies closures over their set of names, read here with `inspect`."""
    jax_policies = jax.checkpoint_policies
    if policy is None or policy is jax_policies.nothing_saveable:
        return mini_policies.nothing_saveable
    if policy is jax_policies.everything_saveable:
        return mini_policies.everything_saveable
    if policy is jax_policies.dots_saveable or policy is jax_policies.checkpoint_dots:
        return mini_policies.dots_saveable
    if policy is jax_policies.dots_with_no_batch_dims_saveable:
        return mini_policies.dots_with_no_batch_dims_saveable
    kind = type(policy).__name__
    if kind == "DotsSaveable":
        return (mini_policies.dots_with_no_batch_dims_saveable
                if policy.only_if_no_batch_dims else mini_policies.dots_saveable)
    if kind == "SaveOnlyTheseNames":
        return mini_policies.SaveOnlyTheseNames(*sorted(policy.saveable_names))
    if kind == "SaveAnyNamesButThese":
        return mini_policies.SaveAnyNamesButThese(*sorted(policy.names))
    if inspect.isfunction(policy):
        maker = policy.__qualname__.split(".<locals>.")[0]
        captured = inspect.getclosurevars(policy).nonlocals
        if maker == "save_only_these_names" and "names_which_can_be_saved" in captured:
            return mini_policies.SaveOnlyTheseNames(
                *sorted(captured["names_which_can_be_saved"]))
        if maker == "save_any_names_but_these" and "names_not_to_save" in captured:
            return mini_policies.SaveAnyNamesButThese(*sorted(captured["names_not_to_save"]))
    raise UnsupportedParamError(f"cannot import the checkpoint policy {policy!r}: minijax "
                                f"reads JAX's built-in policy objects only")


def _remat(*args, jaxpr, policy, prevent_cse, differentiated):
    body, hoisted = import_body(jaxpr)
    return list(bind(remat_p, *hoisted, *args, jaxpr=body, policy=import_policy(policy),
                     prevent_cse=bool(prevent_cse), differentiated=bool(differentiated)))


register_import("remat2", remat_p, _remat)
register_import("checkpoint", remat_p, _remat)
register_import("name", name_p, lambda x, *, name: [bind(name_p, x, name=str(name))])


# -- custom derivatives -----------------------------------------------------------------------------
#
# JAX keeps the rules as thunks that trace them into jaxprs on demand; we ask for them
# with every tangent nonzero, import what they return, and wrap them as minijax's
# `custom_jvp` / `custom_vjp` functions, so minijax's own AD calls them.

def _primal_fun(call_jaxpr, num_consts, consts):
    jaxpr, body_consts = open_jaxpr(call_jaxpr)

    def fun(*args):
        return tuple(eval_jax_jaxpr(jaxpr, body_consts, list(consts) + list(args)))
    debug_info = getattr(jaxpr, "debug_info", None)
    fun.__name__ = str(getattr(debug_info, "func_name", None) or "custom_call")
    return fun


def _custom_jvp_call(*args, call_jaxpr, jvp_jaxpr_fun=None, jvp_jaxpr_thunk=None,
                     num_consts, symbolic_zeros=False):
    consts, primals = args[:num_consts], args[num_consts:]
    thunk = jvp_jaxpr_fun if jvp_jaxpr_fun is not None else jvp_jaxpr_thunk
    fun = _primal_fun(call_jaxpr, num_consts, consts)
    call = getattr(thunk, "call_wrapped", thunk)
    jvp_jaxpr, jvp_consts, out_zeros = call(*([False] * len(primals)))
    wrapped = custom_jvp(fun)

    def jvp(primals_in, tangents_in):
        outs = eval_jax_jaxpr(jvp_jaxpr, list(jvp_consts), list(primals_in) + list(tangents_in))
        primals_out, nonzero = outs[:len(out_zeros)], iter(outs[len(out_zeros):])
        tangents_out = [zeros(aval_of(p)) if z else next(nonzero)
                        for p, z in zip(primals_out, out_zeros)]
        return tuple(primals_out), tuple(tangents_out)
    wrapped.defjvp(jvp)
    return list(wrapped(*primals))


def _custom_vjp_call(*args, call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts, out_trees,
                     symbolic_zeros=False):
    consts, primals = args[:num_consts], args[num_consts:]
    fun = _primal_fun(call_jaxpr, num_consts, consts)
    wrapped = custom_vjp(fun)
    n_out = len(open_jaxpr(call_jaxpr)[0].outvars)

    def fwd(*primals_in):
        fwd_jaxpr, fwd_consts = fwd_jaxpr_thunk.call_wrapped(*([True] * len(primals_in)))
        out_tree, res_tree, input_fwds = out_trees()
        outs = eval_jax_jaxpr(fwd_jaxpr, list(fwd_consts), list(primals_in))
        kept, primals_out = outs[:len(outs) - n_out], outs[len(outs) - n_out:]
        kept = iter(kept)
        # JAX leaves out residuals that are inputs; `input_fwds` says which (counted
        # over consts and arguments).
        inputs = list(consts) + list(primals_in)
        residuals = [next(kept) if f is None else inputs[f] for f in input_fwds]
        return tuple(primals_out), tuple(residuals)

    def bwd_rule(residuals, cts):
        # JAX's bwd is JAX code: trace it with JAX at these types, then import it.
        res_structs = [_struct(r) for r in residuals]
        ct_structs = [_struct(c) for c in cts]
        zero_positions = []

        def flat_bwd(res, ct):
            outs = bwd.call_wrapped(*res, *ct)
            if isinstance(outs, tuple) and len(outs) == 2 and isinstance(outs[0], list):
                outs = outs[0]  # newer JAX: (cotangents, backward-pass logs)
            zero_positions[:] = [type(o).__name__ in ("Zero", "SymbolicZero") for o in outs]
            return [o for o in outs if type(o).__name__ not in ("Zero", "SymbolicZero")]
        closed = jax.make_jaxpr(flat_bwd)(res_structs, ct_structs)
        outs = iter(eval_jax_jaxpr(closed.jaxpr, list(closed.consts),
                                   list(residuals) + list(cts)))
        return tuple(None if z else next(outs) for z in zero_positions)
    wrapped.defvjp(fwd, bwd_rule)
    return list(wrapped(*primals))


def _struct(x):
    aval = aval_of(x)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)


register_import("custom_jvp_call", custom_jvp_call_p, _custom_jvp_call)
register_import("custom_vjp_call", custom_vjp_call_p, _custom_vjp_call)


# -- custom_linear_solve ------------------------------------------------------------------------

def _linear_solve(*args, const_lengths, jaxprs):
    """JAX's bodies (closed jaxprs, or None without a transpose_solve) imported; the
    constants an imported body hoists go in front of that body's own operands."""
    const_lengths = tuple(int(n) for n in const_lengths)
    groups, b = split_operands(args, const_lengths)
    bodies, consts, lengths = [], [], []
    for jaxpr, group in zip(jaxprs, groups):
        if jaxpr is None:
            bodies.append(None)
            lengths.append(0)
            continue
        body, hoisted = import_body(jaxpr)
        bodies.append(body)
        consts += [*hoisted, *group]
        lengths.append(len(hoisted) + len(group))
    return list(bind(linear_solve_p, *consts, *b, const_lengths=tuple(lengths),
                     jaxprs=tuple(bodies)))


register_import("custom_linear_solve", linear_solve_p, _linear_solve)


# -- call_exported -----------------------------------------------------------------------------------

def _call_exported(*args, exported):
    return bind(call_exported_p, *args, exported=SavedProgram(exported))


register_import("call_exported", call_exported_p, _call_exported)
