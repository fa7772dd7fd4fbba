"""JVP, transpose and vmap rules of the window primitives (conv, reduce_window_*).

Read `jvp_rules.py`, `transpose_rules.py` and `vmap_rules.py` first: the signatures
here are theirs, and `ir/window_primitives.py` says what the params mean.

**Convolution** is bilinear, like `dot_general`: its tangent is
`conv(t_lhs, rhs) + conv(lhs, t_rhs)` and each transpose is another convolution.
Forgetting the spatial axes, a conv contracts `[batch, in] x [in, out] -> [batch,
out]`, so (as for a matmul) the lhs cotangent contracts the output cotangent with the
kernel over `out`, and the rhs cotangent contracts lhs and output cotangent over
`batch`. Spatially, both are correlations:

* w.r.t. lhs: correlate the cotangent with the *spatially flipped* kernel, the
  roles of window strides and lhs dilation swapped (an output's stride becomes holes
  in the cotangent), with padding chosen so that every input position sees exactly
  the outputs it contributed to. Feature groups move from the kernel's out axis to
  its in axis; batch groups become feature groups and are folded back into the batch.
* w.r.t. rhs: correlate lhs with the cotangent *as the kernel*, batch and feature
  axes swapped in all three specs, window strides and rhs dilation swapped. Feature
  groups become batch groups (each group's kernel only saw its own lhs features) and
  vice versa.

**Windowed sums** are linear; the transpose spreads each output cotangent back over
its window: pad the cotangent (holes for the strides, edges for the window) and take
window sums again with the base dilation as strides.

**Window max/min**: `out[p] = x[k*(p)]` where `k*(p)` is the first position (in
row-major window order) of the window of `p` holding the extremum, so
`d out[p] = t[k*(p)]`. In minijax's IR: pad `x` and `t` the way the window sees them,
take for each window position `k` the strided slice `x_k`, `t_k` of what every
window's `k`-th element is, and select `t_k` for the windows whose extremum first
appears at `k`. It is linear in `t` (slices, pads and selects on primal predicates),
so linearize, transpose and vmap need nothing more. JAX's `select_and_gather_add`
computes the same quantity in one XLA op; ties may pick a different element.

**vmap**: a batched conv folds the batch axis into an axis the conv already has --
the lhs batch (lhs batched), the kernel's out features (rhs batched), or, with both
batched, feature groups (each example is its own group). Window reductions give the
batch axis a window of size 1.
"""
from __future__ import annotations

import itertools
import math

from ..ir import primitives as P, window_primitives as W
from ..ir.trace import bind, aval_of
from ..ir.types import is_inexact
from .ad_util import (Zero, reverse_axes, tangent_aval, zeros, scalar, convert, transpose, reshape,
                      add_tangents)
from .jvp import jvp_rules, JvpResult
from .transpose import transpose_rules, is_linear, NonLinearError
from .vmap import vmap_rules, Batched, moveaxis, not_mapped


# -- axis plumbing ---------------------------------------------------------------------------

def _merge_axis(x, src: int, dst: int):
    """Fold axis `src` into axis `dst` (numbered with `src` removed), `src` major."""
    shape = aval_of(x).shape
    perm = [a for a in range(len(shape)) if a != src]
    perm.insert(dst, src)
    if perm != list(range(len(shape))):
        x = transpose(x, perm)
    merged = [shape[a] for a in range(len(shape)) if a != src]
    merged[dst] *= shape[src]
    return reshape(x, tuple(merged))


def _split_axis(x, axis: int, major: int):
    """Split axis `axis` into (major, rest), row-major."""
    shape = list(aval_of(x).shape)
    shape[axis:axis + 1] = [major, shape[axis] // major]
    return reshape(x, tuple(shape))


def _swap01(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _dilated(sizes, dilations):
    return [W.dilate_dim(n, d) for n, d in zip(sizes, dilations)]


def _lhs_cotangent_padding(in_sizes, window, strides, out_sizes, padding, lhs_dilation,
                           rhs_dilation):
    """Padding of the stride-dilated cotangent so that correlating it with the flipped
    window lands every output back on the input positions it read."""
    lhs_d, rhs_d = _dilated(in_sizes, lhs_dilation), _dilated(window, rhs_dilation)
    out_d = _dilated(out_sizes, strides)
    pads = []
    for n, k, m, (lo, _) in zip(lhs_d, rhs_d, out_d, padding):
        before = k - lo - 1
        pads.append((before, n + k - 1 - m - before))
    return tuple(pads)


def _rhs_cotangent_padding(in_sizes, window, strides, out_sizes, padding, lhs_dilation,
                           rhs_dilation):
    """Padding of lhs when it is correlated with the cotangent to give the kernel's."""
    lhs_d, rhs_d = _dilated(in_sizes, lhs_dilation), _dilated(window, rhs_dilation)
    out_d = _dilated(out_sizes, strides)
    return tuple((lo, (m - n) + (k - lo - 1))
                 for n, k, m, (lo, _) in zip(lhs_d, rhs_d, out_d, padding))


# -- convolution ------------------------------------------------------------------------------

def _conv(lhs, rhs, **params):
    return bind(W.conv_general_dilated_p, lhs, rhs, **params)


def _conv_jvp(primals, tangents, **params):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    ans = _conv(lhs, rhs, **params)
    t = Zero(tangent_aval(aval_of(ans)))
    if type(t_lhs) is not Zero:
        t = _conv(t_lhs, rhs, **params)
    if type(t_rhs) is not Zero:
        t = add_tangents(t, _conv(lhs, t_rhs, **params))
    return JvpResult([ans], [t])


def _conv_lhs_cotangent(ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rhs_shape = aval_of(rhs).shape
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:
        # The kernel's out axis is (group, per group); the transposed conv reads the
        # kernel's in axis as its out axis, so the group moves there.
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    pads = _lhs_cotangent_padding(
        [lhs_aval.shape[a] for a in lhs_spec[2:]], [rhs_shape[a] for a in rhs_spec[2:]],
        window_strides, [aval_of(ct).shape[a] for a in out_spec[2:]], padding,
        lhs_dilation, rhs_dilation)
    kernel = reverse_axes(rhs, rhs_spec[2:])
    if aval_of(kernel).dtype != aval_of(ct).dtype:
        kernel = convert(kernel, aval_of(ct).dtype)
    out = _conv(ct, kernel, window_strides=tuple(lhs_dilation), padding=pads,
                lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
                dimension_numbers=(tuple(out_spec), _swap01(rhs_spec), tuple(lhs_spec)),
                feature_group_count=groups, batch_group_count=1, precision=precision,
                preferred_element_type=preferred_element_type)
    if aval_of(out).dtype != lhs_aval.dtype:
        out = convert(out, lhs_aval.dtype)
    if batch_group_count > 1:
        # Batch groups were computed as feature groups: (group, features) -> the batch.
        out = _merge_axis(_split_axis(out, lhs_spec[1], batch_group_count),
                          lhs_spec[1], lhs_spec[0])
    return out


def _conv_rhs_cotangent(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if math.prod(aval_of(ct).shape) == 0:
        return zeros(rhs_aval)
    pads = _rhs_cotangent_padding(
        [aval_of(lhs).shape[a] for a in lhs_spec[2:]],
        [rhs_aval.shape[a] for a in rhs_spec[2:]], window_strides,
        [aval_of(ct).shape[a] for a in out_spec[2:]], padding, lhs_dilation, rhs_dilation)
    if aval_of(lhs).dtype != aval_of(ct).dtype:
        lhs = convert(lhs, aval_of(ct).dtype)
    out = _conv(lhs, ct, window_strides=tuple(rhs_dilation), padding=pads,
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                dimension_numbers=(_swap01(lhs_spec), _swap01(out_spec), _swap01(rhs_spec)),
                feature_group_count=batch_group_count, batch_group_count=feature_group_count,
                precision=precision, preferred_element_type=preferred_element_type)
    if aval_of(out).dtype != rhs_aval.dtype:
        out = convert(out, rhs_aval.dtype)
    return out


def _conv_transpose(cts, lhs, rhs, **params):
    ct, = cts
    if is_linear(lhs) and is_linear(rhs):
        raise NonLinearError("conv_general_dilated of two linear values is not linear")
    if type(ct) is Zero:
        return [Zero(lhs.aval) if is_linear(lhs) else None,
                Zero(rhs.aval) if is_linear(rhs) else None]
    if is_linear(lhs):
        return [_conv_lhs_cotangent(ct, rhs, lhs.aval, **params), None]
    return [None, _conv_rhs_cotangent(ct, lhs, rhs.aval, **params)]


def _conv_vmap(axis_size, values, dims, *, dimension_numbers, feature_group_count,
               batch_group_count, **params):
    (lhs, rhs), (ld, rd) = values, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups, batch_groups = feature_group_count, batch_group_count
    if axis_size == 0:
        # No examples (jacfwd of an empty input): folding the batch into an axis
        # loses the per-example size, so the result is built from the type rule.
        example = [aval_of(v).update(shape=tuple(
            n for i, n in enumerate(aval_of(v).shape) if i != d)) if d is not not_mapped
            else aval_of(v) for v, d in zip(values, dims)]
        out, = W.type_rules[W.conv_general_dilated_p](
            *example, dimension_numbers=dimension_numbers, feature_group_count=groups,
            batch_group_count=batch_groups, **params)
        return Batched([zeros(out.update(shape=(0, *out.shape)))], [0])

    def conv(lhs, rhs, groups, batch_groups):
        return _conv(lhs, rhs, dimension_numbers=dimension_numbers,
                     feature_group_count=groups, batch_group_count=batch_groups, **params)

    if ld is not not_mapped and rd is not not_mapped:
        # Each example is its own group: lhs features (or batch, under batch
        # grouping) and kernel out features get the example number as major part.
        if batch_groups > 1:
            lhs, batch_groups = _merge_axis(lhs, ld, lhs_spec[0]), batch_groups * axis_size
        else:
            lhs, groups = _merge_axis(lhs, ld, lhs_spec[1]), groups * axis_size
        out = conv(lhs, _merge_axis(rhs, rd, rhs_spec[0]), groups, batch_groups)
        return Batched([_split_axis(out, out_spec[1], axis_size)], [out_spec[1]])
    if ld is not not_mapped:
        if batch_groups == 1:
            lhs = _merge_axis(lhs, ld, lhs_spec[0])
        else:
            # The lhs batch is (group, batch): the examples go inside each group.
            lhs = moveaxis(lhs, ld, 0)
            lhs = _split_axis(lhs, lhs_spec[0] + 1, batch_groups)
            lhs = _merge_axis(lhs, 0, lhs_spec[0] + 1)
            lhs = _merge_axis(lhs, lhs_spec[0], lhs_spec[0])
        out = conv(lhs, rhs, groups, batch_groups)
        return Batched([_split_axis(out, out_spec[0], axis_size)], [out_spec[0]])
    group_count = max(groups, batch_groups)
    if group_count == 1:
        out = conv(lhs, _merge_axis(rhs, rd, rhs_spec[0]), groups, batch_groups)
        return Batched([_split_axis(out, out_spec[1], axis_size)], [out_spec[1]])
    # The kernel's out features are (group, per group): the examples go inside each
    # group, and come back out of the result's features the same way.
    rhs = moveaxis(rhs, rd, 0)
    rhs = _split_axis(rhs, rhs_spec[0] + 1, group_count)
    rhs = _merge_axis(rhs, 0, rhs_spec[0] + 1)
    rhs = _merge_axis(rhs, rhs_spec[0], rhs_spec[0])
    out = conv(lhs, rhs, groups, batch_groups)
    out = _split_axis(out, out_spec[1], group_count)
    out = _split_axis(out, out_spec[1] + 1, axis_size)
    out = _merge_axis(out, out_spec[1], out_spec[1] + 1)
    return Batched([out], [out_spec[1]])


jvp_rules[W.conv_general_dilated_p] = _conv_jvp
transpose_rules[W.conv_general_dilated_p] = _conv_transpose
vmap_rules[W.conv_general_dilated_p] = _conv_vmap


# -- windowed reductions -----------------------------------------------------------------------

def _window_sum(x, **params):
    return bind(W.reduce_window_sum_p, x, **params)


def _reduce_window_sum_jvp(primals, tangents, **params):
    ans = _window_sum(primals[0], **params)
    t = tangents[0]
    return JvpResult([ans], [Zero(tangent_aval(aval_of(ans))) if type(t) is Zero
                             else _window_sum(t, **params)])


def _reduce_window_sum_transpose(cts, operand, *, window_dimensions, window_strides,
                                 padding, base_dilation, window_dilation):
    ct, = cts
    if type(ct) is Zero:
        return [Zero(operand.aval)]
    shape = operand.aval.shape
    pads = _lhs_cotangent_padding(shape, window_dimensions, window_strides,
                                  aval_of(ct).shape, padding, base_dilation,
                                  window_dilation)
    config = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides))
    spread = bind(P.pad_p, ct, scalar(0, aval_of(ct).dtype), padding_config=config)
    ones = (1,) * len(shape)
    return [_window_sum(spread, window_dimensions=tuple(window_dimensions),
                        window_strides=tuple(base_dilation),
                        padding=((0, 0),) * len(shape), base_dilation=ones,
                        window_dilation=tuple(window_dilation))]


def _window_views(x, fill, *, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation, out_shape):
    """`x` padded as the window sees it (holes and edges hold `fill`), then, for each
    window position in row-major order, the strided slice holding that element of
    every window (so each slice has the output's shape)."""
    config = tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation))
    padded = x if not any(map(any, config)) else bind(P.pad_p, x, fill,
                                                      padding_config=config)
    for k in itertools.product(*(range(w) for w in window_dimensions)):
        starts = tuple(kk * wd for kk, wd in zip(k, window_dilation))
        limits = tuple(s + (n - 1) * st + 1 if n else s
                       for s, n, st in zip(starts, out_shape, window_strides))
        yield bind(P.slice_p, padded, start_indices=starts, limit_indices=limits,
                   strides=tuple(window_strides))


def _reduce_window_chooser_jvp(prim):
    def rule(primals, tangents, **params):
        x, = primals
        t = tangents[0]
        ans = bind(prim, x, **params)
        if type(t) is Zero or not is_inexact(aval_of(x).dtype):
            return JvpResult([ans], [Zero(tangent_aval(aval_of(ans)))])
        out_shape = aval_of(ans).shape
        identity = scalar(W.window_identity(prim, aval_of(x).dtype), aval_of(x).dtype)
        xs = _window_views(x, identity, out_shape=out_shape, **params)
        ts = _window_views(t, scalar(0, aval_of(t).dtype), out_shape=out_shape, **params)
        chosen = zeros(tangent_aval(aval_of(ans)))
        found = None        # where an earlier window position already attained it
        for x_k, t_k in zip(xs, ts):
            here = bind(P.eq_p, x_k, ans)
            first_here = here if found is None else bind(P.and_p, here,
                                                         bind(P.not_p, found))
            chosen = bind(P.select_n_p, first_here, chosen, t_k)
            found = here if found is None else bind(P.or_p, found, here)
        return JvpResult([ans], [chosen])
    return rule


def _reduce_window_vmap(prim):
    def rule(axis_size, values, dims, *, window_dimensions, window_strides, padding,
             base_dilation, window_dilation):
        (x,), (d,) = values, dims

        def insert(items, item):
            items = tuple(items)
            return items[:d] + (item,) + items[d:]
        out = bind(prim, x, window_dimensions=insert(window_dimensions, 1),
                   window_strides=insert(window_strides, 1),
                   padding=insert(padding, (0, 0)), base_dilation=insert(base_dilation, 1),
                   window_dilation=insert(window_dilation, 1))
        return Batched([out], [d])
    return rule


jvp_rules[W.reduce_window_sum_p] = _reduce_window_sum_jvp
transpose_rules[W.reduce_window_sum_p] = _reduce_window_sum_transpose
for _prim in (W.reduce_window_max_p, W.reduce_window_min_p):
    jvp_rules[_prim] = _reduce_window_chooser_jvp(_prim)
for _prim in W.reduce_window_primitives:
    vmap_rules[_prim] = _reduce_window_vmap(_prim)
