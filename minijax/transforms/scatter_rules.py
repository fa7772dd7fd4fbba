"""JVP rule of `scatter` (overwriting), JVP and transpose rules of the combining
scatters `scatter_mul`, `scatter_min` and `scatter_max` (their vmap rule is
`scatter_add`'s, in `vmap_rules.py`).

Read `jvp_rules.py` and `transpose_rules.py` first. All three follow JAX's math, and
every tangent is linear in the input tangents with the other factors computed from
primals, so linearize and transpose need nothing more than the rules below.

* `scatter_mul(x, i, y)` multiplies each element `x[j]` by every update `y[u]` sent to
  it: `out[j] = x[j] * prod_{u -> j} y[u]`. It is linear in `x` alone (the transpose
  is `scatter_mul(ct, i, y)`). Its derivative in `y[u]` is `x[j]` times the product
  of the *other* updates sent to `j`. JAX computes that only when the indices are
  unique (it raises otherwise); here it is exact for repeated indices and zeros too:
  with `Z[j]` the number of zero updates sent to `j` and `P[j]` the product of the
  non-zero ones, the others' product is `P[j] / y[u]` when `Z[j] = 0`, `P[j]` for the
  one zero update when `Z[j] = 1`, and 0 otherwise.
* `scatter_max` / `scatter_min`: the result at `j` is the largest (smallest) of
  `x[j]` and the updates sent to `j`; its tangent is the *average* of the tangents of
  every contender that attains it (JAX's convention, as for `max` and `reduce_max`).
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from ..ir.types import is_inexact
from .ad_util import Zero, tangent_aval, zeros, instantiate, scalar, convert, add_tangents
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules, is_linear, NonLinearError
from .transpose_rules import _gather_updates


def _dnums(params):
    return {k: params[k] for k in ("update_window_dims", "inserted_window_dims",
                                   "scatter_dims_to_operand_dims")}


def _gather_back(values, indices, update_aval, params):
    """What each update's window sees of `values` (an operand-shaped array)."""
    return _gather_updates(values, indices, update_aval, mode=params.get("mode", "fill"),
                           **_dnums(params))


def _select(pred, if_true, if_false):
    return bind(P.select_n_p, pred, if_false, if_true)


def _full_like(aval, value):
    return bind(P.broadcast_in_dim_p, scalar(value, aval.dtype), shape=aval.shape,
                broadcast_dimensions=()) if aval.shape else scalar(value, aval.dtype)


def _product_of_others(operand, indices, updates, params):
    """For each update, the product of the other updates sent to the same element."""
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    is_zero = bind(P.eq_p, updates, scalar(0, up_aval.dtype))
    count_aval = op_aval.update(dtype=np.dtype(np.int32), weak_type=False)
    zero_counts = bind(P.scatter_add_p, zeros(count_aval), indices,
                       convert(is_zero, np.int32), **params)
    safe = _select(is_zero, _full_like(up_aval, 1), updates)
    nonzero_products = bind(P.scatter_mul_p, _full_like(op_aval.strip_weak_type(), 1),
                            indices, safe, **params)
    count = _gather_back(zero_counts, indices, up_aval.update(dtype=np.dtype(np.int32)),
                         params)
    product = _gather_back(nonzero_products, indices, up_aval, params)
    zero = _full_like(up_aval, 0)
    none_zero = bind(P.eq_p, count, scalar(0, np.int32))
    one_zero = bind(P.eq_p, count, scalar(1, np.int32))
    return _select(is_zero, _select(one_zero, product, zero),
                   _select(none_zero, bind(P.div_p, product, safe), zero))


def _scatter_jvp(primals, tangents, **params):
    """`scatter` (overwriting) with indices that may repeat, differentiated as JAX does:
    give each update a positive id and scatter the ids, then gather them back -- an
    update whose id came back is the one the scatter left in place. Masking the
    operand (where nothing was written) and the updates (the ones left in place)
    turns the scatter into a `scatter_add` of the masked values, for the result and
    for the tangent, and the tangent is a sum: linear, transposed exactly."""
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    if (type(t_operand) is Zero and type(t_updates) is Zero) or \
            not is_inexact(op_aval.dtype):
        ans = bind(P.scatter_p, operand, indices, updates, **params)
        return JvpResult([ans], [Zero(tangent_aval(aval_of(ans)))])
    # One id per scattered window (the window's own elements share it), from 1.
    ids_shape = tuple(1 if d in params["update_window_dims"] else n
                      for d, n in enumerate(up_aval.shape))
    num_ids = int(np.prod(ids_shape, dtype=np.int64))
    ids = bind(P.reshape_p, bind(P.iota_p, dtype=np.dtype(np.uint32), shape=(num_ids,),
                                 dimension=0), new_sizes=ids_shape, dimensions=None)
    ids = bind(P.add_p, bind(P.broadcast_in_dim_p, ids, shape=up_aval.shape,
                             broadcast_dimensions=tuple(range(len(ids_shape)))),
               scalar(1, np.uint32))
    id_op_aval = op_aval.update(dtype=np.dtype(np.uint32), weak_type=False)
    scattered_ids = bind(P.scatter_p, zeros(id_op_aval), indices, ids, **params)
    gathered_ids = _gather_back(scattered_ids, indices, aval_of(ids), params)
    operand_kept = bind(P.eq_p, scattered_ids, scalar(0, np.uint32))
    update_kept = bind(P.eq_p, ids, gathered_ids)

    def combine(operand_part, update_part):
        return bind(P.scatter_add_p,
                    _select(operand_kept, operand_part, zeros(aval_of(operand_part))),
                    indices,
                    _select(update_kept, update_part, zeros(aval_of(update_part))),
                    **params)
    ans = combine(operand, updates)
    return JvpResult([ans], [combine(instantiate(t_operand), instantiate(t_updates))])


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    ans = bind(P.scatter_mul_p, operand, indices, updates, **params)
    t = Zero(tangent_aval(aval_of(ans)))
    if not is_inexact(aval_of(ans).dtype):
        return JvpResult([ans], [t])
    if type(t_operand) is not Zero:
        t = bind(P.scatter_mul_p, t_operand, indices, updates, **params)
    if type(t_updates) is not Zero:
        spread = bind(P.scatter_add_p, zeros(tangent_aval(aval_of(operand))), indices,
                      bind(P.mul_p, t_updates,
                           _product_of_others(operand, indices, updates, params)),
                      **params)
        t = add_tangents(t, bind(P.mul_p, operand, spread))
    return JvpResult([ans], [t])


def _scatter_mul_transpose(cts, operand, indices, updates, **params):
    ct, = cts
    if is_linear(updates):
        raise NonLinearError("scatter_mul is only linear in its operand")
    if type(ct) is Zero:
        return [Zero(operand.aval), None, None]
    return [bind(P.scatter_mul_p, ct, indices, updates, **params), None, None]


def _scatter_chooser_jvp(prim):
    def rule(primals, tangents, **params):
        operand, indices, updates = primals
        t_operand, _, t_updates = tangents
        ans = bind(prim, operand, indices, updates, **params)
        if (type(t_operand) is Zero and type(t_updates) is Zero) or \
                not is_inexact(aval_of(ans).dtype):
            return JvpResult([ans], [Zero(tangent_aval(aval_of(ans)))])
        t_operand, t_updates = instantiate(t_operand), instantiate(t_updates)
        up_aval = aval_of(updates)
        dtype = up_aval.dtype

        def count(mask):
            return _gather_back(bind(P.scatter_add_p, zeros(aval_of(operand)), indices,
                                     convert(mask, dtype), **params),
                                indices, up_aval, params)
        initial = _gather_back(operand, indices, up_aval, params)
        final = _gather_back(ans, indices, up_aval, params)
        won = bind(P.eq_p, updates, final)           # this update attains the result
        kept = bind(P.eq_p, initial, final)          # so does the operand's own value
        winners = count(won)
        senders = count(_full_like(up_aval.update(dtype=np.dtype(bool)), True))
        one = scalar(1, dtype)
        share_if_kept = bind(P.div_p, one, bind(P.add_p, winners, one))
        update_share = _select(won, _select(kept, share_if_kept, bind(P.div_p, one, winners)),
                               _full_like(up_aval, 0))
        operand_share = _select(kept, share_if_kept, _full_like(up_aval, 0))
        # The operand's own tangent passes through once (scatter_add's operand); each
        # of the `senders` updates at its element adds (share - 1) / senders of it.
        operand_correction = bind(P.div_p, bind(P.sub_p, operand_share, one), senders)
        contributions = bind(P.add_p,
                             bind(P.mul_p, _gather_back(t_operand, indices, up_aval, params),
                                  operand_correction),
                             bind(P.mul_p, t_updates, update_share))
        t = bind(P.scatter_add_p, t_operand, indices, contributions, **params)
        return JvpResult([ans], [t])
    return rule


jvp_rules[P.scatter_p] = _scatter_jvp
jvp_rules[P.scatter_mul_p] = _scatter_mul_jvp
transpose_rules[P.scatter_mul_p] = _scatter_mul_transpose
jvp_rules[P.scatter_min_p] = _scatter_chooser_jvp(P.scatter_min_p)
jvp_rules[P.scatter_max_p] = _scatter_chooser_jvp(P.scatter_max_p)
