"""Special-function primitives: log-gamma, digamma, polygamma, erfc, incomplete gamma,
incomplete beta, Hurwitz zeta and the scaled Bessel functions I0e/I1e, with JAX's
names and operand orders.

These are elementwise, like `sin`, so they reuse the elementwise type-rule builders
of `primitives.py`: a real floating operand (all operands of one dtype and, rank-0
aside, one shape) in, the same type out. Their other rules live in

    minijax/transforms/special_rules.py    jvp and vmap
    minijax/backends/xla_special.py        XLA lowering (jax.lax's functions of the same name)
    minijax/backends/reference_special.py  NumPy reference (series and continued fractions)

`igamma_grad_a` is d/da of `igamma`; JAX gives it no derivative of its own, and nor
does minijax (it is a known hole of the jvp column).
"""
from __future__ import annotations

from .elementwise import _unary, _nary
from .types import is_float

lgamma_p = _unary("lgamma", is_float)
digamma_p = _unary("digamma", is_float)
erfc_p = _unary("erfc", is_float)
polygamma_p = _nary("polygamma", is_float)        # (m, x): the m-th derivative of digamma
igamma_p = _nary("igamma", is_float)              # (a, x): regularized lower P(a, x)
igammac_p = _nary("igammac", is_float)            # (a, x): regularized upper Q(a, x)
igamma_grad_a_p = _nary("igamma_grad_a", is_float)
regularized_incomplete_beta_p = _nary("regularized_incomplete_beta", is_float, arity=3)
zeta_p = _nary("zeta", is_float)                  # (x, q): Hurwitz zeta sum_k (q + k)^-x
bessel_i0e_p = _unary("bessel_i0e", is_float)     # exp(-|x|) I0(x)
bessel_i1e_p = _unary("bessel_i1e", is_float)     # exp(-|x|) I1(x)

special_primitives = (lgamma_p, digamma_p, erfc_p, polygamma_p, igamma_p, igammac_p,
                      igamma_grad_a_p, regularized_incomplete_beta_p, zeta_p, bessel_i0e_p,
                      bessel_i1e_p)
