"""The jet rule of each primitive JAX's jet covers (the `jet_rules` table of `jet.py`).

Each rule has the table's one signature,

    rule(primals_in, series_in, **params) -> (primal_out, series_out)

where `series_in[i]` is the list of operand i's K unscaled Taylor coefficients (zeros
where the operand had none) and `series_out` is such a list, or `zero_series`. The
recurrences are JAX's (`jax/experimental/jet.py`), term for term and in its order of
operations, so that the results agree with JAX's to rounding; `jet.py`'s docstring
derives them.
"""
from __future__ import annotations

import functools

import numpy as np

from ..ir import primitives as P
from ..ir import complex_primitives as C
from ..ir.trace import bind, aval_of
from .ad_util import (const_like, add, sub, mul, div, neg, eq, convert, reduce_sum,
                      broadcast_in_dim, broadcast_to)
from .jet import jet_rules, zero_series, jet_composition, call_jet
from .jvp_rules import _asinh_jvp


def _prim_named(name):
    # The families declared outside `ir/primitives.py`'s catalogue (conv, special
    # functions) are reached by name.
    return P.primitives_by_name[name]


def _op(name):
    prim = _prim_named(name)
    return lambda *xs, **params: bind(prim, *xs, **params)


exp, log, sin, cos, sinh, cosh, logistic, sqrt, erf, floor, square = map(
    _op, ("exp", "log", "sin", "cos", "sinh", "cosh", "logistic", "sqrt", "erf", "floor",
          "square"))


def _sum(terms):
    # Python's sum, as JAX's rules use it: 0 + t0 + t1 + ... (adding 0 changes nothing).
    total = terms[0]
    for t in terms[1:]:
        total = add(total, t)
    return total


def _scaled(j, x):
    return mul(const_like(x, j), x)


def _divided(x, k):
    return div(x, const_like(x, k))


def _ode(c, u, k):
    """v_k of `v' = c u'`: (1/k) sum_{j=1..k} j c_{k-j} u_j."""
    return _divided(_sum([mul(_scaled(j, c[k - j]), u[j]) for j in range(1, k + 1)]), k)


# -- zero and linear -----------------------------------------------------------------

def _defzero(prim):
    def rule(primals_in, series_in, **params):
        return bind(prim, *primals_in, **params), zero_series
    jet_rules[prim] = rule


for _name in ("le", "lt", "gt", "ge", "eq", "ne", "not", "and", "or", "xor", "floor",
              "ceil", "round", "sign", "stop_gradient", "is_finite", "shift_left",
              "shift_right_arithmetic", "shift_right_logical", "bitcast_convert_type"):
    _defzero(P.primitives_by_name[_name])


def _deflinear(prim):
    def rule(primals_in, series_in, **params):
        primal_out = bind(prim, *primals_in, **params)
        series_out = [bind(prim, *terms, **params) for terms in zip(*series_in)]
        if prim.multiple_results:
            series_out = [list(ts) for ts in zip(*series_out)]
        return primal_out, series_out
    jet_rules[prim] = rule


# expand_dims is minijax's spelling of a broadcast_in_dim that adds unit axes.
for _name in ("neg", "add", "sub", "convert_element_type", "broadcast_in_dim",
              "expand_dims", "concatenate", "pad", "reshape", "squeeze", "rev",
              "transpose", "slice", "reduce_sum", "reduce_window_sum", "fft", "cumsum"):
    _deflinear(P.primitives_by_name[_name])
for _prim in (C.real_p, C.imag_p, C.conj_p, C.complex_p):
    _deflinear(_prim)


def _linear_in_first(prim, n_linear=1):
    """Linear in the first `n_linear` operands; the rest (indices) are the primal's."""
    def rule(primals_in, series_in, **params):
        rest = primals_in[n_linear:]
        primal_out = bind(prim, *primals_in, **params)
        series_out = [bind(prim, *terms[:n_linear], *rest, **params)
                      for terms in zip(*series_in)]
        return primal_out, series_out
    jet_rules[prim] = rule


_linear_in_first(P.dynamic_slice_p)
_linear_in_first(P.dynamic_update_slice_p, 2)
_linear_in_first(P.gather_p)


def _scatter_add_rule(primals_in, series_in, **params):
    operand, indices, updates = primals_in
    primal_out = bind(P.scatter_add_p, operand, indices, updates, **params)
    return primal_out, [bind(P.scatter_add_p, d1, indices, d2, **params)
                        for d1, _, d2 in zip(*series_in)]


jet_rules[P.scatter_add_p] = _scatter_add_rule


# -- products and quotients ----------------------------------------------------------

def _bilinear(prim):
    def rule(primals_in, series_in, **params):
        u = [primals_in[0]] + series_in[0]
        w = [primals_in[1]] + series_in[1]
        v = [_sum([bind(prim, u[j], w[k - j], **params) for j in range(k + 1)])
             for k in range(len(u))]
        return v[0], v[1:]
    jet_rules[prim] = rule


for _prim in (P.mul_p, P.dot_general_p, _prim_named("conv_general_dilated")):
    _bilinear(_prim)


def _div_rule(primals_in, series_in):
    u = [primals_in[0]] + series_in[0]
    w = [primals_in[1]] + series_in[1]
    v = []
    for k in range(len(u)):
        if k == 0:
            v.append(div(u[0], w[0]))
        else:
            conv = _sum([mul(v[j], w[k - j]) for j in range(k)])
            v.append(div(sub(u[k], conv), w[0]))
    return v[0], v[1:]


jet_rules[P.div_p] = _div_rule


# -- the ODE recurrences -------------------------------------------------------------

def _exp_rule(primals_in, series_in, **_):
    x, = primals_in
    u = [x] + series_in[0]
    v = [exp(x)]
    for k in range(1, len(u)):
        v.append(_ode(v, u, k))
    return v[0], v[1:]


jet_rules[P.exp_p] = _exp_rule


def _log_rule(primals_in, series_in, **_):
    # From u = exp(v): u_k = (1/k) sum_{j=1..k} j v_j u_{k-j}, solved for v_k.
    x, = primals_in
    u = [x] + series_in[0]
    v = [log(x)]
    for k in range(1, len(u)):
        if k == 1:
            v.append(div(u[1], u[0]))
            continue
        conv = _sum([mul(_scaled(j, v[j]), u[k - j]) for j in range(1, k)])
        v.append(div(sub(u[k], _divided(conv, k)), u[0]))
    return v[0], v[1:]


jet_rules[P.log_p] = _log_rule


def _sinusoidal(sign, pair, primals_in, series_in):
    x, = primals_in
    u = [x] + series_in[0]
    s, c = [pair[0](x)], [pair[1](x)]
    for k in range(1, len(u)):
        s.append(_ode(c, u, k))
        c_k = _ode(s, u, k)
        c.append(neg(c_k) if sign < 0 else c_k)
    return (s[0], s[1:]), (c[0], c[1:])


def _pick(rule, i):
    return lambda primals_in, series_in, **_: rule(primals_in, series_in)[i]


_trig = functools.partial(_sinusoidal, -1, (sin, cos))
_hyperbolic = functools.partial(_sinusoidal, 1, (sinh, cosh))
jet_rules[P.sin_p], jet_rules[P.cos_p] = _pick(_trig, 0), _pick(_trig, 1)
jet_rules[P.sinh_p], jet_rules[P.cosh_p] = _pick(_hyperbolic, 0), _pick(_hyperbolic, 1)


def _logistic_rule(primals_in, series_in, **_):
    # c = v (1 - v) is carried along: c_k = (1 - v_0) v_k - sum_{j=1..k} v_j v_{k-j}.
    x, = primals_in
    u = [x] + series_in[0]
    v = [logistic(x)]
    one = const_like(x, 1)
    e = [mul(v[0], sub(one, v[0]))]
    for k in range(1, len(u)):
        v.append(_ode(e, u, k))
        e.append(sub(mul(sub(one, v[0]), v[k]),
                     _sum([mul(v[j], v[k - j]) for j in range(1, k + 1)])))
    return v[0], v[1:]


jet_rules[P.logistic_p] = _logistic_rule


def _tanh_rule(primals_in, series_in, **_):
    # tanh(x) = 2 logistic(2x) - 1.
    x, = primals_in
    two = const_like(x, 2)
    primal, series = _logistic_rule([mul(two, x)], [[mul(two, t) for t in series_in[0]]])
    return sub(mul(two, primal), const_like(x, 1)), [mul(two, t) for t in series]


jet_rules[P.tanh_p] = _tanh_rule


def _pow_rule(primals_in, series_in):
    # x ** y = exp(y log x): the exp recurrence on the series of y log x.
    x, y = primals_in
    z, series = jet_composition(lambda a, b: mul(b, log(a)), primals_in, series_in)
    u = [z] + series
    v = [bind(P.pow_p, x, y)]
    for k in range(1, len(u)):
        v.append(_ode(v, u, k))
    return v[0], v[1:]


jet_rules[P.pow_p] = _pow_rule


def _def_deriv(prim, derivative):
    """The rule of a unary op from a jet of its derivative: v' = derivative(u) u'."""
    def rule(primals_in, series_in, **_):
        x, = primals_in
        c0, cs = jet_composition(derivative, primals_in, series_in)
        c, u = [c0] + cs, [x] + series_in[0]
        v = [bind(prim, x)]
        for k in range(1, len(u)):
            v.append(_ode(c, u, k))
        return v[0], v[1:]
    jet_rules[prim] = rule


_def_deriv(P.erf_p, lambda x: mul(const_like(x, 2. / np.sqrt(np.pi)), exp(neg(square(x)))))
# JAX 0.10's rule was a composition, log(x + sqrt(x^2 + 1)); since 0.11 it is the
# derivative's (the same values to rounding, without the cancellation for x < 0).
_def_deriv(P.asinh_p, lambda x: _asinh_jvp(broadcast_to(const_like(x, 1), aval_of(x).shape),
                                           None, x))


def _erf_inv_rule(primals_in, series_in, **_):
    # c = (sqrt(pi)/2) exp(v^2) is a function of the output: its series is built from
    # v's, one term behind (square: Cauchy product; exp: the exp recurrence).
    x, = primals_in
    series = series_in[0]
    u = [x] + series
    v = [bind(_prim_named("erf_inv"), x)]
    scale = np.sqrt(np.pi) / 2.
    sq = [square(v[0])]
    ex = [exp(sq[0])]
    c = [mul(const_like(x, scale), exp(square(v[0])))]
    for k in range(1, len(series)):
        v.append(_ode(c, u, k))
        sq.append(_sum([mul(v[k - j], v[j]) for j in range(k + 1)]))
        ex.append(_ode(ex, sq, k))
        c.append(mul(const_like(x, scale), ex[k]))
    k = len(series)
    if k:
        v.append(_ode(c, u, k))
    return v[0], v[1:]


jet_rules[_prim_named("erf_inv")] = _erf_inv_rule


# -- compositions of other primitives --------------------------------------------------

def _def_comp(prim, composition):
    jet_rules[prim] = functools.partial(jet_composition, composition)


def _pow_const(x, y):
    return bind(P.pow_p, x, const_like(x, y))


def _plus(x, c):
    return add(x, const_like(x, c))


_def_comp(P.exp2_p, lambda x: exp(mul(x, const_like(x, np.log(2)))))
_def_comp(P.expm1_p, lambda x: sub(exp(x), const_like(x, 1)))
_def_comp(P.log2_p, lambda x: div(log(x), const_like(x, np.log(2))))
_def_comp(P.log1p_p, lambda x: log(add(const_like(x, 1), x)))
_def_comp(P.sqrt_p, lambda x: _pow_const(x, 0.5))
_def_comp(P.rsqrt_p, lambda x: _pow_const(x, -0.5))
_def_comp(P.square_p, lambda x: mul(x, x))
_def_comp(P.acosh_p, lambda x: log(add(x, mul(sqrt(_plus(x, -1)), sqrt(_plus(x, 1))))))
_def_comp(P.atanh_p, lambda x: mul(const_like(x, 0.5),
                                   log(div(add(const_like(x, 1), x),
                                           sub(const_like(x, 1), x)))))
_def_comp(_prim_named("erfc"), lambda x: sub(const_like(x, 1), erf(x)))
_def_comp(P.rem_p, lambda x, y: sub(x, mul(y, floor(div(x, y)))))
_def_comp(P.clamp_p, lambda a, x, b: bind(P.min_p, bind(P.max_p, a, x), b))


def _one_minus_square_rule(primals_in, series_in):
    x, = primals_in
    _, series = jet_rules[P.square_p](primals_in, series_in)
    return bind(P.one_minus_square_p, x), [neg(t) for t in series]


jet_rules[P.one_minus_square_p] = _one_minus_square_rule


def _power_by_squaring(x, n):
    if n < 0:
        return _power_by_squaring(div(const_like(x, 1), x), -n)
    if n == 0:
        return const_like(x, 1)
    if n == 1:
        return x
    if n % 2 == 0:
        return _power_by_squaring(mul(x, x), n // 2)
    return mul(x, _power_by_squaring(mul(x, x), (n - 1) // 2))


def _integer_pow_rule(primals_in, series_in, *, y):
    if y == 0:
        x, = primals_in
        return (broadcast_to(const_like(x, 1), aval_of(x).shape),
                [broadcast_to(const_like(x, 0), aval_of(x).shape)] * len(series_in[0]))
    return jet_composition(lambda x: _power_by_squaring(x, y), primals_in, series_in)


jet_rules[P.integer_pow_p] = _integer_pow_rule


def _atan2_rule(primals_in, series_in):
    # atan2(x, y) = atan(x / y): v' = u' / (1 + u^2) with u = x / y.
    x, y = primals_in
    primal_out = bind(P.atan2_p, x, y)
    z, series = jet_composition(div, primals_in, series_in)
    c0, cs = jet_composition(lambda a: div(const_like(a, 1), add(const_like(a, 1), square(a))),
                             [z], [series])
    c, u = [c0] + cs, [z] + series
    v = [primal_out]
    for k in range(1, len(u)):
        v.append(_ode(c, u, k))
    return v[0], v[1:]


jet_rules[P.atan2_p] = _atan2_rule


# -- selections ----------------------------------------------------------------------

def _reduce_chooser(prim):
    # The average of the series at the positions that attain the extremum.
    def rule(primals_in, series_in, *, axes):
        x, = primals_in
        primal_out = bind(prim, x, axes=axes)
        shape = aval_of(x).shape
        kept = [d for d in range(len(shape)) if d not in axes]
        dtype = aval_of(series_in[0][0]).dtype
        where = convert(eq(x, broadcast_in_dim(primal_out, shape, kept)), dtype)
        counts = reduce_sum(where, axes)
        return primal_out, [div(reduce_sum(mul(g, where), axes), counts)
                            for g in series_in[0]]
    jet_rules[prim] = rule


_reduce_chooser(P.reduce_max_p)
_reduce_chooser(P.reduce_min_p)


def _abs_rule(primals_in, series_in):
    x, = primals_in
    shape = aval_of(x).shape
    negative = bind(P.lt_p, x, const_like(x, 0))
    signs = bind(P.select_n_p, negative, broadcast_to(const_like(x, 1), shape),
                 broadcast_to(const_like(x, -1), shape))
    return bind(P.abs_p, x), [mul(signs, t) for t in series_in[0]]


jet_rules[P.abs_p] = _abs_rule


def _select_n_rule(primals_in, series_in):
    which, *cases = primals_in
    return (bind(P.select_n_p, which, *cases),
            [bind(P.select_n_p, which, *terms[1:]) for terms in zip(*series_in)])


jet_rules[P.select_n_p] = _select_n_rule


def _extremum(greater):
    # The series of the chosen operand; where the operands tie, the mean of both.
    def rule(primals_in, series_in):
        shape = np.broadcast_shapes(*(aval_of(p).shape for p in primals_in))
        x, y = (broadcast_to(p, shape) for p in primals_in)
        wins = bind(greater, x, y)
        ties = eq(x, y)

        def choose(a, b):
            a, b = broadcast_to(a, shape), broadcast_to(b, shape)
            chosen = bind(P.select_n_p, wins, b, a)
            return bind(P.select_n_p, ties, chosen, _divided(add(a, b), 2))
        return (bind(P.select_n_p, wins, y, x),
                [choose(a, b) for a, b in zip(*series_in)])
    return rule


jet_rules[P.max_p] = _extremum(P.gt_p)
jet_rules[P.min_p] = _extremum(P.lt_p)

# -- calls --------------------------------------------------------------------------
# Only `jit`: JAX's jet has no rule for remat (checkpoint) or control flow either.
jet_rules[P.jit_p] = functools.partial(call_jet, P.jit_p)
