"""JVP and batching rules of the special-function primitives (ir/special_primitives.py).

They are elementwise, so batching is `vmap.py`'s elementwise rule, and their
derivatives are the textbook ones, each written (as in `jvp_rules.py`) as the
tangent times a factor computed from primals only:

    lgamma'(x)   = digamma(x)          digamma'(x) = polygamma(1, x)
    erfc'(x)     = -2/sqrt(pi) exp(-x^2)
    polygamma(m, x) in x: polygamma(m + 1, x)
    igamma(a, x) in x: x^(a-1) e^(-x) / Gamma(a), computed in log space so that
                  Gamma(a) and x^(a-1) cannot overflow on their own; in a: igamma_grad_a
    igammac = 1 - igamma, so its partials are igamma's negated
    betainc(a, b, x) in x: x^(a-1) (1-x)^(b-1) / B(a, b), in log space

    bessel_i0e'(x) = bessel_i1e(x) - sign(x) bessel_i0e(x)
    bessel_i1e'(x) = bessel_i0e(x) - bessel_i1e(x) (sign(x) + 1/x)   (1/2 at x = 0)
    zeta(x, q) in q: -x zeta(x + 1, q)

Like JAX, the derivatives of `polygamma` in `m` and of `betainc` in `a` and `b` are
errors (so is that of `zeta` in `x`; JAX has no rule for `zeta` at all) (ValueError, raised only when such a tangent is actually nonzero), and
`igamma_grad_a` has no derivative rule.
"""
from __future__ import annotations

import numpy as np

from ..ir import primitives as P
from ..ir import special_primitives as S
from ..ir.trace import bind, aval_of
from .ad_util import const_like, add, sub, mul, div, neg
from .jvp_rules import _defjvp, _scale, _applier, exp, log, square
from .vmap import vmap_rules, _unary_rule, _nary_rule


_log1p = _applier("log1p")


def _igamma_density(a, x):
    """d/dx igamma(a, x) = exp(-x + (a - 1) log x - lgamma(a))."""
    exponent = sub(mul(sub(a, const_like(a, 1)), log(x)), add(x, bind(S.lgamma_p, a)))
    return exp(exponent)


def _polygamma_m(t, ans, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


def _betainc_a_or_b(t, ans, a, b, x):
    raise ValueError("betainc gradient with respect to a and b is not supported")


def _betainc_x(t, ans, a, b, x):
    one = const_like(x, 1)
    log_beta = sub(add(bind(S.lgamma_p, a), bind(S.lgamma_p, b)), bind(S.lgamma_p, add(a, b)))
    exponent = sub(add(mul(sub(b, one), _log1p(neg(x))), mul(sub(a, one), log(x))), log_beta)
    return mul(t, exp(exponent))


_defjvp(S.lgamma_p, _scale(lambda ans, x: bind(S.digamma_p, x)))
_defjvp(S.digamma_p, _scale(lambda ans, x: bind(S.polygamma_p, const_like(x, 1), x)))
_defjvp(S.erfc_p, _scale(lambda ans, x: mul(exp(neg(square(x))),
                                            const_like(x, -2 / np.sqrt(np.pi)))))
_defjvp(S.polygamma_p, _polygamma_m,
        _scale(lambda ans, m, x: bind(S.polygamma_p, add(m, const_like(m, 1)), x)))
_defjvp(S.igamma_p, _scale(lambda ans, a, x: bind(S.igamma_grad_a_p, a, x)),
        _scale(lambda ans, a, x: _igamma_density(a, x)))
_defjvp(S.igammac_p, _scale(lambda ans, a, x: neg(bind(S.igamma_grad_a_p, a, x))),
        _scale(lambda ans, a, x: neg(_igamma_density(a, x))))
_defjvp(S.regularized_incomplete_beta_p, _betainc_a_or_b, _betainc_a_or_b, _betainc_x)


def _zeta_x(t, ans, x, q):
    raise ValueError("zeta gradient with respect to x (the exponent) is not supported")


def _bessel_i1e_slope(ans, x):
    # i1e'(x) = i0e(x) - i1e(x) (sign x + 1/x), whose limit at 0 is 1/2; a tiny |x| is
    # replaced by eps first so that the unused branch has no 1/0 in it either.
    eps = const_like(x, float(np.finfo(aval_of(x).dtype).eps))
    not_tiny = bind(P.gt_p, bind(P.abs_p, x), eps)
    safe_x = bind(P.select_n_p, not_tiny, bind(P.broadcast_in_dim_p, eps,
                                                shape=aval_of(x).shape,
                                                broadcast_dimensions=()), x)
    slope = sub(bind(S.bessel_i0e_p, safe_x),
                mul(ans, add(bind(P.sign_p, safe_x), div(const_like(x, 1), safe_x))))
    half = bind(P.broadcast_in_dim_p, const_like(x, 0.5), shape=aval_of(x).shape,
                broadcast_dimensions=())
    return bind(P.select_n_p, not_tiny, half, slope)


_defjvp(S.zeta_p, _zeta_x,
        _scale(lambda ans, x, q: mul(neg(x), bind(S.zeta_p, add(x, const_like(x, 1)), q))))
_defjvp(S.bessel_i0e_p, _scale(lambda ans, x: sub(bind(S.bessel_i1e_p, x),
                                                   mul(bind(P.sign_p, x), ans))))
_defjvp(S.bessel_i1e_p, _scale(_bessel_i1e_slope))

for _prim in (S.lgamma_p, S.digamma_p, S.erfc_p, S.bessel_i0e_p, S.bessel_i1e_p):
    vmap_rules[_prim] = _unary_rule(_prim)
for _prim in (S.polygamma_p, S.igamma_p, S.igammac_p, S.igamma_grad_a_p,
              S.regularized_incomplete_beta_p, S.zeta_p):
    vmap_rules[_prim] = _nary_rule(_prim)
