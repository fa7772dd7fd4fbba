"""The JVP rule of every differentiable primitive (the `jvp_rules` table of `jvp.py`).

Each rule has the table's one signature,

    rule(primals, tangents, **params) -> JvpResult(primals_out, tangents_out)

and runs with the parent trace current, so its `bind`s are ordinary operations one
level out. Tangents may be symbolic `Zero`s; rules avoid building arrays for them.

Rules are written so that the tangent is *linear* in the input tangents, with every
non-linear factor computed from primals only, e.g. `sin`: `t * cos(x)`. This matters
beyond correctness: under `linearize` the primal factors (`cos(x)`) are known and
become residuals, while the tangent operations (`mul t _`) are the staged linear
program that `transpose.py` runs backwards.

Families, most general first:
* `_defjvp(prim, *jacobian_products)` -- one function per operand giving that
  operand's contribution `(t, ans, *primals, **params) -> tangent`;
* `_deflinear(prim, linear_operands)` -- the op is linear in those operands: the
  tangent is the op applied to the tangents (other operands, e.g. indices, as is);
* `_defzero(prim)` -- integer/boolean-valued or piecewise-constant: zero tangent.

Refs (`new_ref`, `get`, `swap`, ...) are handled by the refs pass, not here.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..ir import primitives as P
from ..ir.trace import bind, aval_of
from ..ir.types import is_inexact, is_integer, is_complex
from ..ir import complex_primitives as C
from .ad_util import (Zero, zeros, scalar, tangent_aval, instantiate, add_tangents, broadcast_to,
                      const_like, add, sub, mul, div, neg, eq, convert, reduce_sum,
                      broadcast_in_dim, transpose, reshape, iota, take_along_axis,
                      flat_index_along, gather_flat)
from .jvp import jvp_rules, JvpResult


def _out(prim, primals, params):
    outs = bind(prim, *primals, **params)
    return outs if prim.multiple_results else [outs]


def _zero_like_out(ans):
    return Zero(tangent_aval(aval_of(ans)))


def _defjvp(prim, *jacobian_products):
    """`jacobian_products[i](t_i, ans, *primals, **params)` is operand i's part of the
    output tangent (None: the operand is not differentiable)."""
    def rule(primals, tangents, **params):
        ans = bind(prim, *primals, **params)
        total = _zero_like_out(ans)
        if is_inexact(aval_of(ans).dtype):
            for jvp_i, t in zip(jacobian_products, tangents):
                if jvp_i is not None and type(t) is not Zero:
                    total = add_tangents(total, broadcast_to(
                        jvp_i(t, ans, *primals, **params), aval_of(ans).shape))
        return JvpResult([ans], [total])
    jvp_rules[prim] = rule


def _deflinear(prim, linear_operands=None):
    """The op is linear in `linear_operands` (default: all), jointly."""
    def rule(primals, tangents, **params):
        outs = _out(prim, primals, params)
        positions = range(len(primals)) if linear_operands is None else linear_operands
        if all(type(tangents[i]) is Zero for i in positions):
            return JvpResult(outs, [_zero_like_out(o) for o in outs])
        args = list(primals)
        for i in positions:
            args[i] = instantiate(tangents[i])
        return JvpResult(outs, _out(prim, args, params))
    jvp_rules[prim] = rule


def _defzero(prim):
    def rule(primals, tangents, **params):
        outs = _out(prim, primals, params)
        return JvpResult(outs, [_zero_like_out(o) for o in outs])
    jvp_rules[prim] = rule


def _scale(coefficient):
    """A jacobian product `t * coefficient(ans, *primals)`."""
    return lambda t, ans, *primals, **params: mul(t, coefficient(ans, *primals, **params))


def _applier(name):
    prim = P.primitives_by_name[name]
    return lambda x: bind(prim, x)


sin, cos, exp, log, rsqrt, sign, floor, abs_, square = map(
    _applier, ("sin", "cos", "exp", "log", "rsqrt", "sign", "floor", "abs", "square"))


def _integer_pow(x, y):
    return bind(P.integer_pow_p, x, y=y)


def _one_minus(x):
    return sub(const_like(x, 1), x)


def one_minus_square(x):
    return bind(P.one_minus_square_p, x)


# -- elementwise unary ---------------------------------------------------------------------

_defjvp(P.sin_p, _scale(lambda ans, x: cos(x)))
# -sin(x) * t, negating the tangent rather than the primal factor: then the residual
# is sin(x) itself, as in JAX (saved_residuals lists "output of sin").
_defjvp(P.cos_p, lambda t, ans, x: mul(neg(t), sin(x)))
_defjvp(P.tan_p, _scale(lambda ans, x: add(const_like(x, 1), square(ans))))
# tanh, atanh, asin and acos differentiate through one_minus_square, as JAX's rules do
# since 0.11: 1 - x**2 as (1 + x)(1 - x) is exact near |x| = 1, and tanh and atanh
# then save one residual where JAX 0.10 saved two (1 + x or tanh x, and 1 - x).
_defjvp(P.asin_p, _scale(lambda ans, x: rsqrt(one_minus_square(x))))
_defjvp(P.acos_p, _scale(lambda ans, x: neg(rsqrt(one_minus_square(x)))))
_defjvp(P.atan_p, lambda t, ans, x: div(t, add(const_like(x, 1), square(x))))
_defjvp(P.sinh_p, _scale(lambda ans, x: bind(P.cosh_p, x)))
_defjvp(P.cosh_p, _scale(lambda ans, x: bind(P.sinh_p, x)))
_defjvp(P.tanh_p, _scale(lambda ans, x: one_minus_square(ans)))


def _asinh_jvp(t, ans, x):
    """t / sqrt(x**2 + 1), as JAX 0.12's rule computes it for real x: x scaled by
    s = clamp(1, |x| 2**-(maxexp//2 - 2), 2**(maxexp//2 + 2)) (a constant to the next
    derivative), so that (x/s)**2 cannot overflow: 1/|x| for a large |x|, where
    rsqrt(x**2 + 1) is 0. For |x| up to 2**(maxexp//2 - 2), s is 1 and the value is
    the unscaled formula's. Complex x keeps the unscaled formula."""
    dtype = aval_of(x).dtype
    if is_complex(dtype):
        return mul(t, rsqrt(add(square(x), const_like(x, 1))))
    maxexp = ml_dtypes.finfo(dtype).maxexp
    scale = bind(P.stop_gradient_p, bind(P.clamp_p, const_like(x, 1),
                                         mul(abs_(x), const_like(x, 2.0 ** -(maxexp // 2 - 2))),
                                         const_like(x, 2.0 ** (maxexp // 2 + 2))))
    inverse = _integer_pow(scale, -1)
    derivative = mul(inverse, rsqrt(add(square(mul(x, inverse)), square(inverse))))
    return mul(t, derivative)


_defjvp(P.asinh_p, _asinh_jvp)
_defjvp(P.acosh_p, _scale(lambda ans, x: rsqrt(mul(sub(x, const_like(x, 1)),
                                                   add(x, const_like(x, 1))))))
_defjvp(P.atanh_p, lambda t, ans, x: div(t, one_minus_square(x)))
_defjvp(P.exp_p, _scale(lambda ans, x: ans))
# log(2) * (t * ans) with log(2) an equation on the constant 2, as in JAX: a
# checkpointed backward pass then saves exp2's output and the f32[] log(2), as JAX's.
_defjvp(P.exp2_p, lambda t, ans, x: mul(log(const_like(x, 2)), mul(t, ans)))
_defjvp(P.log_p, lambda t, ans, x: div(t, x))
# t / (x * log(2)), JAX's formulation (it saves x * log(2), one residual).
_defjvp(P.log2_p, lambda t, ans, x: div(t, mul(x, log(const_like(x, 2)))))
_defjvp(P.log1p_p, lambda t, ans, x: div(t, add(x, const_like(x, 1))))
_defjvp(P.expm1_p, _scale(lambda ans, x: add(ans, const_like(x, 1))))
_defjvp(P.logistic_p, _scale(lambda ans, x: mul(ans, _one_minus(ans))))
_defjvp(P.sqrt_p, lambda t, ans, x: div(t, mul(ans, const_like(x, 2))))
_defjvp(P.rsqrt_p, _scale(lambda ans, x: mul(div(ans, x), const_like(x, -0.5))))
_defjvp(P.cbrt_p, _scale(lambda ans, x: mul(_integer_pow(ans, -2), const_like(x, 1 / 3))))
_defjvp(P.erf_p, _scale(lambda ans, x: mul(exp(neg(square(x))),
                                           const_like(x, 2 / np.sqrt(np.pi)))))
_defjvp(P.square_p, _scale(lambda ans, x: mul(x, const_like(x, 2))))
# -2x, not the product rule's (1 - x) - (1 + x), which cancels to 0 for |x| below eps
_defjvp(P.one_minus_square_p, _scale(lambda ans, x: mul(const_like(x, -2), x)))


def _abs_jvp(t, ans, x):
    """|x|' is 1 at x >= 0 and -1 below (JAX's convention at 0): the tangent is a select
    of t and -t on that mask, as in JAX, so what a checkpointed backward pass saves is
    the boolean mask, as JAX's does (fuzz finding F3). For complex z,
    d|z| = Re(conj(z) ż) / |z|, reading |z| = 0 as 1 as JAX does."""
    dtype = aval_of(x).dtype
    if is_complex(dtype):
        safe = bind(P.select_n_p, eq(ans, const_like(ans, 0)), ans,
                    broadcast_to(const_like(ans, 1), aval_of(ans).shape))
        return bind(C.real_p, mul(t, div(bind(C.conj_p, x), convert(safe, dtype))))
    return bind(P.select_n_p, bind(P.ge_p, x, const_like(x, 0)), neg(t), t)


_defjvp(P.abs_p, _abs_jvp)
jvp_rules[P.neg_p] = lambda primals, tangents: JvpResult(
    [neg(primals[0])], [tangents[0] if type(tangents[0]) is Zero else neg(tangents[0])])


def _integer_pow_jvp(t, ans, x, *, y):
    if y == 0:
        return Zero(tangent_aval(aval_of(x)))
    if y == 1:
        return t
    factor = x if y == 2 else _integer_pow(x, y - 1)
    return mul(t, mul(factor, const_like(x, y)))


def _integer_pow_rule(primals, tangents, *, y):
    ans = _integer_pow(primals[0], y)
    t = tangents[0]
    if type(t) is Zero or not is_inexact(aval_of(ans).dtype):
        return JvpResult([ans], [_zero_like_out(ans)])
    return JvpResult([ans], [_integer_pow_jvp(t, ans, primals[0], y=y)])


jvp_rules[P.integer_pow_p] = _integer_pow_rule

for _prim in (P.floor_p, P.ceil_p, P.round_p, P.sign_p, P.is_finite_p, P.not_p,
              P.stop_gradient_p, P.and_p, P.or_p, P.xor_p, *P.comparison_primitives,
              P.argmax_p, P.argmin_p, P.iota_p, P.reduce_and_p, P.reduce_or_p):
    _defzero(_prim)


# -- elementwise binary ----------------------------------------------------------------------

_defjvp(P.add_p, lambda t, ans, x, y: t, lambda t, ans, x, y: t)
_defjvp(P.sub_p, lambda t, ans, x, y: t, lambda t, ans, x, y: neg(t))
_defjvp(P.mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
# -t * x * y**-2 for the divisor, JAX's formulation: a checkpointed backward pass saves
# x, y and y**-2, as JAX's does (fuzz finding F30).
_defjvp(P.div_p, lambda t, ans, x, y: div(t, y),
        lambda t, ans, x, y: mul(mul(neg(t), x), _integer_pow(y, -2)))


def _trunc(x):
    return mul(sign(x), floor(abs_(x)))


_defjvp(P.rem_p, lambda t, ans, x, y: t,
        lambda t, ans, x, y: mul(t, neg(_trunc(div(x, y)))))


def _replace_zero(x):
    """x with zeros replaced by ones (so log(x) is finite where x == 0): a select, as
    JAX writes it, so a weak x stays weak (pow's cotangent in y is weak, F75)."""
    ones = broadcast_to(const_like(x, 1), aval_of(x).shape)
    return bind(P.select_n_p, eq(x, const_like(x, 0)), x, ones)


def _pow_jvp_base(t, ans, x, y):
    # y * x**(y-1) from x and y converted to their (one) dtype, as JAX writes it for an
    # inexact exponent: the converts make the product strong (so the cotangent of a
    # weak x is strong, as JAX's). No mask where y == 0: the product is 0 there already
    # (NaN at x == 0, as in JAX), and a mask would zero its derivative in y,
    # x**(y-1) -- a second derivative of pow (finding F75).
    # An integer exponent is exact, as in JAX's rule: the derivative is 0 where y == 0
    # (also at x == 0, where the product would be 0 * inf = NaN).
    shape = aval_of(ans).shape
    dtype = aval_of(ans).dtype
    integer_exponent = is_integer(aval_of(y).dtype)
    x, y = broadcast_to(convert(x, dtype), shape), broadcast_to(convert(y, dtype), shape)
    if not integer_exponent:
        return mul(t, mul(y, bind(P.pow_p, x, sub(y, const_like(y, 1)))))
    jacobian = bind(P.select_n_p, eq(y, const_like(y, 0)),
                    mul(_replace_zero(y), bind(P.pow_p, x, sub(y, const_like(y, 1)))),
                    zeros(aval_of(y)))
    return mul(t, jacobian)


def _pow_jvp_exponent(t, ans, x, y):
    return convert(mul(t, mul(log(_replace_zero(x)), ans)), aval_of(y).dtype)


_defjvp(P.pow_p, _pow_jvp_base, _pow_jvp_exponent)


def _chooser_share(x, y, ans):
    """Where max/min picked x alone: 1, where x and y tie: 1/2, elsewhere 0 (JAX's
    balanced convention). Written as JAX writes it, a select of 1/0 over a select of
    2/1 with constants of the result's type: the share is weak when the result is (so
    the gradient of a weak argument stays weak), and 0, not 0/0, where neither input
    equals the result (a NaN)."""
    shape = aval_of(ans).shape

    def where(pred, if_true, if_false):
        return bind(P.select_n_p, pred, broadcast_to(const_like(ans, if_false), shape),
                    broadcast_to(const_like(ans, if_true), shape))
    return div(where(eq(x, ans), 1, 0), where(eq(y, ans), 2, 1))


for _prim in (P.max_p, P.min_p):
    _defjvp(_prim, lambda t, ans, x, y: mul(t, _chooser_share(x, y, ans)),
            lambda t, ans, x, y: mul(t, _chooser_share(y, x, ans)))


def _atan2_denominator(x, y):
    return add(square(x), square(y))


_defjvp(P.atan2_p, lambda t, ans, x, y: mul(t, div(y, _atan2_denominator(x, y))),
        lambda t, ans, x, y: mul(t, neg(div(x, _atan2_denominator(x, y)))))


def _mask(pred, like):
    return convert(pred, aval_of(like).dtype)


def _where(pred, t, ans):
    """t where `pred` holds, zero elsewhere, as a select: what a checkpointed backward
    pass then saves is the bool mask, as JAX's does (fuzz finding F8)."""
    shape = aval_of(ans).shape
    t = broadcast_to(t, shape)
    return bind(P.select_n_p, pred, zeros(aval_of(t)), t)


_defjvp(P.clamp_p,
        lambda t, ans, lo, x, hi: _where(bind(P.and_p, bind(P.gt_p, lo, x),
                                              bind(P.lt_p, lo, hi)), t, ans),
        lambda t, ans, lo, x, hi: _where(bind(P.and_p, bind(P.gt_p, x, lo),
                                              bind(P.lt_p, x, hi)), t, ans),
        lambda t, ans, lo, x, hi: _where(bind(P.lt_p, hi, x), t, ans))


def _select_n_rule(primals, tangents):
    ans = bind(P.select_n_p, *primals)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return JvpResult([ans], [_zero_like_out(ans)])
    return JvpResult([ans], [bind(P.select_n_p, primals[0],
                                  *[instantiate(t) for t in case_tangents])])


jvp_rules[P.select_n_p] = _select_n_rule


def _convert_rule(primals, tangents, *, new_dtype, weak_type=False):
    ans = convert(primals[0], new_dtype, weak_type)
    t = tangents[0]
    if type(t) is Zero or not is_inexact(new_dtype):
        return JvpResult([ans], [_zero_like_out(ans)])
    return JvpResult([ans], [convert(t, new_dtype, weak_type)])


jvp_rules[P.convert_element_type_p] = _convert_rule


# -- linear ops: shapes, indexing, sums, contraction --------------------------------------------

for _prim in (P.broadcast_in_dim_p, P.reshape_p, P.transpose_p, P.squeeze_p,
              P.expand_dims_p, P.rev_p, P.concatenate_p, P.pad_p, P.slice_p, P.reduce_sum_p,
              P.cumsum_p):
    _deflinear(_prim)
_deflinear(P.dynamic_slice_p, (0,))
_deflinear(P.dynamic_update_slice_p, (0, 1))
_deflinear(P.gather_p, (0,))
_deflinear(P.scatter_add_p, (0, 2))
# scatter's jvp (indices may repeat) is in scatter_rules.py


def _dot_general_rule(primals, tangents, **params):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    ans = bind(P.dot_general_p, lhs, rhs, **params)
    t = _zero_like_out(ans)
    if type(t_lhs) is not Zero:
        t = bind(P.dot_general_p, t_lhs, rhs, **params)
    if type(t_rhs) is not Zero:
        t = add_tangents(t, bind(P.dot_general_p, lhs, t_rhs, **params))
    return JvpResult([ans], [t])


jvp_rules[P.dot_general_p] = _dot_general_rule


# -- reductions and scans that are not linear ------------------------------------------------

def _reduce_chooser_rule(prim):
    # The tangent is the average of the tangents at the positions that attain the extremum.
    def rule(primals, tangents, *, axes):
        x, = primals
        ans = bind(prim, x, axes=axes)
        if type(tangents[0]) is Zero or not is_inexact(aval_of(x).dtype):
            return JvpResult([ans], [_zero_like_out(ans)])
        shape = aval_of(x).shape
        kept = [d for d in range(len(shape)) if d not in axes]
        location = _mask(eq(x, broadcast_in_dim(ans, shape, kept)), x)
        counts = reduce_sum(location, axes)
        return JvpResult([ans], [div(reduce_sum(mul(tangents[0], location), axes), counts)])
    jvp_rules[prim] = rule


_reduce_chooser_rule(P.reduce_max_p)
_reduce_chooser_rule(P.reduce_min_p)


def _reduce_prod_rule(primals, tangents, *, axes):
    # JAX's formulation, for the same values and residuals: the reduced axes move to
    # the front and flatten into one axis of n factors, which a pairwise tree halves
    # level by level (an odd level pads its second half with a factor 1, whose tangent
    # is 0), each level differentiated by the product rule. There is no division, so
    # zeros are exact; an infinite factor times the padding's zero tangent is NaN, as
    # in JAX (the exclusive prefix/suffix products this replaced gave inf there:
    # fuzz findings F50, F51). The primal comes from the tree too, so derivatives of
    # every order see JAX's operations.
    x, = primals
    t = tangents[0]
    if type(t) is Zero or not axes:
        ans = bind(P.reduce_prod_p, x, axes=axes)
        return JvpResult([ans], [t if not axes else _zero_like_out(ans)])
    shape = aval_of(x).shape
    kept = [d for d in range(len(shape)) if d not in axes]
    out_shape = tuple(shape[d] for d in kept)
    n = int(np.prod([shape[d] for d in axes]))
    if n == 0:
        # The empty product is the constant 1.
        ans = bind(P.reduce_prod_p, x, axes=axes)
        return JvpResult([ans], [_zero_like_out(ans)])
    if n == 1:
        # One factor per output: the product is a reshape, and so is its jvp, which
        # saves nothing (as JAX's; fuzz finding F32).
        return JvpResult([reshape(x, out_shape)], [reshape(t, out_shape)])
    order = list(axes) + kept
    xs = reshape(transpose(x, order), (n,) + out_shape)
    ts = reshape(transpose(t, order), (n,) + out_shape)

    def rows(v, start, stop):
        # rows start:stop of the factor axis
        limits = list(aval_of(v).shape)
        limits[0] = stop
        return bind(P.slice_p, v, start_indices=(start,) + (0,) * len(out_shape),
                    limit_indices=tuple(limits), strides=None)

    def pad_one_row(v, fill):
        config = ((0, 1, 0),) + ((0, 0, 0),) * len(out_shape)
        return bind(P.pad_p, v, scalar(fill, aval_of(v).dtype), padding_config=config)

    n_rows = n
    while n_rows > 1:
        half = (n_rows + 1) // 2
        x1, t1 = rows(xs, 0, half), rows(ts, 0, half)
        x2, t2 = rows(xs, half, n_rows), rows(ts, half, n_rows)
        if n_rows - half != half:
            x2, t2 = pad_one_row(x2, 1), pad_one_row(t2, 0)
        xs, ts = mul(x1, x2), add(mul(t1, x2), mul(x1, t2))
        n_rows = half
    return JvpResult([reshape(xs, out_shape)], [reshape(ts, out_shape)])


jvp_rules[P.reduce_prod_p] = _reduce_prod_rule


def _cumprod_rule(primals, tangents, *, axis, reverse=False):
    # ans_i = ans_{i-1} x_i, so its tangent solves the linear recurrence
    #   d_i = x_i d_{i-1} + ans_{i-1} t_i        (ans_{-1} = 1, d_{-1} = 0).
    # It is solved by doubling (Hillis-Steele): after the step with offset k, (a_i, b_i)
    # is the affine map y -> a_i y + b_i of the 2k elements ending at i, and the step
    # composes it with the map ending at i - k. No division, so zeros and tiny x are
    # exact to every order (a quotient ans_i / x_k made the second derivative overflow
    # near 1e-30: finding F46); log2(n) steps, b linear in t, a from primals only.
    x, = primals
    ans = bind(P.cumprod_p, x, axis=axis, reverse=reverse)
    t = tangents[0]
    if type(t) is Zero:
        return JvpResult([ans], [_zero_like_out(ans)])
    shape = aval_of(x).shape
    n = shape[axis]
    if n <= 1:
        # Over an axis of length 0 or 1 the cumulative product is the identity: so is
        # its jvp, which saves nothing (JAX's saves nothing either; fuzz finding F32).
        return JvpResult([ans], [t])

    def shifted(v, offset, fill):
        # v moved `offset` places along the scan (later elements see earlier ones),
        # `fill` entering at the start
        config = [(0, 0, 0)] * len(shape)
        config[axis] = (-offset, offset, 0) if reverse else (offset, -offset, 0)
        return bind(P.pad_p, v, scalar(fill, aval_of(v).dtype), padding_config=tuple(config))

    b = mul(shifted(ans, 1, 1), t)
    a = x
    offset = 1
    while offset < n:
        b = add(b, mul(a, shifted(b, offset, 0)))
        a = mul(a, shifted(a, offset, 1))
        offset *= 2
    return JvpResult([ans], [b])


jvp_rules[P.cumprod_p] = _cumprod_rule


def _cumulative_chooser_rule(prim):
    # out_i = x_{k(i)} where k(i) is the latest position that set the running extremum;
    # the tangent is t gathered at k(i).
    def rule(primals, tangents, *, axis, reverse=False):
        x, = primals
        ans = bind(prim, x, axis=axis, reverse=reverse)
        if type(tangents[0]) is Zero:
            return JvpResult([ans], [_zero_like_out(ans)])
        if aval_of(x).size == 0 or aval_of(x).shape[axis] == 1:
            # Nothing to choose (and no slice to gather), or one element to choose
            # from: the identity, whose jvp saves nothing, as JAX's (F32).
            return JvpResult([ans], [tangents[0]])
        shape = aval_of(x).shape
        positions = iota(np.int32, shape, axis)
        sets_extremum = eq(x, ans)
        if reverse:
            fill = broadcast_to(np.int32(shape[axis]), shape)
            source = bind(P.cummin_p, bind(P.select_n_p, sets_extremum, fill, positions),
                          axis=axis, reverse=True)
        else:
            fill = broadcast_to(np.int32(0), shape)
            source = bind(P.cummax_p, bind(P.select_n_p, sets_extremum, fill, positions),
                          axis=axis, reverse=False)
        return JvpResult([ans], [take_along_axis(tangents[0], source, axis)])
    jvp_rules[prim] = rule


_cumulative_chooser_rule(P.cummax_p)
_cumulative_chooser_rule(P.cummin_p)


def _sort_rule(primals, tangents, *, dimension, is_stable=True, num_keys=1):
    # Sort a uint32 iota along with the operands to learn the permutation, then apply
    # it to each tangent with one gather. The gather reads the flattened tangent at
    # one index per element (the permutation plus the other coordinates' offsets), so
    # what a checkpointed backward pass saves is one u32[*shape, 1] array, as JAX's.
    shape = aval_of(primals[0]).shape
    outs = bind(P.sort_p, *primals, iota(np.uint32, shape, dimension), dimension=dimension,
                is_stable=is_stable, num_keys=num_keys)
    flat_index = flat_index_along(outs[-1], dimension, shape)

    def permuted(t):
        return gather_flat(t, flat_index)
    return JvpResult(outs[:-1], [t if type(t) is Zero else permuted(t) for t in tangents])


jvp_rules[P.sort_p] = _sort_rule
