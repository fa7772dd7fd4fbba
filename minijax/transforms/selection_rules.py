"""Derivatives and batching of `top_k` and `optimization_barrier`
(ir/selection_primitives.py).

* `top_k`: the values are entries of the operand, so their tangent is the tangent
  gathered at the same indices (one gather, `ad_util.take_along_axis`); the indices
  are integers and have none. Batching renumbers `axis` around the batch axis.
* `optimization_barrier`: the JVP puts the primal outputs behind one barrier and the
  nonzero tangents behind another, so linearize keeps the tangent half a linear
  program of its own; its transpose is the barrier of the cotangents. Batching passes
  every batch axis through unchanged.
"""
from __future__ import annotations

from ..ir import selection_primitives as S
from ..ir.trace import bind, aval_of
from .ad_util import Zero, tangent_aval, take_along_axis
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules
from .vmap import Batched, vmap_rules


def _top_k_jvp(primals, tangents, *, k, axis, is_stable=True):
    values, indices = bind(S.top_k_p, *primals, k=k, axis=axis, is_stable=is_stable)
    t, = tangents
    index_tangent = Zero(tangent_aval(aval_of(indices)))
    if type(t) is Zero:
        return JvpResult([values, indices], [Zero(tangent_aval(aval_of(values))),
                                             index_tangent])
    return JvpResult([values, indices], [take_along_axis(t, indices, axis), index_tangent])


def _top_k_batch(axis_size, values, dims, *, k, axis, is_stable=True):
    (x,), (d,) = values, dims
    outs = bind(S.top_k_p, x, k=k, axis=axis + (axis >= d), is_stable=is_stable)
    return Batched(list(outs), [d, d])


def _barrier_jvp(primals, tangents):
    outs = bind(S.optimization_barrier_p, *primals)
    nonzero = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    out_tangents = list(tangents)
    if nonzero:
        behind = bind(S.optimization_barrier_p, *[tangents[i] for i in nonzero])
        for i, t in zip(nonzero, behind):
            out_tangents[i] = t
    return JvpResult(list(outs), out_tangents)


def _barrier_transpose(cts, *operands):
    nonzero = [i for i, ct in enumerate(cts) if type(ct) is not Zero]
    result = list(cts)
    if nonzero:
        for i, ct in zip(nonzero, bind(S.optimization_barrier_p,
                                       *[cts[i] for i in nonzero])):
            result[i] = ct
    return result


def _barrier_batch(axis_size, values, dims):
    return Batched(list(bind(S.optimization_barrier_p, *values)), list(dims))


jvp_rules[S.top_k_p] = _top_k_jvp
vmap_rules[S.top_k_p] = _top_k_batch
jvp_rules[S.optimization_barrier_p] = _barrier_jvp
transpose_rules[S.optimization_barrier_p] = _barrier_transpose
vmap_rules[S.optimization_barrier_p] = _barrier_batch
