"""`custom_linear_solve` under the passes: its derivatives come from the equation
A x = b, never from the solver's own operations.

Read `ir/linear_solve_primitive.py` first (the operands, the four bodies).

* jvp: x = A⁻¹ b, so ẋ = A⁻¹(ḃ - Ȧ x). Ȧ x is the JVP of `matvec` in its consts at
  x (skipped when they carry no tangent); the tangent is a second `custom_linear_solve`
  of the same params on that right-hand side, so it is linear in it. Aux outputs get
  zero tangents, as in JAX.
* transpose (linear in b only, the consts being the operator): b̄ = A⁻ᵀ x̄, the same
  primitive with matvec ↔ vecmat and solve ↔ transpose_solve. Without a
  `transpose_solve` that is JAX's TypeError.
* vmap: the four bodies are batched together. Which parts of x and b end up batched is
  a fixed point, as in JAX: solve and vecmat map b-space to x-space, matvec and
  transpose_solve x-space to b-space, and each must agree with the others on which
  values carry the batch axis (batched operands are moved to axis 0, and a b that
  becomes batched is broadcast).
* partial eval, DCE, discharge, remat: the generic paths (the equation has no effects,
  so it is evaluated when its operands are known and staged whole otherwise; the
  JVP's second solve is staged with the operator's consts as residuals).
"""
from __future__ import annotations

from ..ir.linear_solve_primitive import linear_solve_p, split_operands, transposed_params
from ..ir.trace import bind, current_trace, set_current_trace
from .ad_util import Zero, tangent_aval, is_differentiable, instantiate, eval_jaxpr, fresh_root
from .ad_util import add, neg
from .batching import moveaxis, batch_at
from .jvp import jvp_rules, jvp_flat, JvpResult
from .transpose import transpose_rules, is_linear
from .vmap import vmap_rules, vmap_jaxpr, Batched, not_mapped


# -- jvp --------------------------------------------------------------------------------

def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    outs = bind(linear_solve_p, *primals, **params)
    groups, b = split_operands(primals, const_lengths)
    tangent_groups, rhs = split_operands(tangents, const_lengths)
    x = outs[:len(b)]
    x_avals = [v.aval for v in jaxprs[0].invars[len(groups[0]):]]
    if not all(type(t) is Zero for t in tangent_groups[0]):
        # Ȧ x: matvec's JVP in its consts, x held fixed
        x_zeros = [Zero(tangent_aval(a)) for a in x_avals]
        a_dot_x = jvp_flat(lambda *args: eval_jaxpr(jaxprs[0], (), args),
                           groups[0] + x, tangent_groups[0] + x_zeros,
                           current_trace()).tangents_out
        rhs = [_minus(r, t) for r, t in zip(rhs, a_dot_x)]
    aux_zeros = [Zero(tangent_aval(a)) for a in jaxprs[2].out_avals[len(b):]]
    x_zero = [Zero(tangent_aval(a)) for a in x_avals]
    if all(type(r) is Zero for r in rhs):
        return JvpResult(outs, x_zero + aux_zeros)
    rhs = [instantiate(r) for r in rhs]
    x_dot = bind(linear_solve_p, *primals[:sum(const_lengths)], *rhs, **params)
    x_dot = [t if is_differentiable(a) else z
             for t, a, z in zip(x_dot[:len(b)], x_avals, x_zero)]
    return JvpResult(outs, x_dot + aux_zeros)


def _minus(a, b):
    if type(b) is Zero:
        return a
    return neg(b) if type(a) is Zero else add(a, neg(b))


jvp_rules[linear_solve_p] = _linear_solve_jvp


# -- transpose ----------------------------------------------------------------------------

def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs[3] is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    groups, b = split_operands(args, const_lengths)
    if any(is_linear(c) for group in groups for c in group):
        raise NotImplementedError(
            "custom_linear_solve: the operator's constants cannot be linear inputs of a "
            "transpose (the solve is linear in b only)")
    x_cts = [instantiate(ct) for ct in cts[:len(b)]]
    new_lengths, new_jaxprs = transposed_params(const_lengths, jaxprs)
    m, v, s, t = groups
    b_cts = bind(linear_solve_p, *v, *m, *t, *s, *x_cts, const_lengths=new_lengths,
                 jaxprs=new_jaxprs)[:len(b)]
    return [None] * sum(const_lengths) + [ct if is_linear(x) else None
                                          for ct, x in zip(b_cts, b)]


transpose_rules[linear_solve_p] = _linear_solve_transpose


# -- vmap -----------------------------------------------------------------------------------

def _batch(jaxpr, batched_in, instantiate_out, axis_size, axis_name):
    """`jaxpr` batched with the batched inputs on axis 0; returns (jaxpr, which
    outputs are batched): every output that depends on a batched input, and those
    asked for by `instantiate_out` (broadcast), at axis 0."""
    in_axes = [0 if bat else None for bat in batched_in]
    with set_current_trace(fresh_root()):
        found = vmap_jaxpr(jaxpr, in_axes, axis_size, axis_name=axis_name)
        out_bat = [d is not None or inst for d, inst in zip(found.out_axes, instantiate_out)]
        if all((d is not None) == bat for d, bat in zip(found.out_axes, out_bat)) \
                and all(d in (None, 0) for d in found.out_axes):
            return found.jaxpr, out_bat
        out_axes = [0 if bat else None for bat in out_bat]
        return vmap_jaxpr(jaxpr, in_axes, axis_size, out_axes=out_axes,
                          axis_name=axis_name).jaxpr, out_bat


def _or(*lists):
    return [any(flags) for flags in zip(*lists)]


def _linear_solve_vmap(axis_size, values, dims, *, const_lengths, jaxprs, axis_name=None):
    groups, b = split_operands(values, const_lengths)
    group_dims, b_dims = split_operands(dims, const_lengths)
    group_bat = [[d is not not_mapped for d in ds] for ds in group_dims]
    orig_b_bat = [d is not not_mapped for d in b_dims]
    matvec, vecmat, solve, solve_t = jaxprs
    n_x = len(b)
    n_aux = len(solve.out_avals) - n_x

    def batch(k, inputs_bat, inst):
        return _batch(jaxprs[k], group_bat[k] + inputs_bat, inst, axis_size, axis_name)

    # Which parts of b and x are batched: grown until the four bodies agree.
    b_bat, x_bat = orig_b_bat, [False] * (n_x + n_aux)
    for _ in range(2 + 2 * (n_x + n_aux)):
        solve_b, solve_x_bat = batch(2, b_bat, x_bat)
        if vecmat is None:
            vecmat_b, x_bat_out = None, solve_x_bat
        else:
            vecmat_b, vecmat_x_bat = batch(1, b_bat, b_bat)
            x_bat_out = _or(vecmat_x_bat + [True] * n_aux, solve_x_bat)
        matvec_b, matvec_b_bat = batch(0, x_bat_out[:n_x], b_bat)
        if solve_t is None:
            solve_t_b, b_bat_out = None, _or(matvec_b_bat, orig_b_bat)
        else:
            solve_t_b, solve_t_bat = batch(3, x_bat_out[:n_x], x_bat_out)
            b_bat_out = _or(matvec_b_bat, solve_t_bat[:n_x], orig_b_bat)
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("custom_linear_solve: vmap found no fixed point")

    new_consts = [moveaxis(c, d, 0) if d is not not_mapped and d != 0 else c
                  for group, ds in zip(groups, group_dims) for c, d in zip(group, ds)]
    new_b = [batch_at(v, d, 0, axis_size) if now else v
             for v, d, now in zip(b, b_dims, b_bat)]
    outs = bind(linear_solve_p, *new_consts, *new_b, const_lengths=const_lengths,
                jaxprs=(matvec_b, vecmat_b, solve_b, solve_t_b))
    return Batched(list(outs), [0 if bat else not_mapped for bat in solve_x_bat])


vmap_rules[linear_solve_p] = _linear_solve_vmap
